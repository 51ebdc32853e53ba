// MemoryPlan: the memory a run needs, named before anything is allocated — each rank's buffers
// (inputs, outputs, scratch at the largest size, staging slots for every peer that sends to it)
// on the heap, and the mbuf pool in DPDK's memory (hugepages, or --no-huge's -m) — and the check
// that the machine has it.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-coll/options.h"
#include "apps/droce-coll/size_schedule.h"

namespace droce::coll {

struct MemoryPlan {
  std::uint64_t buffers_bytes = 0;  // all ranks' buffers (heap)
  std::uint64_t largest_rank = 0;   // the largest rank's share
  std::uint32_t pool_mbufs = 0;     // the shared mbuf pool
  std::uint64_t pool_bytes = 0;
  std::uint32_t mbuf_data_room = 0;
  [[nodiscard]] std::string text() const;
};

[[nodiscard]] MemoryPlan plan_memory(const Options& o, const SizeSchedule& largest);
// Ok when `available_bytes` (MemAvailable) holds the buffers with 10 % to spare, else kNoMemory
// and the line with the figures that says it does not.
[[nodiscard]] engine::Status check_memory(const MemoryPlan& m, std::uint64_t available_bytes, std::uint32_t ranks);
// MemAvailable from /proc/meminfo, in bytes (0 when unknown).
[[nodiscard]] std::uint64_t memory_available();
// "12.3 MiB" style.
[[nodiscard]] std::string bytes_text(std::uint64_t b);

}  // namespace droce::coll
