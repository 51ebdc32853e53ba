// droce-perf's per-worker stage: the engine worker it polls, the traffic of its share of the QPs
// (perftest's loops, traffic.h), the commands the main lcore gives it, and the figures the main
// lcore reads while it runs.
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/exchange/perftest_exchange.h>
#include <droce/engine/workers/worker_group.h>

#include <atomic>
#include <cstdint>

#include "apps/droce-perf/options.h"
#include "apps/droce-perf/report.h"
#include "apps/droce-perf/traffic.h"

namespace droce::perf {

// Everything but the mailbox and the published figures runs on the worker's lcore (worker 0's on
// the main lcore, which calls it directly). The main lcore hands a command over by writing it and
// then bumping `command_seq_` (release); the worker answers by storing its result and then
// `done_seq_` (release): the seq/ack pair orders the plain fields. The figures the main lcore
// reads while the worker runs (rx_frames, messages) are relaxed atomics: figures for a stall watch
// or a report, not a handoff of data.
class PerfWorker {
 public:
  enum class Command : std::uint32_t { kNone, kPrepare, kRunBw, kQuit };

  PerfWorker(const Options& o, engine::Worker& worker, engine::MemoryRegistry& memory,
             const engine::PerftestPreamble& pre, BufferStorage& storage, std::uint32_t qps)
      : worker_(worker), traffic_(o, worker, memory, pre, storage, qps) {}
  PerfWorker(const PerfWorker&) = delete;
  PerfWorker& operator=(const PerfWorker&) = delete;

  [[nodiscard]] Traffic& traffic() { return traffic_; }
  [[nodiscard]] const Traffic& traffic() const { return traffic_; }
  [[nodiscard]] engine::Worker& worker() { return worker_; }
  [[nodiscard]] const engine::Worker& worker() const { return worker_; }

  // One iteration while no size runs (a TCP step waits for the peer): the transport keeps going
  // (ACKs, a READ responder's answers, retransmissions, frames steered to other workers).
  void poll(std::uint64_t now_tsc);
  // One size of this side's test on this worker's QPs (Traffic::run_bw / run_lat).
  [[nodiscard]] engine::Status run_bw(std::uint32_t size, BwRow& row);
  [[nodiscard]] engine::Status run_lat(std::uint32_t size, LatRow& row);

  // ---- a worker on its own lcore ----
  // The lcore's loop: poll, and carry out each command as it comes, until kQuit.
  void serve_commands();
  // Main lcore: hands a command over; returns its sequence number for done().
  std::uint32_t command(Command c, std::uint32_t size);
  [[nodiscard]] bool done(std::uint32_t seq) const { return done_seq_.load(std::memory_order_acquire) == seq; }
  // After done(): the command's outcome (kRunBw: `raw` and the status).
  [[nodiscard]] const engine::Status& result() const { return result_; }
  [[nodiscard]] BwRaw take_raw() { return traffic_.take_bw_raw(); }

  // Published figures: frames this worker's endpoint received, messages its last runs completed.
  [[nodiscard]] std::uint64_t rx_frames() const { return rx_frames_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t messages() const { return messages_.load(std::memory_order_relaxed); }
  // The kinds of request its QPs have received (test_mismatch.h's bits), looked at every 256 polls.
  [[nodiscard]] std::uint8_t request_kinds() const { return request_kinds_.load(std::memory_order_relaxed); }

 private:
  void publish() {
    rx_frames_.store(worker_.endpoint().counters().rx_frames, std::memory_order_relaxed);
    if ((++publishes_ & 255) == 0) request_kinds_.store(traffic_.request_kinds(), std::memory_order_relaxed);
  }

  engine::Worker& worker_;
  Traffic traffic_;
  std::atomic<std::uint64_t> rx_frames_{0}, messages_{0};
  std::atomic<std::uint8_t> request_kinds_{0};
  std::uint32_t publishes_ = 0;  // the worker's own: how often publish() ran
  // The mailbox (see the class comment).
  // Atomic too (relaxed), so that a kQuit written while an older command is still unread races with nothing.
  std::atomic<Command> command_{Command::kNone};
  std::atomic<std::uint32_t> command_size_{0};
  std::atomic<std::uint32_t> command_seq_{0}, done_seq_{0};
  engine::Status result_;
};

}  // namespace droce::perf
