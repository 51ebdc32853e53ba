// CollLab: droce-coll's fabric in one process — N rank endpoints, each on its own ring link to one
// port of a LabSwitch (droce-switch's core: rate, buffer, RED/ECN, PFC), impairment on each link
// towards its rank, and taps at both ends of every link. The wiring is RingFabric's topology
// description: a star (one switch) or a leaf-spine (engine/lab/leaf_spine.h: leaves of N / L
// ranks, S spines, ECMP); a rank sees only its endpoint.
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/leaf_spine.h>
#include <droce/engine/lab/link_spec.h>
#include <droce/engine/lab/ring_fabric.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "apps/droce-coll/queue_series.h"

namespace droce::coll {

struct LabConfig {
  std::uint32_t ranks = 2;
  std::uint32_t qps_per_rank = 64;  // each endpoint's QP table
  rte_mempool* pool = nullptr;
  // Ports, routes and pool are filled in; its stuck_ports and slow_receivers name ranks.
  engine::LabSwitchConfig sw;
  // 0: one switch; else a leaf-spine of `leaves` leaves (ranks / leaves ranks each) and `spines`
  // spines, every switch configured as `sw`, each leaf-spine link shaped to uplink_gbps both ways.
  std::uint32_t leaves = 0, spines = 0;
  double uplink_gbps = 0;
  engine::EcmpHashConfig ecmp;
  std::vector<engine::LinkFailure> link_failures;  // leaf-spine: their clock starts at start_link_clock
  std::vector<engine::LinkSpec> links;             // leaf-spine: links with their own settings
  engine::ImpairmentConfig toward_rank;            // every link, towards its rank
  std::uint8_t dscp = 26;
  engine::EndpointDcqcn dcqcn;
  engine::EndpointPfc pfc;
  std::uint32_t ring_slots = 1024;
  double sample_ms = 1;  // the queue series' period (QueueSeries); 0: none
  // Taps (FrameTap): what each rank sends, seen as its switch port takes it (`ingress`, on the
  // switch's thread), and what the switch sends each rank, seen as the rank takes it (`egress`,
  // on the rank's thread, before the link's impairment). ctx arrays are indexed by rank.
  engine::FrameTap ingress_tap = nullptr;
  std::vector<void*> ingress_ctx;
  engine::FrameTap egress_tap = nullptr;
  std::vector<void*> egress_ctx;
};

class CollLab {
 public:
  [[nodiscard]] static std::unique_ptr<CollLab> create(const LabConfig& cfg, engine::Status& err);
  ~CollLab();
  CollLab(const CollLab&) = delete;
  CollLab& operator=(const CollLab&) = delete;

  // Rank r's address: 10.0.(r / 200).(r % 200 + 1), MAC 02:00:00:00:(r / 200):(r % 200 + 1).
  [[nodiscard]] static wire::L2L3Address address(std::uint32_t rank);
  [[nodiscard]] engine::RcEndpoint& endpoint(std::uint32_t r) { return *eps_[r]; }
  [[nodiscard]] const engine::RcEndpoint& endpoint(std::uint32_t r) const { return *eps_[r]; }
  [[nodiscard]] engine::MemoryRegistry& memory(std::uint32_t r) { return *mem_[r]; }
  // The switch port rank r is on (the star's switch, or its leaf).
  [[nodiscard]] const engine::SwitchPortCounters& rank_port(std::uint32_t r) const {
    return leafspine_ ? leafspine_->endpoint_port(r) : sw_->counters(r);
  }
  // Link r is rank r's in both topologies.
  [[nodiscard]] const engine::RingFabric& links() const { return *rings_; }
  // The leaf-spine links (none for a star).
  [[nodiscard]] std::vector<engine::FabricLinkCounters> fabric_links() const {
    return leafspine_ ? leafspine_->fabric_links() : std::vector<engine::FabricLinkCounters>{};
  }
  [[nodiscard]] const LabConfig& config() const { return cfg_; }
  // Frames for rank r from its link (through the link's impairment).
  std::uint16_t receive(std::uint32_t r, rte_mbuf** pkts, std::uint16_t max) {
    return rings_->end(r, 0).receive(pkts, max);
  }
  void poll_switch(std::uint64_t now_tsc) {
    if (leafspine_)
      leafspine_->poll(now_tsc);
    else
      sw_->poll(now_tsc);
    series_.sample(now_tsc, sw_.get(), leafspine_.get());
  }
  // The origin of the link failures' times and of the queue series (on the thread that polls the
  // switch; once: later calls change nothing, so the schedule runs once over the whole run).
  void start_link_clock(std::uint64_t now_tsc) {
    if (leafspine_ && !link_clock_started_) leafspine_->start_clock(now_tsc);
    series_.start(now_tsc);
    link_clock_started_ = true;
  }
  // Every queue over the timed run (LabConfig::sample_ms); read once the pollers stopped.
  [[nodiscard]] const QueueSeries& queue_series() const { return series_; }
  // Shutdown after the pollers stopped: queued frames freed, endpoints finished.
  void finish();

 private:
  CollLab() = default;
  LabConfig cfg_;
  [[nodiscard]] engine::Status build_star();
  [[nodiscard]] engine::Status build_leafspine();
  std::unique_ptr<engine::RingFabric> fabric_;  // the star's
  std::unique_ptr<engine::LabSwitch> sw_;
  std::unique_ptr<engine::LeafSpine> leafspine_;
  engine::RingFabric* rings_ = nullptr;  // the star's or the leaf-spine's
  bool link_clock_started_ = false;
  QueueSeries series_;
  std::vector<std::unique_ptr<engine::MemoryRegistry>> mem_;
  std::vector<std::unique_ptr<engine::RcEndpoint>> eps_;
};

}  // namespace droce::coll
