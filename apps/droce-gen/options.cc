// droce-gen option parsing: every bad value is one clear message naming the option.
#include "apps/droce-gen/options.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "apps/common/cli/address_options.h"
#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"
#include "apps/common/memory_budget.h"
#include "apps/droce-gen/flow_group.h"
#include "apps/droce-gen/split.h"
#include "apps/droce-gen/sweep.h"

namespace droce::gen {

const char* op_name(Op op) {
  switch (op) {
    case Op::kSend:
      return "send";
    case Op::kWrite:
      return "write";
    case Op::kRead:
      return "read";
    case Op::kFetchAdd:
      return "fetch_add";
    case Op::kCmpSwap:
      return "cmp_swap";
  }
  return "?";
}
const char* recovery_name(rc::Recovery r) {
  return r == rc::Recovery::kSelectiveRepeat ? "sr" : r == rc::Recovery::kGoBack0 ? "gb0" : "gbn";
}
const char* connect_name(Connect c) { return c == Connect::kCm ? "cm" : "tcp"; }
const char* mode_name(Mode m) { return m == Mode::kLoopback ? "loopback" : m == Mode::kClient ? "client" : "server"; }

std::uint32_t Options::max_size() const {
  std::uint32_t m = 0;
  for (auto s : sizes) m = s > m ? s : m;
  for (const FlowGroup& g : groups) m = std::max(m, g.workload.max_size());
  return m;
}

std::uint32_t Options::responder_regions() const {
  std::uint32_t n = mix.empty() ? 1 : static_cast<std::uint32_t>(mix.size());
  for (const FlowGroup& g : groups) n = std::max(n, g.workload.responder_regions());
  return n;
}

const Options& Options::workload_of(std::uint32_t qp) const {
  return groups.empty() ? *this : groups[group_of(qp)].workload;
}

std::uint32_t Options::group_of(std::uint32_t qp) const {
  for (std::uint32_t g = 0; g < groups.size(); ++g)
    if (qp < groups[g].first_qp + groups[g].workload.qps) return g;
  return 0;
}

bool FlowGroup::has(const std::string& key) const { return std::find(keys.begin(), keys.end(), key) != keys.end(); }

double Options::mean_size() const {
  double sum = 0;
  if (!size_weights.empty()) {
    for (std::size_t i = 0; i < size_weights.size(); ++i)
      sum += static_cast<double>(size_weights.value(i)) * size_weights.weight(i);
    return sum / static_cast<double>(size_weights.total());
  }
  for (auto s : sizes) sum += s;
  return sum / static_cast<double>(sizes.size());
}

bool Options::carries(Op k) const {
  if (!groups.empty())
    return std::any_of(groups.begin(), groups.end(), [k](const FlowGroup& g) { return g.workload.carries(k); });
  if (mix.empty()) return op == k;
  for (std::size_t i = 0; i < mix.size(); ++i)
    if (static_cast<Op>(mix.value(i)) == k) return true;
  return false;
}

std::uint32_t Options::region_of(Op k) const {
  for (std::size_t i = 0; i < mix.size(); ++i)
    if (static_cast<Op>(mix.value(i)) == k) return static_cast<std::uint32_t>(i);
  return 0;
}

double Options::offered_msg_rate() const {
  return msg_rate > 0 ? msg_rate : rate_gbps > 0 ? rate_gbps * 1e9 / 8 / mean_size() : 0;
}

std::uint64_t buffer_bytes(const Options& o, bool responder) {
  const std::uint64_t per_qp = static_cast<std::uint64_t>(o.inflight) * (responder ? o.responder_regions() : 1);
  const std::uint64_t slots = per_qp * o.active() + (o.qps - o.active());
  return slots * o.max_size();
}

std::uint64_t run_buffer_bytes(const Options& o) {
  if (o.mode == Mode::kLoopback) return buffer_bytes(o) + buffer_bytes(o, true);
  return buffer_bytes(o, o.mode == Mode::kServer);
}

std::string sizes_text(const std::vector<std::uint32_t>& s) {
  std::string t;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != 0) t += ',';  // appended apart: GCC 12 -O3 -Wrestrict false positive on "," + string
    t += std::to_string(s[i]);
  }
  return t;
}

namespace {
constexpr std::size_t kMaxSizes = 64;  // entries of a --size list
}  // namespace

