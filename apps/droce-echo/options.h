// droce-echo options: one struct with the defaults --help prints, and a strict parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace droce::echo {

struct Options {
  std::string mode = "loopback";  // loopback | server | client
  std::string thread = "worker";  // worker | app
  // Who is at the other end: another droce-echo (immediate data carries the sequence number),
  // rdma-core's ibv_rc_pingpong (plain SENDs; each side sends --count messages; the server echoes),
  // or its ibv_srq_pingpong (--qps QPs whose receives come from one shared receive queue a side;
  // --count exchanges in all, over every QP).
  std::string peer = "droce";  // droce | rc_pingpong | srq_pingpong
  std::uint32_t size = 64;
  std::uint64_t count = 100000;
  std::uint64_t warmup = 1000;   // 0 with --peer rc_pingpong unless given
  std::uint32_t mtu = 4096;      // 1024 with --peer rc_pingpong unless given (ibv_rc_pingpong's -m)
  bool adaptive_rto = true;      // RTT-based retransmission timeout and tail-loss probes (docs/transport.md)
  std::uint8_t qp_timeout = 14;  // 67 ms: perftest's and ibv_rc_pingpong's; a busy host stalls a process for tens of ms
  std::uint16_t oob_port = 18516;
  std::string oob_host = "127.0.0.1";
  // Addressing on a real link (server/client with EAL options); empty: the defaults in --help.
  // local_ip is IPv4 or IPv6; the peer's comes from its GID in the exchange, of the same family.
  std::string local_ip, local_mac, peer_mac;
  // Our frames' IP DSCP and 802.1Q tag (server/client; the engine builds them, ECN stays ECT(0)).
  std::uint8_t dscp = 0;           // --dscp 0..63
  std::uint16_t vlan_id = 0;       // --vlan 1..4094; 0 = untagged
  std::uint8_t vlan_pcp = 0;       // --pcp 0..7, with --vlan
  std::string pcap;                // --pcap: our port's frames, both ways (server/client)
  std::uint32_t pcap_snaplen = 0;  // --pcap-snaplen; set to the shared default by the parser
  std::uint64_t pcap_max_mb = 0;   // --pcap-max-mb: a cap on each file; 0 = none
  std::uint32_t pcap_files = 0;    // --pcap-files: a ring of this many files; 0 = none
  double loss = 0;                 // frames dropped where impair_direction says (lab impairment)
  // --impair-direction rx|tx|both (apps/common/lab_impairments.h)
  std::string impair_direction = "rx";
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> psn_seed;  // --seed given: the first PSNs' seed too; else the OS's entropy
  double timeout_s = 30;
  std::string json;
  // Server: poll-mode workers, each on its own EAL lcore with its own queue pair (QP i on worker
  // i % N). Client: as many queue pairs (engine workers), all polled by its one lcore.
  std::uint32_t workers = 1;
  std::uint32_t qps = 1;         // client: QPs, each with one round trip in flight; the server takes the client's
                                 // (16 with --peer srq_pingpong unless given, as its -q)
  std::uint32_t rx_depth = 500;  // --peer srq_pingpong: receives the shared receive queue holds (its -r)

  [[nodiscard]] bool rc_pingpong() const { return peer == "rc_pingpong"; }
  [[nodiscard]] bool srq_pingpong() const { return peer == "srq_pingpong"; }
  // Either rdma-core example: plain SENDs, counted runs, the control connection closed after the
  // exchange.
  [[nodiscard]] bool pingpong_tool() const { return rc_pingpong() || srq_pingpong(); }
};

// 0: run; 1: --help was printed; -1: an error was printed.
// `eal`: the arguments before `--`, where the app's own long options are refused by name.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o,
                                const std::vector<std::string>& eal = {});

}  // namespace droce::echo
