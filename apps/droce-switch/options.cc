// droce-switch option parsing: strict numbers, one message naming the bad option.
#include "apps/droce-switch/options.h"

#include <arpa/inet.h>

#include <cstdio>

#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/version_line.h"
#include <droce/protocols/dcqcn/param_options.h>

namespace droce::sw {

namespace {

void usage(const Options& d) {
  const auto& s = d.sw;
  const auto& l = d.lab;
  std::printf(
      "usage: droce-switch [EAL options] -- [options]\n"
      "A lab Ethernet switch between every DPDK port of the process (memif, vhost, ring, tap, pcap...):\n"
      "IPv4 routes, else MAC learning, else flooding; per-port egress shaping with a RED/ECN queue and\n"
      "tail drop; a fixed delay; random loss, duplication and reordering on ingress; lossless mode with\n"
      "IEEE 802.1Qbb PFC. Ports run promiscuous. Example, three memif peers:\n"
      "  droce-switch --vdev net_memif0,role=server,socket=/tmp/sw0.sock --vdev net_memif1,... --\n"
      "     --route 10.0.0.1/32=0 --route 10.0.0.2/32=1 --egress-gbps 1=5 --json sw.json\n\n"
      "forwarding and queues\n"
      "  --route A.B.C.D/LEN=PORT forward an IPv4 prefix to switch port PORT (repeatable; default none)\n"
      "  --egress-gbps [PORT=]G   shape egress of PORT (or every port) to G Gb/s (default: unshaped)\n"
      "  --kmin-bytes B           RED/ECN: no marks below (default %llu)\n"
      "  --kmax-bytes B           RED/ECN: every ECN-capable frame marked above (default %llu)\n"
      "  --pmax P                 RED/ECN: marking probability at Kmax (default %g)\n"
      "  --buffer-bytes B         egress queue size; tail drop beyond (default %llu)\n"
      "  --delay-us U             minimum time every frame spends in the switch (default %g)\n"
      "impairment (every ingress port)\n"
      "  --loss P  --duplicate P  --reorder P   fractions of frames, [0, 0.5] (default 0)\n"
      "  --seed S                 seed of the impairment and of RED (default %llu)\n"
      "lossless (PFC)\n"
      "  --pfc                    pause upstream when an ingress holds too much of the priority\n"
      "  --pfc-priority N         the lossless priority (VLAN PCP, else DSCP/8) (default %u)\n"
      "  --pfc-xoff-bytes B       pause above (default %llu)\n"
      "  --pfc-xon-bytes B        resume below (default %llu)\n"
      "  --pfc-quanta Q           pause time sent, in 512-bit quanta (default %u)\n"
      "  --link-gbps G            link rate that converts quanta to time (default %g)\n"
      "run and output\n"
      "  --duration S             stop after S seconds (default: until Ctrl-C)\n"
      "  --sample-ms M            queue-depth sampling period for --json (default %g)\n"
      "  --json FILE              counters per port and the queue-depth series\n"
      "  --quiet                  no live line\n"
      "live lab: N droce senders -> switch -> one receiver, in this process over net_ring links\n"
      "  --lab-senders N          run the lab with N senders (1..16) instead of switching real ports\n"
      "  --lab-bottleneck-gbps G  egress towards the receiver (default %g)\n"
      "  --lab-duration-ms T      schedule length (default %g)\n"
      "  --lab-start-ms T,T..     sender start times (default all at 0)\n"
      "  --lab-stop-ms T,T..      sender stop times (default the end)\n"
      "  --lab-message-bytes B    WRITE size (default %u)\n"
      "  --lab-sample-us U        series sampling period (default %g)\n"
      "  --cc dcqcn|none          senders' congestion control (default %s)\n"
      "  --preset paper|mlx5      DCQCN parameter set (default %s)\n"
      "  --line-gbps G            senders' DCQCN line rate (default %g)\n"
      "  --dcqcn-NAME VALUE       one DCQCN parameter (names as in droce-gen --help)\n"
      "  --plot FILE.png          draw the lab's rates, goodput and queue (python3-matplotlib)\n"
      "  --help                   this text\n"
      "  --version                droce's and DPDK's versions\n",
      static_cast<unsigned long long>(s.kmin_bytes), static_cast<unsigned long long>(s.kmax_bytes), s.pmax,
      static_cast<unsigned long long>(s.buffer_bytes), s.delay_us, static_cast<unsigned long long>(s.seed),
      s.pfc_priority, static_cast<unsigned long long>(s.pfc_xoff_bytes),
      static_cast<unsigned long long>(s.pfc_xon_bytes), s.pfc_pause_quanta, s.link_gbps_for_pfc, d.sample_ms, l.bottleneck_gbps,
      l.duration_ms, l.message_bytes, l.sample_us, d.cc.c_str(), d.preset.c_str(), d.line_gbps);
}

std::string dcqcn_option(std::string_view name) { return "--dcqcn-" + std::string(name); }

constexpr std::size_t kMaxListEntries = 64;    // --lab-start-ms / --lab-stop-ms
constexpr double kMaxLabSamples = 1'000'000;     // the lab's series live in memory until the JSON is written

int fail(const std::string& message) {
  std::fprintf(stderr, "droce-switch: %s\n", message.c_str());
  return -1;
}

// A comma-separated list of times; more entries than the limit is an error, not a silent cut.
std::string list(const std::string& opt, const std::string& s, std::vector<double>& out) {
  out.clear();
  for (std::size_t start = 0;;) {
    if (out.size() == kMaxListEntries) return opt + ": more than " + std::to_string(kMaxListEntries) + " entries";
    const std::size_t comma = s.find(',', start);
    double v = 0;
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (std::string e = apps::parse_real(opt, item, 0, 1e7, v); !e.empty()) return e;
    out.push_back(v);
    if (comma == std::string::npos) return {};
    start = comma + 1;
  }
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o) {
  const Options defaults;
  std::vector<std::pair<std::string, std::string>> overrides;
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
    bool ok = true;
    if (a == "--help" || a == "-h") {
      usage(defaults);
      return 1;
    } else if (a == "--version") {
      apps::print_version("droce-switch");
      return 1;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--pfc") {
      o.sw.pfc = true;
    } else if (a == "--route") {
      if (!value()) return fail(e);
      const auto slash = v.find('/'), eq = v.find('=');
      std::uint8_t ip[4];
      std::uint8_t len = 0;
      std::uint16_t port = 0;
      if (slash == std::string::npos || eq == std::string::npos || eq < slash ||
          inet_pton(AF_INET, v.substr(0, slash).c_str(), ip) != 1)
        return fail("--route: " + apps::quoted(v) + " is not A.B.C.D/LEN=PORT");
      if (e = apps::parse_uint("--route prefix length", v.substr(slash + 1, eq - slash - 1), 1, 32, len); !e.empty())
        return fail(e);
      if (e = apps::parse_uint("--route port", v.substr(eq + 1), 0, 63, port); !e.empty()) return fail(e);
      const std::uint32_t pfx = std::uint32_t{ip[0]} << 24 | std::uint32_t{ip[1]} << 16 | std::uint32_t{ip[2]} << 8 | ip[3];
      o.sw.routes.push_back(engine::SwitchRoute{pfx, len, port});
    } else if (a == "--egress-gbps") {
      if (!value()) return fail(e);
      const auto eq = v.find('=');
      std::uint8_t port = 0;
      double gbps = 0;
      if (eq != std::string::npos && !(e = apps::parse_uint("--egress-gbps port", v.substr(0, eq), 0, 63, port)).empty())
        return fail(e);
      if (e = apps::parse_real(a, eq == std::string::npos ? v : v.substr(eq + 1), 0.001, 1000, gbps); !e.empty())
        return fail(e);
      o.egress.emplace_back(eq == std::string::npos ? -1 : port, gbps);
    } else if (a == "--kmin-bytes") {
      ok = integer(o.sw.kmin_bytes, 0, 10'000'000'000ull);
    } else if (a == "--kmax-bytes") {
      ok = integer(o.sw.kmax_bytes, 0, 10'000'000'000ull);
    } else if (a == "--pmax") {
      ok = real(o.sw.pmax, 0, 1);
    } else if (a == "--buffer-bytes") {
      ok = integer(o.sw.buffer_bytes, 2048, 10'000'000'000ull);
    } else if (a == "--delay-us") {
      ok = real(o.sw.delay_us, 0, 1e6);
    } else if (a == "--loss" || a == "--duplicate" || a == "--reorder") {
      ok = real(a == "--loss" ? o.impairment.loss : a == "--duplicate" ? o.impairment.duplicate : o.impairment.reorder,
                0, 0.5);
    } else if (a == "--seed") {
      ok = integer(o.sw.seed, 0, 1'000'000'000'000'000'000ull);
      o.impairment.seed = o.sw.seed;
    } else if (a == "--pfc-priority") {
      ok = integer(o.sw.pfc_priority, 0, 7);
    } else if (a == "--pfc-xoff-bytes") {
      ok = integer(o.sw.pfc_xoff_bytes, 1, 10'000'000'000ull);
    } else if (a == "--pfc-xon-bytes") {
      ok = integer(o.sw.pfc_xon_bytes, 0, 10'000'000'000ull);
    } else if (a == "--pfc-quanta") {
      ok = integer(o.sw.pfc_pause_quanta, 1, 65535);
    } else if (a == "--link-gbps") {
      ok = real(o.sw.link_gbps_for_pfc, 0.001, 1000);
    } else if (a == "--duration") {
      ok = real(o.duration_s, 0, 1e6);
    } else if (a == "--sample-ms") {
      ok = real(o.sample_ms, 0.01, 1e5);
    } else if (a == "--json") {
      ok = output(o.json);
    } else if (a == "--plot") {
      ok = output(o.plot);
    } else if (a == "--lab-senders") {
      ok = integer(o.lab.senders, 1, 16);
      o.lab_mode = true;
    } else if (a == "--lab-bottleneck-gbps") {
      ok = real(o.lab.bottleneck_gbps, 0.001, 400);
    } else if (a == "--lab-duration-ms") {
      ok = real(o.lab.duration_ms, 1, 600'000);
    } else if (a == "--lab-start-ms" || a == "--lab-stop-ms") {
      ok = value() && (e = list(a, v, a == "--lab-start-ms" ? o.lab.start_ms : o.lab.stop_ms)).empty();
    } else if (a == "--lab-message-bytes") {
      ok = integer(o.lab.message_bytes, 1, 1u << 20);
    } else if (a == "--lab-sample-us") {
      ok = real(o.lab.sample_us, 10, 1e6);
    } else if (a == "--cc") {
      if (!value()) return fail(e);
      if (v != "dcqcn" && v != "none") return fail("--cc: " + apps::quoted(v) + " is not dcqcn or none");
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
    } else {
      return fail("unknown option " + apps::quoted(a) + " (see --help)");
    }
    if (!ok) return fail(e);
  }
  if (o.lab_mode && o.lab.duration_ms * 1e3 / o.lab.sample_us > kMaxLabSamples)
    return fail("--lab-sample-us: more than " + std::to_string(static_cast<long>(kMaxLabSamples)) +
                " samples over --lab-duration-ms; sample less often");
  if (o.sw.kmin_bytes > o.sw.kmax_bytes) return fail("--kmin-bytes must not exceed --kmax-bytes");
  if (std::string e = o.impairment.validate(); !e.empty()) return fail("--" + e);
  (void)dcqcn::preset_by_name(o.preset, o.line_gbps * 1e9, o.lab.params);
  for (const auto& [name, value] : overrides)
    if (std::string e = dcqcn::set_param(o.lab.params, name, value); !e.empty())
      return fail("--dcqcn-" + name + ": " + e);
  if (std::string e = dcqcn::validate_options(o.lab.params, dcqcn_option, "--line-gbps"); !e.empty()) return fail(e);
  o.lab.dcqcn = o.cc == "dcqcn";
  return 0;
}

}  // namespace droce::sw
