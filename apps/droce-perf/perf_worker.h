// droce-perf's per-worker stage: the endpoint a worker polls, the traffic of its share of the QPs
// (perftest's loops, traffic.h), and the figures the main lcore reads while the worker runs.
#pragma once

#include <atomic>
#include <cstdint>

#include "apps/droce-perf/options.h"
#include "apps/droce-perf/report.h"
#include "apps/droce-perf/traffic.h"
#include "engine/core/memory_region.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/exchange/perftest_exchange.h"

namespace droce::perf {

// Single-threaded: everything but the published figures runs on the worker's lcore. The main
// lcore (control: the TCP exchange, the stall watch, the report) reads only rx_frames(), a
// relaxed atomic: a figure for a timeout or a report, not a handoff of data.
class PerfWorker {
 public:
  PerfWorker(const Options& o, engine::RcEndpoint& ep, engine::MemoryRegistry& memory,
             const engine::PerftestPreamble& pre, BufferStorage& storage)
      : ep_(ep), traffic_(o, ep, memory, pre, storage) {}
  PerfWorker(const PerfWorker&) = delete;
  PerfWorker& operator=(const PerfWorker&) = delete;

  [[nodiscard]] Traffic& traffic() { return traffic_; }
  [[nodiscard]] const Traffic& traffic() const { return traffic_; }
  [[nodiscard]] engine::RcEndpoint& endpoint() { return ep_; }

  // One iteration while no size runs (a TCP step waits for the peer): the transport keeps going
  // (ACKs, a READ responder's answers, retransmissions).
  void poll(std::uint64_t now_tsc);
  // One size of this side's test on this worker's QPs (Traffic::run_bw / run_lat).
  [[nodiscard]] engine::Status run_bw(std::uint32_t size, BwRow& row);
  [[nodiscard]] engine::Status run_lat(std::uint32_t size, LatRow& row);
  void finish() { ep_.finish(); }

  // Frames the endpoint has received, as of the worker's latest publication.
  [[nodiscard]] std::uint64_t rx_frames() const { return rx_frames_.load(std::memory_order_relaxed); }

 private:
  void publish() { rx_frames_.store(ep_.counters().rx_frames, std::memory_order_relaxed); }

  engine::RcEndpoint& ep_;
  Traffic traffic_;
  std::atomic<std::uint64_t> rx_frames_{0};
};

}  // namespace droce::perf
