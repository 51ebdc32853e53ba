// droce-sim --topology leafspine: runs the collective and reports it as nccl-tests prints a row
// (size, count, type, redop, time, algbw, busbw), the per-step completion tails, the links' queues,
// drops, ECN marks and PFC pauses, and what the run itself cost (events per second, peak memory
// per rank); the same in the --json file.
#pragma once

#include "apps/droce-sim/options.h"

namespace droce::sim {

// The process's exit status: 0, or 1 when the JSON could not be written.
[[nodiscard]] int run_and_report_leaf_spine(const Options& o);

}  // namespace droce::sim
