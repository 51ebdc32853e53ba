// LinkImpairment: lab impairment at a port's receive side — FrameImpairment's loss, loss bursts,
// duplication and reordering installed as a DPDK RX callback, so the transport above never knows
// it is there.
#pragma once

#include <rte_ethdev.h>

#include <cstdint>
#include <memory>

#include "engine/core/status.h"
#include "engine/lab/frame_impairment.h"

namespace droce::engine {

class LinkImpairment {
 public:
  // Installs the callback on (port, queue). `copy_pool` provides the duplicates.
  [[nodiscard]] static std::unique_ptr<LinkImpairment> attach(std::uint16_t port, std::uint16_t queue,
                                                              const ImpairmentConfig& cfg, rte_mempool* copy_pool,
                                                              Status& err);
  // Removes the callback (call from the thread that polls the queue, or when it is stopped) and
  // frees a frame still held back.
  ~LinkImpairment();
  LinkImpairment(const LinkImpairment&) = delete;
  LinkImpairment& operator=(const LinkImpairment&) = delete;

  [[nodiscard]] const ImpairmentCounters& counters() const { return imp_.counters(); }

 private:
  LinkImpairment(std::uint16_t port, std::uint16_t queue, const ImpairmentConfig& cfg, rte_mempool* pool)
      : port_(port), queue_(queue), imp_(cfg, pool) {}
  static std::uint16_t on_rx(std::uint16_t port, std::uint16_t queue, rte_mbuf* pkts[], std::uint16_t n,
                             std::uint16_t max, void* self);

  std::uint16_t port_, queue_;
  FrameImpairment imp_;
  const rte_eth_rxtx_callback* cb_ = nullptr;
};

}  // namespace droce::engine
