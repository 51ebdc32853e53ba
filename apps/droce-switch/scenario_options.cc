// A scenario as droce-switch's options (docs/scenario.md, "droce-switch"): its flows run in the live
// lab (--lab-senders), sender i on the star's switch or on leaf i % L of the leaf-spine, the
// receiver on the last leaf. A scenario always runs the lab: between real ports the hosts and their
// traffic are the user's, so a scenario without flows is refused rather than half applied.
#include "apps/droce-switch/scenario_options.h"

#include <string>

namespace droce::sw {

namespace {

constexpr std::size_t kMaxLabSenders = 16;          // --lab-senders' top
constexpr double kLabStopDefaultMs = 600'000;       // --lab-duration-ms's top: "to the end"
constexpr std::uint64_t kMaxLabMessage = 1u << 20;  // --lab-message-bytes' top
constexpr std::uint32_t kLabMtu = 1024;             // SwitchExperimentConfig::mtu: the lab has no option for it

Status no(const apps::Scenario& s, const char* path, const std::string& why) {
  return apps::scenario_refusal(s, path, why);
}

}  // namespace

Status scenario_options(const apps::Scenario& s, apps::ScenarioArgs& a) {
  if (s.traffic.pattern) return no(s, "traffic.pattern", "droce-switch runs flows, not a pattern (droce-coll runs it)");
  if (!s.traffic.has_flows)
    return no(s, "traffic", "droce-switch runs a scenario's flows in its live lab: give traffic.flows");
  const auto& flows = s.traffic.flows;
  if (flows.size() > kMaxLabSenders)
    return no(s, "traffic.flows", std::to_string(flows.size()) + " flows: the live lab runs 1..16 senders");
  const auto& f = s.fabric;
  if (f.loss && *f.loss > 0) return no(s, "fabric.loss", "the live lab has no random loss (--loss impairs real ports)");
  const auto& t = s.transport;
  if (t.mtu && *t.mtu != kLabMtu) return no(s, "transport.mtu", "the live lab's path MTU is 1024, not set");
  if (t.message_bytes && *t.message_bytes > kMaxLabMessage)
    return no(s, "transport.message_bytes", "the live lab's WRITEs are at most 1M");

  a.set("--lab-senders", static_cast<std::uint64_t>(flows.size()));
  if (s.duration_ms) a.set("--lab-duration-ms", *s.duration_ms);
  std::string starts, stops;
  std::size_t last_stop = 0;
  for (std::size_t i = 0; i < flows.size(); ++i)
    if (flows[i].stop_ms) last_stop = i + 1;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    starts += (i == 0 ? "" : ",") + apps::number_text(flows[i].start_ms);
    // A sender without its own stop before one with: it runs to the end (the run's, or the most).
    if (i < last_stop)
      stops +=
          (i == 0 ? "" : ",") + apps::number_text(flows[i].stop_ms.value_or(s.duration_ms.value_or(kLabStopDefaultMs)));
  }
  a.set("--lab-start-ms", starts);
  if (!stops.empty()) a.set("--lab-stop-ms", stops);
  if (s.seed) a.set("--seed", *s.seed);

  apps::set_lab_fabric_options(f, a);
  // Every host's link: the lab shapes the receiver's egress, the one every flow crosses.
  if (f.host_gbps) a.set("--lab-bottleneck-gbps", *f.host_gbps);
  apps::set_queue_options(f, a);
  if (t.cc) a.set("--cc", *t.cc);
  if (t.preset) a.set("--preset", *t.preset);
  if (t.line_gbps) a.set("--line-gbps", *t.line_gbps);
  if (t.recovery) a.set("--recovery", *t.recovery);
  if (t.message_bytes) a.set("--lab-message-bytes", *t.message_bytes);
  return {};
}

}  // namespace droce::sw
