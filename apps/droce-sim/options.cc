// droce-sim option parsing on the shared CLI11 setup: every bad value is one line naming the option.
#include "apps/droce-sim/options.h"

#include <droce/protocols/dcqcn/param_options.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>

#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"
#include "apps/common/scenario/scenario_args.h"
#include "apps/droce-sim/scenario_options.h"

namespace droce::sim {

namespace {

using Overrides = std::vector<std::pair<std::string, std::string>>;  // (set_param name, value) as given

constexpr std::uint64_t kMaxBytes = 1'000'000'000'000;  // 1 TB: any queue or threshold a run can mean

// The series hold one value per flow per sample and live in memory until the JSON is written:
// bound them so that a tiny --sample-us is a clear refusal, not a bad_alloc gigabytes later.
constexpr double kMaxSamples = 1'000'000;
constexpr double kMaxSeriesValues = 10'000'000;  // samples x flows

// droce-sim's own names for the DCQCN parameters, older than the shared --dcqcn-NAME: still taken
// (hidden from --help, which names them once in the description), by the set_param name they set.
// Their values are kept apart from --dcqcn-NAME's until the two are merged (merge_spellings).
constexpr std::pair<const char*, const char*> kEarlierDcqcnNames[] = {
    {"--g", "g"},
    {"--alpha-period-us", "alpha-period-us"},
    {"--rate-increase-period-us", "rate-increase-us"},
    {"--byte-counter-bytes", "byte-counter-bytes"},
    {"--fast-recovery-steps", "fast-recovery-steps"},
    {"--ai-mbps", "ai-mbps"},
    {"--hai-mbps", "hai-mbps"},
    {"--min-rate-mbps", "min-rate-mbps"},
    {"--cnp-interval-us", "cnp-interval-us"},
};

std::string usage_text() {
  const auto p = dcqcn::DcqcnParams::paper();
  char paper[200];
  std::snprintf(paper, sizeof paper,
                "The paper preset: g=%g, alpha period %g us, T=%g us, B=%llu, F=%u, R_AI=%g Mb/s, R_HAI=%g Mb/s.\n",
                p.g, static_cast<double>(p.alpha_update_period_ns) / 1e3,
                static_cast<double>(p.rate_increase_period_ns) / 1e3,
                static_cast<unsigned long long>(p.byte_counter_bytes), p.fast_recovery_steps, p.ai_rate_bps / 1e6,
                p.hai_rate_bps / 1e6);
  return std::string(
             "usage: droce-sim [options] --json FILE [--plot FILE.png]\n"
             "Simulates N DCQCN senders sharing one switch egress (RED/ECN marking, tail drop) in virtual\n"
             "time, running droce's own DCQCN reaction/notification point and pacer. Deterministic per seed.\n"
             "--topology leafspine runs a droce-coll pattern over --ranks on a leaf-spine fabric instead and\n"
             "reports it as nccl-tests does (busbw), with per-step tails, per-link counters and its own cost.\n") +
         paper +
         "droce-sim's earlier DCQCN names are still taken: --g, --alpha-period-us, --rate-increase-period-us,\n"
         "--byte-counter-bytes, --fast-recovery-steps, --ai-mbps, --hai-mbps, --min-rate-mbps and\n"
         "--cnp-interval-us, each the same as its --dcqcn-NAME (given both ways, the later one wins).";
}

// A comma-separated list of times in ms, at most one per flow.
Status times(const std::string& option, const std::string& text, std::vector<double>& out) {
  out.clear();
  for (std::size_t start = 0;;) {
    if (out.size() == 4096) return Status::error(StatusCode::kInvalidArgument, option + ": more than 4096 times");
    const std::size_t comma = text.find(',', start);
    double v = 0;
    if (Status s = apps::parse_real(option, text.substr(start, comma == std::string::npos ? comma : comma - start), 0,
                                    60'000, v);
        !s.ok())
      return s;
    out.push_back(v);
    if (comma == std::string::npos) return {};
    start = comma + 1;
  }
}

Status check_sample_count(const SimConfig& c) {
  const double samples = c.duration_ms * 1e3 / c.sample_us;
  const double most = std::min(kMaxSamples, kMaxSeriesValues / c.flows);
  if (samples <= most) return {};
  char b[200];
  std::snprintf(b, sizeof b,
                "--sample-us: %g us over --duration-ms %g is %.3g samples, more than %.0f with %u flow(s); "
                "sample less often",
                c.sample_us, c.duration_ms, samples, most, c.flows);
  return Status::error(StatusCode::kInvalidArgument, b);
}

// Every option, by group; --cc, --preset, --dcqcn-NAME and the outputs from apps/common/cli/groups.h.
void declare(CLI::App& app, Options& o, std::string& cc, Overrides& overrides, Overrides& earlier) {
  namespace cli = apps::cli;
  using apps::Suffixes;
  SimConfig& c = o.cfg;
  FabricConfig& f = o.fabric;
  const std::string d = " (default ";
  std::string g = "senders and links";
  cli::add_uint(app, g, "--flows", "N", c.flows, 1, 4096, "senders, 1..4096" + d + std::to_string(c.flows) + ")",
                Suffixes::kDecimal);
  cli::add_real(app, g, "--link-gbps", "G", c.link_gbps, 0.001, 1e4,
                "rate of every link and of the bottleneck" + d + cli::num(c.link_gbps) + ")");
  cli::add_real(app, g, "--duration-ms", "T", c.duration_ms, 0.001, 60'000,
                "simulated time, up to 60000" + d + cli::num(c.duration_ms) + ")");
  cli::add_real(app, g, "--start-stagger-ms", "S", c.start_stagger_ms, 0, 60'000,
                "flow i starts at i*S" + d + cli::num(c.start_stagger_ms) + ")");
  cli::add_flag(app, g, "--incast", c.incast, "all flows start at once (N->1 incast)");
  cli::add_value(app, g, "--flow-start-ms", "T,T..", "flow i starts at the i-th time (default: --start-stagger-ms)",
                 [&c](const std::string& v) { return times("--flow-start-ms", v, c.flow_start_ms).message(); });
  cli::add_value(app, g, "--flow-stop-ms", "T,T..",
                 "flow i sends nothing after the i-th time, its queue drains (default the end)",
                 [&c](const std::string& v) { return times("--flow-stop-ms", v, c.flow_stop_ms).message(); });
  apps::add_scenario_option(app, g, o.scenario_file,
                            "run the scenario FILE (docs/scenario.md): flows on the dumbbell, a\n"
                            "pattern on --topology leafspine; options given here win over it");
  cli::add_uint(app, g, "--packet-bytes", "B", c.packet_bytes, 64, 9000,
                "data packet size on the wire, 64..9000" + d + std::to_string(c.packet_bytes) + ")", Suffixes::kBinary);
  cli::add_real(app, g, "--delay-us", "D", c.link_delay_us, 0, 1e6,
                "one-way delay per link" + d + cli::num(c.link_delay_us) + ")");
  cli::add_uint(app, g, "--seed", "S", c.seed, 0, UINT64_MAX,
                "random seed for ECN marking and loss" + d + std::to_string(c.seed) + ")");
  cli::add_real(app, g, "--sample-us", "U", c.sample_us, 0, 6e10,
                "series sampling period" + d + cli::num(c.sample_us) + ")");

  g = "switch";
  cli::add_uint(app, g, "--kmin-bytes", "B", c.kmin_bytes, 0, kMaxBytes,
                "RED/ECN Kmin" + d + std::to_string(c.kmin_bytes) + ")", Suffixes::kBinary);
  cli::add_uint(app, g, "--kmax-bytes", "B", c.kmax_bytes, 0, kMaxBytes,
                "RED/ECN Kmax" + d + std::to_string(c.kmax_bytes) + ")", Suffixes::kBinary);
  cli::add_real(app, g, "--pmax", "P", c.pmax, 0, 1, "marking probability at Kmax" + d + cli::num(c.pmax) + ")");
  cli::add_uint(app, g, "--buffer-bytes", "B", c.buffer_bytes, 0, kMaxBytes,
                "egress buffer, tail drop beyond" + d + std::to_string(c.buffer_bytes) + ")", Suffixes::kBinary);
  cli::add_real(app, g, "--loss", "P", c.loss, 0, 1,
                "random loss on the bottleneck, [0, 1) (leafspine: on every link,\n"
                "--transport rcqp only)" +
                    d + cli::num(c.loss) + ")");
  cli::add_choice(app, g, "--topology", {"dumbbell", "two-hop", "leafspine"},
                  "N senders -> switch -> receiver, or N senders -> S1 -> S2 -> receiver\n"
                  "plus an innocent flow S1 -> S2 -> another receiver, or a leaf-spine fabric\n"
                  "carrying --pattern over --ranks (default dumbbell)",
                  [&f, &o](std::size_t i) {
                    f.topology = i == 0 ? Topology::kDumbbell : Topology::kTwoHop;
                    o.use_leafspine = i == 2;
                  });

  g = "leaf-spine (--topology leafspine: a droce-coll pattern; --transport rcqp for loss recovery and --cc)";
  LeafSpineConfig& ls = o.leafspine;
  cli::add_uint(app, g, "--leaves", "L", ls.leaves, 1, 4096,
                "leaves; --ranks / L hosts on each" + d + std::to_string(ls.leaves) + ")", Suffixes::kDecimal);
  cli::add_uint(app, g, "--spines", "S", ls.spines, 1, 1024,
                "spines, each joined to every leaf" + d + std::to_string(ls.spines) + ")", Suffixes::kDecimal);
  cli::add_real(app, g, "--uplink-gbps", "G", ls.uplink_gbps, 0.001, 1e4,
                "every leaf-spine link, both ways (default --link-gbps; oversubscription is\n"
                "hosts per leaf x --link-gbps over spines x this)");
  cli::add_value(app, g, "--ecmp-hash", "FIELDS", "the lab's ECMP hash fields and seed (default 5-tuple,seed=0)",
                 [&ls](const std::string& v) {
                   const Status s = engine::EcmpHashConfig::parse(v, ls.ecmp);
                   return s.ok() ? std::string() : s.message();
                 });
  cli::add_value(app, g, "--pattern", "NAME",
                 "allreduce (ring), alltoall, incast (to rank 0), permutation, bisection\n(default allreduce)",
                 [&ls](const std::string& v) {
                   coll::Pattern p{};
                   if (!coll::pattern_by_name(v, p) || !sim_supports(p))
                     return "--pattern: '" + v + "' is not allreduce, alltoall, incast, permutation or bisection";
                   ls.coll.pattern = p;
                   return std::string();
                 });
  cli::add_uint(app, g, "--ranks", "N", ls.coll.ranks, 2, kMaxSimRanks,
                "ranks, one per host" + d + std::to_string(ls.coll.ranks) + ")", Suffixes::kDecimal);
  cli::add_uint(
      app, g, "--size", "B", ls.coll.size_bytes, 4, kMaxBytes,
      "bytes, in nccl-tests' meaning for the pattern (float elements)" + d + std::to_string(ls.coll.size_bytes) + ")",
      Suffixes::kBinary);

  g = "lossless (PFC)";
  cli::add_flag(app, g, "--pfc", f.pfc, "lossless: switch ingress above XOFF pauses its upstream (802.1Qbb)");
  cli::add_uint(app, g, "--pfc-xoff-bytes", "B", f.xoff_bytes, 0, kMaxBytes,
                "pause threshold per ingress port" + d + std::to_string(f.xoff_bytes) + ")", Suffixes::kBinary);
  cli::add_uint(app, g, "--pfc-xon-bytes", "B", f.xon_bytes, 0, kMaxBytes,
                "resume threshold" + d + std::to_string(f.xon_bytes) + ")", Suffixes::kBinary);

  g = "reliability (each flow an RC sender with PSNs and a receiver that hands bytes on in order)";
  RecoveryConfig& r = c.recovery;
  cli::add_choice(app, g, "--recovery", {"none", "gbn", "sr"},
                  "none: losses stay lost (default); gbn: IBTA go-back-N (out-of-sequence\n"
                  "dropped, one NAK per gap, resend from it); sr: selective repeat (receiver\n"
                  "keeps out-of-order packets and SACKs, sender resends only what is missing)",
                  [&r](std::size_t i) {
                    r.mode = i == 0 ? Recovery::kNone : i == 1 ? Recovery::kGoBackN : Recovery::kSelectiveRepeat;
                  });
  cli::add_uint(app, g, "--bdp-packets", "N", r.bdp_packets, 0, 1U << 20,
                "sr: most packets past the cumulative ACK (default 0 = link rate x base RTT)", Suffixes::kDecimal);
  cli::add_real(app, g, "--rto-us", "U", r.rto_us, 1, 1e7, "ACK timeout, both modes" + d + cli::num(r.rto_us) + ")");
  cli::add_uint(app, g, "--flow-bytes", "B", r.flow_bytes, 0, kMaxBytes,
                "payload per flow, then it stops (default 0 = infinite backlog)", Suffixes::kBinary);
  cli::add_choice(app, g, "--transport", {"model", "rcqp"},
                  "model: the simulator's own go-back-N and selective repeat (default);\n"
                  "rcqp: droce's RC transport itself, a requester and a responder RcQp per flow\n"
                  "(protocols/rc), frames built and parsed as on the wire, 64 KiB WRITEs, PMTU the\n"
                  "largest of 256..4096 that --packet-bytes holds, adaptive RTO from --rto-us",
                  [&r](std::size_t i) { r.rcqp = i == 1; });

  cli::DcqcnFields dc;
  dc.cc = &cc;
  dc.cc_help = "congestion control of the senders; none: they send at line rate";
  dc.preset = &o.preset;
  dc.overrides = &overrides;
  cli::add_dcqcn(app, dc);
  for (const auto& [option, param] : kEarlierDcqcnNames) {
    const std::string name = option, set = param;
    cli::add_value(app, "", name, "V", "", [&earlier, name, set](const std::string& v) {
      dcqcn::DcqcnParams probe;
      if (Status s = dcqcn::set_param(probe, set, v); !s.ok()) return name + ": " + s.message();
      earlier.emplace_back(set, v);
      return std::string();
    });
  }

  cli::OutputFields out;
  out.json = &o.json_path;
  out.json_help =
      "results (jain_index, utilization, queue_bytes, drops, cnps, goodput_gbps,\n"
      "retransmitted, recovery, flows, series); required";
  out.plot = &o.plot_path;
  out.plot_help = "also draw rates and queue over time (needs python3-matplotlib)";
  cli::add_output(app, out);
  app.get_option("--plot")->type_name("FILE.png");
}

// Where the user's last position of option `name` on the command line is; -1: not there (absent,
// or only in --config, whose values CLI11 does not put in the parse order).
long last_position(const CLI::App& app, const std::string& name) {
  const CLI::Option* op = app.get_option_no_throw(name);
  const std::vector<CLI::Option*>& order = app.parse_order();
  long at = -1;
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] == op) at = static_cast<long>(i);
  return at;
}

// One list of overrides from both spellings: a parameter given under both keeps the spelling given
// last on the command line (the command line over --config), as a repeated option keeps its last
// value; both only in --config cannot be ordered and are refused. `spelled_earlier` gets the
// parameters whose earlier name is in force, for the messages.
Status merge_spellings(const CLI::App& app, Overrides& shared, Overrides earlier,
                       std::vector<std::string>& spelled_earlier) {
  auto drop = [](Overrides& list, const std::string& param) {
    list.erase(std::remove_if(list.begin(), list.end(), [&param](const auto& kv) { return kv.first == param; }),
               list.end());
  };
  for (const auto& [option, param] : kEarlierDcqcnNames) {
    const std::string shared_option = std::string("--dcqcn-") + param;
    if (!apps::cli::given(app, option)) continue;
    if (apps::cli::given(app, shared_option)) {
      const long old_at = last_position(app, option), shared_at = last_position(app, shared_option);
      if (old_at < 0 && shared_at < 0)
        return Status::error(StatusCode::kInvalidArgument, "--config: " + std::string(option + 2) + " and " +
                                                               shared_option.substr(2) +
                                                               " set the same DCQCN parameter: give one");
      if (old_at < shared_at) {
        drop(earlier, param);
        continue;
      }
      drop(shared, param);
    }
    spelled_earlier.emplace_back(param);
  }
  shared.insert(shared.end(), earlier.begin(), earlier.end());
  return {};
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o) {
  std::string cc = o.cfg.cc ? "dcqcn" : "none";
  Overrides overrides, earlier;  // applied after the preset, whatever their order on the command line
  const auto app = apps::cli::make_app("droce-sim", usage_text());
  declare(*app, o, cc, overrides, earlier);
  // `droce-sim -- OPTIONS` as every other app is run: droce-sim starts no EAL, so nothing may stand
  // before the `--` (an EAL option there would be silently meaningless).
  const auto separator = std::find(args.begin(), args.end(), "--");
  if (separator != args.end() && separator != args.begin())
    return apps::cli::fail(*app,
                           apps::quoted(args.front()) + " before --: droce-sim runs no EAL and takes no EAL options");
  std::vector<std::string> own(separator == args.end() ? args.begin() : separator + 1, args.end());
  if (apps::apply_scenario(*app, own, scenario_options, o.scenario) != 0) return -1;
  if (int rc = apps::cli::parse(*app, own); rc != 0) return rc;
  auto fail = [&app](const std::string& message) { return apps::cli::fail(*app, message); };
  SimConfig& cfg = o.cfg;
  cfg.cc = cc == "dcqcn";
  o.use_fabric = o.fabric.pfc || o.fabric.topology == Topology::kTwoHop;

  std::vector<std::string> spelled_earlier;
  if (Status s = merge_spellings(*app, overrides, std::move(earlier), spelled_earlier); !s.ok())
    return fail(s.message());
  // Each parameter named as the user typed it.
  auto option_of = [&spelled_earlier](std::string_view param) {
    for (const auto& [option, name] : kEarlierDcqcnNames)
      if (param == name && std::find(spelled_earlier.begin(), spelled_earlier.end(), param) != spelled_earlier.end())
        return std::string(option);
    return "--dcqcn-" + std::string(param);
  };
  // The preset at the default line rate (as always), then the overrides; the run's line rate is the
  // link's (run_dumbbell and run_fabric set it): the parameters are checked against it.
  (void)dcqcn::preset_by_name(o.preset, cfg.dcqcn.line_rate_bps, cfg.dcqcn);
  for (const auto& [param, value] : overrides)
    if (Status s = dcqcn::set_param(cfg.dcqcn, param, value); !s.ok())
      return fail(option_of(param) + ": " + s.message());
  cfg.dcqcn.line_rate_bps = cfg.link_gbps * 1e9;
  if (Status s = dcqcn::validate_options(cfg.dcqcn, option_of, "--link-gbps"); !s.ok()) return fail(s.message());

  o.fabric.base = cfg;
  if (o.use_leafspine) {
    // --cc none unless asked for; the model refuses --cc dcqcn, --recovery and --loss (validate):
    // only --transport rcqp has a reaction point and PSNs.
    if (apps::cli::given(*app, "--flows") || cfg.incast || !cfg.flow_start_ms.empty() || !cfg.flow_stop_ms.empty())
      return fail(
          "--flows, --incast, --flow-start-ms, --flow-stop-ms: --topology leafspine takes --ranks and --pattern");
    o.fabric.base.cc = apps::cli::given(*app, "--cc") && cfg.cc;
    o.leafspine.fabric = o.fabric;
    o.leafspine.coll.seed = cfg.seed;
    if (Status s = o.leafspine.validate(); !s.ok()) return fail(s.message());
    if (o.json_path.empty()) return fail("--json FILE is required (see --help)");
    if (!o.plot_path.empty()) return fail("--plot: not drawn for --topology leafspine");
    return 0;
  }
  // The leaf-spine's own options on another topology: refused, not ignored.
  for (const char* name : {"--leaves", "--spines", "--uplink-gbps", "--ecmp-hash", "--pattern", "--ranks", "--size"})
    if (apps::cli::given(*app, name)) return fail(std::string(name) + ": only with --topology leafspine");
  if (Status s = o.use_fabric ? o.fabric.validate() : cfg.validate(); !s.ok()) return fail(s.message());
  if (Status s = check_sample_count(cfg); !s.ok()) return fail(s.message());
  if (o.json_path.empty()) return fail("--json FILE is required (see --help)");
  if (!o.plot_path.empty() && o.json_path == "-")
    return fail("--plot draws from the --json file: give it a file, not -");
  return 0;
}

}  // namespace droce::sim
