// droce-coll's schedules without EAL: every pattern at N = 2..8 and 64, in and out of place, run
// as messages in a random order that respects only what the schedule promises (a transfer leaves
// after the one it forwards delivered, channels keep order, a receive waits for its hazards), with
// every transfer's data checked by key on delivery, sources re-read at completion as a
// retransmission would, and every output checked; nccl-tests' size semantics; the data keys.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "apps/droce-coll/data_keys.h"
#include "apps/droce-coll/pattern.h"
#include "apps/droce-coll/schedule.h"

using namespace droce::coll;

namespace {

struct SimResult {
  std::uint64_t wrong_on_arrival = 0, wrong_at_end = 0, source_changed = 0;
  bool stuck = false;
};

// Runs the schedule on float buffers in a random event order.
SimResult simulate(const ScheduleParams& p, bool in_place, std::uint64_t order_seed) {
  const Schedule s = build_schedule(p);
  const std::uint32_t n = p.ranks;
  std::vector<Layout> lay;
  for (std::uint32_t r = 0; r < n; ++r) lay.push_back(layout(p, s.buffers[r], r, in_place));
  const auto haz = hazards(s, lay);
  std::vector<std::vector<float>> mem(n);
  const DataKeys keys(7);
  for (std::uint32_t r = 0; r < n; ++r) mem[r].assign(lay[r].total, std::nanf(""));
  auto at = [&](std::uint32_t r, Buf b, std::uint64_t off) {
    const Layout& l = lay[r];
    return mem[r].data() + (b == Buf::kInput ? l.in_base : b == Buf::kOutput ? l.out_base : l.scratch_base) + off;
  };
  for (const KeyedRun& in : s.inputs)
    fill_run(at(in.rank, Buf::kInput, in.off), in.count, Expectation(keys, in.contributors, in.key_dst, in.key_off));
  SimResult res;
  for (const LocalCopy& c : s.copies) {
    float* src = at(c.rank, c.src_buf, c.src_off);
    float* dst = at(c.rank, Buf::kOutput, c.dst_off);
    if (src != dst) std::copy(src, src + c.count, dst);
  }
  const std::size_t t_n = s.transfers.size();
  std::vector<int> state(t_n, 0);  // 0 none, 1 sent, 2 delivered, 3 completed
  std::vector<std::vector<float>> msg(t_n);
  // Channel predecessor of each transfer.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int32_t> last;
  std::vector<std::int32_t> pred(t_n, -1);
  for (std::size_t i = 0; i < t_n; ++i) {
    auto key = std::make_pair(s.transfers[i].src, s.transfers[i].dst);
    auto it = last.find(key);
    if (it != last.end()) pred[i] = it->second;
    last[key] = static_cast<std::int32_t>(i);
  }
  std::mt19937_64 rng(order_seed);
  for (std::size_t done = 0; done < 3 * t_n;) {
    std::vector<std::pair<std::size_t, int>> ready;
    for (std::size_t i = 0; i < t_n; ++i) {
      const Transfer& t = s.transfers[i];
      if (state[i] == 0 && (t.after < 0 || state[static_cast<std::size_t>(t.after)] >= 2) &&
          (pred[i] < 0 || state[static_cast<std::size_t>(pred[i])] >= 1))
        ready.emplace_back(i, 1);
      if (state[i] == 1 && (pred[i] < 0 || state[static_cast<std::size_t>(pred[i])] >= 2)) {
        bool clear = true;
        for (std::int32_t h : haz[i])
          clear =
              clear && (h >= 0 ? state[static_cast<std::size_t>(h)] == 3 : state[static_cast<std::size_t>(~h)] >= 2);
        if (clear) ready.emplace_back(i, 2);
      }
      if (state[i] == 2) ready.emplace_back(i, 3);
    }
    if (ready.empty()) {
      res.stuck = true;
      return res;
    }
    const auto [i, ev] = ready[rng() % ready.size()];
    const Transfer& t = s.transfers[i];
    const float* src = at(t.src, t.src_buf, t.src_off);
    if (ev == 1) {
      msg[i].assign(src, src + t.count);
    } else if (ev == 2) {
      res.wrong_on_arrival +=
          check_and_apply(t.apply, msg[i].data(), at(t.dst, t.dst_buf, t.dst_off), at(t.dst, Buf::kInput, t.add_off),
                          t.count, Expectation(keys, t.contributors, t.key_dst, t.key_off));
    } else {
      for (std::uint64_t k = 0; k < t.count; ++k) res.source_changed += !(src[k] == msg[i][k]);
    }
    state[i] = ev;
    ++done;
  }
  for (const KeyedRun& e : s.expected)
    res.wrong_at_end +=
        count_wrong(at(e.rank, Buf::kOutput, e.off), e.count, Expectation(keys, e.contributors, e.key_dst, e.key_off));
  return res;
}

}  // namespace

