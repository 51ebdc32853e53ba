// droce-perf option parsing: perftest's flags and defaults (perftest_parameters.c), each bad value
// one line naming the flag.
#include "apps/droce-perf/options.h"

#include <cstdio>

#include "apps/common/address_text.h"
#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/version_line.h"
#include "apps/droce-perf/perftest_flags.h"

namespace droce::perf {

using engine::PerftestTest;

const char* atomic_type_name(AtomicType a) {
  return a == AtomicType::kCmpAndSwap ? "CMP_AND_SWAP" : "FETCH_AND_ADD";
}

double RateLimit::pps(std::uint32_t size) const {
  switch (units) {
    case RateUnits::kMiBps: return value * 1048576.0 / size;
    case RateUnits::kGbps: return value * 1e9 / (static_cast<double>(size) * 8);
    case RateUnits::kPps: break;
  }
  return value;
}

std::vector<std::uint32_t> Options::sizes() const {
  if (!all_sizes) return {size};
  std::vector<std::uint32_t> s;
  for (std::uint32_t v = 2; v <= max_size && v <= (1u << 23); v <<= 1) s.push_back(v);
  return s;
}

namespace {

constexpr std::uint32_t kMaxSize = 1u << 23;  // perftest's MAX_SIZE, the top of -a; droce's cap for -s
constexpr std::uint32_t kAtomicSize = 8;      // perftest's DEF_SIZE_ATOMIC: IBTA §9.4.5 atomics are 64-bit
constexpr char kTestList[] = "send_bw, write_bw, read_bw, send_lat, write_lat, read_lat, atomic_bw, atomic_lat";

void usage() {
  std::printf(
      "Usage: droce-perf [EAL options] -- TEST [options] [server-host]\n"
      "  TEST: send_bw write_bw read_bw send_lat write_lat read_lat atomic_bw atomic_lat (perftest's ib_TEST)\n"
      "  No server-host: server, waiting for one client. A server-host: client, connecting to it.\n"
      "  perftest 6.06's TCP exchange is spoken byte for byte: either side may be perftest itself.\n"
      "  Without EAL options the port is net_memif on /tmp/droce-perf.sock (server or client role, the\n"
      "  server on the last CPU); else the first port of the EAL options.\n\n"
      "perftest options (perftest's defaults):\n"
      "  -s, --size SIZE          message size (default 65536 for bw tests, 2 for latency tests; K/M suffixes;\n"
      "                           at most 8388608; atomic tests: 8 only)\n"
      "  -n, --iters N            iterations (default 5000 for write_bw, 1000 for the others; at least 5)\n"
      "  -D, --duration S         run for S seconds instead of -n, which it overrides, as in perftest (a quarter\n"
      "                           of the time at each end is not measured)\n"
      "  -q, --qp N               QPs (bw tests only; default 1, at most 64)\n"
      "  -m, --mtu MTU            256, 512, 1024, 2048 or 4096 (default 1024; both sides use the smaller)\n"
      "  -a, --all                every size 2 .. 2^23 (see --max-size; not for atomic tests)\n"
      "  -A, --atomic_type TYPE   FETCH_AND_ADD (default) or CMP_AND_SWAP (atomic tests only)\n"
      "  --report_gbits           bandwidth in Gb/sec instead of MB/sec\n"
      "  -p, --port PORT          TCP port of the exchange (default 18515)\n"
      "  -t, --tx-depth N         outstanding requests (default 128 for bw, 1 for latency; at most -n)\n"
      "  -o, --outs N             outstanding RDMA READs / atomics, 1..255 (read and atomic tests; default 128):\n"
      "                           those we answer at once; we issue at most as many as the peer advertises\n"
      "  -u, --qp-timeout N       local ACK timeout 4.096 us * 2^N, 1..31 (default 14: 67 ms)\n"
      "  -b, --bidirectional      both sides send at once (send_bw, write_bw, read_bw); each prints both directions'\n"
      "                           sum, as perftest\n"
      "  --report-both            with -b, each direction's row too (Local results, Remote results)\n"
      "  -Q, --cq-mod N           a completion every N requests, 1..1024 (default 100; 1 above 8 KiB unless given)\n"
      "  -N, --noPeak             no peak bandwidth (reported as 0)\n"
      "  -r, --rx-depth N         SEND receives kept posted, 1..4096 (default 512, at most -n)\n"
      "  -I, --inline_size N      accepted and shown (0..1024, not for read/atomic tests): droce has no inline\n"
      "                           distinction, every payload is copied into its frames\n"
      "  -f, --margin S           -D's unmeasured seconds at each end (default a quarter of -D)\n"
      "  -T, --tos N, --tclass N  the IP TOS / traffic class byte, 0..255: droce takes its DSCP (N >> 2); ECN stays ECT(0)\n"
      "  --rate_limit=R           pace the requests at R (bw tests; --rate_units M MiB/s, g Gb/s (default), p msgs/s);\n"
      "  --rate_limit_type=SW|HW  droce paces in software for both (HW is told so; PP, raw_ethernet's, is refused):\n"
      "  --burst_size=N           one burst of N requests (default -t) every N / rate seconds\n"
      "  --out_json               perftest's JSON report (test_info, results) in --out_json_file=FILE\n"
      "                           (default perftest_out.json)\n"
      "  -V                       as --version\n"
      "  Other perftest flags are ignored with one warning line where that changes nothing measured,\n"
      "  and refused (exit 2) where ignoring them would mislead (rdma_cm, UD, GPU memory, --output, ...)\n"
      "  -c, --connection TYPE    RC (the only one)\n"
      "  -x, --gid-index N        accepted (0..64): droce has one GID, ::ffff:<--local-ip>\n"
      "  -d, --ib-dev DEV         accepted, no effect (the port comes from the EAL options)\n"
      "  -F, --CPU-freq           accepted, no effect (droce reads the TSC frequency from DPDK)\n"
      "  -h, --help               this text\n"
      "  --version                droce's and DPDK's versions\n\n"
      "droce options:\n"
      "  --local-ip IP            our IPv4 address, in our GID (default 10.0.0.1 client, 10.0.0.2 server)\n"
      "  --local-mac MAC          source MAC of our frames (default: the port's MAC)\n"
      "  --peer-mac MAC           the peer's MAC (default: found by ARP for the IPv4 address in the peer's\n"
      "                           GID, after a gratuitous ARP of ours; a peer that does not answer ARP needs it)\n"
      "  --dscp N                 DSCP of our frames, 0..63 (default 0; ECN stays ECT(0) for DCQCN)\n"
      "  --vlan ID [--pcp N]      an 802.1Q tag on our frames (ARP included), 1..4094, priority 0..7\n"
      "                           (default: untagged)\n"
      "  --loss P                 lab loss: drop this fraction of frames arriving at our port (default 0)\n"
      "  --seed N                 seed of the lab loss (default 1)\n"
      "  --max-size SIZE          with -a, stop after this size (default 8388608; a perftest peer runs them all)\n"
      "  --timeout S              connect and every exchange step (default 30)\n"
      "  --json FILE              the results as JSON\n"
      "  --workers N              poll-mode workers (default 1): QP i runs on worker i %% N, each worker on its\n"
      "                           own EAL lcore (the main lcore is worker 0, -l must give N) with its own RX and\n"
      "                           TX queue of the port (N of each); at most -q. With N > 1 the peer is droce-perf\n"
      "                           (bw tests); perftest's report stays one table of totals, and droce's own line\n"
      "                           after it adds each worker's messages\n");
}

bool parse_test(const std::string& s, PerftestTest& t) {
  static const std::pair<const char*, PerftestTest> kTests[] = {
      {"send_bw", PerftestTest::kSendBw},     {"write_bw", PerftestTest::kWriteBw},
      {"read_bw", PerftestTest::kReadBw},     {"send_lat", PerftestTest::kSendLat},
      {"write_lat", PerftestTest::kWriteLat}, {"read_lat", PerftestTest::kReadLat},
      {"atomic_bw", PerftestTest::kAtomicBw}, {"atomic_lat", PerftestTest::kAtomicLat}};
  for (const auto& [name, test] : kTests)
    if (s == name) {
      t = test;
      return true;
    }
  return false;
}

int bad(const std::string& msg) {
  std::fprintf(stderr, "droce-perf: %s\n", msg.c_str());
  return -1;
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o) {
  for (const auto& a : args) {
    if (a == "-h" || a == "--help") {
      usage();
      return 1;
    }
    if (a == "--version" || a == "-V") {
      apps::print_version("droce-perf");
      return 1;
    }
  }
  if (args.empty())
    return bad(std::string("no test given: droce-perf -- TEST [options] [server-host] (TEST: ") + kTestList +
               "; --help)");
  if (!parse_test(args[0], o.test)) return bad(apps::quoted(args[0]) + " is not a test (" + kTestList + ")");
  bool size_given = false, iters_given = false, tx_given = false, atomic_given = false, pcp_given = false;
  bool inline_given = false, rate_type_given = false, rate_units_given = false, burst_given = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    // perftest's getopt takes "--name=value" as well as "--name value".
    std::string a = args[i];
    std::string inline_value;
    bool has_inline = false;
    if (a.size() > 2 && a[0] == '-' && a[1] == '-')
      if (const auto eq = a.find('='); eq != std::string::npos) {
        inline_value = a.substr(eq + 1);
        a.resize(eq);
        has_inline = true;
      }
    std::string v;
    auto value = [&]() {
      if (has_inline) {
        v = inline_value;
        has_inline = false;
        return true;
      }
      if (i + 1 >= args.size()) return bad(apps::printable(a) + " needs a value") == 0;
      v = args[++i];
      return true;
    };
    // An unsigned integer in [lo, hi] (decimal or 0x hex), with K/M suffixes where allowed.
    auto number = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t& out, bool suffixes = false) {
      const std::string e = apps::parse_uint(a, v, lo, hi, out, suffixes ? apps::Suffixes::kKiloMega : apps::Suffixes::kNone);
      return e.empty() || bad(e) == 0;
    };
    std::uint64_t n = 0;
    std::uint8_t scratch[6];
    if (a == "-s" || a == "--size") {
      if (!value() || !number(1, kMaxSize, n, true)) return -1;
      o.size = static_cast<std::uint32_t>(n);
      size_given = true;
    } else if (a == "-n" || a == "--iters") {
      if (!value()) return -1;
      if (!number(0, 100000000, n)) return -1;
      if (n < 5) return bad(a + ": perftest needs at least 5 iterations, got " + v);
      o.iters = n;
      iters_given = true;
    } else if (a == "-D" || a == "--duration") {
      if (!value() || !number(1, 86400, n)) return -1;
      o.duration_s = static_cast<std::uint32_t>(n);
    } else if (a == "-q" || a == "--qp") {
      if (!value() || !number(1, 64, n)) return -1;
      o.qps = static_cast<std::uint32_t>(n);
    } else if (a == "-m" || a == "--mtu") {
      if (!value() || !number(0, 1u << 20, n)) return -1;
      if (n != 256 && n != 512 && n != 1024 && n != 2048 && n != 4096)
        return bad(a + ": " + v + " is not an IB MTU (256, 512, 1024, 2048 or 4096)");
      o.mtu = static_cast<std::uint32_t>(n);
    } else if (a == "-a" || a == "--all") {
      o.all_sizes = true;
    } else if (a == "-A" || a == "--atomic_type") {
      if (!value()) return -1;
      if (v == "FETCH_AND_ADD")
        o.atomic = AtomicType::kFetchAndAdd;
      else if (v == "CMP_AND_SWAP")
        o.atomic = AtomicType::kCmpAndSwap;
      else
        return bad(a + ": " + apps::quoted(v) + " is not an atomic type (FETCH_AND_ADD or CMP_AND_SWAP)");
      atomic_given = true;
    } else if (a == "--max-size") {
      if (!value() || !number(2, kMaxSize, n, true)) return -1;
      o.max_size = static_cast<std::uint32_t>(n);
    } else if (a == "--report_gbits") {
      o.report_gbits = true;
    } else if (a == "-p" || a == "--port") {
      if (!value() || !number(1, 65535, n)) return -1;
      o.port = static_cast<std::uint16_t>(n);
    } else if (a == "-t" || a == "--tx-depth") {
      if (!value() || !number(1, 15000, n)) return -1;
      o.tx_depth = static_cast<std::uint32_t>(n);
      tx_given = true;
    } else if (a == "-o" || a == "--outs") {
      if (!value() || !number(1, 255, n)) return -1;  // rc::kMaxRdAtomic, the verbs field width
      o.out_reads = static_cast<std::uint32_t>(n);
    } else if (a == "-u" || a == "--qp-timeout") {
      if (!value() || !number(1, 31, n)) return -1;  // the 5-bit Local ACK Timeout (IBTA §9.7.6.1.3); 0, never, is not offered
      o.qp_timeout = static_cast<std::uint32_t>(n);
    } else if (a == "-c" || a == "--connection") {
      if (!value()) return -1;
      if (v != "RC") return bad("-c: droce speaks RC only, not " + apps::quoted(v));
    } else if (a == "-x" || a == "--gid-index") {
      if (!value() || !number(0, 64, n)) return -1;
      o.gid_index = static_cast<int>(n);
    } else if (a == "-d" || a == "--ib-dev") {
      if (!value()) return -1;
      o.device = v;
    } else if (a == "-F" || a == "--CPU-freq") {
      o.cpu_freq_f = true;
    } else if (a == "--local-ip") {
      if (!value()) return -1;
      if (!engine::parse_ipv4(v, scratch)) return bad("--local-ip: " + apps::quoted(v) + " is not an IPv4 address");
      o.local_ip = v;
    } else if (a == "--dscp") {
      if (!value() || !number(0, 63, n)) return -1;
      o.dscp = static_cast<std::uint8_t>(n);
    } else if (a == "--vlan") {
      if (!value() || !number(1, 4094, n)) return -1;
      o.vlan_id = static_cast<std::uint16_t>(n);
    } else if (a == "--pcp") {
      if (!value() || !number(0, 7, n)) return -1;
      o.vlan_pcp = static_cast<std::uint8_t>(n);
      pcp_given = true;
    } else if (a == "--local-mac" || a == "--peer-mac") {
      if (!value()) return -1;
      if (!engine::parse_mac(v, scratch)) return bad(a + ": " + apps::quoted(v) + " is not a MAC (xx:xx:xx:xx:xx:xx)");
      (a == "--local-mac" ? o.local_mac : o.peer_mac) = v;
    } else if (a == "--loss") {
      if (!value()) return -1;
      double p = 0;
      if (!apps::parse_real(a, v, 0, 1, p).empty() || p == 1)
        return bad("--loss: " + apps::quoted(v) + " is not a probability in [0, 1)");
      o.loss = p;
    } else if (a == "--seed") {
      if (!value() || !number(0, UINT64_MAX, n)) return -1;
      o.seed = n;
    } else if (a == "--timeout") {
      if (!value() || !number(1, 3600, n)) return -1;
      o.timeout_s = static_cast<double>(n);
    } else if (a == "--workers") {
      if (!value() || !number(1, 64, n)) return -1;
      o.workers = static_cast<std::uint32_t>(n);
    } else if (a == "--json") {
      if (!value()) return -1;
      if (std::string e = apps::check_output_path(a, v); !e.empty()) return bad(e);
      o.json = v;
    } else if (a == "-b" || a == "--bidirectional") {
      o.duplex = true;
    } else if (a == "--report-both") {
      o.report_both = true;
    } else if (a == "-N" || a == "--noPeak") {
      o.no_peak = true;
    } else if (a == "-Q" || a == "--cq-mod") {
      if (!value() || !number(1, 1024, n)) return -1;  // MIN_CQ_MOD .. MAX_CQ_MOD
      o.cq_mod = static_cast<std::uint32_t>(n);
    } else if (a == "-I" || a == "--inline_size") {
      if (!value() || !number(0, 1024, n)) return -1;  // MAX_INLINE
      o.inline_size = static_cast<std::uint32_t>(n);
      inline_given = true;
    } else if (a == "-r" || a == "--rx-depth") {
      if (!value() || !number(1, 4096, n)) return -1;
      o.rx_depth = static_cast<std::uint32_t>(n);
    } else if (a == "-f" || a == "--margin") {
      if (!value() || !number(0, 86400, n)) return -1;
      o.margin_s = static_cast<int>(n);
    } else if (a == "-T" || a == "--tos" || a == "--tclass") {
      if (!value() || !number(0, 255, n)) return -1;
      o.dscp = static_cast<std::uint8_t>(n >> 2);  // the TOS byte's top six bits; its ECN bits are droce's
    } else if (a == "--rate_limit") {
      if (!value()) return -1;
      double r = 0;
      if (!apps::parse_real(a, v, 0, 1e12, r).empty() || r <= 0)
        return bad("--rate_limit: " + apps::quoted(v) + " is not a rate above 0");
      o.rate.value = r;
    } else if (a == "--rate_units") {
      if (!value()) return -1;
      if (v == "M") o.rate.units = RateUnits::kMiBps;
      else if (v == "g") o.rate.units = RateUnits::kGbps;
      else if (v == "p") o.rate.units = RateUnits::kPps;
      else return bad("--rate_units: " + apps::quoted(v) + " is not M (MiB/s), g (Gb/s) or p (messages/s)");
      rate_units_given = true;
    } else if (a == "--rate_limit_type") {
      if (!value()) return -1;
      if (v == "SW") o.rate.type = RateLimitType::kSw;
      else if (v == "HW") o.rate.type = RateLimitType::kHw;
      else if (v == "PP") return bad("--rate_limit_type PP: packet pacing is raw_ethernet's (perftest refuses it for RC)");
      else return bad("--rate_limit_type: " + apps::quoted(v) + " is not SW or HW");
      rate_type_given = true;
    } else if (a == "--burst_size") {
      if (!value() || !number(1, 65536, n)) return -1;
      o.rate.burst = static_cast<std::uint32_t>(n);
      burst_given = true;
    } else if (a == "--out_json") {
      o.out_json = true;
    } else if (a == "--out_json_file") {
      if (!value()) return -1;
      if (std::string e = apps::check_output_path(a, v); !e.empty()) return bad(e);
      o.out_json_file = v;
    } else if (const PerftestFlag* f = find_perftest_flag(a); f != nullptr) {
      if (f->fate == FlagFate::kRefused) return bad(a + ": perftest's, not implemented by droce-perf: " + std::string(f->why));
      if (f->has_arg && !value()) return -1;
      if (!f->has_arg && has_inline) return bad(a + " takes no value");
      std::fprintf(stderr, "droce-perf: warning: %s ignored: %.*s\n", a.c_str(), static_cast<int>(f->why.size()), f->why.data());
    } else if (!a.empty() && a[0] == '-') {
      return bad("unknown option " + apps::quoted(a) + " (--help lists them)");
    } else if (a.empty()) {
      // Not "no server name": an empty one (an unset shell variable) must not turn a client into a server.
      return bad("the server name is empty (give a host, or none to be the server)");
    } else if (o.host.empty()) {
      o.host = a;
    } else {
      return bad("two server names given: " + apps::quoted(o.host) + " and " + apps::quoted(a));
    }
    if (has_inline) return bad(a + " takes no value");  // "--flag=value" for a flag without one
  }
  // perftest's dependencies between flags (perftest_parameters.c force_dependecies and parser).
  if (o.qps > 1 && !o.bw()) return bad("-q: multiple QPs are only available in bw tests");
  if (o.workers > o.qps)
    return bad("--workers " + std::to_string(o.workers) + ": more workers than QPs (-q " + std::to_string(o.qps) +
               "); each worker needs one" + (o.bw() ? "" : " (latency tests run one QP)"));
  if (o.duration_s != 0 && o.all_sizes) return bad("-D: duration mode does not run all sizes (-a)");
  if (o.margin_s >= 0 && (o.duration_s == 0 || 2u * static_cast<std::uint32_t>(o.margin_s) >= o.duration_s))
    return bad("-f: the margins at both ends must leave part of -D to measure");
  if (o.all_sizes && size_given) return bad("-a and -s: -a runs every size");
  // Atomics: one size, 8 bytes (perftest: "Message size cannot be changed for Atomic tests"; its
  // -a asks for every size and is refused the same way). -A belongs to them alone.
  if (atomic_given && !o.atomic_test()) return bad("-A: only atomic_bw and atomic_lat take an atomic type");
  if (o.atomic_test() && o.all_sizes) return bad("-a: atomic tests run one size, 8 bytes");
  if (o.atomic_test() && size_given && o.size != kAtomicSize)
    return bad("-s: atomic tests use 8-byte messages only, not " + std::to_string(o.size));
  if (pcp_given && o.vlan_id == 0) return bad("--pcp is the priority of the 802.1Q tag: give --vlan too");
  if (o.duplex && !o.bw()) return bad("-b: bidirectional is only available in bw tests");
  if (o.duplex && o.atomic_test()) return bad("-b: droce-perf runs send_bw, write_bw and read_bw bidirectionally, not atomic_bw");
  if (o.duplex && o.workers > 1) return bad("-b: one worker only (--workers 1)");
  if (inline_given && engine::perftest_uses_out_reads(o.test))
    return bad("-I: inline data is not available on READ/atomic tests");
  if (o.report_both && !o.duplex)
    std::fprintf(stderr, "droce-perf: warning: --report-both ignored: it reports each direction of a -b run\n");
  // The rate limiter: perftest's HW type is its default once a rate is given; droce paces in
  // software for both (its SW limiter's rules apply: bw tests, no atomics, no bidirectional SEND).
  if (o.rate.value == 0 && (rate_type_given || rate_units_given || burst_given))
    return bad("--rate_limit_type, --rate_units and --burst_size need --rate_limit");
  if (o.rate.value != 0) {
    if (!rate_type_given) o.rate.type = RateLimitType::kHw;
    if (!o.bw() || o.atomic_test()) return bad("--rate_limit: the rate limiter runs in bw tests other than atomic_bw");
    if (o.duplex && o.test == PerftestTest::kSendBw)
      return bad("--rate_limit: not with a bidirectional send_bw (perftest's SW limiter refuses it)");
    if (o.rate.type == RateLimitType::kHw && o.rate.units == RateUnits::kPps)
      return bad("--rate_units p: pps is not supported with the HW rate limit (perftest's rule)");
    if (o.rate.type == RateLimitType::kHw)
      std::fprintf(stderr, "droce-perf: warning: --rate_limit_type HW: droce paces in software, as the SW limiter does\n");
  }
  if (!size_given) o.size = o.atomic_test() ? kAtomicSize : o.bw() ? 65536 : 2;
  if (!iters_given) o.iters = o.test == PerftestTest::kWriteBw ? 5000 : 1000;
  if (!tx_given) o.tx_depth = o.bw() ? 128 : 1;
  if (o.duration_s == 0 && o.tx_depth > o.iters) o.tx_depth = static_cast<std::uint32_t>(o.iters);
  return 0;
}

}  // namespace droce::perf
