// droce-gen option parsing: every bad value is one clear message naming the option.
#include "apps/droce-gen/options.h"

#include <cstdio>
#include <utility>

#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/version_line.h"
#include <droce/protocols/dcqcn/param_options.h>

namespace droce::gen {

const char* op_name(Op op) {
  switch (op) {
    case Op::kSend: return "send";
    case Op::kWrite: return "write";
    case Op::kRead: return "read";
    case Op::kFetchAdd: return "fetch_add";
    case Op::kCmpSwap: return "cmp_swap";
  }
  return "?";
}
const char* mode_name(Mode m) { return m == Mode::kLoopback ? "loopback" : m == Mode::kClient ? "client" : "server"; }

std::uint32_t Options::max_size() const {
  std::uint32_t m = 0;
  for (auto s : sizes) m = s > m ? s : m;
  return m;
}

double Options::mean_size() const {
  double sum = 0;
  for (auto s : sizes) sum += s;
  return sum / static_cast<double>(sizes.size());
}

double Options::offered_msg_rate() const {
  return msg_rate > 0 ? msg_rate : rate_gbps > 0 ? rate_gbps * 1e9 / 8 / mean_size() : 0;
}

std::uint64_t buffer_bytes(const Options& o) {
  const std::uint64_t slots = static_cast<std::uint64_t>(o.inflight) * o.active() + (o.qps - o.active());
  return slots * o.max_size();
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

// The parameter list indented under --dcqcn-NAME.
std::string dcqcn_help() {
  std::string out, line;
  for (const char* c = dcqcn::param_options_help(); *c != '\0'; ++c) {
    line += *c;
    if (*c == '\n') {
      out += "                             " + line;
      line.clear();
    }
  }
  return out;
}

void usage(const Options& d) {
  std::printf(
      "usage: droce-gen [EAL options] -- [options]\n"
      "RoCEv2 RC traffic generator: real queue pairs with go-back-N reliability, every message\n"
      "verified on arrival. With no EAL options, loopback mode builds an in-process lab (two endpoints\n"
      "on net_ring ports) and client/server modes use net_memif on /tmp/droce-gen.sock.\n\n"
      "roles and connection\n"
      "  --mode loopback|client|server  both ends here, or one end each (default %s)\n"
      "  --local-ip A.B.C.D       our RoCE address (default 10.0.0.1 client/loopback, 10.0.0.2 server)\n"
      "  --peer-ip A.B.C.D        the peer's RoCE address (default: the other of the two)\n"
      "  --peer-mac XX:..:XX      the peer's MAC (default: resolved by ARP at start, IPv4 peers only)\n"
      "  --dscp N                 DSCP of our frames, 0..63 (default 0; ECN stays ECT(0) for DCQCN)\n"
      "  --vlan ID                an 802.1Q tag on our frames, 1..4094 (default: untagged); a tagged\n"
      "                           peer's frames are taken either way (the tag belongs to the link)\n"
      "  --pcp N                  the tag's priority, 0..7 (default 0; needs --vlan): match it to the\n"
      "                           fabric's lossless class and --pfc-priority\n"
      "  --oob-port N             TCP port of the ibv_rc_pingpong-format exchange (default %u; 0 = static)\n"
      "  --oob-host HOST          where the server's exchange listens, for the client (default %s)\n"
      "  --local-qpn N            static: our first QPN (default 0x%x)\n"
      "  --remote-qpn N           static: the peer's first QPN (required with --oob-port 0)\n"
      "  --psn N / --remote-psn N static: our and the peer's first PSN (default 0x%06x / 0x%06x)\n"
      "  --connect-timeout S      how long to wait for the peer (default %g)\n"
      "  --qp-timeout N           local ACK timeout 4.096 us * 2^N, 1..31 (default %u: 67 ms, perftest's)\n"
      "  --retry-cnt N            retries after ACK timeouts and NAKs before the QP fails, 0..7 (default %u)\n"
      "workload\n"
      "  --op OP                  send, write, read, fetch_add or cmp_swap (default %s; send/write carry\n"
      "                           immediate data = sequence; the atomics work on one 8-byte counter per QP:\n"
      "                           fetch_add adds 1, cmp_swap swaps seq for seq + 1, and the counter must end\n"
      "                           equal to the operations completed)\n"
      "  --size BYTES[,BYTES..]   message size 1..1048576, or a list cycled through (default %s; atomics: 8)\n"
      "  --mtu BYTES              path MTU: 256, 512, 1024, 2048 or 4096 (default %u)\n"
      "  --qps N                  queue pairs, 1..%u (default %u)\n"
      "  --active-qps M           only the first M QPs carry traffic; the others are connected and idle\n"
      "                           (default: all)\n"
      "  --inflight N             outstanding messages per QP, 1..128 (default %u)\n"
      "  --rate-gbps G            offered load in Gb/s of payload (default: closed loop)\n"
      "  --msg-rate M             offered load in messages/s (default: closed loop); with either, each\n"
      "                           message is due on a schedule and its latency counts from then\n"
      "  --arrivals constant|poisson  the schedule: evenly spaced, or exponential gaps seeded by --seed\n"
      "                           (default constant)\n"
      "  --burst N                N messages due at once, bursts spaced to keep the rate, 1..1000000\n"
      "                           (default 1)\n"
      "  --duration S             seconds to run after warm-up (default %g)\n"
      "  --count N                stop after N messages in total instead (default: by duration)\n"
      "  --warmup S               seconds excluded from the statistics (default %g)\n"
      "workers\n"
      "  --workers N              poll-mode workers, 1..%u (default %u): QP i runs on worker i %% N, in\n"
      "                           every mode (loopback: each worker runs both ends of its QPs on its own\n"
      "                           net_ring lab). Worker 0 runs on the EAL main lcore beside the control\n"
      "                           side (live line, end-of-run exchange), worker w on the w-th worker lcore:\n"
      "                           EAL -l must give N lcores (e.g. -l 0-1 for 2 workers); client and server\n"
      "                           open the port with N RX and N TX queues (give both the same N)\n"
      "congestion and flow control\n"
      "  --cc none|dcqcn          DCQCN paces each QP and cuts its rate on CNPs (default %s); CE-marked\n"
      "                           packets are always answered with CNPs\n"
      "  --preset paper|mlx5      DCQCN parameter set (default %s)\n"
      "  --line-gbps G            DCQCN line rate: a QP's starting and highest rate (default %g)\n"
      "  --dcqcn-NAME VALUE       override one DCQCN parameter after the preset; NAME is one of:\n%s"
      "  --pfc-priority N         honour PFC pauses for this priority, 0..7 (default %u)\n"
      "lab impairment (at this process's receive side; the transport never sees it)\n"
      "  --loss P                 drop this fraction of frames, [0, 0.5] (default %g)\n"
      "  --duplicate P            deliver this fraction twice, [0, 0.5] (default %g)\n"
      "  --reorder P              hold this fraction back behind later frames, [0, 0.5] (default %g)\n"
      "  --burst-start P          start a loss burst at this fraction of frames, [0, 0.1] (default %g)\n"
      "  --burst-frames N         frames each loss burst drops, 1..1000 (default %u)\n"
      "  --seed S                 seed of the impairment and of --arrivals poisson (default %llu)\n"
      "output\n"
      "  --json FILE              the final report as JSON\n"
      "  --csv FILE               one row per interval: time, goodput, message rate, retransmissions, NAKs\n"
      "  --stats-json FILE|-      the live feed: one JSON object per line and interval, then a final line\n"
      "                           (docs/droce-gen.md); with -, on stdout, and all other output on stderr\n"
      "  --interval S             seconds between live lines, CSV rows and feed lines, 0.1..3600 (default 1)\n"
      "  --pcap FILE              capture our port's frames (pcapng, Wireshark decodes RoCEv2)\n"
      "  --quiet                  no live line\n"
      "  --help                   this text\n"
      "  --version                droce's and DPDK's versions\n",
      mode_name(d.mode), d.oob_port, d.oob_host.c_str(), d.local_qpn, d.psn, d.remote_psn, d.connect_timeout_s,
      static_cast<unsigned>(d.qp_timeout), static_cast<unsigned>(d.retry_cnt),
      op_name(d.op), sizes_text(d.sizes).c_str(), d.mtu, kMaxQps, d.qps, d.inflight, d.duration_s, d.warmup_s,
      static_cast<unsigned>(kMaxWorkers), static_cast<unsigned>(d.workers), d.cc.c_str(),
      d.preset.c_str(), d.line_gbps, dcqcn_help().c_str(), d.pfc_priority,
      d.loss, d.duplicate, d.reorder, d.burst_start, d.burst_frames, static_cast<unsigned long long>(d.seed));
}

constexpr std::size_t kMaxSizes = 64;  // entries of a --size list

std::string dcqcn_option(std::string_view name) { return "--dcqcn-" + std::string(name); }

int fail(const std::string& message) {
  std::fprintf(stderr, "droce-gen: %s\n", message.c_str());
  return -1;
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o) {
  const Options defaults;
  bool remote_qpn_given = false, pcp_given = false;
  bool size_given = false;
  std::vector<std::pair<std::string, std::string>> overrides;  // applied after the preset, in order
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    std::string e;  // one message naming the option, from the parsers below
    auto value = [&]() {
      if (i + 1 >= args.size()) {
        e = apps::printable(a) + " needs a value (see --help)";
        return false;
      }
      v = args[++i];
      return true;
    };
    auto integer = [&](auto& field, std::uint64_t lo, std::uint64_t hi) {
      return value() && (e = apps::parse_uint(a, v, lo, hi, field)).empty();
    };
    auto real = [&](double& field, double lo, double hi) {
      return value() && (e = apps::parse_real(a, v, lo, hi, field)).empty();
    };
    auto output = [&](std::string& field) {
      if (!value() || !(e = apps::check_output_path(a, v)).empty()) return false;
      field = v;
      return true;
    };
    std::uint8_t scratch[6];
    bool ok = true;
    if (a == "--help" || a == "-h") {
      usage(defaults);
      return 1;
    } else if (a == "--version") {
      apps::print_version("droce-gen");
      return 1;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--mode") {
      if (!value()) return fail(e);
      if (v == "loopback") o.mode = Mode::kLoopback;
      else if (v == "client") o.mode = Mode::kClient;
      else if (v == "server") o.mode = Mode::kServer;
      else return fail("--mode: " + apps::quoted(v) + " is not loopback, client or server");
    } else if (a == "--op") {
      if (!value()) return fail(e);
      if (v == "send") o.op = Op::kSend;
      else if (v == "write") o.op = Op::kWrite;
      else if (v == "read") o.op = Op::kRead;
      else if (v == "fetch_add") o.op = Op::kFetchAdd;
      else if (v == "cmp_swap") o.op = Op::kCmpSwap;
      else return fail("--op: " + apps::quoted(v) + " is not send, write, read, fetch_add or cmp_swap");
    } else if (a == "--size") {
      if (!value()) return fail(e);
      size_given = true;
      o.sizes.clear();
      for (std::size_t start = 0;;) {
        const std::size_t comma = v.find(',', start);
        if (o.sizes.size() == kMaxSizes)
          return fail("--size: more than " + std::to_string(kMaxSizes) + " sizes in the list");
        std::uint32_t size = 0;
        if (e = apps::parse_uint(a, v.substr(start, comma == std::string::npos ? std::string::npos : comma - start),
                                 1, 1u << 20, size);
            !e.empty())
          return fail(e);
        o.sizes.push_back(size);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--mtu") {
      if ((ok = integer(o.mtu, 256, 4096)) && o.mtu != 256 && o.mtu != 512 && o.mtu != 1024 && o.mtu != 2048 && o.mtu != 4096)
        return fail("--mtu: " + std::to_string(o.mtu) + " is not an IB MTU (256, 512, 1024, 2048, 4096)");
    } else if (a == "--qps") {
      ok = integer(o.qps, 1, kMaxQps);
    } else if (a == "--active-qps") {
      ok = integer(o.active_qps, 1, kMaxQps);
    } else if (a == "--workers") {
      ok = integer(o.workers, 1, kMaxWorkers);
    } else if (a == "--inflight") {
      ok = integer(o.inflight, 1, 128);
    } else if (a == "--rate-gbps") {
      ok = real(o.rate_gbps, 0.001, 400);
    } else if (a == "--msg-rate") {
      ok = real(o.msg_rate, 1, 1e9);
    } else if (a == "--arrivals") {
      if (!value()) return fail(e);
      if (v == "constant") o.arrivals = Arrivals::kConstant;
      else if (v == "poisson") o.arrivals = Arrivals::kPoisson;
      else return fail("--arrivals: " + apps::quoted(v) + " is not constant or poisson");
    } else if (a == "--burst") {
      ok = integer(o.burst, 1, 1'000'000);
    } else if (a == "--duration") {
      ok = real(o.duration_s, 0.01, 86400);
    } else if (a == "--count") {
      ok = integer(o.count, 1, 1'000'000'000'000ull);
    } else if (a == "--warmup") {
      ok = real(o.warmup_s, 0, 3600);
    } else if (a == "--local-ip" || a == "--peer-ip") {
      if (!value()) return fail(e);
      if (!parse_ipv4(v, scratch)) return fail(a + ": " + apps::quoted(v) + " is not an IPv4 address");
      (a == "--local-ip" ? o.local_ip : o.peer_ip) = v;
    } else if (a == "--dscp") {
      ok = integer(o.dscp, 0, 63);
    } else if (a == "--vlan") {
      ok = integer(o.vlan_id, 1, 4094);
    } else if (a == "--pcp") {
      ok = integer(o.vlan_pcp, 0, 7);
      pcp_given = true;
    } else if (a == "--peer-mac") {
      if (!value()) return fail(e);
      if (!parse_mac(v, scratch)) return fail("--peer-mac: " + apps::quoted(v) + " is not a MAC (xx:xx:xx:xx:xx:xx)");
      o.peer_mac = v;
    } else if (a == "--oob-host") {
      if (!value()) return fail(e);
      if (v.empty()) return fail("--oob-host: needs a host name or address");
      o.oob_host = v;
    } else if (a == "--oob-port") {
      ok = integer(o.oob_port, 0, 65535);
    } else if (a == "--local-qpn" || a == "--remote-qpn") {
      ok = integer(a == "--local-qpn" ? o.local_qpn : o.remote_qpn, 1, 0xFFFFFF);
      remote_qpn_given |= a == "--remote-qpn";
    } else if (a == "--psn" || a == "--remote-psn") {
      ok = integer(a == "--psn" ? o.psn : o.remote_psn, 0, 0xFFFFFF);
    } else if (a == "--connect-timeout") {
      ok = real(o.connect_timeout_s, 0.1, 3600);
    } else if (a == "--qp-timeout") {
      ok = integer(o.qp_timeout, 1, 31);
    } else if (a == "--retry-cnt") {
      ok = integer(o.retry_cnt, 0, 7);
    } else if (a == "--cc") {
      if (!value()) return fail(e);
      if (v != "none" && v != "dcqcn") return fail("--cc: " + apps::quoted(v) + " is not none or dcqcn");
      o.cc = v;
    } else if (a == "--preset") {
      if (!value()) return fail(e);
      if (v != "paper" && v != "mlx5") return fail("--preset: " + apps::quoted(v) + " is not paper or mlx5");
      o.preset = v;
    } else if (a == "--line-gbps") {
      ok = real(o.line_gbps, 0.001, 400);
    } else if (a.rfind("--dcqcn-", 0) == 0) {
      if (!value()) return fail(e);
      dcqcn::DcqcnParams probe;
      if (e = dcqcn::set_param(probe, a.substr(8), v); !e.empty()) return fail(apps::printable(a) + ": " + e);
      overrides.emplace_back(a.substr(8), v);
    } else if (a == "--pfc-priority") {
      ok = integer(o.pfc_priority, 0, 7);
    } else if (a == "--loss" || a == "--duplicate" || a == "--reorder") {
      ok = real(a == "--loss" ? o.loss : a == "--duplicate" ? o.duplicate : o.reorder, 0, 0.5);
    } else if (a == "--burst-start") {
      ok = real(o.burst_start, 0, 0.1);
    } else if (a == "--burst-frames") {
      ok = integer(o.burst_frames, 1, 1000);
    } else if (a == "--seed") {
      ok = integer(o.seed, 0, 1'000'000'000'000'000'000ull);
    } else if (a == "--json") {
      ok = output(o.json);
    } else if (a == "--csv") {
      ok = output(o.csv);
    } else if (a == "--stats-json") {  // the live feed: "-" is stdout
      ok = (i + 1 < args.size() && args[i + 1] == "-") ? (o.stats_json = args[++i], true) : output(o.stats_json);
    } else if (a == "--interval") {
      ok = real(o.interval_s, 0.1, 3600);
    } else if (a == "--pcap") {
      ok = output(o.pcap);
    } else {
      return fail("unknown option " + apps::quoted(a) + " (see --help)");
    }
    if (!ok) return fail(e);
  }
  // DCQCN: the preset at the line rate, then each override; one message naming a bad parameter.
  (void)dcqcn::preset_by_name(o.preset, o.line_gbps * 1e9, o.dcqcn);
  for (const auto& [name, value] : overrides)
    if (std::string e = dcqcn::set_param(o.dcqcn, name, value); !e.empty())
      return fail("--dcqcn-" + name + ": " + e);
  if (std::string e = dcqcn::validate_options(o.dcqcn, dcqcn_option, "--line-gbps"); !e.empty()) return fail(e);
  if (o.rate_gbps > 0 && o.msg_rate > 0)
    return std::fprintf(stderr, "droce-gen: --rate-gbps and --msg-rate both set: give one offered load\n"), -1;
  if ((o.arrivals != Arrivals::kConstant || o.burst != 1) && o.rate_gbps == 0 && o.msg_rate == 0)
    return std::fprintf(stderr, "droce-gen: --arrivals and --burst shape an offered load: give --rate-gbps or "
                                "--msg-rate\n"), -1;
  if (o.mode != Mode::kLoopback && o.oob_port == 0 && !remote_qpn_given)
    return std::fprintf(stderr, "droce-gen: a static connection (--oob-port 0) needs --remote-qpn\n"), -1;
  if (o.mode != Mode::kLoopback && o.oob_port == 0 && o.op != Op::kSend)
    return std::fprintf(stderr, "droce-gen: --op %s needs the peer's buffer address and rkey, which only the "
                                "out-of-band exchange carries: use --oob-port, or --op send\n", op_name(o.op)), -1;
  if (is_atomic_op(o.op)) {
    // An atomic works on 8 bytes (IBTA §9.4.5): that is its size, given or not.
    if (size_given && (o.sizes.size() != 1 || o.sizes[0] != 8))
      return std::fprintf(stderr, "droce-gen: --op %s works on 8 bytes: leave --size out or give 8\n", op_name(o.op)), -1;
    o.sizes = {8};
  }
  if (pcp_given && o.vlan_id == 0)
    return std::fprintf(stderr, "droce-gen: --pcp is the priority of the 802.1Q tag: give --vlan too\n"), -1;
  if (o.mode == Mode::kLoopback && (o.dscp != 0 || o.vlan_id != 0))
    return std::fprintf(stderr, "droce-gen: --dscp and --vlan mark the frames on a port: client and server modes\n"), -1;
  if (o.active_qps > o.qps)
    return std::fprintf(stderr, "droce-gen: --active-qps %u is more than --qps %u\n", o.active_qps, o.qps), -1;
  if (o.workers > o.qps)
    return std::fprintf(stderr, "droce-gen: --workers %u is more than --qps %u: every worker needs a QP\n",
                        static_cast<unsigned>(o.workers), o.qps), -1;
  // Buffers: inflight slots of the largest size per active QP (one per idle QP) on each side.
  if (buffer_bytes(o) > (512ull << 20))
    return std::fprintf(stderr, "droce-gen: --qps x --inflight x --size needs more than 512 MiB of buffers\n"), -1;
  return 0;
}

}  // namespace droce::gen
