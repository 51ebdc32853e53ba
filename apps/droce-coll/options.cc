// droce-coll option parsing: every bad value is one line naming the option, exit 2, before EAL.
#include "apps/droce-coll/options.h"

#include <cstdio>

#include "apps/common/cli/address_options.h"
#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/link_options.h"
#include "apps/common/cli/switch_failure_options.h"
#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"
#include "apps/common/fabric_topology.h"
#include "apps/common/scenario/scenario_args.h"
#include "apps/droce-coll/scenario_options.h"
#include "apps/droce-coll/schedule.h"
#include "apps/droce-coll/wiring.h"

namespace droce::coll {

namespace {

constexpr const char* kUsage =
    "usage: droce-coll [EAL options] -- [options]\n"
    "The collective traffic of an AI cluster over droce's RoCEv2, every byte verified: N ranks in this\n"
    "process, each on its own RC endpoint and link to a lab switch port (rate, buffer, RED/ECN, PFC,\n"
    "loss), exchanging chunks as RDMA WRITE with immediate under receiver-granted credits, as NCCL's IB\n"
    "transport does; nccl-tests' table, sizes and bandwidths. Examples:\n"
    "  droce-coll -- --pattern allreduce --ranks 8 --minbytes 1M --maxbytes 64M\n"
    "  droce-coll -- --pattern alltoall --ranks 4 --size 1M --loss 0.01 --recovery sr --json a.json\n"
    "With no EAL options, droce-coll runs on lcores 0..W-1 (--workers W).\n"
    "Under mpirun, each process on its own --port with one rank, or K (-g K) sharing it\n"
    "(scripts/coll-mpi.sh NP [-g K]: one host):\n"
    "  mpirun -np 4 --bind-to none droce-coll -- --port 0000:3b:00.0 --ip-base 192.168.10.1 --size 64M";

constexpr std::uint64_t kMaxBytes = 1ull << 30;

// nccl-tests' short letters, after "--" only (EAL reads them before it).
std::vector<std::string> long_names(const std::vector<std::string>& args) {
  static const std::pair<const char*, const char*> kShort[] = {
      {"-b", "--minbytes"},     {"-e", "--maxbytes"}, {"-f", "--stepfactor"},       {"-n", "--iters"},
      {"-w", "--warmup_iters"}, {"-d", "--dtype"},    {"-g", "--ranks-per-process"}};
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::string v = a;
    for (const auto& [s, l] : kShort)
      if (a == s) v = l;
    out.push_back(v);
  }
  return out;
}

void declare(CLI::App& app, Options& o, std::vector<std::pair<std::string, std::string>>& overrides) {
  namespace cli = apps::cli;
  using apps::Suffixes;
  const std::string d = " (default ";
  std::string g = "collective";
  std::vector<std::string> names;
  for (Pattern p : kAllPatterns) names.emplace_back(pattern_name(p));
  cli::add_choice(app, g, "--pattern", names,
                  "what every rank sends to whom (docs/droce-coll.md): the NCCL collectives, then\n"
                  "the fabric stress patterns" +
                      d + pattern_name(o.pattern) + ")",
                  [&o](std::size_t i) { o.pattern = kAllPatterns[i]; });
  apps::add_scenario_option(app, g, o.scenario_file,
                            "run the scenario FILE's pattern on its fabric (docs/scenario.md); options\n"
                            "given here win over it");
  cli::add_choice(app, g, "--algo", {"ring", "halving-doubling"},
                  "allreduce's algorithm: ring, or Rabenseifner's recursive halving-doubling" + d + "ring)",
                  [&o](std::size_t i) { o.algo = i == 0 ? Algo::kRing : Algo::kHalvingDoubling; });
  cli::add_uint(app, g, "--ranks", "N", o.ranks, 2, kMaxRanks,
                "ranks, each with its own endpoint and switch port, 2..64" + d + std::to_string(o.ranks) + ")");
  cli::add_uint(
      app, g, "--workers", "W", o.workers, 1, 64,
      "EAL lcores polling disjoint sets of ranks (the switch on the first)" + d + std::to_string(o.workers) + ")");
  cli::add_uint(app, g, "--root", "R", o.root, 0, kMaxRanks - 1,
                "broadcast's, reduce's and incast's root rank" + d + std::to_string(o.root) + ")");
  cli::add_choice(app, g, "--dtype", {"int32", "float"},
                  "element type (nccl-tests -d): int32 or float (float32)" + d + dtype_name(o.dtype) + ")",
                  [&o](std::size_t i) { o.dtype = i == 0 ? DataType::kInt32 : DataType::kFloat32; });
  cli::add_value(app, g, "--size", "BYTES", "one size: --minbytes and --maxbytes both (nccl-tests' size semantics)",
                 [&o](const std::string& v) {
                   std::uint64_t b = 0;
                   if (engine::Status s = apps::parse_uint("--size", v, 1, kMaxBytes, b, Suffixes::kBinary); !s.ok())
                     return s.message();
                   o.minbytes = o.maxbytes = b;
                   return std::string();
                 });
  cli::add_uint(app, g, "--minbytes", "BYTES", o.minbytes, 1, kMaxBytes,
                "first size of the sweep (-b after --)" + d + "32M)", Suffixes::kBinary);
  cli::add_uint(app, g, "--maxbytes", "BYTES", o.maxbytes, 1, kMaxBytes,
                "last size of the sweep, at most 1G (-e after --)" + d + "32M)", Suffixes::kBinary);
  cli::add_uint(app, g, "--stepfactor", "F", o.stepfactor, 2, 1024,
                "each size is the previous times F (-f after --)" + d + std::to_string(o.stepfactor) + ")");
  cli::add_uint(app, g, "--iters", "N", o.iters, 1, 1'000'000,
                "timed iterations per size (-n after --)" + d + std::to_string(o.iters) + ")");
  cli::add_uint(app, g, "--warmup_iters", "N", o.warmup_iters, 0, 1'000'000,
                "untimed iterations before them (-w after --)" + d + std::to_string(o.warmup_iters) + ")");
  cli::add_choice(app, g, "--placement", {"both", "out-of-place", "in-place"},
                  "run out of place, in place, or both as nccl-tests does (in place: allreduce,\n"
                  "reduce_scatter, allgather, broadcast, reduce)" +
                      d + "both)",
                  [&o](std::size_t i) { o.placement = static_cast<Placement>(i); });
  cli::add_real(
      app, g, "--timeout", "S", o.timeout_s, 0.1, 86400,
      "an iteration that takes longer names its stalled rank and ends the run" + d + cli::num(o.timeout_s) + " s)");
  cli::add_value(app, g, "--stall-rank", "R",
                 "fault injection: rank R stops being polled when the run starts (a hung rank)",
                 [&o](const std::string& v) {
                   std::uint32_t r = 0;
                   if (engine::Status s = apps::parse_uint("--stall-rank", v, 0, kMaxRanks - 1, r); !s.ok())
                     return s.message();
                   o.stall_rank = static_cast<int>(r);
                   return std::string();
                 });

  g = "transport (NCCL's IB transport)";
  cli::add_uint(app, g, "--chunk", "BYTES", o.chunk_bytes, 4, 16u << 20,
                "each transfer moves in chunks of this size (WRITE with immediate), a whole number\n"
                "of elements" +
                    d + "64K)",
                Suffixes::kBinary);
  cli::add_uint(app, g, "--buffers", "N", o.buffers, 1, 64,
                "staging slots each receiver grants each sender (its credits)" + d + std::to_string(o.buffers) + ")");
  cli::add_uint(app, g, "--qps-per-peer", "K", o.qps_per_peer, 1, kMaxQpsPerPeer,
                "QPs between two ranks (K UDP source ports); chunks round-robin over them" + d +
                    std::to_string(o.qps_per_peer) + ")");
  cli::add_value(
      app, g, "--udp-sport", "PORTS",
      "the UDP source port (the ECMP entropy) of each pair's QPs: derived (from the QP\n"
      "numbers, as Linux does) or BASE[,STRIDE]: QP k of every pair, both ends, sends\n"
      "from BASE + k x STRIDE (STRIDE 0: all K on one port, one flow; default derived)",
      [&o](const std::string& v) { return apps::UdpSportPlan::parse("--udp-sport", v, o.udp_sport).message(); });
  cli::WorkloadFields work;
  work.mtu = &o.mtu;
  cli::add_workload(app, work);
  cli::add_choice(
      app, cli::kWorkload, "--recovery", {"gbn", "sr"},
      "loss recovery: gbn (go-back-N, IBTA) or sr (selective repeat between droce QPs)" + d + "gbn)",
      [&o](std::size_t i) { o.recovery = i == 0 ? rc::Recovery::kGoBackN : rc::Recovery::kSelectiveRepeat; });
  cli::add_uint(app, cli::kWorkload, "--sr-bdp-packets", "N", o.sr_bdp_pkts, 1, rc::kSrMaxBdpPkts,
                "selective repeat: PSNs in flight per QP" + d + std::to_string(o.sr_bdp_pkts) + ")");
  cli::ConnectionFields conn;
  conn.qp_timeout = &o.qp_timeout;
  conn.retry_cnt = &o.retry_cnt;
  conn.adaptive_rto = &o.adaptive_rto;
  cli::add_connection(app, conn);
  cli::add_dscp(app, cli::kConnection, o.dscp);

  cli::DcqcnFields cc;
  cc.cc = &o.cc;
  cc.preset = &o.preset;
  cc.line_gbps = &o.line_gbps;
  cc.overrides = &overrides;
  cli::add_dcqcn(app, cc);

  auto& s = o.sw;
  g = "fabric (one lab switch port per rank, droce-switch's queues)";
  cli::add_real(app, g, "--egress-gbps", "G", o.egress_gbps, 0, 1000,
                "shape every port's egress to G Gb/s, the ranks' link rate (default 0: unshaped)");
  cli::add_value(app, g, "--fabric", "TOPOLOGY",
                 "star (one switch, default) or leafspine:L,S: L leaf switches of ranks/L ranks each\n"
                 "and S spines, every leaf joined to every spine (docs/fabric-lab.md)",
                 [&o](const std::string& v) {
                   apps::FabricTopology t;
                   if (engine::Status s = apps::FabricTopology::parse(v, t); !s.ok()) return s.message();
                   o.leaves = t.leaves;
                   o.spines = t.spines;
                   return std::string();
                 });
  cli::add_real(app, g, "--uplink-gbps", "G", o.uplink_gbps, 0, 1000,
                "leaf-spine: shape every leaf-spine link (both ways) to G Gb/s; below the ranks'\n"
                "rate x ranks per leaf / spines it is oversubscribed (default: --egress-gbps)");
  cli::add_value(app, g, "--ecmp-hash", "FIELDS",
                 "leaf-spine: what a leaf hashes to pick a spine, from src-ip,dst-ip,proto,src-port,\n"
                 "dst-port (or 5-tuple), and seed=N (default 5-tuple,seed=0)",
                 [&o](const std::string& v) { return engine::EcmpHashConfig::parse(v, o.ecmp).message(); });
  cli::add_repeatable(app, g, "--link-down", "LEAF:SPINE@T1[:T2]",
                      "leaf-spine: the link between leaf LEAF and spine SPINE fails T1 ms after the\n"
                      "first timed iteration starts and comes back at T2 (never without it); what it\n"
                      "holds is dropped, its flows re-hashed onto the other spines and moved back when\n"
                      "it returns (resilient hashing; docs/fabric-lab.md); repeatable",
                      [&o](const std::string& v) {
                        engine::LinkFailure f;
                        if (engine::Status s = engine::LinkFailure::parse(v, f); !s.ok()) return s.message();
                        o.link_failures.push_back(f);
                        return std::string();
                      });
  cli::add_link_specs(app, g, o.links);
  cli::add_real(app, g, "--sample-ms", "M", o.sample_ms, 0, 1000,
                "sample every queue of the lab fabric (each rank's port, both directions of every\n"
                "leaf-spine link) every M ms of the timed run, into the JSON's fabric.series (default 1;\n"
                "0: none)");
  cli::add_real(app, g, "--shaper-burst-us", "U", s.shaper_burst_us, 0, 1e6,
                "how far a backlogged shaped port may fall behind and catch up: this process's lab\n"
                "stops whenever the OS deschedules it (default 50000)");
  cli::SwitchFields sf;
  sf.queue_group = g;
  sf.kmin_bytes = &s.kmin_bytes;
  sf.kmax_bytes = &s.kmax_bytes;
  sf.pmax = &s.pmax;
  sf.buffer_bytes = &s.buffer_bytes;
  sf.delay_us = &s.delay_us;
  sf.pfc = &s.pfc;
  sf.pfc_priority = &s.pfc_priority;
  sf.pfc_priority_help = "the lossless priority the switch pauses and the ranks honour (DSCP/8)";
  sf.pfc_xoff_bytes = &s.pfc_xoff_bytes;
  sf.pfc_xon_bytes = &s.pfc_xon_bytes;
  sf.pfc_quanta = &s.pfc_pause_quanta;
  sf.link_gbps = &s.link_gbps_for_pfc;
  cli::add_switch(app, sf);
  cli::add_switch_failures(app, "lab failure switches (every switch; docs/fabric-lab.md)", s,
                           cli::FailurePeers::kRanks);

  cli::ImpairmentFields imp;
  imp.group = "lab impairment (every link, towards its rank; the transport never sees it)";
  imp.loss = &o.impairment.loss;
  imp.duplicate = &o.impairment.duplicate;
  imp.reorder = &o.impairment.reorder;
  imp.burst_start = &o.impairment.burst_start;
  imp.burst_frames = &o.impairment.burst_frames;
  imp.seed = &o.seed;
  imp.seed_help =
      "seed of the permutation, the impairment and RED; when given, of the first\nPSNs too (else drawn from the OS's "
      "entropy)";
  cli::add_impairment(app, imp);

  cli::OutputFields out;
  out.json = &o.json;
  out.json_help = "the results as JSON (results[] of size, count, time_us, algbw_gbps, busbw_gbps, wrong)";
  out.pcap = &o.pcap;
  out.pcap_help = "capture every frame the ranks send into the fabric (pcap, ns timestamps)";
  out.pcap_snaplen = &o.pcap_snaplen;
  out.plot = &o.plot;
  out.plot_help = "a PNG: busbw against size, and each iteration's time (needs --json)";
  out.quiet = &o.quiet;
  cli::add_output(app, out);

  g = "across processes and hosts (under mpirun: each process on its own port)";
  cli::add_value(app, g, "--port", "DEVARGS",
                 "this rank's DPDK port: a vdev (net_memif0,role=client,socket=/run/x{rank}.sock) or a\n"
                 "PCI address; A|B: the host's ports, one per local rank in turn ({rank} and\n"
                 "{local_rank} replaced); required under mpirun",
                 [&o](const std::string& v) {
                   if (v.empty() || v.find_first_of(" \t") != std::string::npos)
                     return std::string("--port: empty or has spaces");
                   o.port = v;
                   return std::string();
                 });
  cli::add_value(app, g, "--ip-base", "A.B.C.D", "rank r's IPv4 address is A.B.C.D + r (default 10.0.0.1)",
                 [&o](const std::string& v) {
                   std::uint32_t a = 0;
                   if (!parse_ipv4(v, a)) return "--ip-base: " + v + " is not an IPv4 address";
                   o.ip_base = v;
                   return std::string();
                 });
  cli::add_uint(app, g, "--ranks-per-process", "K", o.ranks_per_process, 1, kMaxRanks,
                "-g K: K ranks in each process, all on its one --port (a NIC one process opens): the\n"
                "world is -np x K, rank = process x K + local index; frames between two ranks of\n"
                "one process are looped in it, as a RoCE NIC loops its own addresses" +
                    d + "1)");
}

}  // namespace

