// LabSwitch: a store-and-forward Ethernet switch between DPDK ports for RoCE labs — IPv4 routes
// and MAC learning, eight shaped egress queues per port (DSCP -> priority -> queue, a strict or
// weighted scheduler) with RED/ECN marking and tail drop, a fixed delay, and lossless classes
// with IEEE 802.1Qbb PFC per priority. The core of apps/droce-switch (between
// ethdevs) and of in-process labs (between ring links: FramePort).
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/lab/drop_rule.h"
#include "engine/lab/ecmp_hash.h"
#include "engine/lab/frame_port.h"
#include "engine/lab/slow_receiver.h"
#include "protocols/dcqcn/red_marking.h"

struct rte_lpm;
struct rte_hash;

namespace droce::engine {

// A route's `out` that means "one of LabSwitchConfig::ecmp_ports, chosen by the flow's hash".
inline constexpr std::uint16_t kEcmpRoute = 0xFFFF;

// IEEE 802.1Q traffic classes: eight priorities, eight egress queues per port.
inline constexpr std::size_t kSwitchClasses = 8;
// LabSwitchConfig::cnp_priority's "no class of their own": CNPs are classified by DSCP like data.
inline constexpr std::uint8_t kCnpByDscp = 0xFF;

// How a port picks the queue it sends from next. Strict: the highest eligible queue (7 first),
// 802.1Q 8.6.8.1. Weighted: deficit round robin over the eligible queues, each queue's quantum
// its weight times 1024 bytes (a weighted-fair share of the port's rate while backlogged).
enum class SwitchScheduler : std::uint8_t { kStrict, kWeighted };

// The default DSCP -> priority map: DSCP / 8 (the class selector; DSCP 26 is priority 3).
[[nodiscard]] constexpr std::array<std::uint8_t, 64> dscp_div8_priorities() {
  std::array<std::uint8_t, 64> m{};
  for (std::size_t d = 0; d < m.size(); ++d) m[d] = static_cast<std::uint8_t>(d / 8);
  return m;
}

struct SwitchRoute {
  std::uint32_t prefix = 0;  // IPv4, host order
  std::uint8_t depth = 32;   // prefix length
  std::uint16_t out = 0;     // switch port index (not DPDK port id), or kEcmpRoute
};

// A route to one address, IPv4 or IPv6, by exact match (an rte_hash: a fabric of many switches
// cannot give each an rte_lpm, whose first table alone is 64 MiB).
struct HostRoute {
  std::uint8_t addr[16] = {};  // IPv6, or IPv4-mapped ::ffff:a.b.c.d (RFC 4291 2.5.5.2)
  std::uint16_t out = 0;       // switch port index, or kEcmpRoute
  // With kEcmpRoute: the ECMP group whose live next hops the route uses (a leaf-spine gives each
  // destination leaf its own, since a failed link removes a spine for some destinations only).
  std::uint16_t ecmp_group = 0;
  [[nodiscard]] static HostRoute ipv4(std::uint32_t host_order, std::uint16_t out, std::uint16_t ecmp_group = 0);
  [[nodiscard]] static HostRoute ipv6(const std::uint8_t* addr, std::uint16_t out, std::uint16_t ecmp_group = 0);
};

// At most this many ECMP groups per switch (HostRoute::ecmp_group below it).
inline constexpr std::uint16_t kMaxEcmpGroups = 1024;

// One switch port's own settings where they differ from its switch's (a link's own RED/ECN, PFC
// and delay: LeafSpine's links, docs/fabric-lab.md "Per-link settings"). A field left empty is
// the switch's value. Resolved into the port once at LabSwitch::create, never looked up per frame.
struct SwitchPortSettings {
  // RED/ECN of this egress (LabSwitchConfig::kmin_bytes, kmax_bytes, pmax).
  std::optional<std::uint64_t> kmin_bytes, kmax_bytes;
  std::optional<double> pmax;
  // PFC on this port's link, both ways (802.1Qbb 36.1.3.2: PFC is enabled per port and per
  // priority, and DCBX (802.1Qaz) makes both ends of a link agree). Off: frames arriving on the
  // port are lossy (not counted towards a pause, tail-dropped where their egress is full), the
  // port sends no pause upstream, and pauses it receives are ignored. On needs LabSwitchConfig::pfc
  // (which priorities are lossless stays the switch's). xoff/xon: this ingress' thresholds.
  std::optional<bool> pfc;
  std::optional<std::uint64_t> pfc_xoff_bytes, pfc_xon_bytes;
  // The link's propagation delay out of this port (one direction): frames leaving through it wait
  // this long on top of LabSwitchConfig::delay_us. Like delay_us it is spent in the egress queue,
  // so a delayed frame counts in the queue RED/ECN and tail drop see until it leaves.
  double delay_us = 0;
};

struct LabSwitchConfig {
  std::vector<std::uint16_t> ports;  // DPDK port ids; switch port i is ports[i]
  // Instead of `ports` when not empty: switch port i is frame_ports[i] (an ethdev queue or a ring
  // link's end, engine/lab/frame_port.h).
  std::vector<FramePort> frame_ports;
  std::vector<double> egress_gbps;     // per switch port; 0 or missing = not shaped (the PMD's pace)
  std::vector<SwitchRoute> routes;     // checked first (longest prefix); else MAC learning; else flood
  std::vector<HostRoute> host_routes;  // checked before `routes`
  // Equal-cost next hops of the kEcmpRoute routes, and how a flow picks one (a hash of its
  // 5-tuple: a flow's frames keep one path, so they stay in order).
  std::vector<std::uint16_t> ecmp_ports;
  EcmpHashConfig ecmp;
  // Flood frames no route or learned MAC places. A fabric with more than one path between two
  // switches (leaf-spine) must not: a flood would circle the fabric; such frames are dropped and
  // counted (SwitchPortCounters::unrouted).
  bool flood = true;
  // RED/ECN on the instantaneous egress queue, the DCQCN paper's profile: no mark below Kmin,
  // probability rising linearly to Pmax at Kmax, every ECN-capable frame marked above Kmax.
  // Frames that are not ECN-capable are never marked and only see tail drop.
  std::uint64_t kmin_bytes = 5'000;
  std::uint64_t kmax_bytes = 200'000;
  double pmax = 0.01;
  std::uint64_t buffer_bytes = 1'000'000;          // per egress queue; tail drop beyond (counted)
  std::vector<std::uint64_t> egress_buffer_bytes;  // per switch port; 0 or missing = buffer_bytes
  double delay_us = 0;                             // every frame waits this long in the switch at least
  // How far behind the clock a backlogged shaped egress may fall and still catch up: a poll that
  // comes late sends what the port would have sent meanwhile. 2 µs (a switch with its own
  // lcore); a switch that shares its lcore with endpoints in a process the OS deschedules
  // (droce-coll's lab) needs tens of ms, or a port loses its rate while the process is not
  // running. An idle port banks 2 µs whatever this is, so bursts after idleness stay short.
  double shaper_burst_us = 2;
  // Classification: a tagged frame's priority is its VLAN PCP, an untagged one's
  // dscp_priority[DSCP]; the priority picks the egress queue by priority_queue (default the
  // identity). RoCEv2 CNPs (BTH opcode 0x81) take cnp_priority instead when it is set, so
  // congestion notifications never wait behind the data they are about (what switch vendors'
  // RoCE profiles do with the CNP's own DSCP).
  std::array<std::uint8_t, 64> dscp_priority = dscp_div8_priorities();
  std::array<std::uint8_t, kSwitchClasses> priority_queue = {0, 1, 2, 3, 4, 5, 6, 7};
  std::uint8_t cnp_priority = kCnpByDscp;
  SwitchScheduler scheduler = SwitchScheduler::kStrict;
  std::array<std::uint32_t, kSwitchClasses> queue_weights = {1, 1, 1, 1, 1, 1, 1, 1};  // kWeighted only
  // Lossless: an ingress port whose frames of a lossless priority hold more than xoff bytes in
  // the switch gets a PFC pause for that priority upstream (refreshed while it stays above xon),
  // then XON below xon; received pauses hold that priority's frames only (802.1Qbb 36.1). The
  // lossless priorities are the bits of lossless_priorities, or pfc_priority alone when it is 0.
  // Lossy priorities are neither paused nor pause anyone: their frames tail-drop.
  bool pfc = false;
  std::uint8_t pfc_priority = 3;
  std::uint8_t lossless_priorities = 0;
  std::uint64_t pfc_xoff_bytes = 100'000;
  std::uint64_t pfc_xon_bytes = 50'000;
  std::uint16_t pfc_pause_quanta = 0xFFFF;
  double link_gbps_for_pfc = 10;  // converts pause quanta to time (received and sent)
  // Failure switches (docs/fabric-lab.md has a recipe for each). drop_rule: a deterministic drop
  // at every ingress (DropRule). stuck_ports: ports whose peer is a stuck NIC pausing every
  // lossless priority forever (its egress never drains; counted as one pause received each
  // time the pause begins). pfc_watchdog_ms: a lossless priority held at an egress longer than
  // this stops honouring pauses and drops its frames, queued and arriving, until no pause has
  // come for as long again (vendors' PFC watchdog, "drop" action); 0: off.
  DropRuleConfig drop_rule;
  std::vector<std::uint16_t> stuck_ports;
  double pfc_watchdog_ms = 0;
  // slow_receivers: ports whose peer is a slow receiver, its NIC draining to its host at a
  // fraction of the port's rate (the link rate for PFC when the port is unshaped) and pausing the
  // port's lossless priorities as its buffer of slow_receiver_buffer_bytes fills (SlowReceiverNic:
  // above half of it; resumed at a quarter). Counted as pauses received on the port and as
  // slow_receiver_pauses; needs pfc.
  std::vector<SlowReceiverConfig> slow_receivers;
  std::uint64_t slow_receiver_buffer_bytes = 256'000;
  // Per switch port (missing = the switch's values above): a link's own RED/ECN, PFC and delay.
  std::vector<SwitchPortSettings> port_settings;
  std::uint64_t seed = 1;       // RED's random draws
  rte_mempool* pool = nullptr;  // PFC frames are built here

