// LabSwitch: a store-and-forward Ethernet switch between DPDK ports for RoCE labs — IPv4 routes
// and MAC learning, a shaped egress FIFO per port with RED/ECN marking and tail drop, a fixed
// delay, and lossless operation with IEEE 802.1Qbb PFC. The core of apps/droce-switch (between
// ethdevs) and of in-process labs (between ring links: FramePort).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/lab/frame_port.h"
#include "protocols/dcqcn/red_marking.h"

struct rte_lpm;
struct rte_hash;

namespace droce::engine {

struct SwitchRoute {
  std::uint32_t prefix = 0;  // IPv4, host order
  std::uint8_t depth = 32;   // prefix length
  std::uint16_t out = 0;     // switch port index (not DPDK port id)
};

struct LabSwitchConfig {
  std::vector<std::uint16_t> ports;  // DPDK port ids; switch port i is ports[i]
  // Instead of `ports` when not empty: switch port i is frame_ports[i] (an ethdev queue or a ring
  // link's end, engine/lab/frame_port.h).
  std::vector<FramePort> frame_ports;
  std::vector<double> egress_gbps;  // per switch port; 0 or missing = not shaped (the PMD's pace)
  std::vector<SwitchRoute> routes;  // checked first (longest prefix); else MAC learning; else flood
  // RED/ECN on the instantaneous egress queue, the DCQCN paper's profile: no mark below Kmin,
  // probability rising linearly to Pmax at Kmax, every ECN-capable frame marked above Kmax.
  // Frames that are not ECN-capable are never marked and only see tail drop.
  std::uint64_t kmin_bytes = 5'000;
  std::uint64_t kmax_bytes = 200'000;
  double pmax = 0.01;
  std::uint64_t buffer_bytes = 1'000'000;  // per egress queue; tail drop beyond (counted)
  double delay_us = 0;                     // every frame waits this long in the switch at least
  // How far behind the clock a backlogged shaped egress may fall and still catch up: a poll that
  // comes late sends what the port would have sent meanwhile. 2 µs (a switch with its own
  // lcore); a switch that shares its lcore with endpoints in a process the OS deschedules
  // (droce-coll's lab) needs tens of ms, or a port loses its rate while the process is not
  // running. An idle port banks 2 µs whatever this is, so bursts after idleness stay short.
  double shaper_burst_us = 2;
  // Lossless: an ingress port whose frames of `pfc_priority` hold more than xoff bytes in the
  // switch gets a PFC pause upstream (refreshed while it stays above xon), then XON below xon.
  bool pfc = false;
  std::uint8_t pfc_priority = 3;
  std::uint64_t pfc_xoff_bytes = 100'000;
  std::uint64_t pfc_xon_bytes = 50'000;
  std::uint16_t pfc_pause_quanta = 0xFFFF;
  double link_gbps_for_pfc = 10;  // converts pause quanta to time (received and sent)
  std::uint64_t seed = 1;         // RED's random draws
  rte_mempool* pool = nullptr;    // PFC frames are built here

  // Ok when valid; otherwise kInvalidArgument and one message naming the bad option.
  [[nodiscard]] Status validate() const;
  // Switch ports: frame_ports when given, else ports.
  [[nodiscard]] std::size_t port_count() const { return frame_ports.empty() ? ports.size() : frame_ports.size(); }
};

struct SwitchPortCounters {
  std::uint64_t rx_frames = 0, rx_bytes = 0;
  std::uint64_t tx_frames = 0, tx_bytes = 0;
  std::uint64_t flooded = 0;      // frames of this ingress sent to every other port
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
  std::uint64_t pfc_paused_ns = 0;       // time this egress was held by received pauses
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

 private:
  struct Item {
    rte_mbuf* m;
    std::uint64_t ready_tsc;  // enqueue time + delay
    std::uint32_t bytes;
    std::uint16_t ingress;
    std::uint8_t prio;
  };
  struct PortState {
    FramePort io;
    double tsc_per_byte = 0;  // shaper: 0 = unshaped
    std::uint64_t next_tx_tsc = 0;
    bool backlogged = false;  // frames were left queued at the last transmit
    std::vector<Item> ring;   // egress FIFO (fixed capacity)
    std::uint32_t head = 0, count = 0;
    // PFC state of this port as an ingress (pauses we sent) and as an egress (pauses received).
    bool xoff = false;
    std::uint64_t refresh_tsc = 0;
    std::uint64_t paused_until_tsc = 0;
    std::uint64_t paused_since_tsc = 0;
    bool paused = false;
    SwitchPortCounters c;
  };
  LabSwitch() = default;
  void receive(std::uint16_t in, rte_mbuf* m, std::uint64_t now_tsc);
  void enqueue(std::uint16_t in, std::uint16_t out, rte_mbuf* m, std::uint64_t now_tsc);
  void transmit(PortState& p, std::uint64_t now_tsc);
  void on_pfc(PortState& p, const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_tsc);
  void pfc_check(std::uint16_t in, std::uint64_t now_tsc);
  void send_pfc(PortState& p, std::uint16_t quanta);
  bool learn_lookup(const std::uint8_t* dst, std::uint16_t& out) const;
  void learn(const std::uint8_t* src, std::uint16_t in);
  void released(const Item& it);

  LabSwitchConfig cfg_;
  std::vector<PortState> q_;
  rte_lpm* lpm_ = nullptr;
  rte_hash* macs_ = nullptr;
  std::vector<std::uint16_t> mac_port_;  // by hash slot
  std::uint64_t tsc_hz_ = 1;
  std::uint64_t delay_tsc_ = 0;
  std::uint64_t shaper_credit_tsc_ = 0;
  dcqcn::RedProfile red_;
  std::mt19937_64 rng_;  // RED draws, seeded: a run is repeatable for the same traffic
  std::uint8_t switch_mac_[6] = {0x02, 0x00, 0x00, 0x00, 0x5A, 0x01};
};

}  // namespace droce::engine