bool parse_ipv4(const std::string& text, std::uint32_t& out) {
  std::uint32_t a = 0;
  std::size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    std::size_t end = pos;
    while (end < text.size() && end - pos < 4 && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == pos || end - pos > 3) return false;
    const unsigned v = static_cast<unsigned>(std::stoul(text.substr(pos, end - pos)));
    if (v > 255) return false;
    a = a << 8 | v;
    if (i < 3 && (end >= text.size() || text[end] != '.')) return false;
    pos = end + 1;
  }
  if (pos - 1 != text.size()) return false;
  out = a;
  return true;
}

std::vector<std::uint64_t> Options::sizes() const {
  std::vector<std::uint64_t> v;
  for (std::uint64_t b = minbytes; b <= maxbytes && v.size() < 64; b *= stepfactor) v.push_back(b);
  return v;
}

int parse_options(const std::vector<std::string>& args, Options& o, const std::vector<std::string>& eal) {
  std::vector<std::pair<std::string, std::string>> overrides;
  o.pcap_snaplen = apps::cli::kDefaultPcapSnaplen;
  o.impairment.burst_frames = 8;
  o.sw.pfc_priority = 3;
  o.sw.shaper_burst_us = 50'000;
  const auto app = apps::cli::make_app("droce-coll", kUsage);
  declare(*app, o, overrides);
  std::vector<std::string> own = long_names(args);
  if (apps::apply_scenario(*app, own, scenario_options, o.scenario) != 0) return -1;
  if (int rc = apps::cli::parse(*app, own, eal); rc != 0) return rc;
  auto fail = [&app](const std::string& message) { return apps::cli::fail(*app, message); };
  o.ranks_given = apps::cli::given(*app, "--ranks");
  if (apps::cli::given(*app, "--seed")) o.psn_seed = o.seed;
  o.ranks_per_process_given = apps::cli::given(*app, "--ranks-per-process");
  for (const char* name : kLabOnlyOptions)
    if (apps::cli::given(*app, name)) o.lab_only_given.emplace_back(name);
  if (o.minbytes > o.maxbytes) return fail("--minbytes must not exceed --maxbytes");
  const std::uint32_t e = dtype_bytes(o.dtype);
  for (const auto& [name, v] :
       {std::pair<const char*, std::uint64_t>{"--minbytes", o.minbytes}, {"--maxbytes", o.maxbytes}})
    if (engine::Status s = whole_elements(apps::cli::given(*app, "--size") ? "--size" : name, v, o.dtype); !s.ok())
      return fail(s.message());
  if (o.chunk_bytes % e != 0) return fail(whole_elements("--chunk", o.chunk_bytes, o.dtype).message());
  if (o.root >= o.ranks)
    return fail("--root: " + std::to_string(o.root) + " is not a rank (0.." + std::to_string(o.ranks - 1) + ")");
  if (o.stall_rank >= static_cast<int>(o.ranks))
    return fail("--stall-rank: " + std::to_string(o.stall_rank) + " is not a rank (0.." + std::to_string(o.ranks - 1) +
                ")");
  if (o.algo == Algo::kHalvingDoubling && o.pattern != Pattern::kAllReduce)
    return fail("--algo halving-doubling: only allreduce has it");
  if (o.workers > o.ranks) return fail("--workers: more workers (" + std::to_string(o.workers) + ") than ranks");
  // Every size must give each rank at least one element to move.
  for (std::uint64_t b : o.sizes()) {
    const SizePlan p = plan_size(o.pattern, o.ranks, b, o.dtype);
    if (p.count == 0)
      return fail(std::string(apps::cli::given(*app, "--size") ? "--size" : "--minbytes") + ": " + std::to_string(b) +
                  " bytes of " + pattern_name(o.pattern) + " at " + std::to_string(o.ranks) +
                  " ranks is no element per rank (nccl-tests rounds the count down to 0)");
  }
  if (engine::Status s = o.udp_sport.check("--udp-sport", o.qps_per_peer); !s.ok()) return fail(s.message());
  if (o.leaves != 0 && o.ranks % o.leaves != 0)
    return fail("--fabric: " + std::to_string(o.ranks) + " ranks do not divide into " + std::to_string(o.leaves) +
                " leaves");
  if (o.leaves != 0 && o.ranks / o.leaves + o.spines > 64)
    return fail("--fabric: a leaf has at most 64 ports (ranks per leaf + spines)");
  if (o.leaves == 0 && (apps::cli::given(*app, "--uplink-gbps") || apps::cli::given(*app, "--ecmp-hash")))
    return fail(std::string(apps::cli::given(*app, "--uplink-gbps") ? "--uplink-gbps" : "--ecmp-hash") +
                ": only with --fabric leafspine:L,S");
  if (o.leaves == 0 && !o.link_failures.empty()) return fail("--link-down: only with --fabric leafspine:L,S");
  if (o.leaves == 0 && !o.links.empty()) return fail("--link: only with --fabric leafspine:L,S");
  if (engine::Status s = apps::cli::check_link_specs(o.links, o.leaves, o.spines, o.sw); !s.ok())
    return fail(s.message());
  if (engine::Status s = engine::check_link_failures(o.link_failures, o.leaves, o.spines); !s.ok())
    return fail(s.message());
  // A stuck or slow rank's port: every one a rank, none both, PFC on (they pause lossless classes).
  for (std::uint16_t r : o.sw.stuck_ports)
    if (r >= o.ranks)
      return fail("--stuck-rank: " + std::to_string(r) + " is not a rank (0.." + std::to_string(o.ranks - 1) + ")");
  if (!o.sw.stuck_ports.empty() && !o.sw.pfc)
    return fail("--stuck-rank: a stuck NIC pauses lossless classes: give --pfc");
  if (engine::Status s = engine::check_slow_receivers(o.sw.slow_receivers, o.sw.stuck_ports, o.ranks, o.sw.pfc,
                                                      o.sw.slow_receiver_buffer_bytes);
      !s.ok())
    return fail(s.message());
  if (o.sw.kmin_bytes > o.sw.kmax_bytes) return fail("--kmin-bytes must not exceed --kmax-bytes");
  if (o.sw.pfc && o.sw.pfc_xon_bytes >= o.sw.pfc_xoff_bytes)
    return fail("--pfc-xon-bytes must be below --pfc-xoff-bytes");
  if (o.sw.pfc && o.sw.pfc_xoff_bytes >= o.sw.buffer_bytes)
    return fail("--pfc-xoff-bytes must be below --buffer-bytes (headroom)");
  o.impairment.seed = o.seed;
  o.sw.seed = o.seed;
  if (Status s = o.impairment.validate(); !s.ok()) return fail("--" + s.message());
  if (engine::Status s = apps::cli::apply_dcqcn(o.preset, o.line_gbps, overrides, o.dcqcn); !s.ok())
    return fail(s.message());
  if (!o.plot.empty() && o.json.empty()) return fail("--plot needs --json (the plot is drawn from it)");
  if (!o.plot.empty() && o.json == "-") return fail("--plot draws from the --json file: give it a file, not -");
  return 0;
}

}  // namespace droce::coll
