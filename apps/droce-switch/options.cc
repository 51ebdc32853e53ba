// droce-switch option parsing: strict numbers, one message naming the bad option.
#include "apps/droce-switch/options.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "protocols/dcqcn/param_options.h"

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
      "  --help                   this text\n",
      static_cast<unsigned long long>(s.kmin_bytes), static_cast<unsigned long long>(s.kmax_bytes), s.pmax,
      static_cast<unsigned long long>(s.buffer_bytes), s.delay_us, static_cast<unsigned long long>(s.seed),
      s.pfc_priority, static_cast<unsigned long long>(s.pfc_xoff_bytes),
      static_cast<unsigned long long>(s.pfc_xon_bytes), s.pfc_pause_quanta, s.link_gbps_for_pfc, d.sample_ms, l.bottleneck_gbps,
      l.duration_ms, l.message_bytes, l.sample_us, d.cc.c_str(), d.preset.c_str(), d.line_gbps);
}

bool number(const std::string& opt, const std::string& s, double lo, double hi, double& out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) {
    std::fprintf(stderr, "droce-switch: %s: '%s' is not a number in [%g, %g]\n", opt.c_str(), s.c_str(), lo, hi);
    return false;
  }
  out = v;
  return true;
}

bool list(const std::string& opt, const std::string& s, std::vector<double>& out) {
  out.clear();
  std::size_t start = 0;
  while (out.size() < 64) {
    const std::size_t comma = s.find(',', start);
    double v = 0;
    if (!number(opt, s.substr(start, comma == std::string::npos ? std::string::npos : comma - start), 0, 1e7, v))
      return false;
    out.push_back(v);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
  return true;
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o) {
  const Options defaults;
  std::vector<std::pair<std::string, std::string>> overrides;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    double d = 0;
    auto value = [&]() {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "droce-switch: %s needs a value (see --help)\n", a.c_str());
        return false;
      }
      v = args[++i];
      return true;
    };
    auto u64 = [&](std::uint64_t& field, double lo, double hi) {
      if (!value() || !number(a, v, lo, hi, d)) return false;
      field = static_cast<std::uint64_t>(d);
      return true;
    };
    if (a == "--help" || a == "-h") {
      usage(defaults);
      return 1;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--pfc") {
      o.sw.pfc = true;
    } else if (a == "--route") {
      if (!value()) return -1;
      const auto slash = v.find('/'), eq = v.find('=');
      std::uint8_t ip[4];
      double len = 0, port = 0;
      if (slash == std::string::npos || eq == std::string::npos || eq < slash ||
          inet_pton(AF_INET, v.substr(0, slash).c_str(), ip) != 1)
        return std::fprintf(stderr, "droce-switch: --route: '%s' is not A.B.C.D/LEN=PORT\n", v.c_str()), -1;
      if (!number(a, v.substr(slash + 1, eq - slash - 1), 1, 32, len) || !number(a, v.substr(eq + 1), 0, 63, port))
        return -1;
      const std::uint32_t pfx = std::uint32_t{ip[0]} << 24 | std::uint32_t{ip[1]} << 16 | std::uint32_t{ip[2]} << 8 | ip[3];
      o.sw.routes.push_back(engine::SwitchRoute{pfx, static_cast<std::uint8_t>(len), static_cast<std::uint16_t>(port)});
    } else if (a == "--egress-gbps") {
      if (!value()) return -1;
      const auto eq = v.find('=');
      double port = -1;
      if (eq != std::string::npos && !number(a, v.substr(0, eq), 0, 63, port)) return -1;
      if (!number(a, eq == std::string::npos ? v : v.substr(eq + 1), 0.001, 1000, d)) return -1;
      o.egress.emplace_back(static_cast<int>(port), d);
    } else if (a == "--kmin-bytes") {
      if (!u64(o.sw.kmin_bytes, 0, 1e10)) return -1;
    } else if (a == "--kmax-bytes") {
      if (!u64(o.sw.kmax_bytes, 0, 1e10)) return -1;
    } else if (a == "--pmax") {
      if (!value() || !number(a, v, 0, 1, o.sw.pmax)) return -1;
    } else if (a == "--buffer-bytes") {
      if (!u64(o.sw.buffer_bytes, 2048, 1e10)) return -1;
    } else if (a == "--delay-us") {
      if (!value() || !number(a, v, 0, 1e6, o.sw.delay_us)) return -1;
    } else if (a == "--loss" || a == "--duplicate" || a == "--reorder") {
      if (!value() || !number(a, v, 0, 0.5, d)) return -1;
      (a == "--loss" ? o.impairment.loss : a == "--duplicate" ? o.impairment.duplicate : o.impairment.reorder) = d;
    } else if (a == "--seed") {
      if (!u64(o.sw.seed, 0, 1e18)) return -1;
      o.impairment.seed = o.sw.seed;
    } else if (a == "--pfc-priority") {
      if (!value() || !number(a, v, 0, 7, d)) return -1;
      o.sw.pfc_priority = static_cast<std::uint8_t>(d);
    } else if (a == "--pfc-xoff-bytes") {
      if (!u64(o.sw.pfc_xoff_bytes, 1, 1e10)) return -1;
    } else if (a == "--pfc-xon-bytes") {
      if (!u64(o.sw.pfc_xon_bytes, 0, 1e10)) return -1;
    } else if (a == "--pfc-quanta") {
      if (!value() || !number(a, v, 1, 65535, d)) return -1;
      o.sw.pfc_pause_quanta = static_cast<std::uint16_t>(d);
    } else if (a == "--link-gbps") {
      if (!value() || !number(a, v, 0.001, 1000, o.sw.link_gbps_for_pfc)) return -1;
    } else if (a == "--duration") {
      if (!value() || !number(a, v, 0, 1e6, o.duration_s)) return -1;
    } else if (a == "--sample-ms") {
      if (!value() || !number(a, v, 0.01, 1e5, o.sample_ms)) return -1;
    } else if (a == "--json") {
      if (!value()) return -1;
      o.json = v;
    } else if (a == "--plot") {
      if (!value()) return -1;
      o.plot = v;
    } else if (a == "--lab-senders") {
      if (!value() || !number(a, v, 1, 16, d)) return -1;
      o.lab.senders = static_cast<std::uint32_t>(d);
      o.lab_mode = true;
    } else if (a == "--lab-bottleneck-gbps") {
      if (!value() || !number(a, v, 0.001, 400, o.lab.bottleneck_gbps)) return -1;
    } else if (a == "--lab-duration-ms") {
      if (!value() || !number(a, v, 1, 600'000, o.lab.duration_ms)) return -1;
    } else if (a == "--lab-start-ms" || a == "--lab-stop-ms") {
      if (!value() || !list(a, v, a == "--lab-start-ms" ? o.lab.start_ms : o.lab.stop_ms)) return -1;
    } else if (a == "--lab-message-bytes") {
      if (!value() || !number(a, v, 1, 1 << 20, d)) return -1;
      o.lab.message_bytes = static_cast<std::uint32_t>(d);
    } else if (a == "--lab-sample-us") {
      if (!value() || !number(a, v, 10, 1e6, o.lab.sample_us)) return -1;
    } else if (a == "--cc") {
      if (!value()) return -1;
      if (v != "dcqcn" && v != "none") return std::fprintf(stderr, "droce-switch: --cc: '%s' is not dcqcn or none\n", v.c_str()), -1;
      o.cc = v;
    } else if (a == "--preset") {
      if (!value()) return -1;
      if (v != "paper" && v != "mlx5") return std::fprintf(stderr, "droce-switch: --preset: '%s' is not paper or mlx5\n", v.c_str()), -1;
      o.preset = v;
    } else if (a == "--line-gbps") {
      if (!value() || !number(a, v, 0.001, 400, o.line_gbps)) return -1;
    } else if (a.rfind("--dcqcn-", 0) == 0) {
      if (!value()) return -1;
      dcqcn::DcqcnParams probe;
      if (std::string e = dcqcn::set_param(probe, a.substr(8), v); !e.empty())
        return std::fprintf(stderr, "droce-switch: %s: %s\n", a.c_str(), e.c_str()), -1;
      overrides.emplace_back(a.substr(8), v);
    } else {
      std::fprintf(stderr, "droce-switch: unknown option '%s' (see --help)\n", a.c_str());
      return -1;
    }
  }
  if (o.sw.kmin_bytes > o.sw.kmax_bytes) return std::fprintf(stderr, "droce-switch: --kmin-bytes must not exceed --kmax-bytes\n"), -1;
  if (std::string e = o.impairment.validate(); !e.empty()) return std::fprintf(stderr, "droce-switch: %s\n", e.c_str()), -1;
  (void)dcqcn::preset_by_name(o.preset, o.line_gbps * 1e9, o.lab.params);
  for (const auto& [name, value] : overrides)
    if (std::string e = dcqcn::set_param(o.lab.params, name, value); !e.empty())
      return std::fprintf(stderr, "droce-switch: --dcqcn-%s\n", e.c_str()), -1;
  if (std::string e = o.lab.params.validate(); !e.empty())
    return std::fprintf(stderr, "droce-switch: DCQCN parameter %s\n", e.c_str()), -1;
  o.lab.dcqcn = o.cc == "dcqcn";
  return 0;
}

}  // namespace droce::sw