  // Ok when valid; otherwise kInvalidArgument and one message naming the bad option.
  [[nodiscard]] Status validate() const;
  // Port `port`'s settings, every field filled: its own where port_settings gives one, else the
  // switch's.
  [[nodiscard]] SwitchPortSettings resolved(std::size_t port) const;
  // Ok when port_settings[port] is valid; otherwise kInvalidArgument saying what is wrong.
  [[nodiscard]] Status check_port(std::size_t port) const;
  // Switch ports: frame_ports when given, else ports.
  [[nodiscard]] std::size_t port_count() const { return frame_ports.empty() ? ports.size() : frame_ports.size(); }
  // The lossless priorities as a bit mask (bit p: priority p).
  [[nodiscard]] std::uint8_t lossless_mask() const {
    return lossless_priorities != 0 ? lossless_priorities : static_cast<std::uint8_t>(1u << pfc_priority);
  }
};

struct SwitchPortCounters {
  std::uint64_t rx_frames = 0, rx_bytes = 0;
  std::uint64_t tx_frames = 0, tx_bytes = 0;
  std::uint64_t flooded = 0;      // frames of this ingress sent to every other port
  std::uint64_t unrouted = 0;     // frames of this ingress dropped: no route, no learned MAC, no flooding
  std::uint64_t tail_drops = 0;   // egress queue full
  std::uint64_t tx_drops = 0;     // the PMD refused frames (egress held them too long)
  std::uint64_t ecn_marked = 0;   // frames this egress marked CE
  std::uint64_t queue_bytes = 0;  // egress queue now
  std::uint64_t queue_frames = 0;
  std::uint64_t queue_max_bytes = 0;
  std::uint64_t ingress_bytes = 0;   // bytes of this ingress' lossless priority buffered now
  std::uint64_t pfc_pause_sent = 0;  // pauses (and refreshes) sent upstream from this ingress
  std::uint64_t pfc_resume_sent = 0;
  std::uint64_t pfc_pause_received = 0;  // pauses received on this port: its egress holds
  std::uint64_t pfc_paused_ns = 0;       // time this egress was held by received pauses (sum over priorities)
  std::uint64_t rule_drops = 0;          // frames of this ingress the drop rule dropped
  std::uint64_t pfc_watchdog_trips = 0;  // this egress' watchdog stopped honouring a priority's pauses
  std::uint64_t pfc_watchdog_restores = 0;
  std::uint64_t pfc_watchdog_drops = 0;  // frames it dropped meanwhile (queued and arriving)
  // A slow receiver on this port (LabSwitchConfig::slow_receivers): the XOFFs and XONs its NIC
  // sent, and the most its buffer held.
  std::uint64_t slow_receiver_pauses = 0, slow_receiver_resumes = 0, slow_receiver_max_bytes = 0;
  // Link down (LabSwitch::set_port_down): frames queued at this egress when it went down and
  // frames routed to it while down (link_down_drops); frames that arrived on it while down, on
  // the wire as it failed (link_down_lost: the peer counted them sent).
  std::uint64_t link_down_drops = 0;
  std::uint64_t link_down_lost = 0;
  // ECMP resilient re-hash, counted on the next hop the flow's hash chose: frames sent to another
  // live next hop because this one was not live for their group, and the distinct flows (5-tuple)
  // among them over the run (rehash_untracked: frames of flows the switch's table had no room to
  // remember, so rehashed_flows may be short by those flows).
  std::uint64_t rehashed_frames = 0;
  std::uint64_t rehashed_flows = 0;
  std::uint64_t rehash_untracked = 0;
  // The same by class: egress queue q's frames, drops and bytes now; priority p's pauses.
  std::array<std::uint64_t, kSwitchClasses> queue_tx_frames{};
  std::array<std::uint64_t, kSwitchClasses> queue_tail_drops{};
  std::array<std::uint64_t, kSwitchClasses> queue_class_bytes{};
  std::array<std::uint64_t, kSwitchClasses> prio_ingress_bytes{};
  std::array<std::uint64_t, kSwitchClasses> prio_pause_sent{};
  std::array<std::uint64_t, kSwitchClasses> prio_pause_received{};
  std::array<std::uint64_t, kSwitchClasses> prio_paused_ns{};
};

class LabSwitch {
 public:
  [[nodiscard]] static std::unique_ptr<LabSwitch> create(const LabSwitchConfig& cfg, Status& err);
  ~LabSwitch();
  LabSwitch(const LabSwitch&) = delete;
  LabSwitch& operator=(const LabSwitch&) = delete;

