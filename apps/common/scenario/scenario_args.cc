// The scenario's items in front of the user's arguments (scenario_args.h says why there).
#include "apps/common/scenario/scenario_args.h"

#include <charconv>

#include "apps/common/cli/app.h"

namespace droce::apps {

void ScenarioArgs::set(const std::string& option, const std::string& value) {
  items_.push_back(option);
  items_.push_back(value);
}

std::string number_text(double v) {
  char b[64];
  const auto r = std::to_chars(b, b + sizeof b, v);  // the shortest round trip
  return std::string(b, r.ptr);
}

void ScenarioArgs::set(const std::string& option, double value) { set(option, number_text(value)); }

void ScenarioArgs::set(const std::string& option, std::uint64_t value) { set(option, std::to_string(value)); }

void ScenarioArgs::flag(const std::string& option) { items_.push_back(option); }

void add_scenario_option(CLI::App& app, const std::string& group, std::string& file, const std::string& help) {
  // Read from the arguments before the parse (apply_scenario), so never from --config, which CLI11
  // reads after them: there it is refused ("not configurable"), not silently left unread.
  app.add_option("--scenario", file, help)->type_name("FILE")->group(group)->configurable(false);
}

int apply_scenario(const CLI::App& app, std::vector<std::string>& own, const ScenarioMapper& map, Scenario& loaded) {
  const std::string flag = "--scenario";
  std::string file;
  bool found = false;
  for (std::size_t i = 0; i < own.size(); ++i) {
    if (own[i] == flag && i + 1 < own.size()) {
      file = own[i + 1];
      found = true;
      ++i;
    } else if (own[i].rfind(flag + "=", 0) == 0) {
      file = own[i].substr(flag.size() + 1);
      found = true;
    }
  }
  if (!found) return 0;  // none, or "--scenario" without a value: the parse names that
  Scenario s;
  if (Status st = load_scenario(file, s); !st.ok()) return cli::fail(app, st.message());
  ScenarioArgs args;
  if (Status st = map(s, args); !st.ok()) return cli::fail(app, st.message());
  std::vector<std::string> all = args.items();
  all.insert(all.end(), own.begin(), own.end());
  own = std::move(all);
  loaded = std::move(s);
  return 0;
}

void set_queue_options(const ScenarioFabric& f, ScenarioArgs& a) {
  if (f.delay_us) a.set("--delay-us", *f.delay_us);
  if (f.buffer_bytes) a.set("--buffer-bytes", *f.buffer_bytes);
  if (f.ecn && f.ecn->kmin_bytes) a.set("--kmin-bytes", *f.ecn->kmin_bytes);
  if (f.ecn && f.ecn->kmax_bytes) a.set("--kmax-bytes", *f.ecn->kmax_bytes);
  if (f.ecn && f.ecn->pmax) a.set("--pmax", *f.ecn->pmax);
  if (f.pfc && f.pfc->lossless) {
    a.flag("--pfc");
    if (f.pfc->xoff_bytes) a.set("--pfc-xoff-bytes", *f.pfc->xoff_bytes);
    if (f.pfc->xon_bytes) a.set("--pfc-xon-bytes", *f.pfc->xon_bytes);
  }
}

void set_lab_fabric_options(const ScenarioFabric& f, ScenarioArgs& a) {
  if (f.topology) a.set("--fabric", *f.topology);
  if (f.uplink_gbps) a.set("--uplink-gbps", *f.uplink_gbps);
  if (f.ecmp_hash) a.set("--ecmp-hash", *f.ecmp_hash);
  for (const std::string& l : f.links) a.set("--link", l);
  for (const std::string& l : f.link_down) a.set("--link-down", l);
}

}  // namespace droce::apps
