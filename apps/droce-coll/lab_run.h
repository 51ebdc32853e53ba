// LabRunner: drives the ranks of the one-process lab over W EAL lcores — each worker polls a
// fixed set of ranks (and the switch on the first), iterations start together and end when every
// rank is done, verified outside the timed window; a rank that stops making progress is named
// when the iteration passes --timeout.
#pragma once

#include <droce/engine/core/status.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/droce-coll/lab_fabric.h"
#include "apps/droce-coll/rank.h"
#include "apps/droce-coll/results.h"

namespace droce::coll {

struct RunnerConfig {
  std::uint32_t workers = 1;
  std::uint32_t iters = 20, warmup = 5;
  double timeout_s = 30;
  int stall_rank = -1;  // fault injection: this rank is never polled once the first iteration starts
  bool live = true;     // a line on stderr every second while a size runs
};

class LabRunner {
 public:
  LabRunner(CollLab& lab, std::vector<std::unique_ptr<CollRank>>& ranks, const RunnerConfig& cfg);
  ~LabRunner();
  // Starts the workers on the EAL lcores after the main one (the main lcore is worker 0).
  [[nodiscard]] engine::Status launch();
  // Warm-up and timed iterations of one size and placement; kTimeout names the stalled rank,
  // another error the failed one.
  [[nodiscard]] engine::Status run(const SizeSchedule& s, PlacementResult& out);
  // Stops the workers (idempotent).
  void stop();
  // Iterations the last run() completed (warm-up included): the bytes the schedule moved.
  [[nodiscard]] std::uint32_t iterations_run() const { return iterations_run_; }

  struct Worker;
  friend int lab_worker_main(void* arg);

 private:
  enum class Op : std::uint8_t { kNone, kPrepare, kStart, kFinish, kHalt, kResume };
  void broadcast(Op op);
  void step_main();
  // Where the ranks stand: after --timeout (timed_out) the stalled rank or the slow iteration; after a
  // rank's failure, the rank that stopped first or, if all still moved, where they stood.
  [[nodiscard]] std::string stall_report(double elapsed_s, bool timed_out) const;
  void collect(const SizeSchedule& s, PlacementResult& out);

  CollLab& lab_;
  std::vector<std::unique_ptr<CollRank>>& ranks_;
  RunnerConfig cfg_;
  std::vector<std::unique_ptr<Worker>> workers_;
  bool launched_ = false;
  std::uint32_t iteration_ = 0;
  std::uint32_t iterations_run_ = 0;  // across sizes: every iteration has its own keys
  double tsc_per_us_ = 1;
  friend struct Worker;
  // Shared with the workers.
  std::atomic<std::uint32_t> gen_{0};
  std::atomic<std::uint32_t> acked_{0};
  std::atomic<std::uint32_t> ranks_done_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> quit_{false};
  Op op_ = Op::kNone;
  std::uint32_t op_iteration_ = 0;
  std::uint64_t op_start_tsc_ = 0;
};

}  // namespace droce::coll
