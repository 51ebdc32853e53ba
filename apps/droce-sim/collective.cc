// The transfers of droce-coll's schedules (apps/droce-coll/schedule.cc, COLLECTIVES.md) in the same
// order with the same `after`, for any N: ring allreduce is reduce-scatter then allgather, rank r
// sending block r - s (then r + 1 - s) to r + 1 in step s, each forwarding the block it received
// in the step before; alltoall the n - 1 step shift; incast, permutation and bisection one step.
#include "apps/droce-sim/collective.h"

#include "apps/droce-coll/schedule.h"

namespace droce::sim {

namespace {

class Adder {
 public:
  explicit Adder(CollectivePlan& p) : p_(p) {}
  std::int32_t add(std::uint32_t src, std::uint32_t dst, std::uint32_t step, std::uint64_t elems, std::int32_t after) {
    if (elems == 0) return -1;  // droce-coll's Builder::add leaves empty transfers out
    p_.transfers.push_back(SimTransfer{src, dst, step, after, elems * coll::dtype_bytes(coll::DataType::kFloat32)});
    if (step + 1 > p_.steps) p_.steps = step + 1;
    return static_cast<std::int32_t>(p_.transfers.size() - 1);
  }

 private:
  CollectivePlan& p_;
};

// Each block is carried by one rank per step, so the transfer that last delivered a block is all
// the dependency needs (droce-coll keeps it per receiver and block, n x n; here n).
void ring_allreduce(std::uint32_t n, std::uint64_t count, Adder& a) {
  std::vector<std::int32_t> last(n, -1);
  for (std::uint32_t st = 0; st + 1 < n; ++st)
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t blk = coll::ring_mod(static_cast<std::int64_t>(r) - st, n);
      const std::uint64_t lo = coll::block_lo(count, n, blk), len = coll::block_lo(count, n, blk + 1) - lo;
      last[blk] = a.add(r, (r + 1) % n, st, len, st == 0 ? -1 : last[blk]);
    }
  for (std::uint32_t st = 0; st + 1 < n; ++st)
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t blk = coll::ring_mod(static_cast<std::int64_t>(r) + 1 - st, n);
      const std::uint64_t lo = coll::block_lo(count, n, blk), len = coll::block_lo(count, n, blk + 1) - lo;
      last[blk] = a.add(r, (r + 1) % n, n - 1 + st, len, last[blk]);
    }
}

}  // namespace

bool sim_supports(coll::Pattern p) {
  using coll::Pattern;
  return p == Pattern::kAllReduce || p == Pattern::kAllToAll || p == Pattern::kIncast || p == Pattern::kPermutation ||
         p == Pattern::kBisection;
}

Status CollectiveConfig::validate() const {
  if (!sim_supports(pattern))
    return Status::error(StatusCode::kInvalidArgument,
                         std::string("--pattern: ") + coll::pattern_name(pattern) +
                             " is not simulated (allreduce, alltoall, incast, permutation, bisection)");
  if (ranks < 2 || ranks > kMaxSimRanks)
    return Status::error(StatusCode::kInvalidArgument, "--ranks: must be 2.." + std::to_string(kMaxSimRanks));
  if (Status s = coll::whole_elements("--size", size_bytes, coll::DataType::kFloat32); !s.ok()) return s;
  const coll::SizePlan p = coll::plan_size(pattern, ranks, size_bytes, coll::DataType::kFloat32);
  if (p.count == 0)
    return Status::error(StatusCode::kInvalidArgument, "--size: " + std::to_string(size_bytes) +
                                                           " bytes is no element per rank's part at " +
                                                           std::to_string(ranks) + " ranks");
  return {};
}

CollectivePlan plan_collective(const CollectiveConfig& c) {
  using coll::Pattern;
  CollectivePlan out;
  out.plan = coll::plan_size(c.pattern, c.ranks, c.size_bytes, coll::DataType::kFloat32);
  Adder a(out);
  const std::uint32_t n = c.ranks;
  const std::uint64_t count = out.plan.count;
  switch (c.pattern) {
    case Pattern::kAllReduce:
      ring_allreduce(n, count, a);
      break;
    case Pattern::kAllToAll:
      for (std::uint32_t k = 1; k < n; ++k)
        for (std::uint32_t r = 0; r < n; ++r) a.add(r, (r + k) % n, k - 1, count, -1);
      break;
    case Pattern::kIncast:  // root 0, as droce-coll's default --root
      for (std::uint32_t r = 1; r < n; ++r) a.add(r, 0, 0, count, -1);
      break;
    case Pattern::kPermutation: {
      const std::vector<std::uint32_t> to = coll::derangement(n, c.seed);
      for (std::uint32_t r = 0; r < n; ++r) a.add(r, to[r], 0, count, -1);
      break;
    }
    case Pattern::kBisection: {
      const std::uint32_t h = n / 2;
      for (std::uint32_t r = 0; r < 2 * h; ++r) a.add(r, r < h ? r + h : r - h, 0, count, -1);
      break;
    }
    default:
      break;  // refused by validate()
  }
  return out;
}

}  // namespace droce::sim
