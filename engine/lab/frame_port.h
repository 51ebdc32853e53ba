// FramePort: a port of the lab switch — an ethdev queue (droce-switch between real ports) or one
// end of an in-process ring link (RingEnd) — behind one burst interface, decided by one branch
// per burst (no virtual call per frame).
#pragma once

#include <rte_ethdev.h>

#include <cstdint>

#include "engine/lab/ring_fabric.h"

namespace droce::engine {

class FramePort {
 public:
  FramePort() = default;
  [[nodiscard]] static FramePort ethdev(std::uint16_t port_id, std::uint16_t queue = 0) {
    FramePort p;
    p.port_id_ = port_id;
    p.queue_ = queue;
    return p;
  }
  [[nodiscard]] static FramePort ring(RingEnd* end) {
    FramePort p;
    p.ring_ = end;
    return p;
  }

  std::uint16_t rx_burst(rte_mbuf** pkts, std::uint16_t max) {
    return ring_ != nullptr ? ring_->receive(pkts, max) : rte_eth_rx_burst(port_id_, queue_, pkts, max);
  }
  std::uint16_t tx_burst(rte_mbuf** pkts, std::uint16_t n) {
    return ring_ != nullptr ? ring_->send(pkts, n) : rte_eth_tx_burst(port_id_, queue_, pkts, n);
  }
  [[nodiscard]] bool is_ring() const { return ring_ != nullptr; }
  [[nodiscard]] std::uint16_t port_id() const { return port_id_; }

 private:
  RingEnd* ring_ = nullptr;
  std::uint16_t port_id_ = 0;
  std::uint16_t queue_ = 0;
};

}  // namespace droce::engine