Status parse_sizes(const std::string& v, std::vector<std::uint32_t>& out) {
  std::vector<std::uint32_t> sizes;
  for (std::size_t start = 0;;) {
    const std::size_t comma = v.find(',', start);
    if (sizes.size() == kMaxSizes)
      return Status::error(StatusCode::kInvalidArgument,
                           "--size: more than " + std::to_string(kMaxSizes) + " sizes in the list");
    std::uint32_t size = 0;
    const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (Status s = apps::parse_uint("--size", item, 1, kMaxMessageBytes, size, apps::Suffixes::kBinary); !s.ok())
      return s;
    sizes.push_back(size);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  out = std::move(sizes);
  return {};
}

namespace {

// Every option, by group; the shared groups (apps/common/cli/groups.h) declare the common ones.
void declare(CLI::App& app, Options& o, std::vector<std::pair<std::string, std::string>>& overrides) {
  namespace cli = apps::cli;
  const std::string d = " (default ";
  const char* g = cli::kConnection;
  cli::add_choice(app, g, "--mode", {"loopback", "client", "server"},
                  "both ends here, or one end each" + d + mode_name(o.mode) + ")",
                  [&o](std::size_t i) { o.mode = static_cast<Mode>(i); });
  cli::add_ip(app, g, "--local-ip", o.local_ip,
              "our RoCE address, IPv4 or IPv6 (e.g. fd00::1; the exchange sends it as our\n"
              "GID: IPv4 as ::ffff:A.B.C.D) (default 10.0.0.1 client, 10.0.0.2 server)");
  cli::add_ip(app, g, "--peer-ip", o.peer_ip,
              "the peer's RoCE address, of --local-ip's family; a static connection's\n"
              "(--oob-port 0), the exchange takes the peer's GID (default: the other of\n"
              "10.0.0.1 and 10.0.0.2; an IPv6 static connection needs it)");
  cli::add_mac(app, g, "--local-mac", o.local_mac,
               "source MAC of our frames (default: the port's MAC; another one where the\n"
               "port's MAC belongs to the kernel too, e.g. a bridged net_tap)");
  cli::add_mac(app, g, "--peer-mac", o.peer_mac,
               "the peer's MAC (default: resolved at start, by ARP for IPv4 and by Neighbor\n"
               "Discovery for IPv6)");
  cli::add_dscp(app, g, o.dscp);
  cli::add_vlan(app, g, o.vlan_id);
  cli::add_pcp(app, g, o.vlan_pcp);
  cli::ConnectionFields conn;
  conn.oob_port = &o.oob_port;
  conn.oob_host = &o.oob_host;
  cli::add_connection(app, conn);
  cli::add_choice(app, g, "--connect", {"tcp", "cm"},
                  "how client and server connect: tcp (droce-gen's TCP exchange to --oob-host)\n"
                  "or cm (RDMA-CM over QP1 to --peer-ip, on RDMA-CM port --oob-port; worker\n"
                  "0's CM connects the QPs of every worker, at most " +
                      std::to_string(kMaxCmQps) + " QPs)" + d + connect_name(o.connect) + ")",
                  [&o](std::size_t i) { o.connect = i == 0 ? Connect::kTcp : Connect::kCm; });
  cli::add_uint(app, g, "--local-qpn", "N", o.local_qpn, 1, 0xFFFFFF,
                "static: our first QPN" + d + cli::hex(o.local_qpn) + ")");
  cli::add_uint(app, g, "--remote-qpn", "N", o.remote_qpn, 1, 0xFFFFFF,
                "static: the peer's first QPN (required with --oob-port 0)");
  cli::add_uint(app, g, "--psn", "N", o.psn, 0, 0xFFFFFF,
                "static (and loopback, when given): our first PSN" + d + cli::hex(o.psn) +
                    "; otherwise every first PSN is drawn at random, from --seed when given)");
  cli::add_uint(app, g, "--remote-psn", "N", o.remote_psn, 0, 0xFFFFFF,
                "static (and loopback, when given): the peer's first PSN" + d + cli::hex(o.remote_psn) + ")");
  conn = {};
  conn.connect_timeout_s = &o.connect_timeout_s;
  conn.qp_timeout = &o.qp_timeout;
  conn.retry_cnt = &o.retry_cnt;
  conn.adaptive_rto = &o.adaptive_rto;
  cli::add_connection(app, conn);
  cli::add_uint(app, g, "--pto-floor-us", "U", o.pto_floor_us, 0, 1'000'000,
                "with --adaptive-rto on: what the tail-loss probe's timeout adds to its round\n"
                "trips, 0..1000000 us (lower: a lost NAK or tail recovered sooner, more needless\n"
                "probes on a busy host)" +
                    d + std::to_string(o.pto_floor_us) + ")");

  g = cli::kWorkload;
  cli::add_choice(app, g, "--op", {"send", "write", "read", "fetch_add", "cmp_swap"},
                  "send, write, read, fetch_add or cmp_swap" + d + op_name(o.op) +
                      "; send/write carry\nimmediate data = sequence; the atomics work on one 8-byte counter per QP:\n"
                      "fetch_add adds 1, cmp_swap swaps seq for seq + 1, and the counter must end\n"
                      "equal to the operations completed)",
                  [&o](std::size_t i) { o.op = static_cast<Op>(i); });
  cli::add_value(app, g, "--size", "BYTES[,BYTES..]",
                 "message size 1..1073741824 (1G; the engine's RC limit is 2^31), or a list\n"
                 "cycled through, or BYTES:WEIGHT,.. (e.g. 64:70,4096:25,1M:5): each message's\n"
                 "size drawn by weight from --seed (loopback)" +
                     d + sizes_text(o.sizes) + "; atomics: 8)",
                 [&o](const std::string& v) {
                   if (is_weighted_sizes(v))
                     return parse_weighted_sizes(v, kMaxMessageBytes, o.size_weights, o.sizes).message();
                   o.size_weights = WeightedDraw{};
                   return parse_sizes(v, o.sizes).message();
                 });
  cli::add_value(app, g, "--mix", "OP:WEIGHT[,OP:WEIGHT..]",
                 "each message's op drawn by weight from --seed instead of one --op, e.g.\n"
                 "write:60,read:30,send:10 (send, write, read; weights 1..1000000, relative;\n"
                 "loopback; reported per op)",
                 [&o](const std::string& v) { return parse_mix(v, o.mix).message(); });
  const std::string max_text = std::to_string(kMaxMessageBytes);
  cli::add_value(
      app, g, "--minbytes", "BYTES",
      "a size sweep (nccl-tests' -b), with --maxbytes: each size from BYTES to\n"
      "--maxbytes runs in turn on the same QPs with its own --warmup and its own\n"
      "--duration or --count, one row per size (loopback; not with --size)",
      [&o](const std::string& v) {
        return apps::parse_uint("--minbytes", v, 1, kMaxMessageBytes, o.min_bytes, apps::Suffixes::kBinary).message();
      });
  cli::add_value(
      app, g, "--maxbytes", "BYTES", "the sweep's largest size, 1.." + max_text + " (nccl-tests' -e)",
      [&o](const std::string& v) {
        return apps::parse_uint("--maxbytes", v, 1, kMaxMessageBytes, o.max_bytes, apps::Suffixes::kBinary).message();
      });
  cli::add_uint(app, g, "--stepfactor", "F", o.step_factor, 2, 1024,
                "the sweep: each size F times the previous, 2..1024 (nccl-tests' -f;\n"
                "default 2)");
  cli::add_value(
      app, g, "--stepbytes", "BYTES",
      "the sweep: each size BYTES more than the previous, instead of\n"
      "--stepfactor (nccl-tests' -i)",
      [&o](const std::string& v) {
        return apps::parse_uint("--stepbytes", v, 1, kMaxMessageBytes, o.step_bytes, apps::Suffixes::kBinary).message();
      });
  cli::WorkloadFields work;
  work.mtu = &o.mtu;
  cli::add_workload(app, work);
  cli::add_uint(app, g, "--qps", "N", o.qps, 1, kMaxQps,
                "queue pairs, 1.." + std::to_string(kMaxQps) + d + std::to_string(o.qps) + ")");
  cli::add_uint(app, g, "--split", "K", o.split, 1, kMaxSplit,
                "cut each message into K parts of nearly equal size (on MTU boundaries when\n"
                "it spans K MTUs), posted at once on K QPs: the --qps form stripes of K, each\n"
                "message on one stripe, complete when all its parts are; its latency from the\n"
                "first post to the last completion; --inflight and the offered load count\n"
                "messages. 1.." +
                    std::to_string(kMaxSplit) +
                    ", --qps a multiple of K x --workers, --op write or read,\n"
                    "loopback only" +
                    d + std::to_string(o.split) + ")");
  cli::add_value(
      app, g, "--udp-sport", "PORTS",
      "each QP's UDP source port (the ECMP entropy): derived (from the QP numbers, as\n"
      "Linux does) or BASE[,STRIDE]: QP i sends from BASE + i x STRIDE (STRIDE 0: all\n"
      "on one port; give a client and its server the same; default derived)",
      [&o](const std::string& v) { return apps::UdpSportPlan::parse("--udp-sport", v, o.udp_sport).message(); });
  cli::add_uint(app, g, "--clients", "N", o.clients, 1, kMaxClients,
                "server: serve N droce-gen clients at once, 1.." + std::to_string(kMaxClients) +
                    ", each with --qps QPs of its own\n"
                    "and its own exchange, all running this workload; reported per client and in\n"
                    "total; a client that fails or dies does not end the others' runs" +
                    d + std::to_string(o.clients) + ")");
  cli::add_uint(app, g, "--active-qps", "M", o.active_qps, 1, kMaxQps,
                "only the first M QPs carry traffic; the others are connected and idle\n(default: all)");
  cli::add_uint(app, g, "--inflight", "N", o.inflight, 1, 128,
                "outstanding messages per QP, 1..128" + d + std::to_string(o.inflight) + ")");
  cli::add_choice(
      app, g, "--recovery", {"gbn", "sr", "gb0"},
      "loss recovery: gbn (go-back-N, IBTA) or sr (selective repeat between\n"
      "droce-gen peers, every --op; a READ spans at most --sr-bdp-packets x --mtu;\n"
      "client/server: used only when the server runs --recovery sr too, else both\n"
      "fall back to gbn); gb0 (go-back-0, loopback only: a lost packet restarts its\n"
      "whole SEND or WRITE, the NIC behaviour behind the 1-in-256 livelock)" +
          d + recovery_name(o.recovery) + ")",
      [&o](std::size_t i) {
        o.recovery = i == 0 ? rc::Recovery::kGoBackN : i == 1 ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBack0;
      });
  cli::add_uint(app, g, "--sr-bdp-packets", "N", o.sr_bdp_pkts, 1, rc::kSrMaxBdpPkts,
                "selective repeat: packets in flight per QP, 1.." + std::to_string(rc::kSrMaxBdpPkts) + d +
                    std::to_string(o.sr_bdp_pkts) + ")");
  cli::add_real(app, g, "--rate-gbps", "G", o.rate_gbps, 0.001, 400,
                "offered load in Gb/s of payload (default: closed loop)");
  cli::add_real(app, g, "--msg-rate", "M", o.msg_rate, 1, 1e9,
                "offered load in messages/s (default: closed loop); with either, each\n"
                "message is due on a schedule and its latency counts from then",
                apps::Suffixes::kDecimal);
  cli::add_choice(app, g, "--arrivals", {"constant", "poisson", "onoff"},
                  "the schedule: evenly spaced, exponential gaps seeded by --seed, or periodic\n"
                  "bursts (--on-us sending at the peak rate that keeps the mean, --off-us silent)\n"
                  "(default constant)",
                  [&o](std::size_t i) {
                    o.arrivals = i == 0 ? Arrivals::kConstant : i == 1 ? Arrivals::kPoisson : Arrivals::kOnOff;
                  });
  cli::add_real(app, g, "--on-us", "U", o.on_us, 0.001, 1e9,
                "--arrivals onoff: sending span of each period (default " + cli::num(o.on_us) + ")");
  cli::add_real(app, g, "--off-us", "U", o.off_us, 0.001, 1e9,
                "--arrivals onoff: silent span of each period (default " + cli::num(o.off_us) + ")");
  cli::add_uint(app, g, "--burst", "N", o.burst, 1, 1'000'000,
                "N messages due at once, bursts spaced to keep the rate, 1..1000000\n(default 1)");
  work = {};
  work.duration_s = &o.duration_s;
  work.count = &o.count;
  cli::add_workload(app, work);
  cli::add_repeatable(app, g, "--flow-group", "SPEC",
                      "a group of QPs with its own workload, side by side with the other groups,\n"
                      "each reported on its own; repeat it, one group each (loopback). SPEC is\n"
                      "KEY=VALUE items separated by ';' (quote it): name (required), qps (default 1),\n"
                      "op or mix (default write), size (as --size: one, a list or weighted; default\n"
                      "4096), rate-gbps or msg-rate (with arrivals, burst, on-us, off-us; default\n"
                      "closed loop), inflight (default 16), dscp (0..63, its frames and ACKs;\n"
                      "default 0), start and stop (seconds after the run's start; default the whole\n"
                      "run), e.g. 'name=rpc;qps=2;op=send;size=64:90,4096:10;msg-rate=2000;dscp=46'.\n"
                      "Not with --op, --mix, --size, --qps, --active-qps, --inflight, --rate-gbps,\n"
                      "--msg-rate, --arrivals, --burst, --on-us, --off-us, --dscp, --count, --clients\n"
                      "or a sweep",
                      [&o](const std::string& v) {
                        FlowGroup g;
                        if (Status s = parse_flow_group(v, g); !s.ok()) return s.message();
                        o.groups.push_back(std::move(g));
                        return std::string();
                      });
  cli::add_real(app, g, "--warmup", "S", o.warmup_s, 0, 3600,
                "seconds excluded from the statistics" + d + cli::num(o.warmup_s) + ")");

  cli::add_uint(app, "workers", "--workers", "N", o.workers, 1, kMaxWorkers,
                "poll-mode workers, 1.." + std::to_string(kMaxWorkers) + d + std::to_string(o.workers) +
                    "): QP i runs on worker i % N, in\n"
                    "every mode (loopback: each worker runs both ends of its QPs on its own\n"
                    "net_ring lab). Worker 0 runs on the EAL main lcore beside the control\n"
                    "side (live line, end-of-run exchange), worker w on the w-th worker lcore:\n"
                    "EAL -l must give N lcores (e.g. -l 0-1 for 2 workers); client and server\n"
                    "open the port with N RX and N TX queues (give both the same N)");

  cli::DcqcnFields cc;
  cc.cc = &o.cc;
  cc.preset = &o.preset;
  cc.line_gbps = &o.line_gbps;
  cc.overrides = &overrides;
  cc.pfc_priority = &o.pfc_priority;
  cc.pfc_watchdog_ms = &o.pfc_watchdog_ms;
  cli::add_dcqcn(app, cc);

  cli::ImpairmentFields imp;
  imp.loss = &o.loss;
  imp.duplicate = &o.duplicate;
  imp.reorder = &o.reorder;
  imp.burst_start = &o.burst_start;
  imp.burst_frames = &o.burst_frames;
  imp.seed = &o.seed;
  imp.seed_help =
      "seed of the impairment and of --arrivals poisson; when given, of the\nfirst PSNs too (else drawn from the OS's "
      "entropy)";
  imp.direction = &o.impair_direction;
  imp.group = cli::kImpairmentDirected;
  cli::add_impairment(app, imp);
  // A switch's deterministic drop on this link (droce-switch's option, same values): with
  // --recovery gb0 in loopback it reproduces SIGCOMM'16's 1-in-256 livelock (docs/fabric-lab.md).
  cli::add_repeatable(app, cli::kImpairmentDirected, "--drop-rule", "every:N|ip-id:B",
                      "drop every Nth frame of each flow, or every IPv4 frame whose ID ends in byte B\n"
                      "(SIGCOMM'16's 1/256 bug: ip-id:0xff); both when given twice; where\n"
                      "--impair-direction says; counted as rule_dropped",
                      [&o](const std::string& v) { return engine::DropRuleConfig::parse(v, o.drop_rule).message(); });

  g = "thresholds";
  cli::add_real(app, g, "--expect-gbps", "G", o.expect_gbps, 0.000001, 100000,
                "pass only at G Gb/s of verified goodput or more (this end's BW average; a\n"
                "sweep: its largest size's); below it the run exits 3 (default: no threshold)");
  cli::add_real(app, g, "--expect-p99-us", "U", o.expect_p99_us, 0.001, 1e9,
                "pass only with a p99 latency of U us or less (client and loopback, where\n"
                "latency is measured; a sweep: its smallest size's); above it the run exits 3\n"
                "(default: no threshold)");

  cli::OutputFields out;
  out.json = &o.json;
  out.csv = &o.csv;
  out.stats_json = &o.stats_json;
  out.interval_s = &o.interval_s;
  out.pcap = &o.pcap;
  out.pcap_snaplen = &o.pcap_snaplen;
  out.pcap_max_mb = &o.pcap_max_mb;
  out.pcap_files = &o.pcap_files;
  out.plot = &o.plot;
  out.plot_help =
      "a PNG of the run: goodput and message rate over time, retransmissions,\n"
      "NAKs and ACK timeouts per interval, the latency CDF (matplotlib; the\n"
      "feed behind it is kept as FILE.jsonl; --interval sets its resolution)";
  out.quiet = &o.quiet;
  cli::add_output(app, out);
}

constexpr const char* kUsage =
    "usage: droce-gen [EAL options] -- [options]\n"
    "RoCEv2 RC traffic generator: real queue pairs with go-back-N (or, between droce-gen peers,\n"
    "selective-repeat) reliability, every message\n"
    "verified on arrival. With no EAL options, loopback mode builds an in-process lab (two endpoints\n"
    "on net_ring ports) and client/server modes use net_memif on /tmp/droce-gen.sock.";

// The sweep's options, consistent, and its sizes into o.sizes (every check after this one, the
// memory's and selective repeat's READ limit, then sees the sweep's largest size).
Status check_sweep(Options& o, bool size_given) {
  const bool asked = o.min_bytes != 0 || o.max_bytes != 0 || o.step_factor != 0 || o.step_bytes != 0;
  if (!asked) return {};
  if (size_given)
    return Status::error(StatusCode::kInvalidArgument, "--size and a sweep (--minbytes/--maxbytes) both set: give one");
  if (is_atomic_op(o.op))
    return Status::error(StatusCode::kInvalidArgument,
                         std::string("--op ") + op_name(o.op) + " works on 8 bytes: it has no size to sweep");
  // A server verifies by the sizes it was started with: the exchange does not carry a sweep yet.
  if (o.mode != Mode::kLoopback)
    return Status::error(StatusCode::kInvalidArgument,
                         "a sweep (--minbytes/--maxbytes) runs in --mode loopback only (a server does not follow a "
                         "client's sweep)");
  if (o.step_factor != 0 && o.step_bytes != 0)
    return Status::error(StatusCode::kInvalidArgument, "--stepfactor and --stepbytes both set: give one");
  if (o.step_factor == 0 && o.step_bytes == 0) o.step_factor = 2;
  if (Status s = sweep_sizes(o.min_bytes, o.max_bytes, o.step_factor, o.step_bytes, o.sizes); !s.ok()) return s;
  o.sweep = true;
  return {};
}

// --mix and weighted sizes: what they combine with. Both ends draw each message's op and size
// from the same --seed; a server would have to be told them, and the exchange does not carry
// them yet: loopback only.
Status check_draws(const Options& o, bool op_given) {
  const bool mix = !o.mix.empty(), weighted = !o.size_weights.empty();
  if (!mix && !weighted) return {};
  if (mix && op_given) return Status::error(StatusCode::kInvalidArgument, "--mix and --op both set: give one");
  if (o.mode != Mode::kLoopback)
    return Status::error(StatusCode::kInvalidArgument,
                         std::string(mix ? "--mix" : "a weighted --size") +
                             " runs in --mode loopback only (a server does not learn a client's draws)");
  if (mix && o.sweep)
    return Status::error(StatusCode::kInvalidArgument, "--mix and a sweep (--minbytes/--maxbytes) both set: give one");
  return {};
}

// --split: what a message cut over K QPs combines with. The whole message is verified where it
// lands (a WRITE's target at the responder, a READ's buffer at the requester), so its parts must
// share one buffer at that end, its K QPs one worker, and both ends must know the cut.
Status check_split(const Options& o) {
  if (o.split == 1) return {};
  const std::string k = "--split " + std::to_string(o.split);
  auto refuse = [](const std::string& why) { return Status::error(StatusCode::kInvalidArgument, why); };
  if (!o.groups.empty()) return refuse(k + " and --flow-group both set: a group's QPs would cut across stripes");
  // The exchange tells a server neither the cut nor the stripes: it would verify each part as a whole message.
  if (o.mode != Mode::kLoopback)
    return refuse(k + " runs in --mode loopback only (a server does not learn how a client's messages are cut)");
  if (!o.mix.empty()) return refuse(k + " and --mix both set: give --op write or --op read");
  // A SEND's parts would each consume a receive of its own QP: K buffers, no one message to verify whole.
  if (o.op == Op::kSend)
    return refuse(k + " cuts a WRITE or a READ: a SEND's parts would land in " + std::to_string(o.split) +
                  " receive buffers of as many QPs, not one message to verify whole");
  if (is_atomic_op(o.op)) return refuse(k + ": --op " + op_name(o.op) + " is one 8-byte operation, not cut");
  if (o.sweep) return refuse(k + " and a sweep (--minbytes/--maxbytes) both set: give one");
  if (o.active_qps != 0) return refuse(k + " and --active-qps both set: every QP of a stripe carries its parts");
  if (o.split > o.qps)
    return refuse(k + " is more than --qps " + std::to_string(o.qps) + ": each part needs a QP of its own");
  // QP i runs on worker i % workers: each worker's QPs must form whole stripes.
  if (o.qps % (o.split * o.workers) != 0)
    return refuse("--qps " + std::to_string(o.qps) + " is not a multiple of " + k +
                  (o.workers == 1 ? ": the QPs form stripes of " + std::to_string(o.split)
                                  : " x --workers " + std::to_string(o.workers) +
                                        ": each worker's QPs form stripes of " + std::to_string(o.split)));
  std::uint32_t smallest = UINT32_MAX;
  for (std::uint32_t s : o.sizes) smallest = std::min(smallest, s);
  if (smallest < o.split)
    return refuse("--size " + std::to_string(smallest) + " is less than " + k + " bytes: every part needs one");
  return {};
}

}  // namespace

Status check_ip_families(const Options& o) {
  engine::IpAddress local, peer;
  const bool local_v6 = !o.local_ip.empty() && engine::parse_ip(o.local_ip, local) && local.ipv6;
  const bool peer_v6 = !o.peer_ip.empty() && engine::parse_ip(o.peer_ip, peer) && peer.ipv6;
  // One endpoint's frames carry one IP version; the defaults are IPv4.
  if (!o.local_ip.empty() && !o.peer_ip.empty() && local_v6 != peer_v6)
    return Status::error(StatusCode::kInvalidArgument,
                         "--local-ip " + o.local_ip + " is " + engine::family_name(local) + " and --peer-ip " +
                             o.peer_ip + " " + engine::family_name(peer) + ": give both of one family");
  if (peer_v6 && o.local_ip.empty())
    return Status::error(StatusCode::kInvalidArgument,
                         "--peer-ip " + o.peer_ip + " is IPv6: give an IPv6 --local-ip too");
  if (local_v6 && o.peer_ip.empty() && o.mode != Mode::kLoopback && o.oob_port == 0)
    return Status::error(StatusCode::kInvalidArgument, "--local-ip " + o.local_ip +
                                                           " is IPv6: a static connection (--oob-port 0) needs the "
                                                           "peer's --peer-ip");
  return {};
}

Status check_memory(const Options& o, std::uint64_t available) {
  // Heap buffers, registered once (a software RNIC DMAs nothing: they need no hugepages).
  const std::uint64_t need = run_buffer_bytes(o);
  if (available == 0 || need <= available) return {};  // 0: neither /proc nor sysconf said
  const std::uint32_t idle = o.qps - o.active();
  // A mix's responder holds a region per op (Options::responder_regions).
  const std::uint32_t regions = o.mode == Mode::kClient ? 1 : o.responder_regions();
  const std::string ends = o.mode != Mode::kLoopback ? ""
                           : regions == 1            ? "2 ends x "
                                                     : "(1 + " + std::to_string(regions) + " --mix regions) x ";
  return Status::error(StatusCode::kNoMemory,
                       "the run needs " + apps::bytes_text(need) + " of message buffers (" + ends +
                           std::to_string(o.active()) + " QPs x --inflight " + std::to_string(o.inflight) +
                           (idle != 0 ? " + " + std::to_string(idle) + " idle QPs" : "") + ", each " +
                           apps::bytes_text(o.max_size()) + "), more than the " + apps::bytes_text(available) +
                           " this host has available (MemAvailable): lower --size, --qps or --inflight");
}

int parse_options(const std::vector<std::string>& args, Options& o, const std::vector<std::string>& eal) {
  std::vector<std::pair<std::string, std::string>> overrides;  // applied after the preset
  const auto app = apps::cli::make_app("droce-gen", kUsage);
  o.pcap_snaplen = apps::cli::kDefaultPcapSnaplen;
  declare(*app, o, overrides);
  if (int rc = apps::cli::parse(*app, args, eal); rc != 0) return rc;
  const bool remote_qpn_given = apps::cli::given(*app, "--remote-qpn");
  const bool pcp_given = apps::cli::given(*app, "--pcp");
  const bool size_given = apps::cli::given(*app, "--size");
  const bool onoff_given = apps::cli::given(*app, "--on-us") || apps::cli::given(*app, "--off-us");
  o.psns_given = apps::cli::given(*app, "--psn") || apps::cli::given(*app, "--remote-psn");
  if (apps::cli::given(*app, "--seed")) o.psn_seed = o.seed;
  auto fail = [&app](const std::string& message) { return apps::cli::fail(*app, message); };
  // Flow groups first: every check below then sees the run's QPs and inflight as the groups make them.
  if (Status s = finish_flow_groups(o, [&app](const std::string& name) { return apps::cli::given(*app, name); });
      !s.ok())
    return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), -1;
  // DCQCN: the preset at the line rate, then each override; one message naming a bad parameter.
  if (Status s = apps::cli::apply_dcqcn(o.preset, o.line_gbps, overrides, o.dcqcn); !s.ok()) return fail(s.message());
  if (Status s = o.udp_sport.check("--udp-sport", o.qps); !s.ok()) return fail(s.message());
  if (o.connect == Connect::kCm) {
    if (o.mode == Mode::kLoopback)
      return std::fprintf(stderr, "droce-gen: --connect cm connects a client and a server: --mode client or server\n"),
             -1;
    if (o.oob_port == 0)
      return std::fprintf(stderr,
                          "droce-gen: --connect cm listens and connects on RDMA-CM port --oob-port: give one "
                          "(not 0)\n"),
             -1;
    if (o.qps > kMaxCmQps)
      return std::fprintf(stderr,
                          "droce-gen: --connect cm connects at most %u QPs (one CM connection each): --qps %u "
                          "needs --connect tcp\n",
                          kMaxCmQps, o.qps),
             -1;
    engine::IpAddress local;
    if (o.mode == Mode::kClient && o.peer_ip.empty() && !o.local_ip.empty() && engine::parse_ip(o.local_ip, local) &&
        local.ipv6)
      return std::fprintf(stderr, "droce-gen: --connect cm with an IPv6 --local-ip needs the server's --peer-ip\n"), -1;
  }
  if (o.expect_p99_us > 0 && o.mode == Mode::kServer)
    return std::fprintf(stderr,
                        "droce-gen: --expect-p99-us: a server measures no latency (its client does): give it to the "
                        "client\n"),
           -1;
  if (o.rate_gbps > 0 && o.msg_rate > 0)
    return std::fprintf(stderr, "droce-gen: --rate-gbps and --msg-rate both set: give one offered load\n"), -1;
  if ((o.arrivals != Arrivals::kConstant || o.burst != 1) && o.rate_gbps == 0 && o.msg_rate == 0)
    return std::fprintf(stderr,
                        "droce-gen: --arrivals and --burst shape an offered load: give --rate-gbps or "
                        "--msg-rate\n"),
           -1;
  if (onoff_given && o.arrivals != Arrivals::kOnOff)
    return std::fprintf(stderr, "droce-gen: --on-us and --off-us shape --arrivals onoff: give it\n"), -1;
  if (o.mode != Mode::kLoopback && o.oob_port == 0 && !remote_qpn_given)
    return std::fprintf(stderr, "droce-gen: a static connection (--oob-port 0) needs --remote-qpn\n"), -1;
  if (o.mode != Mode::kLoopback && o.oob_port == 0 && o.op != Op::kSend)
    return std::fprintf(stderr,
                        "droce-gen: --op %s needs the peer's buffer address and rkey, which only the "
                        "out-of-band exchange carries: use --oob-port, or --op send\n",
                        op_name(o.op)),
           -1;
  if (o.recovery == rc::Recovery::kGoBack0 && o.mode != Mode::kLoopback)
    return std::fprintf(stderr,
                        "droce-gen: --recovery gb0 is the lab's go-back-0: --mode loopback only (no peer "
                        "negotiates it)\n"),
           -1;
  if (o.recovery == rc::Recovery::kSelectiveRepeat && o.mode != Mode::kLoopback && o.oob_port == 0)
    return std::fprintf(stderr, "droce-gen: --recovery sr is agreed in the out-of-band exchange: use --oob-port\n"), -1;
  // Selective repeat holds all of a READ's PSNs in flight at once: rc::RcQp::post_send refuses a
  // READ longer than --sr-bdp-packets packets (docs/selective-repeat.md), so we refuse it here.
  if (o.recovery == rc::Recovery::kSelectiveRepeat && o.carries(Op::kRead) && o.groups.empty()) {
    const std::uint64_t max_read = static_cast<std::uint64_t>(o.sr_bdp_pkts) * o.mtu;
    if (o.max_size() > max_read)
      return std::fprintf(stderr,
                          "droce-gen: --recovery sr: a READ spans at most --sr-bdp-packets x --mtu = %llu "
                          "bytes, and --size %u is more\n",
                          static_cast<unsigned long long>(max_read), o.max_size()),
             -1;
  }
  if (Status s = check_sweep(o, size_given); !s.ok())
    return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), -1;
  if (Status s = check_draws(o, apps::cli::given(*app, "--op")); !s.ok())
    return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), -1;
  if (Status s = check_split(o); !s.ok()) return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), -1;
  if (is_atomic_op(o.op)) {
    // An atomic works on 8 bytes (IBTA §9.4.5): that is its size, given or not.
    if (size_given && (o.sizes.size() != 1 || o.sizes[0] != 8))
      return std::fprintf(stderr, "droce-gen: --op %s works on 8 bytes: leave --size out or give 8\n", op_name(o.op)),
             -1;
    o.sizes = {8};
    o.size_weights = WeightedDraw{};
  }
  if (pcp_given && o.vlan_id == 0)
    return std::fprintf(stderr, "droce-gen: --pcp is the priority of the 802.1Q tag: give --vlan too\n"), -1;
  if (o.mode == Mode::kLoopback && !o.local_mac.empty())
    return std::fprintf(stderr, "droce-gen: --local-mac names a port's source MAC: client and server modes\n"), -1;
  if (o.mode == Mode::kLoopback && (o.dscp != 0 || o.vlan_id != 0))
    return std::fprintf(stderr, "droce-gen: --dscp and --vlan mark the frames on a port: client and server modes\n"),
           -1;
  if (o.mode == Mode::kLoopback && (!o.local_ip.empty() || !o.peer_ip.empty()))
    return std::fprintf(stderr,
                        "droce-gen: --local-ip and --peer-ip address a port: client and server modes (the "
                        "loopback lab has its own)\n"),
           -1;
  if (Status s = check_ip_families(o); !s.ok()) return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), -1;
  if (!o.plot.empty() && o.plot == o.stats_json)
    return std::fprintf(stderr, "droce-gen: --plot and --stats-json name the same file\n"), -1;
  if (o.active_qps > o.qps)
    return std::fprintf(stderr, "droce-gen: --active-qps %u is more than --qps %u\n", o.active_qps, o.qps), -1;
  if (o.workers > o.qps)
    return std::fprintf(stderr, "droce-gen: --workers %u is more than --qps %u: every worker needs a QP\n",
                        static_cast<unsigned>(o.workers), o.qps),
           -1;
  if (o.clients > 1) {
    // Each client brings its own exchange over TCP: RDMA-CM and static connections have one peer.
    if (o.mode != Mode::kServer || o.connect != Connect::kTcp || o.oob_port == 0)
      return std::fprintf(stderr,
                          "droce-gen: --clients serves several clients over droce-gen's TCP exchange: --mode server "
                          "with --connect tcp and an --oob-port\n"),
             -1;
    // Idle QPs are the first M of a run; with several clients they would be every client's last ones.
    if (o.active_qps != 0)
      return std::fprintf(stderr, "droce-gen: --clients and --active-qps both set: give one\n"), -1;
    if (static_cast<std::uint64_t>(o.qps) * o.clients > kMaxQps)
      return std::fprintf(stderr, "droce-gen: --clients %u x --qps %u is more than %u QPs\n", o.clients, o.qps,
                          kMaxQps),
             -1;
    o.qps *= o.clients;  // from here the server's total; per_client_qps() is --qps
  }
  if (Status s = check_memory(o, apps::available_memory_bytes()); !s.ok())
    return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), -1;
  return 0;
}

}  // namespace droce::gen
