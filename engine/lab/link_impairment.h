// LinkImpairment: lab impairment at a port's receive side — random loss, loss bursts, duplication
// and reordering — as a DPDK RX callback, so the transport above never knows it is there.
#pragma once

#include <rte_ethdev.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "engine/core/status.h"

namespace droce::engine {

struct ImpairmentConfig {
  double loss = 0;                 // each frame dropped with this probability
  double burst_start = 0;          // probability per frame that a loss burst starts here
  std::uint32_t burst_frames = 0;  // frames a burst drops in a row
  double duplicate = 0;            // each surviving frame delivered twice with this probability
  double reorder = 0;              // each surviving frame held back behind later ones with this probability
  std::uint64_t seed = 1;

  [[nodiscard]] bool any() const { return loss > 0 || burst_start > 0 || duplicate > 0 || reorder > 0; }
  // Ok if valid, else kInvalidArgument naming the field that is wrong.
  [[nodiscard]] Status validate() const;
};

struct ImpairmentCounters {
  std::uint64_t frames = 0;
  std::uint64_t dropped = 0;
  std::uint64_t burst_dropped = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;
};

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

  [[nodiscard]] const ImpairmentCounters& counters() const { return c_; }

 private:
  LinkImpairment(std::uint16_t port, std::uint16_t queue, const ImpairmentConfig& cfg, rte_mempool* pool);
  static std::uint16_t on_rx(std::uint16_t port, std::uint16_t queue, rte_mbuf* pkts[], std::uint16_t n,
                             std::uint16_t max, void* self);
  std::uint16_t apply(rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max);
  bool chance(double p) { return p > 0 && uni_(rng_) < p; }

  std::uint16_t port_, queue_;
  ImpairmentConfig cfg_;
  rte_mempool* pool_;
  const rte_eth_rxtx_callback* cb_ = nullptr;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uni_{0.0, 1.0};
  std::uint32_t burst_left_ = 0;
  rte_mbuf* held_ = nullptr;  // one frame overtaken by later ones
  ImpairmentCounters c_;
};

}  // namespace droce::engine
