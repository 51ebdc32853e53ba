// Setup: the one-process lab's pieces in order — the mbuf pool, the fabric observer (and its
// capture), the lab, one CollRank per rank, and the wiring: every rank's card handed to every
// other in memory (the MPI mode hands the same cards over MPI).
#pragma once

#include <droce/engine/core/mempool.h>
#include <droce/engine/core/status.h>

#include <memory>
#include <vector>

#include "apps/droce-coll/fabric_observer.h"
#include "apps/droce-coll/lab_fabric.h"
#include "apps/droce-coll/memory_plan.h"
#include "apps/droce-coll/options.h"
#include "apps/droce-coll/rank.h"

namespace droce::coll {

struct Setup {
  engine::MbufPool pool;
  std::unique_ptr<FabricObserver> observer;
  std::unique_ptr<CollLab> lab;
  std::vector<std::unique_ptr<CollRank>> ranks;

  // The lab's endpoints finished first (their frames may point into the ranks' buffers), then
  // the ranks, then the lab.
  void teardown();
};

// Whether this run measures the placement (`--placement`, and in place only where nccl-tests
// allows it for the pattern): one-process and MPI mode sweep sizes by it.
[[nodiscard]] bool placement_runs(const Options& o, bool in_place);
// The schedule of one size, and a rank's transport settings, from the options (both modes).
[[nodiscard]] ScheduleParams schedule_params(const Options& o, std::uint64_t bytes);
[[nodiscard]] RankConfig rank_config(const Options& o, std::uint32_t rank);

[[nodiscard]] engine::Status build_lab(const Options& o, const SizeSchedule& largest, const MemoryPlan& m, Setup& st);

}  // namespace droce::coll
