// MemoryPlan: figures from the largest size's schedule; MemAvailable from the kernel.
#include "apps/droce-coll/memory_plan.h"

#include <algorithm>
#include <cstdio>

#include "apps/common/memory_budget.h"

namespace droce::coll {

// Both live in apps/common (droce-gen's memory check uses them too).
std::string bytes_text(std::uint64_t b) { return apps::bytes_text(b); }

MemoryPlan plan_memory(const Options& o, const SizeSchedule& largest) {
  MemoryPlan m;
  const std::uint32_t e = dtype_bytes(o.dtype);
  std::vector<std::vector<bool>> sends(o.ranks, std::vector<bool>(o.ranks, false));
  for (const Transfer& t : largest.schedule.transfers) sends[t.src][t.dst] = true;
  for (std::uint32_t r = 0; r < o.ranks; ++r) {
    std::uint64_t senders = 0;
    for (std::uint32_t p = 0; p < o.ranks; ++p) senders += sends[p][r];
    const std::uint64_t mine = largest.layouts[r].total * e + senders * o.buffers * std::uint64_t{o.chunk_bytes};
    m.buffers_bytes += mine;
    m.largest_rank = std::max(m.largest_rank, mine);
  }
  // Frames in flight: every rank's packets waiting for ACKs (the QPs' windows) and the lab's
  // rings and queues. 2048 per rank carries 8 ranks at full windows (a frame is 1 to 3 mbufs); a
  // smaller pool costs time, never data: a sender that finds the pool empty stops its turn with
  // the packet still queued in its QP (tx_alloc_failures). A shaped fabric's queues hold mbufs too.
  m.pool_mbufs = std::clamp<std::uint32_t>(o.ranks * 2048, 16383, 131071);
  m.mbuf_data_room = 2048 + 128;  // RTE_PKTMBUF_HEADROOM + a 2 KiB frame; payloads ride as external buffers
  m.pool_bytes = std::uint64_t{m.pool_mbufs} * (m.mbuf_data_room + 128 + 64);
  return m;
}

std::string MemoryPlan::text() const {
  return "memory: buffers " + bytes_text(buffers_bytes) + " (largest rank " + bytes_text(largest_rank) +
         "), mbuf pool " + std::to_string(pool_mbufs) + " x " + std::to_string(mbuf_data_room) +
         " B = " + bytes_text(pool_bytes);
}

engine::Status check_memory(const MemoryPlan& m, std::uint64_t available_bytes, std::uint32_t ranks) {
  if (available_bytes == 0) return {};
  const std::uint64_t need = m.buffers_bytes + m.pool_bytes;
  if (need + need / 10 <= available_bytes) return {};
  return engine::Status::error(
      engine::StatusCode::kNoMemory,
      "memory: " + std::to_string(ranks) + " ranks need " + bytes_text(m.buffers_bytes) + " of buffers (largest rank " +
          bytes_text(m.largest_rank) + ") and " + bytes_text(m.pool_bytes) + " of mbufs, more than the " +
          bytes_text(available_bytes) + " this machine has available (MemAvailable, 10 % kept free): fewer ranks, a " +
          "smaller --maxbytes, --chunk or --buffers");
}

std::uint64_t memory_available() { return apps::available_memory_bytes(); }

}  // namespace droce::coll
