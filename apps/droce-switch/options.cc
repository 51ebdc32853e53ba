// droce-switch option parsing: strict numbers, one message naming the bad option.
#include "apps/droce-switch/options.h"

#include <arpa/inet.h>

#include <cstdio>

#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/link_options.h"
#include "apps/common/cli/switch_class_options.h"
#include "apps/common/cli/switch_failure_options.h"
#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"
#include "apps/common/fabric_topology.h"
#include "apps/common/scenario/scenario_args.h"
#include "apps/droce-switch/scenario_options.h"

namespace droce::sw {

namespace {

constexpr const char* kUsage =
    "usage: droce-switch [EAL options] -- [options]\n"
    "A lab Ethernet switch between every DPDK port of the process (memif, vhost, ring, tap, pcap...):\n"
    "IPv4 routes, else MAC learning, else flooding; per-port egress shaping with a RED/ECN queue and\n"
    "tail drop; a fixed delay; random loss, duplication and reordering on ingress; lossless mode with\n"
    "IEEE 802.1Qbb PFC. Ports run promiscuous. Example, three memif peers:\n"
    "  droce-switch --vdev net_memif0,role=server,socket=/tmp/sw0.sock --vdev net_memif1,... --\n"
    "     --route 10.0.0.1/32=0 --route 10.0.0.2/32=1 --egress-gbps 1=5 --json sw.json";

constexpr std::size_t kMaxListEntries = 64;   // --lab-start-ms / --lab-stop-ms
constexpr double kMaxLabSamples = 1'000'000;  // the lab's series live in memory until the JSON is written

// A comma-separated list of times; more entries than the limit is an error, not a silent cut.
Status list(const std::string& opt, const std::string& s, std::vector<double>& out) {
  out.clear();
  for (std::size_t start = 0;;) {
    if (out.size() == kMaxListEntries)
      return Status::error(StatusCode::kInvalidArgument,
                           opt + ": more than " + std::to_string(kMaxListEntries) + " entries");
    const std::size_t comma = s.find(',', start);
    double v = 0;
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (Status st = apps::parse_real(opt, item, 0, 1e7, v); !st.ok()) return st;
    out.push_back(v);
    if (comma == std::string::npos) return {};
    start = comma + 1;
  }
}

// --route A.B.C.D/LEN=PORT
Status parse_route(const std::string& v, std::vector<engine::SwitchRoute>& routes) {
  const auto slash = v.find('/'), eq = v.find('=');
  std::uint8_t ip[4];
  std::uint8_t len = 0;
  std::uint16_t port = 0;
  if (slash == std::string::npos || eq == std::string::npos || eq < slash ||
      inet_pton(AF_INET, v.substr(0, slash).c_str(), ip) != 1)
    return Status::error(StatusCode::kInvalidArgument, "--route: " + apps::quoted(v) + " is not A.B.C.D/LEN=PORT");
  if (Status s = apps::parse_uint("--route prefix length", v.substr(slash + 1, eq - slash - 1), 1, 32, len); !s.ok())
    return s;
  if (Status s = apps::parse_uint("--route port", v.substr(eq + 1), 0, 63, port); !s.ok()) return s;
  const std::uint32_t pfx = std::uint32_t{ip[0]} << 24 | std::uint32_t{ip[1]} << 16 | std::uint32_t{ip[2]} << 8 | ip[3];
  routes.push_back(engine::SwitchRoute{pfx, len, port});
  return {};
}

// --egress-gbps [PORT=]G
Status parse_egress(const std::string& v, std::vector<std::pair<int, double>>& egress) {
  const auto eq = v.find('=');
  std::uint8_t port = 0;
  double gbps = 0;
  if (eq != std::string::npos)
    if (Status s = apps::parse_uint("--egress-gbps port", v.substr(0, eq), 0, 63, port); !s.ok()) return s;
  if (Status s = apps::parse_real("--egress-gbps", eq == std::string::npos ? v : v.substr(eq + 1), 0.001, 1000, gbps);
      !s.ok())
    return s;
  egress.emplace_back(eq == std::string::npos ? -1 : port, gbps);
  return {};
}

// Every option, by group; the shared ones from apps/common/cli/groups.h.
void declare(CLI::App& app, Options& o, std::vector<std::pair<std::string, std::string>>& overrides) {
  namespace cli = apps::cli;
  using apps::Suffixes;
  auto& s = o.sw;
  const std::string d = " (default ";
  std::string g = "forwarding and queues";
  cli::add_repeatable(app, g, "--route", "A.B.C.D/LEN=PORT",
                      "forward an IPv4 prefix to switch port PORT (repeatable; default none); on a\n"
                      "leaf-spine (--fabric) each port's host, A.B.C.D/32=PORT, one per port",
                      [&s](const std::string& v) { return parse_route(v, s.routes).message(); });
  cli::add_repeatable(app, g, "--egress-gbps", "[PORT=]G",
                      "shape egress of PORT (or every port) to G Gb/s (default: unshaped)",
                      [&o](const std::string& v) { return parse_egress(v, o.egress).message(); });
  cli::SwitchFields sf;
  sf.kmin_bytes = &s.kmin_bytes;
  sf.kmax_bytes = &s.kmax_bytes;
  sf.pmax = &s.pmax;
  sf.buffer_bytes = &s.buffer_bytes;
  sf.delay_us = &s.delay_us;
  cli::add_switch(app, sf);

  cli::ImpairmentFields imp;
  imp.group = "impairment (every ingress port)";
  imp.loss = &o.impairment.loss;
  imp.duplicate = &o.impairment.duplicate;
  imp.reorder = &o.impairment.reorder;
  cli::add_impairment(app, imp);
  cli::add_uint(
      app, imp.group, "--seed", "S", s.seed, 0, 1'000'000'000'000'000'000ull,
      "seed of the impairment, of RED and of the lab's first PSNs (these drawn from\nthe OS's entropy unless given)" +
          d + std::to_string(s.seed) + ")");

  cli::SwitchFields pfc;
  pfc.pfc = &s.pfc;
  pfc.pfc_priority = &s.pfc_priority;
  pfc.pfc_xoff_bytes = &s.pfc_xoff_bytes;
  pfc.pfc_xon_bytes = &s.pfc_xon_bytes;
  pfc.pfc_quanta = &s.pfc_pause_quanta;
  pfc.link_gbps = &s.link_gbps_for_pfc;
  cli::add_switch(app, pfc);
  cli::add_switch_classes(app, "traffic classes (every port: eight egress queues)", s);
  cli::add_switch_failures(app, "failure switches (docs/fabric-lab.md)", s, cli::FailurePeers::kPorts);

  g = cli::kOutput;
  cli::add_real(app, g, "--duration", "S", o.duration_s, 0, 1e6, "stop after S seconds (default: until Ctrl-C)");
  cli::add_real(app, g, "--sample-ms", "M", o.sample_ms, 0.01, 1e5,
                "queue-depth sampling period for --json" + d + cli::num(o.sample_ms) + ")");
  cli::OutputFields out;
  out.json = &o.json;
  out.json_help = "counters per port and the queue-depth series";
  out.quiet = &o.quiet;
  out.pcap = &o.pcap;
  out.pcap_help =
      "capture every frame the ports receive: one pcapng, an interface per port\n"
      "(Wireshark decodes RoCEv2; docs/droce-switch.md)";
  out.pcap_snaplen = &o.pcap_snaplen;
  out.pcap_max_mb = &o.pcap_max_mb;
  out.pcap_files = &o.pcap_files;
  cli::add_output(app, out);

  g = "live lab: N droce senders -> switch -> one receiver, in this process over net_ring links";
  auto& l = o.lab;
  cli::add_uint(app, g, "--lab-senders", "N", l.senders, 1, 16,
                "run the lab with N senders (1..16) instead of switching real ports");
  cli::add_real(app, g, "--lab-bottleneck-gbps", "G", l.bottleneck_gbps, 0.001, 400,
                "egress towards the receiver" + d + cli::num(l.bottleneck_gbps) + ")");
  cli::add_real(app, g, "--lab-duration-ms", "T", l.duration_ms, 1, 600'000,
                "schedule length" + d + cli::num(l.duration_ms) + ")");
  cli::add_value(app, g, "--lab-start-ms", "T,T..", "sender start times (default all at 0)",
                 [&l](const std::string& v) { return list("--lab-start-ms", v, l.start_ms).message(); });
  cli::add_value(app, g, "--lab-stop-ms", "T,T..", "sender stop times (default the end)",
                 [&l](const std::string& v) { return list("--lab-stop-ms", v, l.stop_ms).message(); });
  cli::add_uint(app, g, "--lab-message-bytes", "B", l.message_bytes, 1, 1u << 20,
                "WRITE size, up to 1M" + d + std::to_string(l.message_bytes) + ")", Suffixes::kBinary);
  cli::add_choice(
      app, g, "--recovery", {"gbn", "sr"},
      "the senders' loss recovery: gbn (go-back-N, IBTA) or sr (selective repeat\n"
      "between droce QPs), as droce-coll's (default gbn)",
      [&l](std::size_t i) { l.recovery = i == 0 ? rc::Recovery::kGoBackN : rc::Recovery::kSelectiveRepeat; });
  apps::add_scenario_option(app, g, o.scenario_file,
                            "run the scenario FILE's flows in the lab (docs/scenario.md); options given\n"
                            "here win over it");
  cli::add_real(app, g, "--lab-sample-us", "U", l.sample_us, 10, 1e6,
                "series sampling period" + d + cli::num(l.sample_us) + ")");
  cli::add_output(app, g, "--plot", o.plot,
                  "draw the lab's rates, goodput and queue, and on a leaf-spine its links' queues\n"
                  "(python3-matplotlib)")
      ->type_name("FILE.png");

  g = "leaf-spine: the live lab's, or between real ports (docs/fabric-lab.md, \"droce-switch on a leaf-spine\")";
  auto& f = l.fabric;
  cli::add_value(app, g, "--fabric", "TOPOLOGY",
                 "star (one switch, default) or leafspine:L,S: L leaf switches joined to S spines;\n"
                 "the lab's receiver on the last leaf, sender i on leaf i % L; or P real ports, P / L\n"
                 "a leaf in port order, each port's host given as --route A.B.C.D/32=PORT",
                 [&f](const std::string& v) {
                   apps::FabricTopology t;
                   if (Status st = apps::FabricTopology::parse(v, t); !st.ok()) return st.message();
                   f.leaves = t.leaves;
                   f.spines = t.spines;
                   return std::string();
                 });
  cli::add_real(app, g, "--uplink-gbps", "G", f.uplink_gbps, 0, 1000,
                "shape every leaf-spine link (both ways) to G Gb/s; below the endpoints' rate x\n"
                "endpoints per leaf / spines it is oversubscribed (default 0: unshaped)");
  cli::add_value(app, g, "--ecmp-hash", "FIELDS",
                 "what a leaf hashes to pick a spine, from src-ip,dst-ip,proto,src-port,\n"
                 "dst-port (or 5-tuple), and seed=N (default 5-tuple,seed=0)",
                 [&f](const std::string& v) { return engine::EcmpHashConfig::parse(v, f.ecmp).message(); });
  cli::add_repeatable(app, g, "--link-down", "LEAF:SPINE@T1[:T2]",
                      "the link between leaf LEAF and spine SPINE fails T1 ms after the lab (or switch)\n"
                      "starts and "
                      "comes back at T2 (never without it); what it holds is dropped, its\n"
                      "flows re-hashed onto the other spines and moved back when it returns; repeatable",
                      [&f](const std::string& v) {
                        engine::LinkFailure lf;
                        if (Status st = engine::LinkFailure::parse(v, lf); !st.ok()) return st.message();
                        f.link_failures.push_back(lf);
                        return std::string();
                      });
  cli::add_link_specs(app, g, f.links);

  cli::DcqcnFields cc;
  cc.cc = &o.cc;
  cc.cc_help = "the lab senders' congestion control";
  cc.preset = &o.preset;
  cc.line_gbps = &o.line_gbps;
  cc.overrides = &overrides;
  cli::add_dcqcn(app, cc);
}

// The leaf-spine's options: only with --fabric leafspine:L,S; in the lab a fabric its endpoints
// fill, between real ports a /32 route per port (the port count is known once EAL has the ports).
Status check_fabric(const CLI::App& app, const Options& o) {
  const engine::SwitchExperimentFabric& f = o.lab.fabric;
  const auto bad = [](const std::string& m) { return Status::error(StatusCode::kInvalidArgument, m); };
  if (!f.on())
    for (const char* name : {"--uplink-gbps", "--ecmp-hash", "--link-down", "--link"})
      if (apps::cli::given(app, name)) return bad(std::string(name) + ": only with --fabric leafspine:L,S");
  if (!f.on()) return {};
  if (Status s = apps::cli::check_link_specs(f.links, f.leaves, f.spines, o.sw); !s.ok()) return s;
  if (!o.lab_mode) {
    // Between real ports each port is a host of the fabric, named by its one /32 route.
    std::vector<bool> named;
    for (const engine::SwitchRoute& r : o.sw.routes) {
      if (r.depth != 32)
        return bad(
            "--route: on a leaf-spine each route names a port's host, A.B.C.D/32=PORT (the fabric "
            "routes on host addresses)");
      if (named.size() <= r.out) named.resize(r.out + 1u, false);
      if (named[r.out]) return bad("--route: port " + std::to_string(r.out) + " given two hosts on a leaf-spine");
      named[r.out] = true;
    }
    return engine::check_link_failures(f.link_failures, f.leaves, f.spines);
  }
  if (f.leaves > o.lab.senders + 1)
    return bad("--fabric: " + std::to_string(f.leaves) + " leaves for " + std::to_string(o.lab.senders) +
               " sender(s) and the receiver: a leaf would hold none of them");
  return engine::check_link_failures(f.link_failures, f.leaves, f.spines);
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o, const std::vector<std::string>& eal) {
  std::vector<std::pair<std::string, std::string>> overrides;
  const auto app = apps::cli::make_app("droce-switch", kUsage);
  o.pcap_snaplen = apps::cli::kDefaultPcapSnaplen;
  declare(*app, o, overrides);
  std::vector<std::string> own = args;
  if (apps::apply_scenario(*app, own, scenario_options, o.scenario) != 0) return -1;
  if (int rc = apps::cli::parse(*app, own, eal); rc != 0) return rc;
  auto fail = [&app](const std::string& message) { return apps::cli::fail(*app, message); };
  if (apps::cli::given(*app, "--seed")) {
    o.impairment.seed = o.sw.seed;  // one seed: impairment and RED
    o.lab.psn_seed = o.sw.seed;     // and the lab's first PSNs
  }
  o.lab_mode = apps::cli::given(*app, "--lab-senders");
  if (o.lab_mode && o.lab.duration_ms * 1e3 / o.lab.sample_us > kMaxLabSamples)
    return fail("--lab-sample-us: more than " + std::to_string(static_cast<long>(kMaxLabSamples)) +
                " samples over --lab-duration-ms; sample less often");
  if (Status s = check_fabric(*app, o); !s.ok()) return fail(s.message());
  // The impairment acts on real ports' ingress (run_switch); the lab's links have none.
  if (o.lab_mode && o.impairment.any())
    return fail("--loss, --duplicate, --reorder: impair real ports, not the lab (--lab-senders)");
  if (!o.lab_mode && apps::cli::given(*app, "--recovery"))
    return fail("--recovery: the lab senders' (--lab-senders); between real ports the endpoints choose");
  if (o.lab_mode && !o.pcap.empty())
    return fail("--pcap captures the switch between real ports, not the lab (--lab-senders)");
  if (o.sw.kmin_bytes > o.sw.kmax_bytes) return fail("--kmin-bytes must not exceed --kmax-bytes");
  // Said before the experiment runs, not after it.
  if (!o.plot.empty() && o.json.empty()) return fail("--plot needs --json (the plot is drawn from it)");
  if (!o.plot.empty() && o.json == "-") return fail("--plot draws from the --json file: give it a file, not -");
  if (!o.sw.stuck_ports.empty() && !o.sw.pfc)
    return fail("--stuck-port: a stuck NIC pauses lossless classes: give --pfc");
  if (!o.sw.slow_receivers.empty() && !o.sw.pfc)
    return fail("--slow-receiver: a slow receiver pauses lossless classes: give --pfc");
  if (Status s = o.impairment.validate(); !s.ok()) return fail("--" + s.message());
  if (Status s = apps::cli::apply_dcqcn(o.preset, o.line_gbps, overrides, o.lab.params); !s.ok())
    return fail(s.message());
  o.lab.dcqcn = o.cc == "dcqcn";
  return 0;
}

}  // namespace droce::sw
