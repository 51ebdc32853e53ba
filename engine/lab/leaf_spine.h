// LeafSpine: a two-tier Clos fabric in one process — L leaf switches with their endpoints, S
// spines, every link a RingFabric rte_ring pair, each switch a LabSwitch (rate, buffer, RED/ECN,
// PFC, delay). Routes come from the endpoints' addresses (IPv4 /32 and IPv6 /128): a leaf sends
// its own endpoints' frames down and every other address up, over its S uplinks by ECMP (a hash
// of the 5-tuple, EcmpHashConfig); a spine sends each address down to its leaf. Nothing floods
// (two paths between leaves would circle a flood). One thread polls every switch.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/lab/ecmp_hash.h"
#include "engine/lab/lab_switch.h"
#include "engine/lab/ring_fabric.h"

namespace droce::engine {

// One direction of a leaf-spine link, or of an endpoint's link towards it: the egress port's
// rate (Gb/s, 0 = unshaped) and buffer (0 = the switch template's buffer_bytes); on a leaf-spine
// link also its own RED/ECN, PFC and delay (empty fields: the sending switch's tier; PFC and its
// thresholds must agree with the other direction's: both ends of a link run PFC or neither).
struct LinkQueueParams {
  double gbps = 0;
  std::uint64_t buffer_bytes = 0;
  SwitchPortSettings port;
};

// A leaf-spine link that fails at down_ms and comes back at up_ms (below 0: never), both in ms
// of the fabric's clock from LeafSpine::start_clock (droce-coll: the timed run's start).
struct LinkFailure {
  std::uint32_t leaf = 0, spine = 0;
  double down_ms = 0;
  double up_ms = -1;
  // "LEAF:SPINE@T1[:T2]" (ms); Ok, or kInvalidArgument naming --link-down.
  [[nodiscard]] static Status parse(const std::string& spec, LinkFailure& out);
};

// Ok when every failure names a link of a fabric of `leaves` x `spines` and no link's failures
// overlap; else kInvalidArgument naming --link-down.
[[nodiscard]] Status check_link_failures(const std::vector<LinkFailure>& failures, std::uint32_t leaves,
                                         std::uint32_t spines);

struct LeafSpineConfig {
  std::uint32_t leaves = 2, spines = 2, endpoints_per_leaf = 1;
  // Endpoint i's addresses (i = leaf * endpoints_per_leaf + k): IPv4 in host order, one per
  // endpoint; IPv6 (network order) empty or one per endpoint.
  std::vector<std::uint32_t> ipv4;
  std::vector<std::array<std::uint8_t, 16>> ipv6;
  // RED/ECN, PFC, delay, shaper burst and the default buffer of every leaf and of every spine;
  // ports, routes, ECMP, flooding and pool are filled in.
  LabSwitchConfig leaf, spine;
  LinkQueueParams to_endpoint;  // a leaf's port towards each endpoint
  LinkQueueParams uplink;       // leaf -> spine, every link unless uplinks names it
  LinkQueueParams downlink;     // spine -> leaf, likewise
  // Per leaf-spine link (index leaf * spines + spine) when not empty: overrides uplink/downlink
  // (apply_link_specs fills them from --link).
  std::vector<LinkQueueParams> uplinks, downlinks;
  // Per endpoint (index as ipv4's) when not empty: overrides to_endpoint (droce-switch's lab shapes
  // the receiver's port alone, its bottleneck).
  std::vector<LinkQueueParams> to_endpoints;
  // Per endpoint when not empty: the leaf's port towards endpoint i is endpoint_ports[i] (an
  // ethdev: droce-switch between real ports) instead of its ring link, which then carries nothing.
  std::vector<FramePort> endpoint_ports;
  EcmpHashConfig ecmp;
  ImpairmentConfig toward_endpoints, toward_leaves, toward_spines;
  std::uint32_t ring_slots = 1024;
  rte_mempool* pool = nullptr;
  // Links that fail and come back (docs/fabric-lab.md "A link down and up"); the same link's
  // failures must not overlap.
  std::vector<LinkFailure> link_failures;
  // Endpoints whose NIC is stuck: it pauses every lossless priority forever and never drains
  // (the leaf's port towards it is a LabSwitchConfig::stuck_ports entry). Needs leaf.pfc. What
  // spreads from it, and what the tiers' pfc_watchdog_ms stops: docs/fabric-lab.md "A PFC storm".
  std::vector<std::uint32_t> stuck_endpoints;
  // Endpoints behind a slow receiver's NIC (SlowReceiverConfig::port: the endpoint's index), at
  // its leaf's port towards it with the leaf tier's slow_receiver_buffer_bytes. Needs leaf.pfc.
  std::vector<SlowReceiverConfig> slow_endpoints;

