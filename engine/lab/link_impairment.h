// LinkImpairment: lab impairment of one side of a link — FrameImpairment's drop rule, loss, loss
// bursts, duplication and reordering — either at a port queue's receive side, installed as a DPDK RX
// callback, or over what an endpoint sends, installed as its TX batch's filter (see TxFilter for
// why not an ethdev TX callback). The transport above never knows it is there.
#pragma once

#include <rte_ethdev.h>

#include <cstdint>
#include <memory>

#include "engine/core/status.h"
#include "engine/lab/frame_impairment.h"

namespace droce::engine {

class RcEndpoint;

// Where an impairment acts: on the frames a process receives, or on those it sends.
enum class ImpairedSide : std::uint8_t { kReceive, kSend };

class LinkImpairment {
 public:
  // Installs the callback on (port, queue). `copy_pool` provides the duplicates.
  [[nodiscard]] static std::unique_ptr<LinkImpairment> attach(std::uint16_t port, std::uint16_t queue,
                                                              const ImpairmentConfig& cfg, rte_mempool* copy_pool,
                                                              Status& err);
  // Impairs what `ep` sends (its TX batch's filter). `ep` outlives the impairment, and nothing
  // polls it while either is created or destroyed.
  [[nodiscard]] static std::unique_ptr<LinkImpairment> attach_send(RcEndpoint& ep, const ImpairmentConfig& cfg,
                                                                   rte_mempool* copy_pool, Status& err);
  // Removes the callback or the filter (call from the thread that polls the queue, or when it is
  // stopped) and frees a frame still held back.
  ~LinkImpairment();
  LinkImpairment(const LinkImpairment&) = delete;
  LinkImpairment& operator=(const LinkImpairment&) = delete;

  [[nodiscard]] const ImpairmentCounters& counters() const { return imp_.counters(); }
  [[nodiscard]] ImpairedSide side() const { return ep_ != nullptr ? ImpairedSide::kSend : ImpairedSide::kReceive; }

 private:
  LinkImpairment(std::uint16_t port, std::uint16_t queue, const ImpairmentConfig& cfg, rte_mempool* pool)
      : port_(port), queue_(queue), imp_(cfg, pool) {}
  [[nodiscard]] static Status check(const ImpairmentConfig& cfg, const rte_mempool* copy_pool);
  static std::uint16_t on_rx(std::uint16_t port, std::uint16_t queue, rte_mbuf* pkts[], std::uint16_t n,
                             std::uint16_t max, void* self);
  static std::uint16_t on_tx(void* self, rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max);

  std::uint16_t port_, queue_;
  FrameImpairment imp_;
  const rte_eth_rxtx_callback* cb_ = nullptr;
  RcEndpoint* ep_ = nullptr;  // the endpoint whose sending this impairs (kSend)
};

}  // namespace droce::engine
