// Per-port and per-queue counters, written only by the queue's worker, read by telemetry/JSON.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "protocols/wire/drop_reason.h"

namespace droce::engine {

// Plain 64-bit counters: one writer (the worker owning the queue), so no atomics on the
// datapath; aligned 64-bit loads from the telemetry thread are never torn on x86-64.
struct alignas(64) QueueCounters {
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t rx_bursts = 0;  // non-empty rx_burst calls
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_deferred = 0;       // frames tx_burst did not take at once (sent on a later iteration)
  std::uint64_t tx_backlog_drops = 0;  // frames dropped because the TX backlog was full
  std::uint64_t rx_drops[wire::kDropReasonCount] = {};
};

struct PortCounters {
  std::uint16_t port_id = 0;
  std::string name;
  std::string driver;
  std::vector<QueueCounters> queues;  // sized once at registration; never reallocated
};

// Process-wide registry (telemetry callbacks carry no user pointer in DPDK 22.11).
class CounterRegistry {
 public:
  static CounterRegistry& instance();

  // Returns the port's counters (stable address). Registering a port id again replaces its
  // name/driver but keeps the storage.
  PortCounters& add_port(std::uint16_t port_id, const std::string& name, const std::string& driver,
                         std::uint16_t queues);
  void remove_port(std::uint16_t port_id);

  // JSON for all ports (or one): per-queue counters, drop reasons by name, and rte_eth_stats.
  [[nodiscard]] std::string json(int only_port = -1) const;
  [[nodiscard]] std::vector<std::uint16_t> port_ids() const;
  // Copies one port's counters; false if the port is not registered.
  [[nodiscard]] bool snapshot(std::uint16_t port_id, PortCounters& out) const;

 private:
  mutable std::mutex mu_;  // control path only: add/remove/json
  std::deque<PortCounters> ports_;
};

}  // namespace droce::engine