TEST_CASE("every pattern at N = 2, 3, 4, 5, 8: exact in any legal order, in and out of place", "[coll][schedule]") {
  for (Pattern pat : kAllPatterns)
    for (Algo algo : {Algo::kRing, Algo::kHalvingDoubling}) {
      if (algo == Algo::kHalvingDoubling && pat != Pattern::kAllReduce) continue;
      for (std::uint32_t n : {2u, 3u, 4u, 5u, 8u})
        for (std::uint64_t bytes : {4ull, 4ull * 7, 4ull * 1000, 4ull * 4096})
          for (bool in_place : {false, true}) {
            if (in_place && !in_place_supported(pat)) continue;
            ScheduleParams p;
            p.pattern = pat;
            p.algo = algo;
            p.ranks = n;
            p.root = n - 1;
            p.seed = 11;
            p.plan = plan_size(pat, n, bytes, DataType::kFloat32);
            REQUIRE(check_params(p).ok());
            INFO(pattern_name(pat) << (algo == Algo::kRing ? " ring" : " hd") << " n=" << n << " bytes=" << bytes
                                   << (in_place ? " in-place" : " out-of-place"));
            for (std::uint64_t seed : {1ull, 2ull, 3ull, 4ull}) {
              const SimResult r = simulate(p, in_place, seed);
              CHECK_FALSE(r.stuck);
              CHECK(r.wrong_on_arrival == 0);
              CHECK(r.source_changed == 0);
              CHECK(r.wrong_at_end == 0);
            }
          }
    }
}

TEST_CASE("64 ranks: allreduce ring and halving-doubling, alltoall, permutation exact", "[coll][schedule]") {
  for (Pattern pat : {Pattern::kAllReduce, Pattern::kAllToAll, Pattern::kPermutation})
    for (Algo algo : {Algo::kRing, Algo::kHalvingDoubling}) {
      if (algo == Algo::kHalvingDoubling && pat != Pattern::kAllReduce) continue;
      ScheduleParams p;
      p.pattern = pat;
      p.algo = algo;
      p.ranks = 64;
      p.plan = plan_size(pat, 64, 4 * 64 * 3, DataType::kFloat32);
      const SimResult r = simulate(p, false, 5);
      CHECK_FALSE(r.stuck);
      CHECK(r.wrong_on_arrival == 0);
      CHECK(r.wrong_at_end == 0);
    }
}

TEST_CASE("a schedule that forwards before delivery is caught: the checker is not blind", "[coll][schedule]") {
  ScheduleParams p;
  p.ranks = 4;
  p.plan = plan_size(Pattern::kAllReduce, 4, 4 * 400, DataType::kInt32);
  Schedule s = build_schedule(p);
  // Deliver every transfer with the wrong iteration's data: every element must fail.
  const DataKeys now(3), before(2);
  const Transfer& t = s.transfers.front();
  std::vector<std::int32_t> data(t.count), out(t.count), in(t.count);
  fill_run(data.data(), t.count, Expectation(before, t.contributors, t.key_dst, t.key_off));
  CHECK(check_and_apply(t.apply, data.data(), out.data(), in.data(), t.count,
                        Expectation(now, t.contributors, t.key_dst, t.key_off)) == t.count);
  // Data from the wrong source (rank 2 instead of the sender) fails too.
  fill_run(data.data(), t.count, Expectation(now, rank_bit(2), t.key_dst, t.key_off));
  CHECK(check_and_apply(Apply::kCopy, data.data(), out.data(), in.data(), t.count,
                        Expectation(now, rank_bit(t.src), t.key_dst, t.key_off)) > t.count * 9 / 10);
  // Poison fails every element (int -1, float NaN).
  std::vector<float> f(64);
  poison(f.data(), f.size() * sizeof(float));
  CHECK(count_wrong(f.data(), f.size(), Expectation(now, 1, kAnyDst, 0)) == 64);
}

