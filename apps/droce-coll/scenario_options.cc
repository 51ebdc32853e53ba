// A scenario as droce-coll's options (docs/scenario.md, "droce-coll"): its pattern over the
// in-process lab's fabric. Flows are refused: a rank moves a collective's chunks to the peers its
// schedule names, for as long as the pattern takes; "sender i from start_ms to stop_ms" has no
// collective to stand for, and an incast pattern without the times would not be the scenario asked.
#include "apps/droce-coll/scenario_options.h"

#include <string>

namespace droce::coll {

namespace {

Status no(const apps::Scenario& s, const char* path, const std::string& why) {
  return apps::scenario_refusal(s, path, why);
}

}  // namespace

Status scenario_options(const apps::Scenario& s, apps::ScenarioArgs& a) {
  if (s.traffic.has_flows)
    return no(s, "traffic.flows", "droce-coll runs a pattern, not flows (droce-switch --lab-senders runs them)");
  if (!s.traffic.pattern) return no(s, "traffic", "droce-coll runs a scenario's pattern: give traffic.pattern");
  if (s.duration_ms) return no(s, "duration_ms", "a pattern runs its iterations, not for a duration");
  a.set("--pattern", *s.traffic.pattern);
  if (s.traffic.algo) a.set("--algo", *s.traffic.algo);
  if (s.traffic.ranks) a.set("--ranks", *s.traffic.ranks);
  if (s.traffic.size) a.set("--size", *s.traffic.size);
  if (s.seed) a.set("--seed", *s.seed);

  const auto& f = s.fabric;
  apps::set_lab_fabric_options(f, a);
  // Every host's link: each rank's switch port, shaped at its egress.
  if (f.host_gbps) a.set("--egress-gbps", *f.host_gbps);
  apps::set_queue_options(f, a);
  if (f.loss) a.set("--loss", *f.loss);

  const auto& t = s.transport;
  if (t.cc) a.set("--cc", *t.cc);
  if (t.preset) a.set("--preset", *t.preset);
  if (t.line_gbps) a.set("--line-gbps", *t.line_gbps);
  if (t.recovery) a.set("--recovery", *t.recovery);
  if (t.mtu) a.set("--mtu", static_cast<std::uint64_t>(*t.mtu));
  // Each WRITE of a rank is one chunk (a WRITE with immediate).
  if (t.message_bytes) a.set("--chunk", *t.message_bytes);
  return {};
}

}  // namespace droce::coll