  [[nodiscard]] std::uint32_t endpoints() const { return leaves * endpoints_per_leaf; }
  // Link leaf l - spine s one way (up: leaf -> spine): uplinks/downlinks' entry, else uplink/downlink.
  [[nodiscard]] LinkQueueParams link(std::uint32_t l, std::uint32_t s, bool up) const;
  // Ok when link l-s's settings are valid both ways with its tiers; else kInvalidArgument naming
  // the link, its direction and the field.
  [[nodiscard]] Status check_link(std::uint32_t l, std::uint32_t s) const;
  // Ok when valid; otherwise kInvalidArgument naming what is wrong.
  [[nodiscard]] Status validate() const;
};

// Both directions of one leaf-spine link: what the leaf's uplink port sent and queued (`up`) and
// what the spine's port towards the leaf did (`down`).
struct FabricLinkCounters {
  std::string name;  // "leaf0-spine1"
  std::uint32_t leaf = 0, spine = 0;
  SwitchPortCounters up, down;
  // What each direction runs with: rate, buffer (0 = unshaped rate; the buffer resolved) and
  // every field of its port settings filled (the link's own, else its switch tier's).
  LinkQueueParams up_params, down_params;
  // Failures (LinkFailure): is it up now, how often it went down, and when it last went down and
  // came back, in ns of the fabric's clock (-1: never).
  bool link_up = true;
  std::uint32_t downs = 0;
  std::int64_t last_down_ns = -1, last_up_ns = -1;
};

class LeafSpine {
 public:
  [[nodiscard]] static std::unique_ptr<LeafSpine> create(const LeafSpineConfig& cfg, Status& err);
  ~LeafSpine();
  LeafSpine(const LeafSpine&) = delete;
  LeafSpine& operator=(const LeafSpine&) = delete;

  // Endpoint i's end of its link (it sends into .tx, receives with receive()).
  [[nodiscard]] RingEnd& endpoint_end(std::uint32_t i) { return fabric_->end(i, 0); }
  // The leaf-side end of endpoint i's link (a tap there sees what the endpoint sends).
  [[nodiscard]] RingEnd& leaf_end(std::uint32_t i) { return fabric_->end(i, 1); }
  [[nodiscard]] const RingFabric& links() const { return *fabric_; }
  [[nodiscard]] RingFabric& links() { return *fabric_; }
  [[nodiscard]] const LabSwitch& leaf(std::uint32_t l) const { return *leaves_[l]; }
  [[nodiscard]] const LabSwitch& spine(std::uint32_t s) const { return *spines_[s]; }
  // The leaf's port towards endpoint i (its counters: what the endpoint sent and received).
  [[nodiscard]] const SwitchPortCounters& endpoint_port(std::uint32_t i) const {
    return leaves_[i / cfg_.endpoints_per_leaf]->counters(i % cfg_.endpoints_per_leaf);
  }
  // Every leaf-spine link, leaf-major.
  [[nodiscard]] std::vector<FabricLinkCounters> fabric_links() const;
  // The spine a flow from a leaf goes up to (the leaves' ECMP choice).
  [[nodiscard]] std::uint32_t spine_of(const FlowKey& flow) const { return ecmp_pick(flow, cfg_.ecmp, cfg_.spines); }
  // The origin of LinkFailure's times: the schedule runs from here (before: no link fails).
  void start_clock(std::uint64_t now_tsc);
  // Takes the link between `leaf` and `spine` down or up now (what the schedule does; on the
  // polling thread). Down: both ends drop what they hold and what comes (link_down_drops); every
  // leaf stops sending towards `leaf` through `spine`, and `leaf` stops using `spine` at all
  // (the route through the spine is withdrawn at once: no convergence time is modelled).
  void set_link(std::uint32_t leaf, std::uint32_t spine, bool up, std::uint64_t now_tsc);
  // One round over every switch (one thread); applies the failures due first.
  void poll(std::uint64_t now_tsc);
  // After the pollers stopped: queued frames freed.
  void finish();

 private:
  LeafSpine() = default;
  LeafSpineConfig cfg_;
  std::unique_ptr<RingFabric> fabric_;
  std::vector<std::unique_ptr<LabSwitch>> leaves_, spines_;
  struct LinkState {
    bool up = true;
    std::uint32_t downs = 0;
    std::int64_t last_down_ns = -1, last_up_ns = -1;
  };
  std::vector<LinkState> link_state_;                     // leaf * spines + spine
  std::vector<LinkQueueParams> up_params_, down_params_;  // resolved, leaf * spines + spine
  // The schedule in TSC, once start_clock gave it an origin: each failure's down and up times and
  // how far it got (0 not yet down, 1 down, 2 done).
  struct Scheduled {
    std::uint64_t down_tsc = 0, up_tsc = 0;  // up_tsc UINT64_MAX: never
    std::uint8_t stage = 0;
  };
  std::vector<Scheduled> schedule_;
  std::uint64_t origin_tsc_ = 0;
  bool clock_started_ = false;
};

}  // namespace droce::engine
