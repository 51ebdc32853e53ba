// droce-sim: DCQCN on a simulated dumbbell/incast, in virtual time; JSON (and a PNG) out.
#include <getopt.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/fabric.h"

using droce::sim::SimConfig;

namespace {

void usage(const SimConfig& d) {
  const auto& p = d.dcqcn;
  std::printf(
      "usage: droce-sim [options] --json FILE [--plot FILE.png]\n"
      "Simulates N DCQCN senders sharing one switch egress (RED/ECN marking, tail drop) in virtual\n"
      "time, running droce's own DCQCN reaction/notification point and pacer. Deterministic per seed.\n\n"
      "  --flows N               senders (default %u)\n"
      "  --link-gbps G           rate of every link and of the bottleneck (default %g)\n"
      "  --duration-ms T         simulated time (default %g)\n"
      "  --cc dcqcn|none         congestion control (default dcqcn)\n"
      "  --preset paper|mlx5     DCQCN parameter set (default paper)\n"
      "  --start-stagger-ms S    flow i starts at i*S (default %g)\n"
      "  --incast                all flows start at once (N->1 incast)\n"
      "  --seed S                random seed for ECN marking and loss (default %llu)\n"
      "  --kmin-bytes B          RED/ECN Kmin (default %llu)\n"
      "  --kmax-bytes B          RED/ECN Kmax (default %llu)\n"
      "  --pmax P                marking probability at Kmax (default %g)\n"
      "  --buffer-bytes B        egress buffer, tail drop beyond (default %llu)\n"
      "  --packet-bytes B        data packet size on the wire (default %u)\n"
      "  --delay-us D            one-way delay per link (default %g)\n"
      "  --loss P                random loss on the bottleneck, [0,1) (default %g)\n"
      "  --sample-us U           series sampling period (default %g)\n"
      "  --topology dumbbell|two-hop  N senders -> switch -> receiver, or N senders -> S1 -> S2 -> receiver\n"
      "                          plus an innocent flow S1 -> S2 -> another receiver (default dumbbell)\n"
      "  --pfc                   lossless: switch ingress above XOFF pauses its upstream (802.1Qbb)\n"
      "  --pfc-xoff-bytes B      pause threshold per ingress port (default 300000)\n"
      "  --pfc-xon-bytes B       resume threshold (default 250000)\n"
      "DCQCN parameters (override the preset; applied after --preset):\n"
      "  --g G  --alpha-period-us U  --rate-increase-period-us U  --byte-counter-bytes B\n"
      "  --fast-recovery-steps F  --ai-mbps R  --hai-mbps R  --min-rate-mbps R  --cnp-interval-us U\n"
      "  (paper: g=%g alpha-period=%g us T=%g us B=%llu F=%u R_AI=%g Mb/s R_HAI=%g Mb/s)\n"
      "Output:\n"
      "  --json FILE             results (jain_index, utilization, queue_bytes, drops, cnps, flows, series)\n"
      "  --plot FILE.png         also draw rates and queue over time (needs python3-matplotlib)\n",
      d.flows, d.link_gbps, d.duration_ms, d.start_stagger_ms, static_cast<unsigned long long>(d.seed),
      static_cast<unsigned long long>(d.kmin_bytes), static_cast<unsigned long long>(d.kmax_bytes), d.pmax,
      static_cast<unsigned long long>(d.buffer_bytes), d.packet_bytes, d.link_delay_us, d.loss, d.sample_us, p.g,
      p.alpha_update_period_ns / 1e3, p.rate_increase_period_ns / 1e3,
      static_cast<unsigned long long>(p.byte_counter_bytes), p.fast_recovery_steps, p.ai_rate_bps / 1e6,
      p.hai_rate_bps / 1e6);
}

bool num(const char* opt, const char* s, double& out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0') {
    std::fprintf(stderr, "droce-sim: %s: '%s' is not a number\n", opt, s);
    return false;
  }
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  SimConfig cfg;
  droce::sim::FabricConfig fabric;
  fabric.topology = droce::sim::Topology::kDumbbell;
  fabric.pfc = false;
  bool use_fabric = false;  // --pfc or --topology two-hop: the fabric model
  std::string json_path, plot_path, preset = "paper";
  enum : int {
    kFlows = 256, kLink, kDur, kCc, kPreset, kStagger, kIncast, kSeed, kKmin, kKmax, kPmax, kBuf, kPkt, kDelay,
    kLoss, kSample, kTopo, kPfc, kXoff, kXon, kG, kAlphaP, kRateP, kBytes, kF, kAi, kHai, kMinRate, kCnpInt, kJson, kPlot, kHelp
  };
  static const option longopts[] = {
      {"flows", 1, nullptr, kFlows}, {"link-gbps", 1, nullptr, kLink}, {"duration-ms", 1, nullptr, kDur},
      {"cc", 1, nullptr, kCc}, {"preset", 1, nullptr, kPreset}, {"start-stagger-ms", 1, nullptr, kStagger},
      {"incast", 0, nullptr, kIncast}, {"seed", 1, nullptr, kSeed}, {"kmin-bytes", 1, nullptr, kKmin},
      {"kmax-bytes", 1, nullptr, kKmax}, {"pmax", 1, nullptr, kPmax}, {"buffer-bytes", 1, nullptr, kBuf},
      {"packet-bytes", 1, nullptr, kPkt}, {"delay-us", 1, nullptr, kDelay}, {"loss", 1, nullptr, kLoss},
      {"sample-us", 1, nullptr, kSample}, {"topology", 1, nullptr, kTopo}, {"pfc", 0, nullptr, kPfc},
      {"pfc-xoff-bytes", 1, nullptr, kXoff}, {"pfc-xon-bytes", 1, nullptr, kXon}, {"g", 1, nullptr, kG}, {"alpha-period-us", 1, nullptr, kAlphaP},
      {"rate-increase-period-us", 1, nullptr, kRateP}, {"byte-counter-bytes", 1, nullptr, kBytes},
      {"fast-recovery-steps", 1, nullptr, kF}, {"ai-mbps", 1, nullptr, kAi}, {"hai-mbps", 1, nullptr, kHai},
      {"min-rate-mbps", 1, nullptr, kMinRate}, {"cnp-interval-us", 1, nullptr, kCnpInt},
      {"json", 1, nullptr, kJson}, {"plot", 1, nullptr, kPlot}, {"help", 0, nullptr, kHelp},
      {nullptr, 0, nullptr, 0}};
  // First pass: the preset, so that individual DCQCN options override it whatever their order.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--preset") preset = argv[i + 1];
  if (preset == "paper")
    cfg.dcqcn = droce::dcqcn::DcqcnParams::paper();
  else if (preset == "mlx5")
    cfg.dcqcn = droce::dcqcn::DcqcnParams::mlx5();
  else
    return std::fprintf(stderr, "droce-sim: --preset: '%s' is not paper or mlx5\n", preset.c_str()), 2;