TEST_CASE("ring allreduce's traffic matrix is the theory's: 2(N-1)/N x size to the successor only",
          "[coll][schedule]") {
  for (std::uint32_t n : {2u, 3u, 4u, 8u}) {
    ScheduleParams p;
    p.ranks = n;
    const std::uint64_t bytes = 4ull * n * 1024;
    p.plan = plan_size(Pattern::kAllReduce, n, bytes, DataType::kInt32);
    const auto m = traffic_matrix(build_schedule(p), 4);
    for (std::uint32_t a = 0; a < n; ++a)
      for (std::uint32_t b = 0; b < n; ++b) CHECK(m[a * n + b] == (b == (a + 1) % n ? 2 * (n - 1) * bytes / n : 0));
  }
}

TEST_CASE("nccl-tests' size semantics: counts rounded down, the size printed is the size used", "[coll][size]") {
  // alltoall: --size is the total; the count per peer rounds down to a multiple of N.
  SizePlan a = plan_size(Pattern::kAllToAll, 3, 4000, DataType::kInt32);
  CHECK(a.count == 333);
  CHECK(a.size_bytes == 3 * 333 * 4);
  CHECK(a.busbw_factor == Approx(2.0 / 3));
  // allgather: --size is the output.
  SizePlan g = plan_size(Pattern::kAllGather, 4, 1024, DataType::kFloat32);
  CHECK(g.count == 64);
  CHECK(g.in_elems == 64);
  CHECK(g.out_elems == 256);
  CHECK(g.size_bytes == 1024);
  // reduce_scatter: --size is the input.
  SizePlan rs = plan_size(Pattern::kReduceScatter, 3, 1000, DataType::kInt32);
  CHECK(rs.count == 83);
  CHECK(rs.in_elems == 249);
  CHECK(rs.size_bytes == 996);
  // allreduce: the per-rank buffer, busbw factor 2(n-1)/n.
  SizePlan ar = plan_size(Pattern::kAllReduce, 8, 1 << 20, DataType::kFloat32);
  CHECK(ar.count == (1u << 18));
  CHECK(ar.busbw_factor == Approx(1.75));
  CHECK(plan_size(Pattern::kBroadcast, 8, 4096, DataType::kInt32).busbw_factor == 1);
  CHECK(plan_size(Pattern::kIncast, 5, 4096, DataType::kInt32).busbw_factor == 4);
  // algbw in nccl-tests' GB/s: bytes / ns.
  CHECK(algbw_gbytes(ar, 1000) == Approx((1 << 20) / 1e6));
  // A size that is not whole elements: one line naming the option.
  CHECK(whole_elements("--size", 1001, DataType::kInt32).code() == droce::StatusCode::kInvalidArgument);
  CHECK(whole_elements("--size", 1001, DataType::kInt32).message() ==
        "--size: 1001 bytes is not a whole number of int32 elements (4 bytes each)");
  CHECK(whole_elements("--size", 1000, DataType::kFloat32).ok());
}

TEST_CASE("the permutation is a seeded derangement; parameters are checked", "[coll][schedule]") {
  for (std::uint32_t n : {2u, 3u, 8u, 64u}) {
    const auto p = derangement(n, 42);
    std::vector<int> seen(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      CHECK(p[i] != i);
      ++seen[p[i]];
    }
    for (int c : seen) CHECK(c == 1);
    CHECK(derangement(n, 42) == p);
  }
  ScheduleParams p;
  p.ranks = 1;
  CHECK(check_params(p).code() == droce::StatusCode::kInvalidArgument);
  CHECK(check_params(p).message() == "--ranks: 1 is not 2..64");
  p.ranks = 4;
  p.root = 4;
  CHECK(check_params(p).message() == "--root: 4 is not a rank (0..3)");
  p.root = 0;
  p.pattern = Pattern::kAllToAll;
  p.algo = Algo::kHalvingDoubling;
  CHECK(check_params(p).message() == "--algo halving-doubling: only allreduce has it");
}

TEST_CASE("data keys: 64 ranks' sums stay exact in float32, keys differ by every field", "[coll][keys]") {
  const DataKeys k(9);
  std::uint32_t max = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) max = std::max(max, k.value(63, 63, i));
  CHECK(std::uint64_t{max} * 64 < (1u << 24));
  const Expectation all(k, all_ranks(64), kAnyDst, 0);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    float sum = 0;
    for (std::uint32_t r = 0; r < 64; ++r) sum += static_cast<float>(k.value(r, kAnyDst, i));
    CHECK(sum == static_cast<float>(all.at(i)));
  }
  CHECK(k.value(1, 2, 100) != k.value(2, 2, 100));
  CHECK(k.value(1, 2, 100) != k.value(1, 3, 100));
  CHECK(k.value(1, 2, 100) != k.value(1, 2, 101));
  CHECK(k.value(1, 2, 100) != DataKeys(10).value(1, 2, 100));
}
