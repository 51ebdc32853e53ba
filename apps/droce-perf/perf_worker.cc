// droce-perf's per-worker stage.
#include "apps/droce-perf/perf_worker.h"

#include <rte_cycles.h>

namespace droce::perf {

void PerfWorker::poll(std::uint64_t now_tsc) {
  worker_.poll(now_tsc);
  publish();
}

engine::Status PerfWorker::run_bw(std::uint32_t size, BwRow& row) {
  engine::Status s = traffic_.run_bw(size, row);
  publish();
  if (s.ok()) messages_.store(messages_.load(std::memory_order_relaxed) + row.iters, std::memory_order_relaxed);
  return s;
}

engine::Status PerfWorker::run_lat(std::uint32_t size, LatRow& row) {
  engine::Status s = traffic_.run_lat(size, row);
  publish();
  if (s.ok()) messages_.store(messages_.load(std::memory_order_relaxed) + row.iters, std::memory_order_relaxed);
  return s;
}

std::uint32_t PerfWorker::command(Command c, std::uint32_t size) {
  command_.store(c, std::memory_order_relaxed);
  command_size_.store(size, std::memory_order_relaxed);
  const std::uint32_t seq = command_seq_.load(std::memory_order_relaxed) + 1;
  command_seq_.store(seq, std::memory_order_release);
  return seq;
}

void PerfWorker::serve_commands() {
  std::uint32_t seen = 0;
  // Ends only at kQuit, which the main lcore always sends (WorkerLcores' destructor included);
  // each command's own loop ends on progress, a stop, an abort or --timeout without progress.
  for (;;) {
    const std::uint32_t seq = command_seq_.load(std::memory_order_acquire);
    if (seq == seen) {
      poll(rte_rdtsc());
      continue;
    }
    seen = seq;
    const Command c = command_.load(std::memory_order_relaxed);
    const std::uint32_t size = command_size_.load(std::memory_order_relaxed);
    if (c == Command::kQuit) break;
    if (c == Command::kPrepare) {
      traffic_.prepare_receives(size);
      result_ = {};
    } else if (c == Command::kRunBw) {
      BwRow ignored;
      result_ = run_bw(size, ignored);
    }
    done_seq_.store(seq, std::memory_order_release);
  }
  done_seq_.store(seen, std::memory_order_release);
}

}  // namespace droce::perf
