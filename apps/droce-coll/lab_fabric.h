// CollLab: droce-coll's fabric in one process — N rank endpoints, each on its own ring link to one
// port of a LabSwitch (droce-switch's core: rate, buffer, RED/ECN, PFC), impairment on each link
// towards its rank, and taps at both ends of every link. The wiring is RingFabric's topology
// description (a star today); a rank sees only its endpoint.
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/ring_fabric.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace droce::coll {

struct LabConfig {
  std::uint32_t ranks = 2;
  std::uint32_t qps_per_rank = 64;  // each endpoint's QP table
  rte_mempool* pool = nullptr;
  engine::LabSwitchConfig sw;            // ports, routes and pool are filled in
  engine::ImpairmentConfig toward_rank;  // every link, towards its rank
  std::uint8_t dscp = 26;
  engine::EndpointDcqcn dcqcn;
  engine::EndpointPfc pfc;
  std::uint32_t ring_slots = 1024;
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
  [[nodiscard]] engine::MemoryRegistry& memory(std::uint32_t r) { return *mem_[r]; }
  [[nodiscard]] const engine::LabSwitch& fabric_switch() const { return *sw_; }
  [[nodiscard]] const engine::RingFabric& links() const { return *fabric_; }
  // Frames for rank r from its link (through the link's impairment).
  std::uint16_t receive(std::uint32_t r, rte_mbuf** pkts, std::uint16_t max) {
    return fabric_->end(r, 0).receive(pkts, max);
  }
  void poll_switch(std::uint64_t now_tsc) { sw_->poll(now_tsc); }
  // Shutdown after the pollers stopped: queued frames freed, endpoints finished.
  void finish();

 private:
  CollLab() = default;
  LabConfig cfg_;
  std::unique_ptr<engine::RingFabric> fabric_;
  std::unique_ptr<engine::LabSwitch> sw_;
  std::vector<std::unique_ptr<engine::MemoryRegistry>> mem_;
  std::vector<std::unique_ptr<engine::RcEndpoint>> eps_;
};

}  // namespace droce::coll