  // One round over every port: receive, classify, enqueue (mark/drop), PFC, transmit what the
  // shaper allows.
  void poll(std::uint64_t now_tsc);
  // Frees every queued frame.
  void finish();

  [[nodiscard]] std::size_t ports() const { return q_.size(); }
  [[nodiscard]] const SwitchPortCounters& counters(std::size_t port) const { return q_[port].c; }
  // The priorities whose pauses hold this egress now (bit p: priority p), a stuck peer's included;
  // counters' pfc_paused_ns adds a pause's time only when it ends.
  [[nodiscard]] std::uint8_t paused_priorities(std::size_t port) const { return q_[port].paused; }
  // The drop rule's counters (zero when there is none).
  [[nodiscard]] DropRuleCounters drop_rule_counters() const {
    return drop_rule_ != nullptr ? drop_rule_->counters() : DropRuleCounters{};
  }
  // The link on `port` fails (down) or comes back. Going down drops every frame queued there
  // (link_down_drops) and forgets the port's PFC state both ways (a link that fails loses its
  // pauses); while down, frames routed to it and frames arriving on it are dropped and counted.
  // ECMP is not changed here: set_ecmp_live says which next hops a group may use.
  void set_port_down(std::uint16_t port, bool down, std::uint64_t now_tsc);
  [[nodiscard]] bool port_down(std::uint16_t port) const { return q_[port].down; }
  // Which of ecmp_ports (bit i: ecmp_ports[i]) group `group` may use; every one at creation.
  // Resilient hashing: a flow keeps the next hop its hash picks among all of ecmp_ports while
  // that one is live; a flow whose pick is not live goes to one of the live ones (picked by the
  // same hash), so only the dead next hop's flows move; when it is live again they move back. A
  // group with no live next hop drops the frame on the hash's pick (link_down_drops).
  void set_ecmp_live(std::uint16_t group, std::uint64_t live_mask);

