// droce-perf's workers: one PerfWorker per engine worker (WorkerGroup) with QP i on worker i % N,
// workers 1..N-1 each on its own EAL lcore, worker 0 on the main lcore beside the control work
// (perftest's TCP exchange, the report). With one worker nothing is launched: the main lcore runs
// it all, as perftest's single thread does.
#pragma once

#include <droce/engine/exchange/perftest_exchange.h>
#include <droce/engine/workers/worker_group.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/droce-perf/options.h"
#include "apps/droce-perf/perf_worker.h"
#include "apps/droce-perf/report.h"
#include "apps/droce-perf/traffic.h"

namespace droce::perf {

class PerfWorkers {
 public:
  // Per worker a buffer in `storage` and the registry in `memories` that registers it (the buffer outlives it).
  PerfWorkers(const Options& o, engine::WorkerGroup& group,
              const std::vector<std::unique_ptr<engine::MemoryRegistry>>& memories, const engine::PerftestPreamble& pre,
              std::vector<BufferStorage>& storage);
  ~PerfWorkers();  // stop()
  PerfWorkers(const PerfWorkers&) = delete;
  PerfWorkers& operator=(const PerfWorkers&) = delete;

  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(w_.size()); }
  [[nodiscard]] PerfWorker& main_worker() { return *w_[0]; }

  // Asked now and then by the main lcore's loops: the peer ended (closed the control connection).
  void set_peer_probe(std::function<bool()> probe);
  // Every worker's QPs and buffer (before launch, on the main lcore).
  [[nodiscard]] engine::Status create();
  // Our keys in QP order (QP i is worker i % N's (i / N)-th).
  [[nodiscard]] std::vector<engine::PerftestKeys> keys(const std::uint8_t local_gid[16]) const;
  [[nodiscard]] engine::Status connect(std::uint32_t i, const wire::L2L3Address& peer,
                                       const engine::PerftestKeys& keys);
  // -R: QP i was connected by the CM; only the peer's keys are taken (Traffic::take_peer).
  [[nodiscard]] engine::Status take_peer(std::uint32_t i, const engine::PerftestKeys& keys);
  // Workers 1..N-1 onto the worker lcores, in EAL's order; from now on only they touch their QPs.
  [[nodiscard]] engine::Status launch();

  // Before a size's barrier: every worker's SEND receives posted (on its own lcore).
  [[nodiscard]] engine::Status prepare(std::uint32_t size);
  // One size of a bw test on every worker at once; the row merges their shares (perftest counts
  // all QPs: iterations summed, the clock from the first start to the last end).
  [[nodiscard]] engine::Status run_bw(std::uint32_t size, BwRow& row);
  // Latency tests run one QP: worker 0.
  [[nodiscard]] engine::Status run_lat(std::uint32_t size, LatRow& row) { return w_[0]->run_lat(size, row); }
  // One iteration of the main lcore's share while a step of the exchange waits: worker 0's once
  // the others run on their lcores; before launch() and after stop() this thread polls every
  // worker (another worker's queue may take QP1's frames, steered to the port owner in its poll,
  // and -R's CM moves that worker's QPs through commands its poll runs: docs/cm.md).
  void poll(std::uint64_t now_tsc);
  // -R, before launch(): polls every worker until each QP of `mine` is in RTS (the CM has
  // established them; a move of another worker's QP waits in its control ring for its poll), up
  // to timeout_ms: no worker posts on a QP still in INIT.
  [[nodiscard]] engine::Status wait_cm_moved(const std::vector<engine::PerftestKeys>& mine, std::uint32_t timeout_ms);
  // Frames received by all workers (published figures: any thread).
  [[nodiscard]] std::uint64_t rx_frames() const;
  // The kinds of request all workers' QPs have received (published figures: any thread).
  [[nodiscard]] std::uint8_t request_kinds() const;
  // The same read from the QPs themselves: after stop() (main lcore only).
  [[nodiscard]] std::uint8_t request_kinds_now() const;

  // Ends the launched workers (each finishes its command, then quits) and joins them.
  void stop();
  [[nodiscard]] TransportTotals totals();
  [[nodiscard]] const Traffic& traffic0() const { return w_[0]->traffic(); }
  // After stop(): droce's per-worker lines (not perftest's table) and the JSON "workers" array.
  void print_worker_lines() const;
  [[nodiscard]] nlohmann::json workers_json() const;

 private:
  // Waits (polling worker 0) until every launched worker has answered command `seqs[w]`; bounded:
  // without a received frame for --timeout + 5 s the workers are told to give up.
  [[nodiscard]] engine::Status wait_all(const std::vector<std::uint32_t>& seqs);

  const Options& o_;
  std::vector<std::unique_ptr<PerfWorker>> w_;
  std::vector<unsigned> lcores_;    // lcores_[w - 1]: worker w's
  std::atomic<bool> abort_{false};  // the main lcore tells the workers' loops to give up
  std::function<bool()> peer_closed_;
  bool launched_ = false;
};

}  // namespace droce::perf
