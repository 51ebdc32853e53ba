// droce-gen options: one struct with defaults that --help prints, and a strict parser.
#pragma once

#include <droce/engine/lab/drop_rule.h>
#include <droce/protocols/dcqcn/params.h>
#include <droce/protocols/rc/qp_attr.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/address_text.h"
#include "apps/common/udp_sport_plan.h"
#include "apps/droce-gen/arrivals.h"
#include "apps/droce-gen/mix.h"

namespace droce::gen {

// kFetchAdd / kCmpSwap: 8-byte atomics on one counter word per QP at the responder (FetchAdd 1;
// CmpSwap seq -> seq + 1), each result checked and the counter compared at the end.
enum class Op { kSend, kWrite, kRead, kFetchAdd, kCmpSwap };
[[nodiscard]] constexpr bool is_atomic_op(Op op) { return op == Op::kFetchAdd || op == Op::kCmpSwap; }
enum class Mode { kLoopback, kClient, kServer };
// How client and server connect: droce-gen's TCP exchange, or RDMA-CM over QP1 (connect_cm.h).
enum class Connect { kTcp, kCm };

struct FlowGroup;  // --flow-group (defined below Options, which it holds)

struct Options {
  Mode mode = Mode::kLoopback;
  Op op = Op::kWrite;
  std::vector<std::uint32_t> sizes = {4096};  // message i has sizes[i % n] bytes (a size mix); a sweep: its sizes
  // --size SIZE:WEIGHT,..: each message's size drawn by weight (mix.h); empty: `sizes` cycled.
  WeightedDraw size_weights;
  // --mix OP:WEIGHT,..: each message's op drawn by weight (values: Op's send, write, read);
  // empty: every message is `op`.
  WeightedDraw mix;
  // A size sweep (nccl-tests' -b/-e/-f/-i): --minbytes to --maxbytes, each size run in turn with its
  // own warm-up and its own --duration or --count (sweep.h). 0 = none given.
  std::uint32_t min_bytes = 0, max_bytes = 0;
  std::uint32_t step_factor = 0;  // multiply by it (default 2 when neither step is given)
  std::uint32_t step_bytes = 0;   // or add it
  bool sweep = false;             // sizes holds the sweep's sizes, one per step, smallest first
  std::uint32_t mtu = 1024;
  std::uint32_t qps = 1;
  // --split K: each message cut into K parts (split.h), posted at once on the K QPs of its stripe
  // (K consecutive QPs of one worker), complete when every part is; 1: one QP per message.
  std::uint32_t split = 1;
  apps::UdpSportPlan udp_sport;  // QP i's UDP source port (default: derived from the QP pair)
  std::uint32_t active_qps = 0;  // the first N QPs carry traffic, the rest stay connected and idle; 0 = all
  std::uint16_t workers = 1;     // poll-mode workers (EAL lcores from -l); QP i runs on worker i % workers
  // --clients N (server): N droce-gen clients at once, each with --qps QPs of its own. After
  // parse_options, `qps` is the server's total (N x --qps): client k's QPs are the run's
  // k x per_client_qps() .. (k + 1) x per_client_qps() - 1.
  std::uint32_t clients = 1;
  std::uint32_t inflight = 16;  // outstanding messages per QP
  // Loss recovery (docs/selective-repeat.md): go-back-N, or selective repeat between droce-gen
  // peers (a client proposes it; the server agrees only when started with it too).
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  std::uint32_t sr_bdp_pkts = rc::kSrMaxBdpPkts;  // selective repeat: PSNs in flight per QP, 1..128
  double duration_s = 2;
  std::uint64_t count = 0;  // total messages; 0 = run for --duration
  double warmup_s = 0;
  double rate_gbps = 0;                     // offered load (0 = closed loop)
  double msg_rate = 0;                      // messages per second (0 = closed loop)
  Arrivals arrivals = Arrivals::kConstant;  // open loop: how the due times are spaced
  std::uint32_t burst = 1;                  // open loop: messages due at the same instant
  double on_us = 100, off_us = 900;         // --arrivals onoff: each period's sending and silent spans
  // Addressing and connection (client/server).
  std::string local_ip, local_mac, peer_ip, peer_mac;  // IPv4 or IPv6 (one family); empty: mode defaults
  // Our frames' IP DSCP and 802.1Q tag (client/server; the engine builds them, ECN stays ECT(0)).
  std::uint8_t dscp = 0;      // --dscp 0..63
  std::uint16_t vlan_id = 0;  // --vlan 1..4094; 0 = untagged
  std::uint8_t vlan_pcp = 0;  // --pcp 0..7, with --vlan
  std::string oob_host = "127.0.0.1";
  std::uint16_t oob_port = 18515;  // ibv_rc_pingpong's default; 0 = static connection; --connect cm: the CM port
  Connect connect = Connect::kTcp;
  std::uint32_t local_qpn = 0x11;       // first local QPN (static connection)
  std::uint32_t remote_qpn = 0;         // first peer QPN (static connection)
  std::uint32_t psn = 0x000100;         // our first PSN (static; loopback when given)
  std::uint32_t remote_psn = 0x000100;  // the peer's first PSN (static; loopback when given)
  bool psns_given = false;              // --psn or --remote-psn given: loopback uses them too
  double connect_timeout_s = 30;
  std::uint8_t qp_timeout =
      14;  // local ACK timeout 4.096 us * 2^N (14: 67 ms, perftest's; a busy host stalls a process for tens of ms)
  std::uint8_t retry_cnt = 7;  // retries after ACK timeouts and sequence NAKs before RETRY_EXC_ERR
  bool adaptive_rto = true;    // RTT-based retransmission timeout and tail-loss probes (docs/transport.md)
  std::uint32_t pto_floor_us = rc::kDefaultPtoFloorUs;  // what the probe timeout adds to its round trips
  std::string cc = "none";
  std::string preset = "paper";   // DCQCN parameter set
  double line_gbps = 40;          // the pacer's ceiling: DCQCN's line rate
  dcqcn::DcqcnParams dcqcn;       // preset + --dcqcn-* overrides, validated
  std::uint8_t pfc_priority = 3;  // the priority whose PFC pauses we honour
  double pfc_watchdog_ms = 0;     // the endpoints' PFC watchdog (0: off)
  // Lab impairment of what this process receives (rx), sends (tx) or both.
  std::string impair_direction = "rx";
  double loss = 0;
  double duplicate = 0;
  double reorder = 0;
  double burst_start = 0;            // probability per frame that a loss burst starts
  std::uint32_t burst_frames = 8;    // frames each burst drops
  engine::DropRuleConfig drop_rule;  // --drop-rule: a switch's deterministic drop on this side
  std::uint64_t seed = 1;
  // --seed given: the first PSNs are drawn from it too (the same seed, the same PSNs); else from
  // the OS's entropy (docs/hardening.md, "First PSNs").
  std::optional<std::uint64_t> psn_seed;
  std::string json, csv, pcap;
  std::uint32_t pcap_snaplen = 0;  // set to the shared default (apps/common/cli) by the parser
  std::uint64_t pcap_max_mb = 0;   // --pcap-max-mb: a cap on each file; 0 = none
  std::uint32_t pcap_files = 0;    // --pcap-files: a ring of this many files; 0 = none
  std::string plot;                // a PNG of the run (scripts/plot_gen.py over the feed)
  std::string stats_json;          // the live feed (JSON Lines); "-": stdout, the console line then on stderr
  double interval_s = 1;           // the live line's, --csv's and --stats-json's period
  bool quiet = false;
  // Thresholds (0 = none): a verified run below --expect-gbps or above --expect-p99-us exits
  // kExitBelowThreshold, not the runtime-failure status 1.
  double expect_gbps = 0;
  double expect_p99_us = 0;
  // --flow-group, in the order given (flow_group.h): each its own QPs (consecutive, the first
  // group's from QP 0), workload, load, DSCP and window. Empty: one workload for every QP, as above.
  std::vector<FlowGroup> groups;

