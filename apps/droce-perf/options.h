// droce-perf options: perftest's flags with perftest's defaults, plus droce's own; a strict parser
// (the apps' CLI11 setup, apps/common/cli/).
#pragma once

#include <droce/engine/exchange/perftest_exchange.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace droce::perf {

// -A: the atomic of atomic_bw / atomic_lat (perftest's atomicType).
enum class AtomicType { kFetchAndAdd, kCmpAndSwap };
[[nodiscard]] const char* atomic_type_name(AtomicType a);  // "FETCH_AND_ADD", "CMP_AND_SWAP"

// --rate_limit, --rate_units, --rate_limit_type, --burst_size (perftest's rate limiter). droce
// paces in software either way: bursts of `burst` requests, one burst every burst / rate seconds
// (perftest's SW limiter in run_iter_bw); HW asks for the same and is told so.
enum class RateUnits { kMiBps, kGbps, kPps };  // perftest's M, g, p
enum class RateLimitType { kNone, kSw, kHw };
struct RateLimit {
  double value = 0;  // 0: none
  RateUnits units = RateUnits::kGbps;
  RateLimitType type = RateLimitType::kNone;
  std::uint32_t burst = 0;  // 0: the TX depth (perftest's default)
  // Messages a second for `size`-byte messages (perftest's rate_limit_pps).
  [[nodiscard]] double pps(std::uint32_t size) const;
};

struct Options {
  engine::PerftestTest test = engine::PerftestTest::kSendBw;
  std::string host;                   // empty: server (perftest: no server name given)
  std::uint32_t size = 0;             // -s; 0 until parsed: 65536 for bw, 2 for lat, 8 for atomics (DEF_SIZE_*)
  std::uint64_t iters = 0;            // -n; 5000 for write_bw, 1000 otherwise (DEF_ITERS_WB/DEF_ITERS)
  std::uint32_t duration_s = 0;       // -D; 0 = iterations mode
  std::uint32_t qps = 1;              // -q (bw tests only, as perftest)
  std::uint32_t mtu = 1024;           // -m
  bool all_sizes = false;             // -a: 2 .. 2^23 (perftest's RUN_ALL)
  std::uint32_t max_size = 1u << 23;  // --max-size: where -a stops (droce; a perftest peer goes to 2^23)
  bool report_gbits = false;          // --report_gbits
  std::uint16_t port = 18515;         // -p
  int gid_index = -1;                 // -x (accepted: droce has one GID, its IPv4-mapped address)
  std::string device;                 // -d (accepted, no effect)
  bool cpu_freq_f = false;            // -F (accepted, no effect: droce reads the TSC frequency from DPDK)
  std::uint32_t tx_depth = 0;         // -t; 128 for bw, 1 for lat (DEF_TX_BW/DEF_TX_LAT), at most iters
  AtomicType atomic = AtomicType::kFetchAndAdd;  // -A (atomic tests only; perftest's default)
  // -o: outstanding READs and atomics (read and atomic tests; others advertise 1). perftest's
  // default is the device's max_qp_rd_atom; droce's is rxe's, 128. Advertised in the exchange:
  // our responder resources; the peer's value is our initiator depth (perftest's
  // ctx_modify_qp_to_rtr / _rts).
  std::uint32_t out_reads = engine::kPerftestOutReadsRead;
  // -u: the local ACK timeout exponent, 4.096 us * 2^u (perftest's DEF_QP_TIME, 14: 67 ms). A lab
  // peer on an emulated CPU answers slower than that under load; a longer one is a realistic choice.
  std::uint32_t qp_timeout = 14;
  bool adaptive_rto = true;  // --adaptive-rto: RTT-based retransmission timeout and tail-loss probes under -u's
  // -b: both sides send at once (send_bw, write_bw, read_bw; perftest's duplex), each side printing
  // the sum of both directions after swapping BW reports; --report-both adds each direction's row.
  bool duplex = false;
  bool report_both = false;
  // -R: perftest's rdma_cm mode (its "Data ex. method : rdma_cm"): the exchange over a comm QP
  // and the data QPs connected by the CM (engine/exchange/perftest_cm_exchange.h), no TCP.
  bool rdma_cm = false;
  bool no_peak = false;      // -N: no peak bandwidth (0.00)
  std::uint32_t cq_mod = 0;  // -Q: a completion every N requests; 0 = perftest's (100, 1 above 8 KiB)
  // -I: accepted and shown in the banner as perftest shows it; droce has no inline distinction (every
  // payload is copied into its frames), so nothing else changes.
  std::uint32_t inline_size = 0;
  std::uint32_t rx_depth = 0;  // -r: SEND receives kept posted; 0 = perftest's 512 (at most -n)
  int margin_s = -1;           // -f: -D's unmeasured seconds at each end; -1 = a quarter of -D
  RateLimit rate;
  bool out_json = false;  // --out_json: perftest's JSON report, in --out_json_file
  std::string out_json_file = "perftest_out.json";
  // droce's own.
  std::string local_ip, local_mac, peer_mac;
  std::uint8_t dscp = 0;      // --dscp 0..63 (ECN stays ECT(0))
  std::uint16_t vlan_id = 0;  // --vlan 1..4094; 0 = untagged
  std::uint8_t vlan_pcp = 0;  // --pcp 0..7, with --vlan
  double loss = 0;            // lab loss where impair_direction says
  // --impair-direction rx|tx|both (apps/common/lab_impairments.h)
  std::string impair_direction = "rx";
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> psn_seed;  // --seed given: the first PSNs' seed too; else the OS's entropy
  double timeout_s = 30;                  // connect, and every exchange step
  std::string json;
  std::string pcap;                // --pcap: our port's frames, both ways
  std::uint32_t pcap_snaplen = 0;  // --pcap-snaplen; set to the shared default by the parser
  std::uint64_t pcap_max_mb = 0;   // --pcap-max-mb: a cap on each file; 0 = none
  std::uint32_t pcap_files = 0;    // --pcap-files: a ring of this many files; 0 = none
  std::uint32_t workers = 1;       // --workers: QP i runs on worker i % workers, each on its own lcore

  [[nodiscard]] bool bw() const { return engine::perftest_is_bw(test); }
  [[nodiscard]] bool atomic_test() const { return engine::perftest_is_atomic(test); }
  [[nodiscard]] bool server() const { return host.empty(); }
  [[nodiscard]] std::vector<std::uint32_t> sizes() const;  // the sizes to run, in order
};

// Returns 0 to run, 1 after printing --help or --version, -1 after printing an error (one line).
// `eal`: the arguments before `--`, where the app's own long options are refused by name.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o,
                                const std::vector<std::string>& eal = {});

}  // namespace droce::perf
