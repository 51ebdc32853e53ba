// Forwarder: the engine's raw rx -> tx loop (one rx queue to one tx queue), the datapath baseline.
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdint>

#include "engine/core/counters.h"
#include "engine/core/tx_batch.h"

namespace droce::engine {

// What dpdk-testpmd's io forwarding does, in the engine's own loop: receive a burst only when
// the TX backlog has room for it (back-pressure stays in the RX ring instead of dropping), push,
// one tx_burst, keep the rest. Counts packets on both queues.
class Forwarder {
 public:
  Forwarder(std::uint16_t rx_port, std::uint16_t rx_queue, std::uint16_t tx_port, std::uint16_t tx_queue,
            QueueCounters& rx_counters, QueueCounters& tx_counters)
      : rx_port_(rx_port),
        rx_queue_(rx_queue),
        tx_port_(tx_port),
        tx_queue_(tx_queue),
        rxc_(rx_counters),
        txc_(tx_counters) {}

  void poll(std::uint64_t /*now_tsc*/) {
    if (batch_.room() >= kBurst) {
      // Straight into the backlog: no per-frame work at all, as testpmd's io mode. Byte counts
      // come from the PMD's own ethdev stats (rte_eth_stats), reported in the JSON.
      const std::uint16_t n = rte_eth_rx_burst(rx_port_, rx_queue_, batch_.tail(), kBurst);
      batch_.commit(n);
      rxc_.rx_packets += n;
      rxc_.rx_bursts += n != 0;
    }
    if (!batch_.empty()) {
      const std::uint16_t before = batch_.size();
      const std::uint16_t sent = batch_.flush(tx_port_, tx_queue_);
      txc_.tx_packets += sent;
      txc_.tx_deferred += static_cast<std::uint64_t>(before - sent);
    }
  }

  void finish() { txc_.tx_backlog_drops += batch_.drop_all(); }

  // Inject `n` copies of a frame (testpmd's --tx-first) so that a loop topology has traffic.
  std::uint16_t inject(rte_mbuf* const* pkts, std::uint16_t n) {
    std::uint16_t pushed = 0;
    for (; pushed < n && batch_.push(pkts[pushed]); ++pushed) {
    }
    return pushed;
  }

 private:
  static constexpr std::uint16_t kBurst = 32;
  std::uint16_t rx_port_, rx_queue_, tx_port_, tx_queue_;
  QueueCounters& rxc_;
  QueueCounters& txc_;
  TxBatch<512, /*kTrackBytes=*/false> batch_;
};

}  // namespace droce::engine
