// The option groups the apps share, each option declared once with its range and help: an app
// points the options it takes at its own fields (a null pointer leaves that option out) and adds
// its own options to the same groups.
#pragma once

#include <droce/protocols/dcqcn/params.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace droce::apps::cli {

// Group titles, in the order --help shows them.
inline constexpr const char* kConnection = "roles and connection";
inline constexpr const char* kWorkload = "workload";
inline constexpr const char* kDcqcn = "congestion and flow control";
inline constexpr const char* kImpairment =
    "lab impairment (at this process's receive side; the transport never sees it)";
inline constexpr const char* kImpairmentDirected =
    "lab impairment (where --impair-direction says; the transport never sees it)";
inline constexpr const char* kOutput = "output";

// The queue pair's connection (client/server): the peer's address and the out-of-band exchange.
struct ConnectionFields {
  std::uint16_t* oob_port = nullptr;         // the ibv_rc_pingpong-format exchange
  std::string oob_port_zero = "0 = static";  // what port 0 means to this app
  std::string* oob_host = nullptr;
  double* connect_timeout_s = nullptr;
  std::uint8_t* qp_timeout = nullptr;  // local ACK timeout exponent
  std::uint8_t* retry_cnt = nullptr;
  bool* adaptive_rto = nullptr;  // rc::QpAttr::adaptive_rto
  // The address options and --dscp/--vlan/--pcp are apps/common/cli/address_options.h's.
};
void add_connection(CLI::App& app, const ConnectionFields& f);
// --adaptive-rto on|off, for the apps that declare their QP options themselves (droce-perf).
void add_adaptive_rto(CLI::App& app, const std::string& group, bool& field);

// The shape of the load every client app offers.
struct WorkloadFields {
  std::uint32_t* mtu = nullptr;  // an IB MTU: 256 .. 4096
  std::string mtu_note;          // after the default, when the app changes it
  double* duration_s = nullptr;
  std::uint64_t* count = nullptr;
};
void add_workload(CLI::App& app, const WorkloadFields& f);

// Lab impairment at the receive side: fractions of frames lost, duplicated, reordered, in bursts.
struct ImpairmentFields {
  double* loss = nullptr;
  double* duplicate = nullptr;
  double* reorder = nullptr;
  double* burst_start = nullptr;
  std::uint32_t* burst_frames = nullptr;
  std::uint64_t* seed = nullptr;
  std::string* direction = nullptr;  // --impair-direction rx|tx|both (the group: kImpairmentDirected)
  std::string loss_note;             // after the default, where the app limits it
  std::string group = kImpairment;
  std::string seed_help = "seed of the impairment";
};
void add_impairment(CLI::App& app, const ImpairmentFields& f);

// DCQCN: the algorithm, its parameter set and one option per parameter (--dcqcn-NAME), applied
// after the preset by apply_dcqcn().
struct DcqcnFields {
  std::string* cc = nullptr;      // none|dcqcn
  std::string* preset = nullptr;  // paper|mlx5
  double* line_gbps = nullptr;
  std::uint8_t* pfc_priority = nullptr;
  double* pfc_watchdog_ms = nullptr;  // the endpoints' PFC watchdog (EndpointPfc::watchdog_ms)
  std::vector<std::pair<std::string, std::string>>* overrides = nullptr;  // (NAME, value) as given
  std::string cc_help =
      "DCQCN paces each QP and cuts its rate on CNPs; CE-marked\n"
      "packets are always answered with CNPs";
};
void add_dcqcn(CLI::App& app, const DcqcnFields& f);
// The preset at `line_gbps`, then each override; ok, or kInvalidArgument and one message naming
// the option.
[[nodiscard]] Status apply_dcqcn(const std::string& preset, double line_gbps,
                                 const std::vector<std::pair<std::string, std::string>>& overrides,
                                 dcqcn::DcqcnParams& out);

// The snap length every capture takes by default: the longest headers droce sends whole — an
// Ethernet header with an 802.1Q tag, IPv6, UDP, BTH, DETH and a QP1 MAD of 256 bytes (RDMA-CM),
// then the ICRC — so every RoCEv2 header stack (BTH + RETH + ImmDt, AtomicETH, ...) and every
// CM, ARP and ND frame stays whole while payloads are cut.
inline constexpr std::uint32_t kDefaultPcapSnaplen = 14 + 4 + 40 + 8 + 12 + 8 + 256 + 4;

// Where the results go.
struct OutputFields {
  std::string* json = nullptr;
  std::string json_help = "the final report as JSON";
  std::string* csv = nullptr;
  std::string* stats_json = nullptr;  // "-": stdout
  double* interval_s = nullptr;
  std::string* pcap = nullptr;
  std::string pcap_help = "capture our port's frames (pcapng, Wireshark decodes RoCEv2)";
  std::uint32_t* pcap_snaplen = nullptr;  // --pcap-snaplen, default kDefaultPcapSnaplen
  // --pcap-max-mb (MiB a file, 0 = no limit) and --pcap-files (a ring; needs --pcap-max-mb):
  // engine::CaptureLimits, as dumpcap's -a filesize: and -b filesize: -b files:.
  std::uint64_t* pcap_max_mb = nullptr;
  std::uint32_t* pcap_files = nullptr;
  std::string* plot = nullptr;
  std::string plot_help = "a PNG of the run (matplotlib)";
  bool* quiet = nullptr;
};
void add_output(CLI::App& app, const OutputFields& f);

// A lab switch's queues and its lossless mode (droce-switch, droce-coll's fabric): each port's
// egress RED/ECN queue, its size, a fixed delay, and PFC.
struct SwitchFields {
  std::uint64_t* kmin_bytes = nullptr;
  std::uint64_t* kmax_bytes = nullptr;
  double* pmax = nullptr;
  std::uint64_t* buffer_bytes = nullptr;
  double* delay_us = nullptr;
  std::string queue_group = "forwarding and queues";
  bool* pfc = nullptr;
  std::uint8_t* pfc_priority = nullptr;
  std::uint64_t* pfc_xoff_bytes = nullptr;
  std::uint64_t* pfc_xon_bytes = nullptr;
  std::uint16_t* pfc_quanta = nullptr;
  double* link_gbps = nullptr;
  std::string pfc_priority_help = "the lossless priority (VLAN PCP, else DSCP/8)";
};
void add_switch(CLI::App& app, const SwitchFields& f);

}  // namespace droce::apps::cli