 private:
  static constexpr std::uint32_t kNil = 0xFFFFFFFF;
  struct Item {
    rte_mbuf* m;
    std::uint64_t ready_tsc;  // enqueue time + delay
    std::uint32_t bytes;
    std::uint32_t next;  // the next item of its queue, or of the free list
    std::uint16_t ingress;
    std::uint8_t prio;
  };
  // One egress queue: a FIFO linked through the port's item slots.
  struct ClassQueue {
    std::uint32_t head = kNil, tail = kNil, count = 0;
    std::uint64_t bytes = 0;
    std::int64_t deficit = 0;  // kWeighted: bytes it may still send this round
  };
  struct PortState {
    FramePort io;
    double tsc_per_byte = 0;  // shaper: 0 = unshaped
    std::uint64_t next_tx_tsc = 0;
    bool backlogged = false;  // an eligible frame was left queued at the last transmit
    std::vector<Item> items;  // every queue's frames (fixed capacity), linked per queue
    std::uint32_t free_head = kNil;
    std::array<ClassQueue, kSwitchClasses> cq;
    std::uint8_t rr = 0;    // kWeighted: the queue the round is at
    bool credited = false;  // kWeighted: rr's quantum was added this visit
    std::uint64_t buffer_bytes = 0;
    // Its own settings, resolved from LabSwitchConfig::port_settings at create.
    dcqcn::RedProfile red;
    bool pfc_on = false;         // its link runs PFC (and the switch does): it pauses its peer
    bool honours_pauses = true;  // false only when its settings turned PFC off
    std::uint64_t xoff_bytes = 0, xon_bytes = 0;
    std::uint64_t delay_tsc = 0;  // the switch's delay plus the link's
    // PFC state of this port as an ingress (pauses we sent) and as an egress (pauses received),
    // by priority.
    std::uint8_t xoff = 0;    // bit p: priority p paused upstream
    std::uint8_t paused = 0;  // bit p: priority p held here
    std::array<std::uint64_t, kSwitchClasses> refresh_tsc{};
    std::array<std::uint64_t, kSwitchClasses> paused_until_tsc{};
    std::array<std::uint64_t, kSwitchClasses> paused_since_tsc{};
    bool stuck = false;         // its peer pauses every lossless priority forever
    std::uint8_t watchdog = 0;  // bit p: the watchdog ignores priority p's pauses and drops its frames
    std::array<std::uint64_t, kSwitchClasses> last_pause_tsc{};  // when a pause for p last came
    bool down = false;                                           // its link failed (set_port_down)
    std::unique_ptr<SlowReceiverNic> slow;                       // its peer is a slow receiver
    bool slow_holding = false;                                   // that NIC's pause holds us
    SwitchPortCounters c;
  };
  LabSwitch() = default;
  void receive(std::uint16_t in, rte_mbuf* m, std::uint64_t now_tsc);
  void enqueue(std::uint16_t in, std::uint16_t out, rte_mbuf* m, std::uint64_t now_tsc);
  void transmit(PortState& p, std::uint64_t now_tsc);
  // A slow receiver's port: its NIC drains to the host, then pauses or resumes the port.
  void slow_receiver_step(PortState& p, std::uint64_t now_tsc);
  // The queue the scheduler sends from next, or -1 when no queue has an eligible head (empty,
  // delayed, or its priority paused).
  int pick(PortState& p, std::uint64_t now_tsc);
  int pick_weighted(PortState& p, std::uint64_t now_tsc);
  [[nodiscard]] bool eligible(const PortState& p, std::uint32_t q, std::uint64_t now_tsc) const;
  void push_front(PortState& p, std::uint32_t q, std::uint32_t slot);
  void end_pause(PortState& p, std::uint32_t prio, std::uint64_t at_tsc);
  void on_pfc(PortState& p, const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_tsc);
  void pause(PortState& p, std::uint32_t prio, std::uint64_t until_tsc, std::uint64_t now_tsc);
  void watchdog_check(PortState& p, std::uint64_t now_tsc);
  // Frees every queued frame of priority `prio` (the watchdog's drop action).
  void flush_priority(PortState& p, std::uint32_t prio);
  void pfc_check(std::uint16_t in, std::uint64_t now_tsc);
  void send_pfc(PortState& p, std::uint32_t prio, std::uint16_t quanta);
  [[nodiscard]] std::uint8_t priority_of(const std::uint8_t* f, std::uint32_t len) const;
  // The route's port for an IP frame (host routes, then prefixes; ECMP resolved), or false when
  // no route covers it. A frame whose ECMP group has no live next hop gets out = kEcmpRoute
  // (dropped by the caller on the hash's pick, in `*dead_pick`).
  bool route(const std::uint8_t* f, std::uint32_t len, std::uint16_t ether_type, std::uint32_t l3, std::uint16_t& out,
             std::uint16_t& dead_pick);
  // The table of re-hashed flows (lab_switch_failover.cc), made at creation when ECMP is in use.
  [[nodiscard]] Status make_rehash_table(unsigned id);
  // The ECMP choice for a frame of group `group` (resilient: see set_ecmp_live).
  bool ecmp_route(const std::uint8_t* f, std::uint32_t len, std::uint16_t group, std::uint16_t& out,
                  std::uint16_t& dead_pick);
  // Drops every frame queued at port p (its link went down).
  void flush_port(PortState& p);
  bool learn_lookup(const std::uint8_t* dst, std::uint16_t& out) const;
  void learn(const std::uint8_t* src, std::uint16_t in);
  void released(const Item& it);
  [[nodiscard]] bool lossless(std::uint8_t prio) const { return cfg_.pfc && ((lossless_ >> prio) & 1u) != 0; }
  // A frame of `prio` that arrived on `in` is lossless: counted towards in's pauses.
  [[nodiscard]] bool lossless_from(std::uint16_t in, std::uint8_t prio) const {
    return q_[in].pfc_on && lossless(prio);
  }

  LabSwitchConfig cfg_;
  std::vector<PortState> q_;
  rte_lpm* lpm_ = nullptr;
  rte_hash* hosts_ = nullptr;
  rte_hash* macs_ = nullptr;
  std::vector<std::uint16_t> mac_port_;  // by hash slot
  std::uint64_t tsc_hz_ = 1;
  std::uint64_t shaper_credit_tsc_ = 0;
  std::uint8_t lossless_ = 0;       // cfg_.lossless_mask()
  std::uint64_t watchdog_tsc_ = 0;  // 0: no watchdog
  std::unique_ptr<DropRule> drop_rule_;
  std::vector<std::uint64_t> ecmp_live_;  // by group: live next hops (bits of ecmp_ports)
  rte_hash* rehashed_ = nullptr;          // the flows ECMP moved off their pick (distinct, over the run)
  std::mt19937_64 rng_;                   // RED draws, seeded: a run is repeatable for the same traffic
  std::uint8_t switch_mac_[6] = {0x02, 0x00, 0x00, 0x00, 0x5A, 0x01};
};

}  // namespace droce::engine
