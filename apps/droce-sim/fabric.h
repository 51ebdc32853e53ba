// Fabric simulation with PFC: hosts and switches joined by links, per-egress RED/ECN queues, and
// IEEE 802.1Qbb pause/resume between neighbours — the dumbbell made lossless, and the two-hop
// incast where pauses spread to a flow that never crosses the congested port.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-sim/dumbbell.h"

namespace droce::sim {

enum class Topology : std::uint8_t {
  kDumbbell,  // flows H0..Hn-1 -> S1 -> R
  kTwoHop,    // incast H0..Hn-1 -> S1 -> S2 -> R, plus an innocent flow I -> S1 -> S2 -> R2
};

struct FabricConfig {
  SimConfig base;  // flows, rates, marking, buffer, DCQCN, seed, sampling
  Topology topology = Topology::kTwoHop;
  bool pfc = true;
  // An ingress port holding more than xoff bytes pauses its upstream neighbour; below xon it
  // resumes it. Pauses are modelled as XOFF until XON (the limit of maximum-quanta pauses
  // refreshed before they expire), each travelling one link delay.
  // Set XOFF above the marking's Kmax so ECN acts first; below it, PFC fires before DCQCN hears
  // of the congestion. The switch buffer is then shared, accounted per ingress.
  std::uint64_t xoff_bytes = 300'000;
  std::uint64_t xon_bytes = 250'000;

  // Ok when valid; otherwise kInvalidArgument and a message naming the bad option.
  [[nodiscard]] Status validate() const;
};

struct FabricResult {
  SimResult sim;                  // flows (incast first, then the innocent flow), queues at the bottleneck
  double innocent_gbps = -1;      // the two-hop innocent flow's throughput (last half); -1 without one
  std::uint64_t pauses_sent = 0;  // XOFF transitions over all switch ingress ports
  std::uint64_t pauses_s1 = 0, pauses_s2 = 0;
  std::vector<double> series_innocent_gbps;       // per sample (two-hop)
  std::vector<double> series_uplink_queue_bytes;  // S1 -> S2 egress (two-hop)
  std::vector<std::uint64_t> series_pauses;       // cumulative pauses sent, per sample
  std::vector<double> host_paused_fraction;       // per sender: time its NIC was paused / duration
};

[[nodiscard]] FabricResult run_fabric(const FabricConfig& cfg);

}  // namespace droce::sim
