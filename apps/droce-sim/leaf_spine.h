// Leaf-spine fabric simulation carrying a droce-coll collective: L leaves with H = ranks / L hosts
// each, S spines joined to every leaf, ECMP over the spines by the live lab's hash of each flow's
// 5-tuple (engine/lab/ecmp_hash.h, the UDP source port from the QPN pair as droce's QPs derive it),
// every switch port the fabric's (switch_port.h: RED/ECN, tail drop or PFC), and each link's
// counters named as the live lab names them (ep3-leaf0, leaf0-spine1).
#pragma once

#include <droce/engine/lab/ecmp_hash.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-sim/collective.h"
#include "apps/droce-sim/fabric.h"

namespace droce::sim {

struct LeafSpineConfig {
  // Rates (link_gbps: every host link), delays, packet size, marking, buffer, seed, duration (the
  // cap on simulated time), PFC and its thresholds: the fabric's options. The transport is
  // fabric.base.recovery's: the model (default) sends each transfer open-loop at line rate, with
  // no congestion control and no loss recovery (packets a full buffer drops stay lost: use PFC);
  // rcqp carries it on droce's RC transport (a requester and a responder RcQp per rank pair, gbn
  // or sr), which recovers from drops and from fabric.base.loss (each frame lost with that
  // probability on every link it crosses) and, with fabric.base.cc, paces each QP with DCQCN.
  FabricConfig fabric;
  std::uint32_t leaves = 2, spines = 2;
  double uplink_gbps = 0;  // every leaf-spine link, both ways; 0: the host link rate
  engine::EcmpHashConfig ecmp;
  CollectiveConfig coll;

  [[nodiscard]] std::uint32_t hosts_per_leaf() const { return leaves != 0 ? coll.ranks / leaves : 0; }
  [[nodiscard]] double uplink_rate_gbps() const { return uplink_gbps > 0 ? uplink_gbps : fabric.base.link_gbps; }
  // A leaf's host capacity over its uplink capacity (1: non-blocking).
  [[nodiscard]] double oversubscription() const {
    return hosts_per_leaf() * fabric.base.link_gbps / (spines * uplink_rate_gbps());
  }
  [[nodiscard]] Status validate() const;
};

// One direction of a link: frames and bytes sent, the deepest queue, tail drops and ECN marks at
// the egress that feeds it, and the PFC XOFFs that paused that egress (sent by the far end).
struct LinkDir {
  std::uint64_t frames = 0, bytes = 0, max_queue_bytes = 0, drops = 0, ecn_marks = 0, pauses = 0;
};
struct LinkStats {
  std::string name;  // ep3-leaf0 (up: the host's NIC, which has no queue here), leaf0-spine1
  LinkDir up, down;  // up: towards the spines
};

// Per step of the schedule: when its transfers finished (their last byte delivered), across ranks.
struct StepStats {
  std::uint32_t step = 0, transfers = 0;
  double p50_us = 0, p99_us = 0, max_us = 0;
  double span_us = 0;  // max finish of this step less the previous step's (the step's cost)
};

struct LeafSpineResult {
  bool complete = false;  // every transfer delivered (false: drops without PFC, or the time cap)
  std::uint64_t expected_bytes = 0, delivered_bytes = 0;
  double time_us = 0;  // when the last transfer finished (the run's end when incomplete)
  double algbw_gbytes = 0, busbw_gbytes = 0;
  coll::SizePlan plan;
  std::uint64_t transfers = 0;
  std::vector<StepStats> steps;
  std::uint32_t slowest_step = 0;
  std::vector<LinkStats> links;                // host links by rank, then leaf-spine links by leaf, spine
  std::vector<std::uint64_t> flows_per_spine;  // distinct (src, dst) flows crossing each spine
  std::uint64_t drops = 0, ecn_marks = 0, pauses = 0, packets = 0, events = 0;
  // Transfers that began to leave before their `after` had delivered its last byte: 0, always.
  std::uint64_t dependency_violations = 0;
  // --transport rcqp: the QPs' own counters (docs/counters.md), summed over every rank pair's
  // requester (resends, timer expiries, NAKs, probes) and responder (duplicates, PSNs ahead, bytes
  // placed); frames --loss dropped; CNPs sent (--cc dcqcn).
  struct Transport {
    std::uint64_t qp_pairs = 0, failed_qps = 0, retransmitted = 0, timeouts = 0, naks = 0, tail_probes = 0;
    std::uint64_t duplicates = 0, out_of_sequence = 0, placed_bytes = 0, transport_drops = 0;
    std::uint64_t losses = 0, cnps = 0;
  } transport;
};

// Runs the transport cfg.fabric.base.recovery names (the model, or rcqp: run_leaf_spine_rcqp).
[[nodiscard]] LeafSpineResult run_leaf_spine(const LeafSpineConfig& cfg);
// The collective on droce's RC transport (leaf_spine_rcqp.cc).
[[nodiscard]] LeafSpineResult run_leaf_spine_rcqp(const LeafSpineConfig& cfg);

// The spine ECMP picks for the flow src -> dst (its QPs' UDP source port in the 5-tuple).
[[nodiscard]] std::uint32_t spine_of(const LeafSpineConfig& cfg, std::uint32_t src, std::uint32_t dst);
// The spine ECMP picks for a frame from rank src to rank dst with UDP source port `udp_src_port`.
[[nodiscard]] std::uint32_t spine_for_port(const LeafSpineConfig& cfg, std::uint32_t src, std::uint32_t dst,
                                           std::uint16_t udp_src_port);
// The QPN of rank `rank`'s QP towards `peer`: each rank is its own endpoint with one QP per peer,
// so the pair (qpn_towards(src, dst), qpn_towards(dst, src)) differs for every ordered pair.
[[nodiscard]] constexpr std::uint32_t qpn_towards(std::uint32_t /*rank*/, std::uint32_t peer) { return 0x100 + peer; }

}  // namespace droce::sim
