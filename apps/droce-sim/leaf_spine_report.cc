// The leaf-spine run's text and JSON report.
#include "apps/droce-sim/leaf_spine_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/common/output_file.h"
#include "apps/droce-sim/peak_memory.h"

namespace droce::sim {

namespace {

nlohmann::json dir_json(const LinkDir& d) {
  return {{"frames", d.frames}, {"bytes", d.bytes},         {"max_queue_bytes", d.max_queue_bytes},
          {"drops", d.drops},   {"ecn_marks", d.ecn_marks}, {"pauses", d.pauses}};
}

}  // namespace

int run_and_report_leaf_spine(const Options& o) {
  const LeafSpineConfig& c = o.leafspine;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  const LeafSpineResult r = run_leaf_spine(c);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  const std::uint64_t rss = peak_rss_bytes();
  const double events_per_s = wall > 0 ? static_cast<double>(r.events) / wall : 0;
  const double events_per_cpu_s = cpu > 0 ? static_cast<double>(r.events) / cpu : 0;
  const SimConfig& b = c.fabric.base;

  nlohmann::json j;
  j["config"] = {{"topology", "leafspine"},
                 {"leaves", c.leaves},
                 {"spines", c.spines},
                 {"hosts_per_leaf", c.hosts_per_leaf()},
                 {"link_gbps", b.link_gbps},
                 {"uplink_gbps", c.uplink_rate_gbps()},
                 {"oversubscription", c.oversubscription()},
                 {"ecmp_hash", c.ecmp.describe()},
                 {"pattern", coll::pattern_name(c.coll.pattern)},
                 {"ranks", c.coll.ranks},
                 {"size", c.coll.size_bytes},
                 {"packet_bytes", b.packet_bytes},
                 {"delay_us", b.link_delay_us},
                 {"kmin_bytes", b.kmin_bytes},
                 {"kmax_bytes", b.kmax_bytes},
                 {"pmax", b.pmax},
                 {"buffer_bytes", b.buffer_bytes},
                 {"pfc", c.fabric.pfc},
                 {"pfc_xoff_bytes", c.fabric.xoff_bytes},
                 {"pfc_xon_bytes", c.fabric.xon_bytes},
                 {"duration_ms", b.duration_ms},
                 {"seed", b.seed},
                 {"cc", b.cc ? "dcqcn" : "none"},
                 {"transport", b.recovery.rcqp ? "rcqp" : "model"},
                 {"recovery", recovery_name(b.recovery.mode)},
                 {"loss", b.loss}};
  // nccl-tests' columns (out of place, float, sum for allreduce), then what it cannot show.
  j["size"] = r.plan.size_bytes;
  j["count"] = r.plan.count;
  j["type"] = "float";
  j["redop"] = coll::reduces(c.coll.pattern) ? "sum" : "none";
  j["time_us"] = r.time_us;
  j["algbw_gbytes"] = r.algbw_gbytes;
  j["busbw_gbytes"] = r.busbw_gbytes;
  j["busbw_factor"] = r.plan.busbw_factor;
  j["complete"] = r.complete;
  j["expected_bytes"] = r.expected_bytes;
  j["delivered_bytes"] = r.delivered_bytes;
  j["transfers"] = r.transfers;
  j["packets"] = r.packets;
  j["dependency_violations"] = r.dependency_violations;
  j["drops"] = r.drops;
  j["ecn_marked"] = r.ecn_marks;
  j["pfc"] = {{"enabled", c.fabric.pfc}, {"pauses_sent", r.pauses}};
  if (b.recovery.rcqp) {
    const LeafSpineResult::Transport& t = r.transport;
    j["transport"] = {{"qp_pairs", t.qp_pairs},
                      {"failed_qps", t.failed_qps},
                      {"retransmitted", t.retransmitted},
                      {"timeouts", t.timeouts},
                      {"naks", t.naks},
                      {"tail_probes", t.tail_probes},
                      {"duplicates", t.duplicates},
                      {"out_of_sequence", t.out_of_sequence},
                      {"placed_bytes", t.placed_bytes},
                      {"transport_drops", t.transport_drops},
                      {"losses", t.losses},
                      {"cnps", t.cnps}};
  }
  j["slowest_step"] = r.slowest_step;
  j["steps"] = nlohmann::json::array();
  for (const StepStats& s : r.steps)
    j["steps"].push_back({{"step", s.step},
                          {"transfers", s.transfers},
                          {"finish_p50_us", s.p50_us},
                          {"finish_p99_us", s.p99_us},
                          {"finish_max_us", s.max_us},
                          {"span_us", s.span_us}});
  j["flows_per_spine"] = r.flows_per_spine;
  if (!o.scenario.name.empty()) j["scenario"] = {{"name", o.scenario.name}, {"file", o.scenario.file}};
  j["links"] = nlohmann::json::array();
  for (const LinkStats& l : r.links)
    j["links"].push_back({{"name", l.name}, {"up", dir_json(l.up)}, {"down", dir_json(l.down)}});
  j["cost"] = {{"events", r.events},
               {"wall_s", wall},
               {"events_per_s", events_per_s},
               {"cpu_s", cpu},
               {"events_per_cpu_s", events_per_cpu_s},
               {"peak_rss_bytes", rss},
               {"peak_rss_bytes_per_rank", rss / c.coll.ranks}};
  if (Status s = apps::write_text_file(o.json_path, j.dump() + "\n"); !s.ok())
    return std::fprintf(stderr, "droce-sim: %s\n", s.message().c_str()), 1;

  std::printf("droce-sim: %s, %u ranks on %u leaves x %u spines (%u hosts a leaf, %.4g:1), %s%s\n",
              coll::pattern_name(c.coll.pattern), c.coll.ranks, c.leaves, c.spines, c.hosts_per_leaf(),
              c.oversubscription(), c.fabric.pfc ? "PFC" : "lossy",
              r.complete ? "" : " -- INCOMPLETE: not every byte was delivered (drops or --duration-ms)");
  std::printf("%12s %12s %6s %6s %12s %8s %8s\n", "size(B)", "count", "type", "redop", "time(us)", "algbw", "busbw");
  std::printf("%12llu %12llu %6s %6s %12.1f %8.2f %8.2f\n", static_cast<unsigned long long>(r.plan.size_bytes),
              static_cast<unsigned long long>(r.plan.count), "float", coll::reduces(c.coll.pattern) ? "sum" : "none",
              r.time_us, r.algbw_gbytes, r.busbw_gbytes);
  if (!r.steps.empty()) {
    const StepStats& w = r.steps[std::min<std::size_t>(r.slowest_step, r.steps.size() - 1)];
    const StepStats& l = r.steps.back();
    std::printf(
        "steps %zu; slowest step %u: %.2f us (finish p50/p99/max %.1f/%.1f/%.1f us); last step finish "
        "p50/p99/max %.1f/%.1f/%.1f us\n",
        r.steps.size(), w.step, w.span_us, w.p50_us, w.p99_us, w.max_us, l.p50_us, l.p99_us, l.max_us);
  }
  std::uint64_t max_q = 0;
  std::string max_q_link = "-";
  for (const LinkStats& l : r.links)
    for (const LinkDir* d : {&l.up, &l.down})
      if (d->max_queue_bytes > max_q) {
        max_q = d->max_queue_bytes;
        max_q_link = l.name + (d == &l.up ? " up" : " down");
      }
  if (b.recovery.rcqp)
    std::printf(
        "transport: droce's RcQp (%s), %llu QP pairs (%llu failed); %llu resent, %llu timeouts, %llu NAKs; "
        "%llu frames lost (--loss), %llu CNPs\n",
        recovery_name(b.recovery.mode), static_cast<unsigned long long>(r.transport.qp_pairs),
        static_cast<unsigned long long>(r.transport.failed_qps),
        static_cast<unsigned long long>(r.transport.retransmitted),
        static_cast<unsigned long long>(r.transport.timeouts), static_cast<unsigned long long>(r.transport.naks),
        static_cast<unsigned long long>(r.transport.losses), static_cast<unsigned long long>(r.transport.cnps));
  std::printf("deepest queue %llu B (%s); drops %llu, ECN marks %llu, PFC pauses %llu\n",
              static_cast<unsigned long long>(max_q), max_q_link.c_str(), static_cast<unsigned long long>(r.drops),
              static_cast<unsigned long long>(r.ecn_marks), static_cast<unsigned long long>(r.pauses));
  std::printf(
      "cost: %llu events in %.2f s (%.3g events/s; %.2f CPU s, %.3g events per CPU s), peak RSS %.1f MiB (%.1f KiB a "
      "rank)\n",
      static_cast<unsigned long long>(r.events), wall, events_per_s, cpu, events_per_cpu_s,
      static_cast<double>(rss) / 1048576.0, static_cast<double>(rss) / 1024.0 / c.coll.ranks);
  return 0;
}

}  // namespace droce::sim
