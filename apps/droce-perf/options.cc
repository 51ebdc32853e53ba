// droce-perf option parsing on the apps' CLI11 setup: perftest's flags, spellings and defaults
// (perftest_parameters.c), droce's own, each bad value one line naming the flag as typed.
#include "apps/droce-perf/options.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <utility>

#include "apps/common/cli/address_options.h"
#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/version_line.h"
#include "apps/droce-perf/perftest_flags.h"
#include "apps/droce-perf/typed_names.h"

namespace droce::perf {

using engine::PerftestTest;

const char* atomic_type_name(AtomicType a) { return a == AtomicType::kCmpAndSwap ? "CMP_AND_SWAP" : "FETCH_AND_ADD"; }

double RateLimit::pps(std::uint32_t size) const {
  switch (units) {
    case RateUnits::kMiBps:
      return value * 1048576.0 / size;
    case RateUnits::kGbps:
      return value * 1e9 / (static_cast<double>(size) * 8);
    case RateUnits::kPps:
      break;
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

using apps::Suffixes;

constexpr std::uint32_t kMaxSize = 1u << 23;  // perftest's MAX_SIZE, the top of -a; droce's cap for -s
constexpr std::uint32_t kAtomicSize = 8;      // perftest's DEF_SIZE_ATOMIC: IBTA §9.4.5 atomics are 64-bit
constexpr char kTestList[] = "send_bw, write_bw, read_bw, send_lat, write_lat, read_lat, atomic_bw, atomic_lat";

constexpr const char* kUsage =
    "Usage: droce-perf [EAL options] -- TEST [options] [server-host]\n"
    "  TEST: send_bw write_bw read_bw send_lat write_lat read_lat atomic_bw atomic_lat (perftest's ib_TEST)\n"
    "  No server-host: server, waiting for one client. A server-host: client, connecting to it.\n"
    "  perftest 6.06's TCP exchange is spoken byte for byte: either side may be perftest itself.\n"
    "  Without EAL options the port is net_memif on /tmp/droce-perf.sock (server or client role, the\n"
    "  server on the last CPU); else the first port of the EAL options.\n"
    "  Options take perftest's spellings (-s 64K, --size=64K). perftest's other flags are ignored with\n"
    "  one warning line where that changes nothing measured, and refused (exit 2) where ignoring them\n"
    "  would mislead (rdma_cm, UD, GPU memory, --output, ...).";

// Group titles, in the order --help shows them.
constexpr const char* kTest = "perftest: the test (perftest's defaults)";
constexpr const char* kRate = "perftest: the rate limiter (bw tests; droce paces in software for SW and HW)";
constexpr const char* kLink = "perftest: the connection";
constexpr const char* kReport = "perftest: the report";

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

// The first of CLI11's names ("-s" of "-s,--size"): how messages find the spelling typed.
std::string first_of(const std::string& names) { return names.substr(0, names.find(',')); }

// An integer option in [lo, hi] into `field`, its errors naming the option as typed.
template <typename T>
CLI::Option* add_number(CLI::App& app, const TypedNames& typed, const char* group, const std::string& names,
                        const std::string& type, T& field, std::uint64_t lo, std::uint64_t hi, const std::string& help,
                        Suffixes suffixes = Suffixes::kNone) {
  return apps::cli::add_value(app, group, names, type, help,
                              [&field, &typed, first = first_of(names), lo, hi, suffixes](const std::string& v) {
                                std::uint64_t n = 0;
                                const Status s = apps::parse_uint(typed(first), v, lo, hi, n, suffixes);
                                if (s.ok()) field = static_cast<T>(n);
                                return s.message();
                              });
}

// An option whose parser is given the spelling typed and the value.
CLI::Option* add_text(CLI::App& app, const TypedNames& typed, const char* group, const std::string& names,
                      const std::string& type, const std::string& help,
                      std::function<std::string(const std::string& name, const std::string& v)> parse) {
  return apps::cli::add_value(app, group, names, type, help,
                              [&typed, first = first_of(names), parse = std::move(parse)](const std::string& v) {
                                return parse(typed(first), v);
                              });
}

// What the parse leaves beside Options: the -T byte, held until the order of -T and --dscp is known.
struct Extra {
  std::uint32_t tos = 0;
};

void declare_test(CLI::App& app, const TypedNames& typed, Options& o) {
  namespace cli = apps::cli;
  const char* g = kTest;
  add_number(app, typed, g, "-s,--size", "SIZE", o.size, 1, kMaxSize,
             "message size (default 65536 for bw tests, 2 for latency tests; at most\n"
             "8M; atomic tests: 8 only)",
             Suffixes::kBinary);
  cli::add_flag(app, g, "-a,--all", o.all_sizes, "every size 2 .. 2^23 (see --max-size; not for atomic tests)");
  add_number(app, typed, g, "--max-size", "SIZE", o.max_size, 2, kMaxSize,
             "with -a, stop after this size (droce's; default 8M: a perftest peer runs\nthem all)", Suffixes::kBinary);
  add_text(app, typed, g, "-n,--iters", "N", "iterations, at least 5 (default 5000 for write_bw, 1000 for the others)",
           [&o](const std::string& name, const std::string& v) {
             std::uint64_t n = 0;
             if (Status s = apps::parse_uint(name, v, 0, 100000000, n, Suffixes::kDecimal); !s.ok()) return s.message();
             if (n < 5) return name + ": perftest needs at least 5 iterations, got " + v;
             o.iters = n;
             return std::string();
           });
  add_number(app, typed, g, "-D,--duration", "S", o.duration_s, 1, 86400,
             "run for S seconds instead of -n, which it overrides, as in perftest (a\n"
             "quarter of the time at each end is not measured)");
  add_text(app, typed, g, "-f,--margin", "S", "-D's unmeasured seconds at each end (default a quarter of -D)",
           [&o](const std::string& name, const std::string& v) {
             std::uint32_t n = 0;
             const Status s = apps::parse_uint(name, v, 0, 86400, n);
             if (s.ok()) o.margin_s = static_cast<int>(n);
             return s.message();
           });
  add_number(app, typed, g, "-q,--qp", "N", o.qps, 1, 64, "QPs (bw tests only; default 1, at most 64)");
  add_number(app, typed, g, "-t,--tx-depth", "N", o.tx_depth, 1, 15000,
             "outstanding requests (default 128 for bw, 1 for latency; at most -n)", Suffixes::kDecimal);
  add_number(app, typed, g, "-r,--rx-depth", "N", o.rx_depth, 1, 4096,
             "SEND receives kept posted, 1..4096 (default 512, at most -n)", Suffixes::kDecimal);
  add_number(app, typed, g, "-Q,--cq-mod", "N", o.cq_mod, 1, 1024,  // MIN_CQ_MOD .. MAX_CQ_MOD
             "a completion every N requests, 1..1024 (default 100; 1 above 8 KiB\nunless given)", Suffixes::kDecimal);
  add_number(app, typed, g, "-o,--outs", "N", o.out_reads, 1, 255,  // rc::kMaxRdAtomic, the verbs field width
             "outstanding RDMA READs / atomics, 1..255 (read and atomic tests;\n"
             "default 128): those we answer at once; we issue at most as many as the\npeer advertises");
  add_text(app, typed, g, "-A,--atomic_type", "TYPE", "FETCH_AND_ADD (default) or CMP_AND_SWAP (atomic tests only)",
           [&o](const std::string& name, const std::string& v) {
             if (v == "FETCH_AND_ADD")
               o.atomic = AtomicType::kFetchAndAdd;
             else if (v == "CMP_AND_SWAP")
               o.atomic = AtomicType::kCmpAndSwap;
             else
               return name + ": " + apps::quoted(v) + " is not an atomic type (FETCH_AND_ADD or CMP_AND_SWAP)";
             return std::string();
           });
  cli::add_flag(app, g, "-b,--bidirectional", o.duplex,
                "both sides send at once (send_bw, write_bw, read_bw); each prints both\ndirections' sum, as perftest");
  cli::add_flag(app, g, "--report-both", o.report_both,
                "with -b, each direction's row too (Local results, Remote results)");
  add_number(app, typed, g, "-I,--inline_size", "N", o.inline_size, 0, 1024,  // MAX_INLINE
             "accepted and shown (0..1024, not for read/atomic tests): droce has no\n"
             "inline distinction, every payload is copied into its frames",
             Suffixes::kBinary);
  cli::add_flag(app, g, "-N,--noPeak", o.no_peak, "no peak bandwidth (reported as 0)");
}

void declare_rate(CLI::App& app, const TypedNames& typed, Options& o) {
  const char* g = kRate;
  add_text(app, typed, g, "--rate_limit", "R", "pace the requests at R in --rate_units (K, M, G: 10^3, 10^6, 10^9)",
           [&o](const std::string& name, const std::string& v) {
             double r = 0;
             if (!apps::parse_real(name, v, 0, 1e12, r, Suffixes::kDecimal).ok() || r <= 0)
               return name + ": " + apps::quoted(v) + " is not a rate above 0";
             o.rate.value = r;
             return std::string();
           });
  add_text(app, typed, g, "--rate_units", "M|g|p", "M MiB/s, g Gb/s (default), p messages/s",
           [&o](const std::string& name, const std::string& v) {
             if (v == "M")
               o.rate.units = RateUnits::kMiBps;
             else if (v == "g")
               o.rate.units = RateUnits::kGbps;
             else if (v == "p")
               o.rate.units = RateUnits::kPps;
             else
               return name + ": " + apps::quoted(v) + " is not M (MiB/s), g (Gb/s) or p (messages/s)";
             return std::string();
           });
  add_text(app, typed, g, "--rate_limit_type", "SW|HW",
           "SW, or HW (perftest's default once a rate is given; paced in software\n"
           "too, and told so); PP, raw_ethernet's, is refused",
           [&o](const std::string& name, const std::string& v) {
             if (v == "SW")
               o.rate.type = RateLimitType::kSw;
             else if (v == "HW")
               o.rate.type = RateLimitType::kHw;
             else if (v == "PP")
               return name + " PP: packet pacing is raw_ethernet's (perftest refuses it for RC)";
             else
               return name + ": " + apps::quoted(v) + " is not SW or HW";
             return std::string();
           });
  add_number(app, typed, g, "--burst_size", "N", o.rate.burst, 1, 65536,
             "one burst of N requests (default -t) every N / rate seconds", Suffixes::kDecimal);
}

void declare_link(CLI::App& app, const TypedNames& typed, Options& o, Extra& x) {
  const char* g = kLink;
  add_number(app, typed, g, "-p,--port", "PORT", o.port, 1, 65535,
             "TCP port of the exchange, or with -R the rdma_cm port (default 18515)");
  apps::cli::add_flag(app, g, "-R,--rdma_cm", o.rdma_cm,
                      "perftest's rdma_cm mode: the exchange and the QPs' connections over\n"
                      "RDMA-CM (QP1), no TCP; the client's host must be an IPv4 address");
  add_text(app, typed, g, "-m,--mtu", "MTU", "256, 512, 1024, 2048 or 4096 (default 1024; both sides use the smaller)",
           [&o](const std::string& name, const std::string& v) {
             if (Status s = apps::parse_ib_mtu(name, v, o.mtu); !s.ok()) return s.message();
             return std::string();
           });
  // The 5-bit Local ACK Timeout (IBTA §9.7.6.1.3); 0, never, is not offered.
  add_number(app, typed, g, "-u,--qp-timeout", "N", o.qp_timeout, 1, 31,
             "local ACK timeout 4.096 us * 2^N, 1..31 (default 14: 67 ms)");
  add_number(app, typed, g, "-T,--tos,--tclass", "N", x.tos, 0, 255,
             "the IP TOS / traffic class byte, 0..255: droce takes its DSCP (N >> 2);\nECN stays ECT(0)");
  add_text(app, typed, g, "-c,--connection", "TYPE", "RC (the only one)",
           [](const std::string& name, const std::string& v) {
             return v == "RC" ? std::string() : name + ": droce speaks RC only, not " + apps::quoted(v);
           });
  add_text(app, typed, g, "-x,--gid-index", "N",
           "accepted (0..64): droce has one GID, its --local-ip's (::ffff:a.b.c.d for IPv4)",
           [&o](const std::string& name, const std::string& v) {
             std::uint32_t n = 0;
             const Status s = apps::parse_uint(name, v, 0, 64, n);
             if (s.ok()) o.gid_index = static_cast<int>(n);
             return s.message();
           });
  add_text(app, typed, g, "-d,--ib-dev", "DEV", "accepted, no effect (the port comes from the EAL options)",
           [&o](const std::string&, const std::string& v) { return o.device = v, std::string(); });
  apps::cli::add_flag(app, g, "-F,--CPU-freq", o.cpu_freq_f,
                      "accepted, no effect (droce reads the TSC frequency from DPDK)");
}

void declare_report(CLI::App& app, const TypedNames& typed, Options& o) {
  const char* g = kReport;
  apps::cli::add_flag(app, g, "--report_gbits", o.report_gbits, "bandwidth in Gb/sec instead of MB/sec");
  apps::cli::add_flag(app, g, "--out_json", o.out_json,
                      "perftest's JSON report (test_info, results) in --out_json_file");
  add_text(app, typed, g, "--out_json_file", "FILE", "where --out_json writes (default perftest_out.json)",
           [&o](const std::string& name, const std::string& v) {
             const Status s = apps::check_output_path(name, v);
             if (s.ok()) o.out_json_file = v;
             return s.message();
           });
}

void declare_droce(CLI::App& app, const TypedNames& typed, Options& o) {
  namespace cli = apps::cli;
  const char* g = cli::kConnection;
  cli::add_ip(app, g, "--local-ip", o.local_ip,
              "our IPv4 or IPv6 address, in our GID (default 10.0.0.1 client, 10.0.0.2\n"
              "server); an IPv6 one makes droce speak RoCEv2 over IPv6 (its GID is the\n"
              "address itself; the peer's MAC by Neighbor Discovery)");
  cli::add_mac(app, g, "--local-mac", o.local_mac, "source MAC of our frames (default: the port's MAC)");
  cli::add_mac(app, g, "--peer-mac", o.peer_mac,
               "the peer's MAC (default: found by ARP for the IPv4 address in the\n"
               "peer's GID, after a gratuitous ARP of ours; a peer that does not answer\n"
               "ARP needs it)");
  cli::add_dscp(app, g, o.dscp);
  cli::add_vlan(app, g, o.vlan_id);
  // Its own --pcp (not cli::add_pcp): an error names the option as typed (typed_names.h).
  add_number(app, typed, g, "--pcp", "N", o.vlan_pcp, 0, 7,
             "the tag's priority, 0..7 (default 0; needs --vlan): match it to the\nfabric's lossless class");
  // The requester's own timers, under -u's (docs/transport.md): no perftest flag, nothing on the wire.
  cli::add_adaptive_rto(app, g, o.adaptive_rto);
  add_text(app, typed, g, "--timeout", "S",
           "connect and every exchange step, 0..3600 s (default 30); 0: the server\n"
           "waits for its client forever, as perftest's (Ctrl-C ends it), every\nlater wait keeping the default",
           [&o](const std::string& name, const std::string& v) {
             std::uint32_t n = 0;
             const Status s = apps::parse_uint(name, v, 0, 3600, n);
             if (s.ok()) o.timeout_s = n;  // 0: main() makes it the server's wait for its client only
             return s.message();
           });
  add_number(app, typed, "workers", "--workers", "N", o.workers, 1, 64,
             "poll-mode workers, 1..64 (default 1): QP i runs on worker i % N, each\n"
             "worker on its own EAL lcore (the main lcore is worker 0, -l must give N)\n"
             "with its own RX and TX queue of the port (N of each); at most -q. With\n"
             "N > 1 the peer is droce-perf (bw tests); perftest's report stays one table\n"
             "of totals, and droce's own line after it adds each worker's messages");
  add_text(app, typed, cli::kImpairmentDirected, "--loss", "P", "drop this fraction of frames, [0, 1) (default 0)",
           [&o](const std::string& name, const std::string& v) {
             double p = 0;
             if (!apps::parse_real(name, v, 0, 1, p).ok() || p == 1)
               return name + ": " + apps::quoted(v) + " is not a probability in [0, 1)";
             o.loss = p;
             return std::string();
           });
  add_number(app, typed, cli::kImpairmentDirected, "--seed", "N", o.seed, 0, UINT64_MAX,
             "seed of the lab loss (default 1); when given, of the first PSNs\ntoo (else drawn from the OS's entropy)");
  cli::ImpairmentFields imp;
  imp.group = cli::kImpairmentDirected;
  imp.direction = &o.impair_direction;
  cli::add_impairment(app, imp);
  cli::OutputFields out;
  out.json = &o.json;
  out.json_help = "the results as JSON";
  out.pcap = &o.pcap;
  out.pcap_snaplen = &o.pcap_snaplen;
  out.pcap_max_mb = &o.pcap_max_mb;
  out.pcap_files = &o.pcap_files;
  cli::add_output(app, out);
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o, const std::vector<std::string>& eal) {
  const auto app = apps::cli::make_app("droce-perf", kUsage);
  o.pcap_snaplen = apps::cli::kDefaultPcapSnaplen;
  app->set_version_flag("-V,--version", apps::version_line("droce-perf"),
                        "droce's and DPDK's versions (-V: perftest's)")
      ->group("general");
  TypedNames typed;
  Extra x;
  std::vector<std::string> words;  // TEST [server-host], as perftest's getopt leaves them
  CLI::callback_t keep_words = [&words](const CLI::results_t& r) {
    words.insert(words.end(), r.begin(), r.end());
    return true;
  };
  app->add_option("words", keep_words)
      ->expected(0, 64)
      ->allow_extra_args(true)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  declare_test(*app, typed, o);
  declare_rate(*app, typed, o);
  declare_link(*app, typed, o, x);
  declare_report(*app, typed, o);
  declare_droce(*app, typed, o);
  add_perftest_flags(*app, typed);
  auto bad = [&app](const std::string& message) { return apps::cli::fail(*app, message); };
  if (Status s = typed.scan(*app, args); !s.ok()) return bad(s.message());
  if (int rc = apps::cli::parse(*app, args, eal); rc != 0) return rc;
  if (words.empty())
    return bad(std::string("no test given: droce-perf -- TEST [options] [server-host] (TEST: ") + kTestList +
               "; --help)");
  if (!parse_test(words[0], o.test)) return bad(apps::quoted(words[0]) + " is not a test (" + kTestList + ")");
  // Not "no server name": an empty one (an unset shell variable) must not turn a client into a server.
  if (words.size() > 1 && words[1].empty())
    return bad("the server name is empty (give a host, or none to be the server)");
  if (words.size() > 2)
    return bad("two server names given: " + apps::quoted(words[1]) + " and " + apps::quoted(words[2]));
  if (words.size() > 1) o.host = words[1];
  auto given = [&app](const char* name) { return apps::cli::given(*app, name); };
  const bool size_given = given("-s"), iters_given = given("-n"), tx_given = given("-t"), atomic_given = given("-A");
  const bool pcp_given = given("--pcp"), inline_given = given("-I"), rate_type_given = given("--rate_limit_type");
  const bool rate_units_given = given("--rate_units"), burst_given = given("--burst_size");
  if (given("--seed")) o.psn_seed = o.seed;
  // -T and --dscp both set our DSCP: the later on the command line wins, as perftest's getopt
  // would have it (either over --config).
  if (given("-T")) {
    bool tos_last = !given("--dscp");
    for (const CLI::Option* opt : app->parse_order())
      if (opt->check_name("-T") || opt->check_name("--dscp")) tos_last = opt->check_name("-T");
    // The TOS byte's top six bits; its ECN bits are droce's (ECT(0)).
    if (tos_last) o.dscp = static_cast<std::uint8_t>(x.tos >> 2);
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
  if (o.duplex && o.atomic_test())
    return bad("-b: droce-perf runs send_bw, write_bw and read_bw bidirectionally, not atomic_bw");
  if (o.duplex && o.workers > 1) return bad("-b: one worker only (--workers 1)");
  if (inline_given && engine::perftest_uses_out_reads(o.test))
    return bad("-I: inline data is not available on READ/atomic tests");
  std::vector<std::string> warnings = perftest_flag_warnings(*app, typed);
  if (o.report_both && !o.duplex) warnings.emplace_back("--report-both ignored: it reports each direction of a -b run");
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
      warnings.emplace_back("--rate_limit_type HW: droce paces in software, as the SW limiter does");
  }
  // Only a command line that will run prints its warnings (one line each).
  for (const std::string& w : warnings) std::fprintf(stderr, "droce-perf: warning: %s\n", w.c_str());
  if (!size_given) o.size = o.atomic_test() ? kAtomicSize : o.bw() ? 65536 : 2;
  if (!iters_given) o.iters = o.test == PerftestTest::kWriteBw ? 5000 : 1000;
  if (!tx_given) o.tx_depth = o.bw() ? 128 : 1;
  if (o.duration_s == 0 && o.tx_depth > o.iters) o.tx_depth = static_cast<std::uint32_t>(o.iters);
  return 0;
}

}  // namespace droce::perf
