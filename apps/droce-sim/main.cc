// droce-sim: DCQCN on a simulated dumbbell/incast, in virtual time; JSON (and a PNG) out.
#include <getopt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/run_python.h"
#include "apps/common/version_line.h"
#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/fabric.h"
#include <droce/protocols/dcqcn/param_options.h>

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
      "Reliability (each flow an RC sender with PSNs and a receiver that hands bytes on in order):\n"
      "  --recovery none|gbn|sr  none: losses stay lost (default); gbn: IBTA go-back-N (out-of-sequence\n"
      "                          dropped, one NAK per gap, resend from it); sr: selective repeat (receiver\n"
      "                          keeps out-of-order packets and SACKs, sender resends only what is missing)\n"
      "  --bdp-packets N         sr: most packets past the cumulative ACK (default 0 = link rate x base RTT)\n"
      "  --rto-us U              ACK timeout, both modes (default %g)\n"
      "  --flow-bytes B          payload per flow, then it stops (default 0 = infinite backlog)\n"
      "DCQCN parameters (override the preset; applied after --preset):\n"
      "  --g G  --alpha-period-us U  --rate-increase-period-us U  --byte-counter-bytes B\n"
      "  --fast-recovery-steps F  --ai-mbps R  --hai-mbps R  --min-rate-mbps R  --cnp-interval-us U\n"
      "  (paper: g=%g alpha-period=%g us T=%g us B=%llu F=%u R_AI=%g Mb/s R_HAI=%g Mb/s)\n"
      "Output:\n"
      "  --json FILE             results (jain_index, utilization, queue_bytes, drops, cnps, goodput_gbps,\n"
      "                          retransmitted, recovery, flows, series)\n"
      "  --plot FILE.png         also draw rates and queue over time (needs python3-matplotlib)\n"
      "  --version               droce's and DPDK's versions\n",
      d.flows, d.link_gbps, d.duration_ms, d.start_stagger_ms, static_cast<unsigned long long>(d.seed),
      static_cast<unsigned long long>(d.kmin_bytes), static_cast<unsigned long long>(d.kmax_bytes), d.pmax,
      static_cast<unsigned long long>(d.buffer_bytes), d.packet_bytes, d.link_delay_us, d.loss, d.sample_us,
      d.recovery.rto_us, p.g,
      p.alpha_update_period_ns / 1e3, p.rate_increase_period_ns / 1e3,
      static_cast<unsigned long long>(p.byte_counter_bytes), p.fast_recovery_steps, p.ai_rate_bps / 1e6,
      p.hai_rate_bps / 1e6);
}

// Everything the command line sets, parsed and checked before anything is simulated.
struct SimOptions {
  SimConfig cfg;
  droce::sim::FabricConfig fabric;
  bool use_fabric = false;  // --pfc or --topology two-hop: the fabric model
  std::string json_path, plot_path, preset = "paper";
};

// The series hold one value per flow per sample and live in memory until the JSON is written:
// bound them so that a tiny --sample-us is a clear refusal, not a bad_alloc gigabytes later.
constexpr double kMaxSamples = 1'000'000;
constexpr double kMaxSeriesValues = 10'000'000;  // samples x flows

// The simulator's DCQCN options by the set_param name they stand for; the rest are "--" + name.
std::string dcqcn_option(std::string_view param) {
  return param == "rate-increase-us" ? "--rate-increase-period-us" : "--" + std::string(param);
}

std::string check_sample_count(const SimConfig& c) {
  const double samples = c.duration_ms * 1e3 / c.sample_us;
  const double most = std::min(kMaxSamples, kMaxSeriesValues / c.flows);
  if (samples <= most) return {};
  char b[200];
  std::snprintf(b, sizeof b, "--sample-us: %g us over --duration-ms %g is %.3g samples, more than %.0f with %u flow(s); "
                "sample less often", c.sample_us, c.duration_ms, samples, most, c.flows);
  return b;
}

