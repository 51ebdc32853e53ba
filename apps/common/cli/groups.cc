// The shared option groups: each option's name, range and help written once for every app.
#include "apps/common/cli/groups.h"

#include <droce/protocols/dcqcn/param_options.h>
#include <droce/protocols/rc/rtt_estimator.h>

#include <cstddef>
#include <cstdio>

#include "apps/common/cli/values.h"

namespace droce::apps::cli {

namespace {

std::string dflt(const std::string& what) { return " (default " + what + ")"; }

}  // namespace

void add_connection(CLI::App& app, const ConnectionFields& f) {
  const char* g = kConnection;
  if (f.oob_port != nullptr)
    add_uint(
        app, g, "--oob-port", "N", *f.oob_port, 0, 65535,
        "TCP port of the ibv_rc_pingpong-format exchange" + dflt(std::to_string(*f.oob_port) + "; " + f.oob_port_zero));
  if (f.oob_host != nullptr)
    add_host(app, g, "--oob-host", *f.oob_host,
             "where the server's exchange listens, for the client" + dflt(*f.oob_host));
  if (f.connect_timeout_s != nullptr)
    add_real(
        app, g, "--connect-timeout", "S", *f.connect_timeout_s, 0, 3600,
        "how long to wait for the peer, 0..3600 s" + dflt(num(*f.connect_timeout_s)) +
            ";\n0: a server waits for its client forever, as perftest's (Ctrl-C ends\nit), every later wait keeping "
            "the default");
  if (f.qp_timeout != nullptr)
    add_uint(app, g, "--qp-timeout", "N", *f.qp_timeout, 1, 31,
             "local ACK timeout 4.096 us * 2^N, 1..31" + dflt(std::to_string(*f.qp_timeout) + ": 67 ms, perftest's"));
  if (f.retry_cnt != nullptr)
    add_uint(app, g, "--retry-cnt", "N", *f.retry_cnt, 0, 7,
             "retries after ACK timeouts and NAKs before the QP fails, 0..7" + dflt(std::to_string(*f.retry_cnt)));
  if (f.adaptive_rto != nullptr) add_adaptive_rto(app, g, *f.adaptive_rto);
}

void add_adaptive_rto(CLI::App& app, const std::string& group, bool& field) {
  bool* on = &field;
  add_choice(app, group, "--adaptive-rto", {"on", "off"},
             "loss recovery in round trips: a retransmission timeout from the\n"
             "measured RTT (at least " +
                 std::to_string(rc::kDefaultRtoFloorUs / 1000) +
                 " ms, never beyond the local ACK timeout) and tail-loss\n"
                 "probes after two RTTs plus " +
                 std::to_string(rc::kDefaultPtoFloorUs / 1000) +
                 " ms, neither spending retries; off: the plain\n"
                 "local ACK timer" +
                 dflt(field ? "on" : "off"),
             [on](std::size_t i) { *on = i == 0; });
}

void add_workload(CLI::App& app, const WorkloadFields& f) {
  const char* g = kWorkload;
  if (f.mtu != nullptr) {
    std::uint32_t* mtu = f.mtu;
    add_value(app, g, "--mtu", "BYTES",
              "RoCE path MTU (payload a packet, not the Ethernet MTU): 256, 512, 1024, 2048 or 4096" +
                  dflt(std::to_string(*mtu) + f.mtu_note),
              [mtu](const std::string& v) {
                if (Status s = parse_ib_mtu("--mtu", v, *mtu); !s.ok()) return s.message();
                return std::string();
              });
  }
  if (f.duration_s != nullptr)
    add_real(app, g, "--duration", "S", *f.duration_s, 0.01, 86400,
             "seconds to run after warm-up, 0.01..86400" + dflt(num(*f.duration_s)));
  if (f.count != nullptr)
    add_uint(app, g, "--count", "N", *f.count, 1, 1'000'000'000'000ull,
             "stop after N messages in total instead" +
                 dflt(*f.count == 0 ? std::string("none: by duration") : std::to_string(*f.count)),
             Suffixes::kDecimal);
}

void add_impairment(CLI::App& app, const ImpairmentFields& f) {
  const std::string& g = f.group;
  if (f.loss != nullptr)
    add_real(app, g, "--loss", "P", *f.loss, 0, 0.5,
             "drop this fraction of frames, [0, 0.5]" + dflt(num(*f.loss) + f.loss_note));
  if (f.duplicate != nullptr)
    add_real(app, g, "--duplicate", "P", *f.duplicate, 0, 0.5,
             "deliver this fraction twice, [0, 0.5]" + dflt(num(*f.duplicate)));
  if (f.reorder != nullptr)
    add_real(app, g, "--reorder", "P", *f.reorder, 0, 0.5,
             "hold this fraction back behind later frames, [0, 0.5]" + dflt(num(*f.reorder)));
  if (f.burst_start != nullptr)
    add_real(app, g, "--burst-start", "P", *f.burst_start, 0, 0.1,
             "start a loss burst at this fraction of frames, [0, 0.1]" + dflt(num(*f.burst_start)));
  if (f.burst_frames != nullptr)
    add_uint(app, g, "--burst-frames", "N", *f.burst_frames, 1, 1000,
             "frames each loss burst drops, 1..1000" + dflt(std::to_string(*f.burst_frames)));
  if (f.seed != nullptr)
    add_uint(app, g, "--seed", "S", *f.seed, 0, 1'000'000'000'000'000'000ull,
             f.seed_help + dflt(std::to_string(*f.seed)));
  if (f.direction != nullptr)
    add_choice(app, g, "--impair-direction", {"rx", "tx", "both"}, *f.direction,
               "where the options above act: rx (frames this process receives),\n"
               "tx (frames it sends: a WRITE client's data) or both" +
                   dflt(*f.direction));
}

void add_dcqcn(CLI::App& app, const DcqcnFields& f) {
  const char* g = kDcqcn;
  if (f.cc != nullptr) add_choice(app, g, "--cc", {"none", "dcqcn"}, *f.cc, f.cc_help + dflt(*f.cc));
  if (f.preset != nullptr)
    add_choice(app, g, "--preset", {"paper", "mlx5"}, *f.preset,
               "DCQCN parameter set" + dflt(*f.preset) + "; each --dcqcn-NAME below overrides one\nof its parameters");
  if (f.line_gbps != nullptr)
    add_real(app, g, "--line-gbps", "G", *f.line_gbps, 0.001, 400,
             "DCQCN line rate: a QP's starting and highest rate" + dflt(num(*f.line_gbps)));
  if (f.overrides != nullptr) {
    // One option per parameter, from the parameter table's help lines ("NAME VALUE  what it is").
    auto* overrides = f.overrides;
    const std::string table = dcqcn::param_options_help();
    for (std::size_t start = 0; start < table.size();) {
      std::size_t end = table.find('\n', start);
      if (end == std::string::npos) end = table.size();
      const std::string line = table.substr(start, end - start);
      start = end + 1;
      const std::size_t sp = line.find(' '), text = line.find_first_not_of(' ', line.find(' ', sp + 1));
      if (sp == std::string::npos || text == std::string::npos) continue;
      const std::string name = line.substr(0, sp), option = "--dcqcn-" + name;
      add_value(app, g, option, line.substr(sp + 1, line.find(' ', sp + 1) - sp - 1), line.substr(text),
                [overrides, name, option](const std::string& v) {
                  dcqcn::DcqcnParams probe;
                  if (Status s = dcqcn::set_param(probe, name, v); !s.ok()) return option + ": " + s.message();
                  overrides->emplace_back(name, v);
                  return std::string();
                });
    }
  }
  if (f.pfc_priority != nullptr)
    add_uint(app, g, "--pfc-priority", "N", *f.pfc_priority, 0, 7,
             "honour PFC pauses for this priority, 0..7" + dflt(std::to_string(*f.pfc_priority)));
  if (f.pfc_watchdog_ms != nullptr)
    add_real(app, g, "--pfc-watchdog-ms", "T", *f.pfc_watchdog_ms, 0, 1e6,
             "the endpoints' PFC watchdog: transmit held by pauses longer than T stops obeying\n"
             "them until none has come for T (a pause storm; default 0: off)");
}

Status apply_dcqcn(const std::string& preset, double line_gbps,
                   const std::vector<std::pair<std::string, std::string>>& overrides, dcqcn::DcqcnParams& out) {
  (void)dcqcn::preset_by_name(preset, line_gbps * 1e9, out);
  for (const auto& [name, value] : overrides)
    if (Status s = dcqcn::set_param(out, name, value); !s.ok()) return s.context("--dcqcn-" + name + ": ");
  return dcqcn::validate_options(
      out, [](std::string_view name) { return "--dcqcn-" + std::string(name); }, "--line-gbps");
}

void add_output(CLI::App& app, const OutputFields& f) {
  const char* g = kOutput;
  if (f.json != nullptr)
    cli::add_output(app, g, "--json", *f.json, f.json_help + "\n(with -: on stdout, and all other output on stderr)",
                    true);
  if (f.csv != nullptr)
    cli::add_output(app, g, "--csv", *f.csv,
                    "one row per interval, the last marked partial: the interval's goodput and\n"
                    "message rate, retransmissions and NAKs since the start");
  if (f.stats_json != nullptr)
    cli::add_output(app, g, "--stats-json", *f.stats_json,
                    "the live feed: one JSON object per line and interval, then a final line\n"
                    "(docs/droce-gen.md); with -, on stdout, and all other output on stderr",
                    true);
  if (f.interval_s != nullptr)
    add_real(app, g, "--interval", "S", *f.interval_s, 0.1, 3600,
             "seconds between live lines, CSV rows and feed lines, 0.1..3600" + dflt(num(*f.interval_s)));
  CLI::Option* pcap = f.pcap != nullptr ? cli::add_output(app, g, "--pcap", *f.pcap, f.pcap_help) : nullptr;
  // The capture's shape without a capture is a mistake said at once.
  auto with_pcap = [pcap](CLI::Option* o) {
    if (pcap != nullptr) o->needs(pcap);
    return o;
  };
  if (f.pcap_snaplen != nullptr)
    with_pcap(add_uint(app, g, "--pcap-snaplen", "BYTES", *f.pcap_snaplen, 64, 65535,
                       "bytes kept of each captured frame, 64..65535" + dflt(std::to_string(*f.pcap_snaplen)) +
                           ":\nevery RoCEv2 header and whole CM, ARP and ND frames)"));
  CLI::Option* max_mb = nullptr;
  if (f.pcap_max_mb != nullptr)
    max_mb = with_pcap(add_uint(app, g, "--pcap-max-mb", "MIB", *f.pcap_max_mb, 1, 1u << 20,
                                "stop writing the capture at this many MiB, 1..1048576 (the report\n"
                                "counts the frames not written); with --pcap-files, the size of each file"));
  if (f.pcap_files != nullptr) {
    CLI::Option* files =
        with_pcap(add_uint(app, g, "--pcap-files", "N", *f.pcap_files, 2, 100000,
                           "a ring for soaks, 2..100000: --pcap's name numbered (run_00001.pcapng, ...),\n"
                           "a new file at each --pcap-max-mb, only the last N kept"));
    if (max_mb != nullptr) files->needs(max_mb);
  }
  if (f.plot != nullptr) cli::add_output(app, g, "--plot", *f.plot, f.plot_help);
  if (f.quiet != nullptr) add_flag(app, g, "--quiet", *f.quiet, "no live line");
}

void add_switch(CLI::App& app, const SwitchFields& f) {
  const std::string& g = f.queue_group;
  const std::string d = " (default ";
  if (f.kmin_bytes != nullptr)
    add_uint(app, g, "--kmin-bytes", "B", *f.kmin_bytes, 0, 10'000'000'000ull,
             "RED/ECN: no marks below" + d + std::to_string(*f.kmin_bytes) + ")", Suffixes::kBinary);
  if (f.kmax_bytes != nullptr)
    add_uint(app, g, "--kmax-bytes", "B", *f.kmax_bytes, 0, 10'000'000'000ull,
             "RED/ECN: every ECN-capable frame marked above" + d + std::to_string(*f.kmax_bytes) + ")",
             Suffixes::kBinary);
  if (f.pmax != nullptr)
    add_real(app, g, "--pmax", "P", *f.pmax, 0, 1, "RED/ECN: marking probability at Kmax" + d + num(*f.pmax) + ")");
  if (f.buffer_bytes != nullptr)
    add_uint(app, g, "--buffer-bytes", "B", *f.buffer_bytes, 2048, 10'000'000'000ull,
             "egress queue size; tail drop beyond" + d + std::to_string(*f.buffer_bytes) + ")", Suffixes::kBinary);
  if (f.delay_us != nullptr)
    add_real(app, g, "--delay-us", "U", *f.delay_us, 0, 1e6,
             "minimum time every frame spends in the switch" + d + num(*f.delay_us) + ")");
  const char* p = "lossless (PFC)";
  if (f.pfc != nullptr)
    add_flag(app, p, "--pfc", *f.pfc, "pause upstream when an ingress holds too much of the priority");
  if (f.pfc_priority != nullptr)
    add_uint(app, p, "--pfc-priority", "N", *f.pfc_priority, 0, 7,
             f.pfc_priority_help + d + std::to_string(*f.pfc_priority) + ")");
  if (f.pfc_xoff_bytes != nullptr)
    add_uint(app, p, "--pfc-xoff-bytes", "B", *f.pfc_xoff_bytes, 1, 10'000'000'000ull,
             "pause above" + d + std::to_string(*f.pfc_xoff_bytes) + ")", Suffixes::kBinary);
  if (f.pfc_xon_bytes != nullptr)
    add_uint(app, p, "--pfc-xon-bytes", "B", *f.pfc_xon_bytes, 0, 10'000'000'000ull,
             "resume below" + d + std::to_string(*f.pfc_xon_bytes) + ")", Suffixes::kBinary);
  if (f.pfc_quanta != nullptr)
    add_uint(app, p, "--pfc-quanta", "Q", *f.pfc_quanta, 1, 65535,
             "pause time sent, in 512-bit quanta" + d + std::to_string(*f.pfc_quanta) + ")");
  if (f.link_gbps != nullptr)
    add_real(app, p, "--link-gbps", "G", *f.link_gbps, 0.001, 1000,
             "link rate that converts quanta to time" + d + num(*f.link_gbps) + ")");
}

}  // namespace droce::apps::cli
