// Pattern names and nccl-tests' size semantics (its getCollByteCount and GetBw per collective).
#include "apps/droce-coll/pattern.h"

namespace droce::coll {

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::kAllReduce:
      return "allreduce";
    case Pattern::kReduceScatter:
      return "reduce_scatter";
    case Pattern::kAllGather:
      return "allgather";
    case Pattern::kBroadcast:
      return "broadcast";
    case Pattern::kReduce:
      return "reduce";
    case Pattern::kAllToAll:
      return "alltoall";
    case Pattern::kSendRecv:
      return "sendrecv";
    case Pattern::kIncast:
      return "incast";
    case Pattern::kPermutation:
      return "permutation";
    case Pattern::kBisection:
      return "bisection";
  }
  return "?";
}

bool pattern_by_name(std::string_view name, Pattern& out) {
  for (Pattern p : kAllPatterns)
    if (name == pattern_name(p)) {
      out = p;
      return true;
    }
  return false;
}

const char* dtype_name(DataType t) { return t == DataType::kInt32 ? "int32" : "float"; }

bool reduces(Pattern p) { return p == Pattern::kAllReduce || p == Pattern::kReduceScatter || p == Pattern::kReduce; }

bool rooted(Pattern p) { return p == Pattern::kBroadcast || p == Pattern::kReduce || p == Pattern::kIncast; }

SizePlan plan_size(Pattern p, std::uint32_t ranks, std::uint64_t bytes, DataType t) {
  const std::uint64_t e = dtype_bytes(t), n = ranks, elems = bytes / e;
  const double ring = n > 1 ? static_cast<double>(n - 1) / static_cast<double>(n) : 0;
  SizePlan s;
  switch (p) {
    case Pattern::kAllReduce:
      s.count = s.in_elems = s.out_elems = elems;
      s.busbw_factor = 2 * ring;
      break;
    case Pattern::kReduceScatter:  // --size is the input: N blocks of count
      s.count = s.out_elems = elems / n;
      s.in_elems = s.count * n;
      s.busbw_factor = ring;
      break;
    case Pattern::kAllGather:  // --size is the output: N blocks of count
      s.count = s.in_elems = elems / n;
      s.out_elems = s.count * n;
      s.busbw_factor = ring;
      break;
    case Pattern::kAllToAll:  // --size is the total: N blocks of count, one per peer
      s.count = elems / n;
      s.in_elems = s.out_elems = s.count * n;
      s.busbw_factor = ring;
      break;
    case Pattern::kIncast:  // the root receives N - 1 blocks of count, one per sender
      s.count = s.in_elems = elems;
      s.out_elems = elems * n;
      s.busbw_factor = static_cast<double>(n - 1);  // the root's ingress, against its port rate
      break;
    case Pattern::kBroadcast:
    case Pattern::kReduce:
    case Pattern::kSendRecv:
    case Pattern::kPermutation:
    case Pattern::kBisection:
      s.count = s.in_elems = s.out_elems = elems;
      s.busbw_factor = 1;
      break;
  }
  // The size column: the larger of the send and receive buffers, after rounding (nccl-tests
  // prints max(sendBytes, expectedBytes)); incast: what each sender sends.
  const std::uint64_t shown =
      p == Pattern::kIncast ? s.in_elems : (s.in_elems > s.out_elems ? s.in_elems : s.out_elems);
  s.size_bytes = shown * e;
  return s;
}

engine::Status whole_elements(const std::string& option, std::uint64_t bytes, DataType t) {
  const std::uint64_t e = dtype_bytes(t);
  if (bytes % e == 0) return {};
  return engine::Status::error(engine::StatusCode::kInvalidArgument,
                               option + ": " + std::to_string(bytes) + " bytes is not a whole number of " +
                                   dtype_name(t) + " elements (" + std::to_string(e) + " bytes each)");
}

}  // namespace droce::coll