// 0: run; 1: --help or --version printed; 2: an error printed (one line naming the option as typed).
int parse_args(int argc, char** argv, SimOptions& so) {
  SimConfig& cfg = so.cfg;
  auto& fabric = so.fabric;
  fabric.topology = droce::sim::Topology::kDumbbell;
  fabric.pfc = false;
  auto fail = [](const std::string& message) { return std::fprintf(stderr, "droce-sim: %s\n", message.c_str()), 2; };
  enum : int {
    kFlows = 256, kLink, kDur, kCc, kPreset, kStagger, kIncast, kSeed, kKmin, kKmax, kPmax, kBuf, kPkt, kDelay,
    kLoss, kSample, kTopo, kPfc, kXoff, kXon, kRecovery, kBdp, kRto, kFlowBytes, kG, kAlphaP, kRateP, kBytes, kF, kAi, kHai, kMinRate, kCnpInt, kJson, kPlot, kHelp, kVersion
  };
  static const option longopts[] = {
      {"flows", 1, nullptr, kFlows}, {"link-gbps", 1, nullptr, kLink}, {"duration-ms", 1, nullptr, kDur},
      {"cc", 1, nullptr, kCc}, {"preset", 1, nullptr, kPreset}, {"start-stagger-ms", 1, nullptr, kStagger},
      {"incast", 0, nullptr, kIncast}, {"seed", 1, nullptr, kSeed}, {"kmin-bytes", 1, nullptr, kKmin},
      {"kmax-bytes", 1, nullptr, kKmax}, {"pmax", 1, nullptr, kPmax}, {"buffer-bytes", 1, nullptr, kBuf},
      {"packet-bytes", 1, nullptr, kPkt}, {"delay-us", 1, nullptr, kDelay}, {"loss", 1, nullptr, kLoss},
      {"sample-us", 1, nullptr, kSample}, {"topology", 1, nullptr, kTopo}, {"pfc", 0, nullptr, kPfc},
      {"pfc-xoff-bytes", 1, nullptr, kXoff}, {"pfc-xon-bytes", 1, nullptr, kXon},
      {"recovery", 1, nullptr, kRecovery}, {"bdp-packets", 1, nullptr, kBdp}, {"rto-us", 1, nullptr, kRto},
      {"flow-bytes", 1, nullptr, kFlowBytes}, {"g", 1, nullptr, kG}, {"alpha-period-us", 1, nullptr, kAlphaP},
      {"rate-increase-period-us", 1, nullptr, kRateP}, {"byte-counter-bytes", 1, nullptr, kBytes},
      {"fast-recovery-steps", 1, nullptr, kF}, {"ai-mbps", 1, nullptr, kAi}, {"hai-mbps", 1, nullptr, kHai},
      {"min-rate-mbps", 1, nullptr, kMinRate}, {"cnp-interval-us", 1, nullptr, kCnpInt},
      {"json", 1, nullptr, kJson}, {"plot", 1, nullptr, kPlot}, {"help", 0, nullptr, kHelp}, {"version", 0, nullptr, kVersion},
      {nullptr, 0, nullptr, 0}};
  constexpr std::uint64_t kMaxBytes = 1'000'000'000'000;  // 1 TB: any queue or threshold a run can mean
  // DCQCN overrides apply after the preset, whatever their order: (set_param name, value).
  std::vector<std::pair<std::string, std::string>> overrides;
  optind = 1;
  opterr = 0;
  int c;
  int index = 0;
  while ((c = getopt_long(argc, argv, "", longopts, &index)) != -1) {
    if (c < kFlows || c > kVersion)
      return fail("unknown or incomplete option " + droce::apps::quoted(argv[optind - 1]) + " (see --help)");
    const std::string name = std::string("--") + longopts[index].name;
    const std::string v = optarg != nullptr ? optarg : "";
    std::string e;
    auto dcqcn = [&](const char* param) {
      droce::dcqcn::DcqcnParams probe;
      if (e = droce::dcqcn::set_param(probe, param, v); !e.empty()) e = name + ": " + e;
      overrides.emplace_back(param, v);
    };
    switch (c) {
      case kFlows: e = droce::apps::parse_uint(name, v, 1, 4096, cfg.flows); break;
      case kLink: e = droce::apps::parse_real(name, v, 0.001, 1e4, cfg.link_gbps); break;
      case kDur: e = droce::apps::parse_real(name, v, 0.001, 60'000, cfg.duration_ms); break;
      case kCc:
        if (v == "dcqcn") cfg.cc = true;
        else if (v == "none") cfg.cc = false;
        else e = name + ": " + droce::apps::quoted(v) + " is not dcqcn or none";
        break;
      case kPreset:
        if (v != "paper" && v != "mlx5") e = name + ": " + droce::apps::quoted(v) + " is not paper or mlx5";
        so.preset = v;
        break;
      case kStagger: e = droce::apps::parse_real(name, v, 0, 60'000, cfg.start_stagger_ms); break;
      case kIncast: cfg.incast = true; break;
      case kSeed: e = droce::apps::parse_uint(name, v, 0, UINT64_MAX, cfg.seed); break;
      case kKmin: e = droce::apps::parse_uint(name, v, 0, kMaxBytes, cfg.kmin_bytes); break;
      case kKmax: e = droce::apps::parse_uint(name, v, 0, kMaxBytes, cfg.kmax_bytes); break;
      case kPmax: e = droce::apps::parse_real(name, v, 0, 1, cfg.pmax); break;
      case kBuf: e = droce::apps::parse_uint(name, v, 0, kMaxBytes, cfg.buffer_bytes); break;
      case kPkt: e = droce::apps::parse_uint(name, v, 64, 9000, cfg.packet_bytes); break;
      case kDelay: e = droce::apps::parse_real(name, v, 0, 1e6, cfg.link_delay_us); break;
      case kLoss: e = droce::apps::parse_real(name, v, 0, 1, cfg.loss); break;
      case kSample: e = droce::apps::parse_real(name, v, 0, 6e10, cfg.sample_us); break;
      case kTopo:
        if (v == "dumbbell") fabric.topology = droce::sim::Topology::kDumbbell;
        else if (v == "two-hop") fabric.topology = droce::sim::Topology::kTwoHop;
        else e = name + ": " + droce::apps::quoted(v) + " is not dumbbell or two-hop";
        so.use_fabric |= fabric.topology == droce::sim::Topology::kTwoHop;
        break;
      case kPfc: fabric.pfc = so.use_fabric = true; break;
      case kXoff: e = droce::apps::parse_uint(name, v, 0, kMaxBytes, fabric.xoff_bytes); break;
      case kXon: e = droce::apps::parse_uint(name, v, 0, kMaxBytes, fabric.xon_bytes); break;
      case kRecovery:
        if (v == "none") cfg.recovery.mode = droce::sim::Recovery::kNone;
        else if (v == "gbn") cfg.recovery.mode = droce::sim::Recovery::kGoBackN;
        else if (v == "sr") cfg.recovery.mode = droce::sim::Recovery::kSelectiveRepeat;
        else e = name + ": " + droce::apps::quoted(v) + " is not none, gbn or sr";
        break;
      case kBdp: e = droce::apps::parse_uint(name, v, 0, 1U << 20, cfg.recovery.bdp_packets); break;
      case kRto: e = droce::apps::parse_real(name, v, 1, 1e7, cfg.recovery.rto_us); break;
      case kFlowBytes: e = droce::apps::parse_uint(name, v, 0, kMaxBytes, cfg.recovery.flow_bytes); break;
      case kG: dcqcn("g"); break;
      case kAlphaP: dcqcn("alpha-period-us"); break;
      case kRateP: dcqcn("rate-increase-us"); break;
      case kBytes: dcqcn("byte-counter-bytes"); break;
      case kF: dcqcn("fast-recovery-steps"); break;
      case kAi: dcqcn("ai-mbps"); break;
      case kHai: dcqcn("hai-mbps"); break;
      case kMinRate: dcqcn("min-rate-mbps"); break;
      case kCnpInt: dcqcn("cnp-interval-us"); break;
      case kJson:
        e = droce::apps::check_output_path(name, v);
        so.json_path = v;
        break;
      case kPlot:
        e = droce::apps::check_output_path(name, v);
        so.plot_path = v;
        break;
      case kHelp: usage(cfg); return 1;
      case kVersion: droce::apps::print_version("droce-sim"); return 1;
    }
    if (!e.empty()) return fail(e);
  }
  if (optind < argc) return fail("unexpected argument " + droce::apps::quoted(argv[optind]) + " (see --help)");
  (void)droce::dcqcn::preset_by_name(so.preset, cfg.dcqcn.line_rate_bps, cfg.dcqcn);
  for (const auto& [param, value] : overrides)
    if (std::string e = droce::dcqcn::set_param(cfg.dcqcn, param, value); !e.empty()) return fail(dcqcn_option(param) + ": " + e);
  // The run's line rate is the link's (run_dumbbell and run_fabric set it): check the parameters against it.
  cfg.dcqcn.line_rate_bps = cfg.link_gbps * 1e9;
  if (std::string e = droce::dcqcn::validate_options(cfg.dcqcn, dcqcn_option, "--link-gbps"); !e.empty())
    return fail(e);
  fabric.base = cfg;
  if (std::string e = so.use_fabric ? fabric.validate() : cfg.validate(); !e.empty()) return fail(e);
  if (std::string e = check_sample_count(cfg); !e.empty()) return fail(e);
  if (so.json_path.empty()) return fail("--json FILE is required (see --help)");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  SimOptions so;
  if (int rc = parse_args(argc, argv, so); rc != 0) return rc == 1 ? 0 : 2;
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
    j["flows"].push_back({{"throughput_gbps", f.throughput_gbps}, {"bytes_received", f.bytes_received},
                          {"packets_sent", f.packets_sent}, {"cnps_received", f.cnps_received},
                          {"rate_cuts", f.rate_cuts}, {"goodput_gbps", f.goodput_gbps},
                          {"delivered_bytes", f.delivered_bytes}, {"retransmitted", f.retransmitted},
                          {"timeouts", f.timeouts}, {"naks", f.naks}, {"sacks", f.sacks},
                          {"duplicates", f.duplicates}, {"out_of_sequence", f.out_of_sequence},
                          {"order_errors", f.order_errors}, {"completion_us", f.completion_us}});
  }
  j["retransmitted"] = retransmitted;
  j["order_errors"] = order_errors;
  j["recovery"] = {{"mode", droce::sim::recovery_name(cfg.recovery.mode)}, {"bdp_packets", r.bdp_packets},
                   {"base_rtt_us", r.base_rtt_us}, {"rto_us", cfg.recovery.rto_us},
                   {"flow_bytes", cfg.recovery.flow_bytes}};
  j["series"] = {{"time_us", r.series_time_us}, {"flow_rate_gbps", r.series_rate_gbps},
                 {"queue_bytes", r.series_queue_bytes}};
  if (use_fabric) {
    j["pfc"] = {{"enabled", fabric.pfc}, {"pauses_sent", fr.pauses_sent}, {"pauses_s1", fr.pauses_s1},
                {"pauses_s2", fr.pauses_s2}, {"host_paused_fraction", fr.host_paused_fraction}};
    if (fabric.topology == droce::sim::Topology::kTwoHop) {
      j["innocent_gbps"] = fr.innocent_gbps;
      j["innocent_goodput_gbps"] = r.flows.back().goodput_gbps;
    }
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
                 {"pfc", fabric.pfc}, {"pfc_xoff_bytes", fabric.xoff_bytes}, {"pfc_xon_bytes", fabric.xon_bytes},
                 {"recovery", droce::sim::recovery_name(cfg.recovery.mode)}};
  if (std::string e = droce::apps::write_text_file(json_path, j.dump() + "\n"); !e.empty())
    return std::fprintf(stderr, "droce-sim: %s\n", e.c_str()), 1;
  std::printf("droce-sim: %u flows, %.1f ms simulated in %.2f s: jain %.3f, utilization %.3f, queue p50/p99/max "
              "%llu/%llu/%llu B, drops %llu, cnps %llu\n",
              cfg.flows, cfg.duration_ms, wall, r.jain_index, r.utilization,
              static_cast<unsigned long long>(r.queue_p50_bytes), static_cast<unsigned long long>(r.queue_p99_bytes),
              static_cast<unsigned long long>(r.queue_max_bytes), static_cast<unsigned long long>(r.drops),
              static_cast<unsigned long long>(r.cnps));
  if (cfg.recovery.mode != droce::sim::Recovery::kNone)
    std::printf("droce-sim: recovery %s: goodput %.3f Gb/s, %llu packets resent, base RTT %.2f us, BDP %u packets\n",
                droce::sim::recovery_name(cfg.recovery.mode), r.goodput_gbps, static_cast<unsigned long long>(retransmitted),
                r.base_rtt_us, r.bdp_packets);
  if (!plot_path.empty()) {
    if (std::string e = droce::apps::run_python(std::string(DROCE_SOURCE_ROOT) + "/scripts/plot_sim.py", {json_path, plot_path});
        !e.empty())
      return std::fprintf(stderr, "droce-sim: plotting failed: %s\n", e.c_str()), 1;
  }
  return 0;
}
