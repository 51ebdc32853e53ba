// What a run measured, size by size: the figures of nccl-tests' table and droce's own beside them.
#pragma once

#include <cstdint>
#include <vector>

#include "apps/droce-coll/pattern.h"

namespace droce::coll {

struct PlacementResult {
  bool ran = false;
  double time_us = 0;     // mean over ranks of each rank's mean iteration time (nccl-tests' time)
  double slowest_us = 0;  // the slowest rank's mean iteration time
  std::uint32_t slowest_rank = 0;
  double algbw_gbytes = 0, busbw_gbytes = 0;  // GB/s (10^9 bytes/s), as nccl-tests prints
  std::uint64_t wrong = 0;                    // output elements wrong, every timed iteration and rank
  std::uint64_t wrong_on_arrival = 0;         // chunk elements wrong when they arrived
  std::vector<double> iter_us;                // per timed iteration: start to the last rank done
  double iter_p50_us = 0, iter_p99_us = 0, iter_max_us = 0;
  // The slowest transfer of the last iteration: into the slowest rank, the peer whose last chunk
  // was applied last, with its sender's QP counters over the whole size.
  std::uint32_t slow_src = 0, slow_dst = 0;
  double slow_done_us = 0;
  std::uint64_t slow_retransmitted = 0, slow_naks = 0, slow_timeouts = 0;
  // Every endpoint over the placement's iterations (warm-up included).
  std::uint64_t retransmitted = 0, naks = 0, cnps_sent = 0, cnps_handled = 0, pfc_pauses = 0;
};

struct SizeResult {
  std::uint64_t requested_bytes = 0;
  SizePlan plan;
  PlacementResult out_of_place, in_place;
};

}  // namespace droce::coll