  opterr = 0;
  int c;
  double v = 0;
  while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
    const char* o = c >= 256 && c <= kHelp ? longopts[c - 256].name : "?";
    if (c != kIncast && c != kHelp && c != kCc && c != kPreset && c != kJson && c != kPlot && c != kTopo &&
        c != kPfc && c >= 256 &&
        !num(o, optarg, v))
      return 2;
    switch (c) {
      case kFlows: cfg.flows = v >= 1 && v <= 4096 ? static_cast<std::uint32_t>(v) : 0; break;
      case kLink: cfg.link_gbps = v; break;
      case kDur: cfg.duration_ms = v; break;
      case kCc:
        if (std::string(optarg) == "dcqcn") cfg.cc = true;
        else if (std::string(optarg) == "none") cfg.cc = false;
        else return std::fprintf(stderr, "droce-sim: --cc: '%s' is not dcqcn or none\n", optarg), 2;
        break;
      case kPreset: break;  // handled above
      case kStagger: cfg.start_stagger_ms = v; break;
      case kIncast: cfg.incast = true; break;
      case kSeed: cfg.seed = static_cast<std::uint64_t>(v); break;
      case kKmin: cfg.kmin_bytes = v < 0 ? UINT64_MAX : static_cast<std::uint64_t>(v); break;
      case kKmax: cfg.kmax_bytes = v < 0 ? 0 : static_cast<std::uint64_t>(v); break;
      case kPmax: cfg.pmax = v; break;
      case kBuf: cfg.buffer_bytes = v < 0 ? 0 : static_cast<std::uint64_t>(v); break;
      case kPkt: cfg.packet_bytes = v < 0 || v > 1e6 ? 0 : static_cast<std::uint32_t>(v); break;
      case kDelay: cfg.link_delay_us = v; break;
      case kLoss: cfg.loss = v; break;
      case kSample: cfg.sample_us = v; break;
      case kTopo:
        if (std::string(optarg) == "dumbbell") fabric.topology = droce::sim::Topology::kDumbbell;
        else if (std::string(optarg) == "two-hop") fabric.topology = droce::sim::Topology::kTwoHop;
        else return std::fprintf(stderr, "droce-sim: --topology: '%s' is not dumbbell or two-hop\n", optarg), 2;
        use_fabric |= fabric.topology == droce::sim::Topology::kTwoHop;
        break;
      case kPfc: fabric.pfc = use_fabric = true; break;
      case kXoff: fabric.xoff_bytes = v < 0 ? 0 : static_cast<std::uint64_t>(v); break;
      case kXon: fabric.xon_bytes = v < 0 ? 0 : static_cast<std::uint64_t>(v); break;
      case kG: cfg.dcqcn.g = v; break;
      case kAlphaP: cfg.dcqcn.alpha_update_period_ns = v <= 0 ? 0 : static_cast<std::uint64_t>(v * 1e3); break;
      case kRateP: cfg.dcqcn.rate_increase_period_ns = v <= 0 ? 0 : static_cast<std::uint64_t>(v * 1e3); break;
      case kBytes: cfg.dcqcn.byte_counter_bytes = v <= 0 ? 0 : static_cast<std::uint64_t>(v); break;
      case kF: cfg.dcqcn.fast_recovery_steps = v <= 0 ? 0 : static_cast<std::uint32_t>(v); break;
      case kAi: cfg.dcqcn.ai_rate_bps = v * 1e6; break;
      case kHai: cfg.dcqcn.hai_rate_bps = v * 1e6; break;
      case kMinRate: cfg.dcqcn.min_rate_bps = v * 1e6; break;
      case kCnpInt: cfg.dcqcn.np_min_time_between_cnps_ns = v <= 0 ? 0 : static_cast<std::uint64_t>(v * 1e3); break;
      case kJson: json_path = optarg; break;
      case kPlot: plot_path = optarg; break;
      case kHelp: usage(cfg); return 0;
      default:
        return std::fprintf(stderr, "droce-sim: unknown or incomplete option '%s' (see --help)\n", argv[optind - 1]), 2;
    }
  }
  if (optind < argc) return std::fprintf(stderr, "droce-sim: unexpected argument '%s'\n", argv[optind]), 2;
  // The preset's rates scale with the link: re-derive them unless given explicitly.
  fabric.base = cfg;
  if (std::string e = use_fabric ? fabric.validate() : cfg.validate(); !e.empty())
    return std::fprintf(stderr, "droce-sim: %s\n", e.c_str()), 2;
  if (json_path.empty()) return std::fprintf(stderr, "droce-sim: --json FILE is required (see --help)\n"), 2;

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
  j["flows"] = nlohmann::json::array();
  for (const auto& f : r.flows)
    j["flows"].push_back({{"throughput_gbps", f.throughput_gbps}, {"bytes_received", f.bytes_received},
                          {"packets_sent", f.packets_sent}, {"cnps_received", f.cnps_received},
                          {"rate_cuts", f.rate_cuts}});
  j["series"] = {{"time_us", r.series_time_us}, {"flow_rate_gbps", r.series_rate_gbps},
                 {"queue_bytes", r.series_queue_bytes}};
  if (use_fabric) {
    j["pfc"] = {{"enabled", fabric.pfc}, {"pauses_sent", fr.pauses_sent}, {"pauses_s1", fr.pauses_s1},
                {"pauses_s2", fr.pauses_s2}, {"host_paused_fraction", fr.host_paused_fraction}};
    if (fabric.topology == droce::sim::Topology::kTwoHop) j["innocent_gbps"] = fr.innocent_gbps;
    j["series"]["pauses"] = fr.series_pauses;
    j["series"]["innocent_gbps"] = fr.series_innocent_gbps;
    j["series"]["uplink_queue_bytes"] = fr.series_uplink_queue_bytes;
  }
  const auto& p = cfg.dcqcn;
  j["config"] = {{"flows", cfg.flows}, {"link_gbps", cfg.link_gbps}, {"duration_ms", cfg.duration_ms},
                 {"cc", cfg.cc ? "dcqcn" : "none"}, {"preset", preset}, {"start_stagger_ms", cfg.start_stagger_ms},
                 {"incast", cfg.incast}, {"seed", cfg.seed}, {"kmin_bytes", cfg.kmin_bytes},
                 {"kmax_bytes", cfg.kmax_bytes}, {"pmax", cfg.pmax}, {"buffer_bytes", cfg.buffer_bytes},
                 {"packet_bytes", cfg.packet_bytes}, {"delay_us", cfg.link_delay_us}, {"loss", cfg.loss},
                 {"g", p.g}, {"alpha_update_period_ns", p.alpha_update_period_ns},
                 {"rate_increase_period_ns", p.rate_increase_period_ns}, {"byte_counter_bytes", p.byte_counter_bytes},
                 {"fast_recovery_steps", p.fast_recovery_steps}, {"ai_rate_bps", p.ai_rate_bps},
                 {"hai_rate_bps", p.hai_rate_bps}, {"min_rate_bps", p.min_rate_bps},
                 {"np_min_time_between_cnps_ns", p.np_min_time_between_cnps_ns},
                 {"topology", fabric.topology == droce::sim::Topology::kTwoHop ? "two-hop" : "dumbbell"},
                 {"pfc", fabric.pfc}, {"pfc_xoff_bytes", fabric.xoff_bytes}, {"pfc_xon_bytes", fabric.xon_bytes}};
  std::ofstream out(json_path);
  out << j.dump() << "\n";
  if (!out) return std::fprintf(stderr, "droce-sim: cannot write %s\n", json_path.c_str()), 1;
  std::printf("droce-sim: %u flows, %.1f ms simulated in %.2f s: jain %.3f, utilization %.3f, queue p50/p99/max "
              "%llu/%llu/%llu B, drops %llu, cnps %llu\n",
              cfg.flows, cfg.duration_ms, wall, r.jain_index, r.utilization,
              static_cast<unsigned long long>(r.queue_p50_bytes), static_cast<unsigned long long>(r.queue_p99_bytes),
              static_cast<unsigned long long>(r.queue_max_bytes), static_cast<unsigned long long>(r.drops),
              static_cast<unsigned long long>(r.cnps));
  if (!plot_path.empty()) {
    const std::string cmd = "/usr/bin/python3 \"" + std::string(DROCE_SOURCE_ROOT) + "/scripts/plot_sim.py\" \"" +
                            json_path + "\" \"" + plot_path + "\"";
    if (std::system(cmd.c_str()) != 0) return std::fprintf(stderr, "droce-sim: plotting failed\n"), 1;
  }
  return 0;
}
