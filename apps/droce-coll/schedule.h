// Schedule: a collective pattern as the RC transfers between ranks that carry it, with what each
// transfer's data is (so every chunk can be checked by content on arrival), what the receiver
// does with it (copy or sum), and which earlier transfer must have delivered the bytes it
// forwards. Pure: no DPDK, no clock; the same schedule drives the one-process lab and a rank
// in any other process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-coll/pattern.h"

namespace droce::coll {

inline constexpr std::uint32_t kMaxRanks = 64;    // contributors are a 64-bit set
inline constexpr std::uint32_t kAnyDst = 0xFFFF;  // data every destination shares (allreduce, allgather, ...)

enum class Buf : std::uint8_t { kInput, kOutput, kScratch };
// What the receiver does with an arriving chunk: out = data, out = in + data, out += data.
enum class Apply : std::uint8_t { kCopy, kAddInput, kAddOutput };

// One message from src to dst. Offsets and counts are in elements. The data is the sum over
// `contributors` of value(iteration, rank, key_dst, key_off + i) (data_keys.h).
struct Transfer {
  std::uint32_t src = 0, dst = 0;
  std::uint32_t step = 0;  // the algorithm's step (hazards: earlier steps first)
  Buf src_buf = Buf::kInput;
  std::uint64_t src_off = 0;
  Buf dst_buf = Buf::kOutput;
  std::uint64_t dst_off = 0;
  std::uint64_t add_off = 0;  // kAddInput: where in the receiver's input the added elements are
  std::uint64_t count = 0;
  Apply apply = Apply::kCopy;
  std::uint64_t contributors = 0;
  std::uint32_t key_dst = kAnyDst;
  std::uint64_t key_off = 0;
  // The transfer (an index in Schedule::transfers, into `src`) that delivers the range this one
  // forwards: a chunk leaves only once that transfer has delivered its elements. -1: none.
  std::int32_t after = -1;
};

// A copy inside one rank (its own block: allgather, alltoall, broadcast's root), out of place only.
struct LocalCopy {
  std::uint32_t rank = 0;
  Buf src_buf = Buf::kInput;
  std::uint64_t src_off = 0;
  std::uint64_t dst_off = 0;  // in the output
  std::uint64_t count = 0;
};

// A run of a rank's input or expected output: value(iteration, rank_key, key_dst, key_off + i).
struct KeyedRun {
  std::uint32_t rank = 0;
  std::uint64_t off = 0;  // in the input (InputRun) or output (expected)
  std::uint64_t count = 0;
  std::uint64_t contributors = 0;
  std::uint32_t key_dst = kAnyDst;
  std::uint64_t key_off = 0;
};

struct RankBuffers {
  std::uint64_t in = 0, out = 0, scratch = 0;  // elements
};

struct ScheduleParams {
  Pattern pattern = Pattern::kAllReduce;
  Algo algo = Algo::kRing;
  std::uint32_t ranks = 2;
  std::uint32_t root = 0;
  std::uint64_t seed = 1;  // permutation's derangement
  SizePlan plan;           // plan_size() of the size
};

struct Schedule {
  std::uint32_t ranks = 0;
  std::vector<Transfer> transfers;  // in the order each (src, dst) channel carries them
  std::vector<LocalCopy> copies;
  std::vector<KeyedRun> inputs;    // every rank's input, all of it
  std::vector<KeyedRun> expected;  // what outputs must hold at the end (the root's only for reduce)
  std::vector<RankBuffers> buffers;
  std::vector<std::uint32_t> permutation;  // kPermutation: rank r sends to permutation[r]
};

// Ok when the parameters can be scheduled, else kInvalidArgument and the one line why not (ranks,
// root, algo).
[[nodiscard]] engine::Status check_params(const ScheduleParams& p);
[[nodiscard]] Schedule build_schedule(const ScheduleParams& p);

// Where a rank's three buffers lie in one element space: apart out of place; in place as
// nccl-tests lays them (allreduce, broadcast, reduce: one buffer; reduce_scatter: the output is
// block r of the input; allgather: the input is block r of the output).
struct Layout {
  std::uint64_t in_base = 0, out_base = 0, scratch_base = 0, total = 0;  // elements
};
// Patterns with an in-place variant. The others receive into blocks they still have to send.
[[nodiscard]] bool in_place_supported(Pattern p);
[[nodiscard]] Layout layout(const ScheduleParams& p, const RankBuffers& b, std::uint32_t rank, bool in_place);

// For each transfer, what must be finished before its receiver applies it: transfers the receiver
// sent in earlier steps from memory this one overwrites, acknowledged (a retransmission reads the
// source again), listed as their index i; and transfers into the same memory in earlier steps,
// applied first (a sum added before the value it adds to is placed would be lost), listed as ~i.
// Only earlier steps: a later send of the same bytes forwards them (Transfer::after) instead.
[[nodiscard]] std::vector<std::vector<std::int32_t>> hazards(const Schedule& s, const std::vector<Layout>& layouts);

// Payload bytes each rank sends to each other rank: [src * ranks + dst].
[[nodiscard]] std::vector<std::uint64_t> traffic_matrix(const Schedule& s, std::uint32_t elem_bytes);
// A seeded derangement of 0..n-1 (no rank maps to itself), n >= 2.
[[nodiscard]] std::vector<std::uint32_t> derangement(std::uint32_t n, std::uint64_t seed);
// Rank arithmetic the schedules share (and droce-sim's, which builds the same transfers past 64
// ranks): `a` modulo n, never negative (ring neighbours and blocks from r - step); the first
// element of block b when `count` elements split into n nearly equal blocks.
[[nodiscard]] constexpr std::uint32_t ring_mod(std::int64_t a, std::uint32_t n) {
  const std::int64_t m = a % static_cast<std::int64_t>(n);
  return static_cast<std::uint32_t>(m < 0 ? m + n : m);
}
[[nodiscard]] constexpr std::uint64_t block_lo(std::uint64_t count, std::uint32_t n, std::uint32_t b) {
  return count * b / n;
}
// The set of one rank, and of all N ranks.
[[nodiscard]] constexpr std::uint64_t rank_bit(std::uint32_t r) { return std::uint64_t{1} << r; }
[[nodiscard]] constexpr std::uint64_t all_ranks(std::uint32_t n) {
  return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

}  // namespace droce::coll
