// Dumbbell simulation: N DCQCN senders -> one switch egress (RED/ECN, buffer) -> one receiver.
#pragma once

#include <droce/protocols/dcqcn/params.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-sim/reliability.h"

namespace droce::sim {

struct SimConfig {
  std::uint32_t flows = 2;
  double link_gbps = 40;  // every link, and the bottleneck egress
  double duration_ms = 50;
  double start_stagger_ms = 0;  // flow i starts at i * stagger
  bool incast = false;          // all flows start together (stagger ignored)
  // --flow-start-ms / --flow-stop-ms: flow i's own start and stop (entry i; a shorter list leaves
  // the rest at the stagger's start and the end), as droce-switch's --lab-start-ms/--lab-stop-ms.
  // A stopped flow puts nothing more on its link, new or resent; what it queued drains.
  std::vector<double> flow_start_ms, flow_stop_ms;
  bool cc = true;  // false: --cc none, senders at line rate
  dcqcn::DcqcnParams dcqcn = dcqcn::DcqcnParams::paper();
  std::uint32_t packet_bytes = 1000;  // bytes on the wire per data packet
  double link_delay_us = 1.0;         // one-way propagation per link
  std::uint64_t kmin_bytes = 5'000;   // RED/ECN marking (the paper's switch setting)
  std::uint64_t kmax_bytes = 200'000;
  double pmax = 0.01;
  std::uint64_t buffer_bytes = 1'000'000;  // egress buffer; tail drop beyond
  double loss = 0;                         // random loss on the bottleneck link, [0, 1)
  std::uint64_t seed = 1;
  double sample_us = 100;   // series sampling period
  RecoveryConfig recovery;  // PSNs, ACKs and loss recovery (none: the open-loop model)

  // Ok when valid; otherwise kInvalidArgument and a message naming the bad option.
  [[nodiscard]] Status validate() const;
};

struct FlowResult {
  double throughput_gbps = 0;  // over the last half of the run
  std::uint64_t bytes_received = 0;
  std::uint64_t packets_sent = 0;
  std::uint64_t cnps_received = 0;
  std::uint64_t rate_cuts = 0;
  // Payload handed on in order by the receiver (every arriving packet's payload with --recovery
  // none, which has no order): over the last half, and in all.
  double goodput_gbps = 0;
  std::uint64_t delivered_bytes = 0;
  std::uint64_t retransmitted = 0, timeouts = 0, naks = 0, sacks = 0;
  std::uint64_t duplicates = 0, out_of_sequence = 0, order_errors = 0;
  double completion_us = -1;  // --flow-bytes: when the last byte was handed on; -1: not (yet)
  // --transport rcqp only: tail-loss probes sent, 64 KiB WRITEs completed, frames the simulation
  // could not hand to a QP (a frame ring overrun or a frame that did not parse: never, checked),
  // and whether the requester's QP failed (its retries spent).
  std::uint64_t tail_probes = 0, messages = 0, transport_drops = 0;
  bool qp_failed = false;
};

struct SimResult {
  double jain_index = 0;
  double utilization = 0;
  std::uint64_t queue_p50_bytes = 0;
  std::uint64_t queue_p99_bytes = 0;
  std::uint64_t queue_max_bytes = 0;
  std::uint64_t drops = 0;
  std::uint64_t cnps = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t events = 0;
  double base_rtt_us = 0;         // data path plus ACK path with empty queues
  std::uint32_t bdp_packets = 0;  // sr's cap on packets in flight (as given, or link rate x base RTT)
  double goodput_gbps = 0;        // sum over the flows (the innocent two-hop flow excluded)
  std::vector<FlowResult> flows;
  std::vector<double> series_time_us;
  std::vector<std::vector<double>> series_rate_gbps;  // [sample][flow]: the senders' DCQCN rate
  std::vector<double> series_queue_bytes;
};

// When flow i starts and stops sending (ns of virtual time; stop UINT64_MAX: never).
[[nodiscard]] std::uint64_t flow_start_ns(const SimConfig& cfg, std::uint32_t i);
[[nodiscard]] std::uint64_t flow_stop_ns(const SimConfig& cfg, std::uint32_t i);

// A data packet's bytes on the wire: --packet-bytes for the model; the real transport's frames
// carry the PMTU that fits it plus 62 bytes (a WRITE's first packet 16 more, its RETH).
[[nodiscard]] std::uint32_t data_frame_bytes(const SimConfig& cfg);

// Runs the whole simulation in virtual time. Deterministic: the same config gives the same result.
[[nodiscard]] SimResult run_dumbbell(const SimConfig& cfg);

// Jain's fairness index of `x`: (sum x)^2 / (n sum x^2); 1 = perfectly fair.
[[nodiscard]] double jain_index(const std::vector<double>& x);

// The p-quantile (0..1] of `v` by the nearest-rank rule; 0 for an empty sample.
[[nodiscard]] std::uint64_t percentile(std::vector<double> v, double p);

}  // namespace droce::sim
