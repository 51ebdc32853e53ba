// How a scenario becomes an app's options: its fields as "--name value" items placed before the
// user's own arguments, so each goes through the option's own parser and checks, the command line
// wins (every single-valued option keeps its last value, app.h) and a repeatable one appends.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/common/scenario/scenario.h"

namespace droce::apps {

// The shortest text that reads back as `v` (0.01 stays "0.01"), as a scenario's numbers are passed on.
[[nodiscard]] std::string number_text(double v);

// The items a scenario sets, in order.
class ScenarioArgs {
 public:
  void set(const std::string& option, const std::string& value);
  void set(const std::string& option, double value);  // shortest text that reads back the same double
  void set(const std::string& option, std::uint64_t value);
  void flag(const std::string& option);
  [[nodiscard]] const std::vector<std::string>& items() const { return items_; }

 private:
  std::vector<std::string> items_;
};

// The switch queue's fields every reader takes under the same option names: delay_us, buffer_bytes,
// ecn (--kmin-bytes, --kmax-bytes, --pmax) and a lossless pfc (--pfc, --pfc-xoff-bytes, --pfc-xon-bytes).
void set_queue_options(const ScenarioFabric& f, ScenarioArgs& args);

// The live labs' leaf-spine fields (droce-switch's and droce-coll's options of one name): topology as
// --fabric, uplink_gbps, ecmp_hash, and each of links and link_down as a repeated --link, --link-down.
void set_lab_fabric_options(const ScenarioFabric& f, ScenarioArgs& args);

// One app's mapping: fills `args` from `s`, or refuses a field it cannot honour (scenario_refusal).
using ScenarioMapper = std::function<Status(const Scenario& s, ScenarioArgs& args)>;

// Declares --scenario FILE in `group` (its value is read by apply_scenario, before the parse).
void add_scenario_option(CLI::App& app, const std::string& group, std::string& file, const std::string& help);

// Before the parse: the last "--scenario FILE" (or --scenario=FILE) among `own` is loaded and mapped,
// and its items put in front of `own`. 0: done (no --scenario: `own` unchanged); -1: the one-line
// refusal printed as "APP: scenario FILE: PATH: why" (exit 2). The command line is above the
// scenario, the scenario above --config (CLI11 takes --config only for options the arguments leave
// unset).
[[nodiscard]] int apply_scenario(const CLI::App& app, std::vector<std::string>& own, const ScenarioMapper& map,
                                 Scenario& loaded);

}  // namespace droce::apps
