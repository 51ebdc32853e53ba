// droce-sim: DCQCN on a simulated dumbbell/incast, in virtual time; JSON (and a PNG) out.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/common/output_file.h"
#include "apps/common/run_python.h"
#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/fabric.h"
#include "apps/droce-sim/leaf_spine_report.h"
#include "apps/droce-sim/options.h"

using droce::sim::SimConfig;

int main(int argc, char** argv) {
  droce::sim::Options so;
  if (int rc = droce::sim::parse_options({argv + 1, argv + argc}, so); rc != 0) return rc == 1 ? 0 : 2;
  if (so.use_leafspine) return droce::sim::run_and_report_leaf_spine(so);
  const SimConfig& cfg = so.cfg;
  const auto& fabric = so.fabric;
  const bool use_fabric = so.use_fabric;
  const std::string& json_path = so.json_path;
  const std::string& plot_path = so.plot_path;
  const std::string& preset = so.preset;

  const auto t0 = std::chrono::steady_clock::now();
  droce::sim::FabricResult fr;
  if (use_fabric) fr = droce::sim::run_fabric(fabric);
  const auto r = use_fabric ? fr.sim : droce::sim::run_dumbbell(cfg);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  nlohmann::json j;
  j["jain_index"] = r.jain_index;
  j["utilization"] = r.utilization;
  j["queue_bytes"] = {{"p50", r.queue_p50_bytes}, {"p99", r.queue_p99_bytes}, {"max", r.queue_max_bytes}};
  j["drops"] = r.drops;
  j["cnps"] = r.cnps;
  j["ecn_marked"] = r.ecn_marked;
  j["events"] = r.events;
  j["goodput_gbps"] = r.goodput_gbps;
  std::uint64_t retransmitted = 0, order_errors = 0;
  j["flows"] = nlohmann::json::array();
  for (const auto& f : r.flows) {
    retransmitted += f.retransmitted;
    order_errors += f.order_errors;
    j["flows"].push_back({{"throughput_gbps", f.throughput_gbps},
                          {"bytes_received", f.bytes_received},
                          {"packets_sent", f.packets_sent},
                          {"cnps_received", f.cnps_received},
                          {"rate_cuts", f.rate_cuts},
                          {"goodput_gbps", f.goodput_gbps},
                          {"delivered_bytes", f.delivered_bytes},
                          {"retransmitted", f.retransmitted},
                          {"timeouts", f.timeouts},
                          {"naks", f.naks},
                          {"sacks", f.sacks},
                          {"duplicates", f.duplicates},
                          {"out_of_sequence", f.out_of_sequence},
                          {"order_errors", f.order_errors},
                          {"completion_us", f.completion_us}});
    if (cfg.recovery.rcqp) {
      auto& x = j["flows"].back();
      x["tail_probes"] = f.tail_probes;
      x["messages"] = f.messages;
      x["transport_drops"] = f.transport_drops;
      x["qp_failed"] = f.qp_failed;
    }
  }
  j["retransmitted"] = retransmitted;
  j["order_errors"] = order_errors;
  j["recovery"] = {{"mode", droce::sim::recovery_name(cfg.recovery.mode)},
                   {"transport", cfg.recovery.rcqp ? "rcqp" : "model"},
                   {"bdp_packets", r.bdp_packets},
                   {"base_rtt_us", r.base_rtt_us},
                   {"rto_us", cfg.recovery.rto_us},
                   {"flow_bytes", cfg.recovery.flow_bytes}};
  j["series"] = {
      {"time_us", r.series_time_us}, {"flow_rate_gbps", r.series_rate_gbps}, {"queue_bytes", r.series_queue_bytes}};
  if (use_fabric) {
    j["pfc"] = {{"enabled", fabric.pfc},
                {"pauses_sent", fr.pauses_sent},
                {"pauses_s1", fr.pauses_s1},
                {"pauses_s2", fr.pauses_s2},
                {"host_paused_fraction", fr.host_paused_fraction}};
    if (fabric.topology == droce::sim::Topology::kTwoHop) {
      j["innocent_gbps"] = fr.innocent_gbps;
      j["innocent_goodput_gbps"] = r.flows.back().goodput_gbps;
    }
    j["series"]["pauses"] = fr.series_pauses;
    j["series"]["innocent_gbps"] = fr.series_innocent_gbps;
    j["series"]["uplink_queue_bytes"] = fr.series_uplink_queue_bytes;
  }
  const auto& p = cfg.dcqcn;
  j["config"] = {{"flows", cfg.flows},
                 {"link_gbps", cfg.link_gbps},
                 {"duration_ms", cfg.duration_ms},
                 {"cc", cfg.cc ? "dcqcn" : "none"},
                 {"preset", preset},
                 {"start_stagger_ms", cfg.start_stagger_ms},
                 {"incast", cfg.incast},
                 {"seed", cfg.seed},
                 {"kmin_bytes", cfg.kmin_bytes},
                 {"kmax_bytes", cfg.kmax_bytes},
                 {"pmax", cfg.pmax},
                 {"buffer_bytes", cfg.buffer_bytes},
                 {"packet_bytes", cfg.packet_bytes},
                 {"delay_us", cfg.link_delay_us},
                 {"loss", cfg.loss},
                 {"g", p.g},
                 {"alpha_update_period_ns", p.alpha_update_period_ns},
                 {"rate_increase_period_ns", p.rate_increase_period_ns},
                 {"byte_counter_bytes", p.byte_counter_bytes},
                 {"fast_recovery_steps", p.fast_recovery_steps},
                 {"ai_rate_bps", p.ai_rate_bps},
                 {"hai_rate_bps", p.hai_rate_bps},
                 {"min_rate_bps", p.min_rate_bps},
                 {"np_min_time_between_cnps_ns", p.np_min_time_between_cnps_ns},
                 {"topology", fabric.topology == droce::sim::Topology::kTwoHop ? "two-hop" : "dumbbell"},
                 {"pfc", fabric.pfc},
                 {"pfc_xoff_bytes", fabric.xoff_bytes},
                 {"pfc_xon_bytes", fabric.xon_bytes},
                 {"recovery", droce::sim::recovery_name(cfg.recovery.mode)},
                 {"transport", cfg.recovery.rcqp ? "rcqp" : "model"},
                 {"flow_start_ms", cfg.flow_start_ms},
                 {"flow_stop_ms", cfg.flow_stop_ms}};
  if (!so.scenario.name.empty()) j["scenario"] = {{"name", so.scenario.name}, {"file", so.scenario.file}};
  if (droce::Status s = droce::apps::write_text_file(json_path, j.dump() + "\n"); !s.ok())
    return std::fprintf(stderr, "droce-sim: %s\n", s.message().c_str()), 1;
  std::printf(
      "droce-sim: %u flows, %.1f ms simulated in %.2f s: jain %.3f, utilization %.3f, queue p50/p99/max "
      "%llu/%llu/%llu B, drops %llu, cnps %llu\n",
      cfg.flows, cfg.duration_ms, wall, r.jain_index, r.utilization, static_cast<unsigned long long>(r.queue_p50_bytes),
      static_cast<unsigned long long>(r.queue_p99_bytes), static_cast<unsigned long long>(r.queue_max_bytes),
      static_cast<unsigned long long>(r.drops), static_cast<unsigned long long>(r.cnps));
  if (cfg.recovery.mode != droce::sim::Recovery::kNone)
    std::printf(
        "droce-sim: recovery %s (%s): goodput %.3f Gb/s, %llu packets resent, base RTT %.2f us, BDP %u packets\n",
        droce::sim::recovery_name(cfg.recovery.mode), cfg.recovery.rcqp ? "droce's RcQp" : "model", r.goodput_gbps,
        static_cast<unsigned long long>(retransmitted), r.base_rtt_us, r.bdp_packets);
  if (!plot_path.empty()) {
    if (droce::Status s = droce::apps::run_script("plot_sim.py", {json_path, plot_path}); !s.ok())
      return std::fprintf(stderr, "droce-sim: plotting failed: %s\n", s.message().c_str()), 1;
  }
  return 0;
}
