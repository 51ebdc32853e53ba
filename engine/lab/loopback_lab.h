// LoopbackLab: two RC endpoints in one process, joined by net_ring ports through a relay that can
// drop frames (lab impairment the transport never sees) — droce-gen's default lab.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "engine/core/memory_region.h"
#include "engine/core/port.h"
#include "engine/core/status.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/lab/ring_link.h"

struct rte_ring;

namespace droce::engine {

struct LoopbackLabConfig {
  rte_mempool* pool = nullptr;
  double loss = 0;  // fraction of frames the relay drops, each direction
  std::uint64_t seed = 1;
  std::uint32_t max_qps = 64;
  PcapngCapture* capture = nullptr;  // on endpoint A's port: what A sends and what reaches it
  // Congestion and flow control of both endpoints (as in EndpointConfig).
  EndpointDcqcn dcqcn;
  EndpointPfc pfc;
};

class LoopbackLab {
 public:
  [[nodiscard]] static std::unique_ptr<LoopbackLab> create(const LoopbackLabConfig& cfg, Status& err);
  ~LoopbackLab();

  RcEndpoint& a() { return *a_; }
  RcEndpoint& b() { return *b_; }
  MemoryRegistry& memory_a() { return mem_a_; }
  MemoryRegistry& memory_b() { return mem_b_; }
  [[nodiscard]] static wire::L2L3Address address(int side);  // 10.0.0.1 / 10.0.0.2
  [[nodiscard]] std::uint64_t relay_dropped() const { return dropped_; }
  [[nodiscard]] std::uint16_t port_id_a() const;  // endpoint A's port (its RX takes impairment)
  [[nodiscard]] std::uint16_t port_id_b() const;
  [[nodiscard]] std::uint64_t relay_forwarded() const { return forwarded_; }

  // One round: endpoint A, relay, endpoint B, relay.
  void poll(std::uint64_t now_tsc);
  void finish();

 private:
  LoopbackLab() = default;
  void pump(std::uint16_t from, std::uint16_t to);
  LoopbackLabConfig cfg_;
  std::unique_ptr<RingLink> links_[2];  // A <-> relay, relay <-> B
  MemoryRegistry mem_a_, mem_b_;
  std::unique_ptr<RcEndpoint> a_, b_;
  std::mt19937_64 rng_;
  std::uint64_t dropped_ = 0, forwarded_ = 0;
};

}  // namespace droce::engine
