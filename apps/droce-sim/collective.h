// A droce-coll pattern as the transfers the simulator moves: droce-coll's size semantics and busbw
// factor (plan_size, linked from droce_coll_pure_lib), and its transfer order and step
// dependencies at any N. droce-coll's build_schedule stops at 64 ranks (kMaxRanks: each
// transfer names its contributors in a 64-bit set, for checking content); the simulator moves
// bytes, not content, so it generates the same transfers without the content keys, and
// tests/sim/test_collective.cc proves them equal to build_schedule's for every N <= 64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-coll/pattern.h"
#include "apps/droce-sim/dumbbell.h"

namespace droce::sim {

inline constexpr std::uint32_t kMaxSimRanks = 65'536;

// The patterns the simulator generates (ring allreduce, alltoall, incast to rank 0, permutation,
// bisection); the other droce-coll patterns are refused by name.
[[nodiscard]] bool sim_supports(coll::Pattern p);

struct CollectiveConfig {
  coll::Pattern pattern = coll::Pattern::kAllReduce;
  std::uint32_t ranks = 16;
  std::uint64_t size_bytes = 1 << 20;  // --size, nccl-tests' meaning for the pattern (float elements)
  std::uint64_t seed = 1;              // permutation's derangement (droce-coll's)

  [[nodiscard]] Status validate() const;
};

// One message: `bytes` of payload from src to dst in algorithm step `step`; it leaves src only once
// transfer `after` (an index into the same list, into src) has delivered its last byte; -1: at once.
struct SimTransfer {
  std::uint32_t src = 0, dst = 0, step = 0;
  std::int32_t after = -1;
  std::uint64_t bytes = 0;
};

struct CollectivePlan {
  coll::SizePlan plan;                 // droce-coll's plan_size: count, size column, busbw factor
  std::vector<SimTransfer> transfers;  // in droce-coll's order (each (src, dst) channel in order)
  std::uint32_t steps = 0;
};

// The transfers of `c` (validated), empty transfers left out as droce-coll leaves them out.
[[nodiscard]] CollectivePlan plan_collective(const CollectiveConfig& c);

}  // namespace droce::sim
