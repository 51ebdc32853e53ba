// A scenario as droce-sim's own options (docs/scenario.md, "droce-sim"): flows run on the dumbbell
// (the star: every sender on the one switch, the receiver's port the bottleneck), a pattern on the
// leaf-spine model (a star as one leaf under one spine: every host on the one switch). What the
// simulator does not model is refused by its JSON path, never dropped.
#include "apps/droce-sim/scenario_options.h"

#include <string>
#include <utility>

#include "apps/droce-sim/reliability.h"

namespace droce::sim {

namespace {

constexpr double kMaxDurationMs = 60'000;             // --duration-ms's top
constexpr std::uint64_t kRcqpWriteBytes = 64 * 1024;  // what QpFlow posts (qp_flow.cc)

Status no(const apps::Scenario& s, const char* path, const std::string& why) {
  return apps::scenario_refusal(s, path, why);
}

Status flows(const apps::Scenario& s, apps::ScenarioArgs& a) {
  if (s.fabric.leaves != 0)
    return no(s, "fabric.topology", "runs flows on the star only (a pattern runs on its leaf-spine model)");
  if (s.transport.message_bytes && *s.transport.message_bytes != kRcqpWriteBytes)
    return no(s, "transport.message_bytes", "the real transport's WRITEs are 64 KiB (65536), not set");
  const auto& f = s.traffic.flows;
  a.set("--flows", static_cast<std::uint64_t>(f.size()));
  if (s.duration_ms) a.set("--duration-ms", *s.duration_ms);
  std::string starts, stops;
  std::size_t last_stop = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (f[i].stop_ms) last_stop = i + 1;
  for (std::size_t i = 0; i < f.size(); ++i) {
    starts += (i == 0 ? "" : ",") + apps::number_text(f[i].start_ms);
    // A flow without its own stop before one with: it runs to the end (the run's, or the most).
    if (i < last_stop)
      stops += (i == 0 ? "" : ",") + apps::number_text(f[i].stop_ms.value_or(s.duration_ms.value_or(kMaxDurationMs)));
  }
  a.set("--flow-start-ms", starts);
  if (!stops.empty()) a.set("--flow-stop-ms", stops);
  if (s.transport.recovery) {
    // The loss recovery asked for is the real one: droce's RcQp pairs, not the fast model.
    a.set("--recovery", *s.transport.recovery);
    a.set("--transport", std::string("rcqp"));
  }
  return {};
}

Status pattern(const apps::Scenario& s, apps::ScenarioArgs& a) {
  if (s.duration_ms) return no(s, "duration_ms", "a pattern runs its bytes to the end, not for a duration");
  // Loss recovery and DCQCN are the real transport's (--transport rcqp) on the leaf-spine; the
  // model moves a collective's bytes open loop, lossless with pfc.
  const bool real = s.transport.recovery.has_value();
  if (real) {
    a.set("--recovery", *s.transport.recovery);
    a.set("--transport", std::string("rcqp"));
  }
  if (!real && s.transport.cc && *s.transport.cc == "dcqcn")
    return no(s, "transport.cc", "dcqcn on the leaf-spine needs the real transport: give transport.recovery");
  if (!real && s.fabric.loss && *s.fabric.loss > 0)
    return no(s, "fabric.loss", "loss on the leaf-spine needs the real transport: give transport.recovery");
  if (s.transport.message_bytes && *s.transport.message_bytes != kRcqpWriteBytes)
    return no(s, "transport.message_bytes", "the real transport's WRITEs are 64 KiB (65536), not set");
  if (s.traffic.algo && !(*s.traffic.algo == "ring" && *s.traffic.pattern == "allreduce"))
    return no(s, "traffic.algo", "runs allreduce as a ring only");
  a.set("--topology", std::string("leafspine"));
  a.set("--leaves", static_cast<std::uint64_t>(s.fabric.leaves != 0 ? s.fabric.leaves : 1));
  a.set("--spines", static_cast<std::uint64_t>(s.fabric.spines != 0 ? s.fabric.spines : 1));
  a.set("--pattern", *s.traffic.pattern);
  if (s.traffic.ranks) a.set("--ranks", *s.traffic.ranks);
  if (s.traffic.size) a.set("--size", *s.traffic.size);
  if (s.fabric.uplink_gbps) a.set("--uplink-gbps", *s.fabric.uplink_gbps);
  if (s.fabric.ecmp_hash) a.set("--ecmp-hash", *s.fabric.ecmp_hash);
  return {};
}

}  // namespace

Status scenario_options(const apps::Scenario& s, apps::ScenarioArgs& a) {
  const auto& f = s.fabric;
  if (f.has_links) return no(s, "fabric.links", "links with their own settings are not modelled");
  if (f.has_link_down) return no(s, "fabric.link_down", "link failures are not modelled");
  if (f.pfc && f.pfc->lossless && f.loss && *f.loss > 0)
    return no(s, "fabric.loss", "random loss is not modelled on a lossless (pfc) fabric");
  const auto& t = s.transport;
  // The senders' line rate is their link's: droce-sim has no separate ceiling (nor DCQCN line rate).
  if (t.line_gbps && (!f.host_gbps || *t.line_gbps != *f.host_gbps))
    return no(s, "transport.line_gbps",
              "droce-sim's senders run at their link's rate, fabric.host_gbps: give the same value or leave it out");
  if (Status st = s.traffic.has_flows ? flows(s, a) : s.traffic.pattern ? pattern(s, a) : Status{}; !st.ok()) return st;
  if (s.seed) a.set("--seed", *s.seed);
  if (f.host_gbps) a.set("--link-gbps", *f.host_gbps);
  apps::set_queue_options(f, a);
  if (f.loss) a.set("--loss", *f.loss);
  if (t.cc) a.set("--cc", *t.cc);
  if (t.preset) a.set("--preset", *t.preset);
  // The RoCE path MTU as droce-sim's frame size: the transport's PMTU is the largest that fits.
  if (t.mtu) a.set("--packet-bytes", static_cast<std::uint64_t>(*t.mtu + kRoceOverheadBytes));
  return {};
}

}  // namespace droce::sim
