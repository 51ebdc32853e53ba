// Collective patterns and nccl-tests' size semantics: what --size means for each pattern, the
// element count it becomes (rounded down as nccl-tests rounds), the bytes per rank's buffers, and
// the factor that turns algorithm bandwidth into bus bandwidth (nccl-tests' PERFORMANCE.md).
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace droce::coll {

enum class Pattern : std::uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  // Fabric stress patterns (not NCCL collectives; their bandwidth definitions are droce's).
  kIncast,       // every rank but the root sends --size to the root
  kPermutation,  // each rank sends --size to one other, a seeded derangement
  kBisection,    // rank r and r + N/2 exchange --size both ways (odd N: the last rank idles)
};
inline constexpr Pattern kAllPatterns[] = {
    Pattern::kAllReduce, Pattern::kReduceScatter, Pattern::kAllGather, Pattern::kBroadcast,   Pattern::kReduce,
    Pattern::kAllToAll,  Pattern::kSendRecv,      Pattern::kIncast,    Pattern::kPermutation, Pattern::kBisection};

enum class Algo : std::uint8_t { kRing, kHalvingDoubling };
enum class DataType : std::uint8_t { kInt32, kFloat32 };

[[nodiscard]] const char* pattern_name(Pattern p);
[[nodiscard]] bool pattern_by_name(std::string_view name, Pattern& out);
[[nodiscard]] const char* dtype_name(DataType t);  // nccl-tests' spelling: int32, float
[[nodiscard]] constexpr std::uint32_t dtype_bytes(DataType) { return 4; }
// A reduction (sum) pattern: its table shows redop "sum", else "none".
[[nodiscard]] bool reduces(Pattern p);
// Patterns with a root (broadcast, reduce, incast): the table's root column.
[[nodiscard]] bool rooted(Pattern p);

// What one --size becomes for N ranks.
struct SizePlan {
  std::uint64_t count = 0;       // nccl-tests' count column (its paramcount): elements per rank's part
  std::uint64_t size_bytes = 0;  // nccl-tests' size column: the bytes actually moved, after rounding
  std::uint64_t in_elems = 0;    // each rank's input buffer
  std::uint64_t out_elems = 0;   // each rank's output buffer (the root's for incast)
  double busbw_factor = 1;       // busbw = algbw * factor
};

// The plan for `bytes` (a whole number of elements, checked by whole_elements) at N ranks:
// allreduce, broadcast, reduce, sendrecv: bytes is each rank's buffer; allgather: the output
// (count = bytes / elem / N per rank); reduce_scatter: the input (N x count); alltoall: the total
// (count = bytes / elem / N per peer); incast, permutation, bisection: what each sender sends.
[[nodiscard]] SizePlan plan_size(Pattern p, std::uint32_t ranks, std::uint64_t bytes, DataType t);
// Ok when `bytes` is a whole number of elements of `t`, else kInvalidArgument and the one line that
// says it is not.
[[nodiscard]] engine::Status whole_elements(const std::string& option, std::uint64_t bytes, DataType t);

// algbw and busbw in GB/s (10^9 bytes per second), as nccl-tests prints them.
[[nodiscard]] inline double algbw_gbytes(const SizePlan& s, double time_us) {
  return time_us > 0 ? static_cast<double>(s.size_bytes) / (time_us * 1e3) : 0;
}

}  // namespace droce::coll