  [[nodiscard]] std::uint32_t max_size() const;
  [[nodiscard]] std::uint32_t active() const { return active_qps == 0 ? qps : active_qps; }
  // One client's QPs: --qps as given (a server of several clients holds `clients` times as many).
  [[nodiscard]] std::uint32_t per_client_qps() const { return qps / clients; }
  // Message `seq` of QP `qp`: its size (drawn by weight, or the list cycled) and its op (drawn
  // from the mix, or --op). Both ends compute the same (mix.h).
  [[nodiscard]] std::uint32_t size_of(std::uint32_t qp, std::uint64_t seq) const {
    return size_weights.empty() ? sizes[seq % sizes.size()] : size_weights.draw(seed, kSizeStream, qp, seq);
  }
  [[nodiscard]] Op op_of(std::uint32_t qp, std::uint64_t seq) const {
    return mix.empty() ? op : static_cast<Op>(mix.draw(seed, kOpStream, qp, seq));
  }
  // Whether some message of the run is a `k` (the mix's ops, or --op; flow groups: any group's).
  [[nodiscard]] bool carries(Op k) const;
  // The workload QP `qp` runs: its flow group's options (FlowGroup::workload), else these.
  [[nodiscard]] const Options& workload_of(std::uint32_t qp) const;
  // Its flow group's index, 0 without groups.
  [[nodiscard]] std::uint32_t group_of(std::uint32_t qp) const;
  // The responder's buffer per active QP holds this many regions of --inflight slots: one per op
  // of a mix (a WRITE's target, a READ's source and a SEND's receive must not share a slot while
  // in flight), else one.
  // Flow groups: the most any group's holds (every QP's buffer is sliced alike).
  [[nodiscard]] std::uint32_t responder_regions() const;
  // Op `k`'s region of the responder's buffer (0 without a mix).
  [[nodiscard]] std::uint32_t region_of(Op k) const;
  // The offered load in messages/s (--msg-rate, or --rate-gbps over the mean size); 0: closed loop.
  [[nodiscard]] double offered_msg_rate() const;
  [[nodiscard]] double mean_size() const;
};

// One --flow-group: a name, a range of the run's QPs, and the workload they run. `workload` is
// the run's options with the group's keys applied (op or mix, sizes, offered load, inflight,
// DSCP, qps): every draw, schedule and check of a QP reads its group's, as a run without groups
// reads the run's.
struct FlowGroup {
  std::string name;
  std::string spec;                // as given
  std::uint32_t first_qp = 0;      // the run's QPs first_qp .. first_qp + workload.qps - 1
  double start_s = 0, stop_s = 0;  // posting from start_s to stop_s after the run's start; stop 0: its end
  std::vector<std::string> keys;   // the keys given, in order
  Options workload;
  [[nodiscard]] bool has(const std::string& key) const;
};

[[nodiscard]] const char* op_name(Op op);
[[nodiscard]] const char* mode_name(Mode m);
[[nodiscard]] const char* connect_name(Connect c);  // "tcp" or "cm"
// One CM connection per QP, each a slot of the endpoint's CM (engine::EndpointCm::kMaxConnections).
inline constexpr std::uint32_t kMaxCmQps = 64;
[[nodiscard]] const char* recovery_name(rc::Recovery r);  // "gbn" or "sr"
[[nodiscard]] std::string sizes_text(const std::vector<std::uint32_t>& s);
// --size BYTES[,BYTES..]: each entry 1 B .. kMaxMessageBytes (binary suffixes), at most 64 of them.
[[nodiscard]] engine::Status parse_sizes(const std::string& v, std::vector<std::uint32_t>& out);
inline constexpr std::uint32_t kMaxQps = 16384;
// The exit status of a verified run that missed --expect-gbps or --expect-p99-us (1: it failed).
inline constexpr int kExitBelowThreshold = 3;
inline constexpr std::uint16_t kMaxWorkers = 128;
// --clients: at most this many clients per server (each a TCP connection and its own QPs).
inline constexpr std::uint32_t kMaxClients = 64;
// The largest --size: 1 GiB, the largest message an AI fabric moves; the engine's own limit is
// 2^31 bytes (rc::kMaxMessageBytes, IBTA §9.4's DMA length).
inline constexpr std::uint32_t kMaxMessageBytes = 1u << 30;
// Buffers of a run's QPs on each side: `inflight` slots of the largest size for each active QP
// (the responder: that many per region, Options::responder_regions), one slot for each idle one
// (its responder buffer is still announced to the peer).
[[nodiscard]] std::uint64_t buffer_bytes(const Options& o, bool responder = false);
// The buffers this process allocates: both ends' in loopback, one end's as client or server.
[[nodiscard]] std::uint64_t run_buffer_bytes(const Options& o);
// Ok when run_buffer_bytes fits in `available` bytes (0: unknown, not checked); else
// kNoMemory and one line naming the figure, its factors and what is available.
[[nodiscard]] engine::Status check_memory(const Options& o, std::uint64_t available);
// Ok, or kInvalidArgument and why --local-ip and --peer-ip cannot be used together (families
// differ, or an IPv6 address lacks the other one where its default, IPv4, would not do).
[[nodiscard]] engine::Status check_ip_families(const Options& o);
// Returns 0 to run, 1 after printing --help, -1 after printing an error.
// `eal`: the arguments before `--`, where the app's own long options are refused by name.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o,
                                const std::vector<std::string>& eal = {});
// IPv4 dotted quad and MAC parsing (false on anything malformed).
using engine::parse_ipv4;
using engine::parse_mac;

}  // namespace droce::gen
