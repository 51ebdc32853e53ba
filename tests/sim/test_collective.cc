// The simulator's collective transfers are droce-coll's: for every N droce-coll schedules (up to
// its 64-rank limit) the same transfers in the same order, with the same sizes and dependencies.
#include <catch2/catch.hpp>

#include "apps/droce-coll/schedule.h"
#include "apps/droce-sim/collective.h"

using namespace droce::sim;
namespace coll = droce::coll;

TEST_CASE("collective transfers equal droce-coll's schedule at N <= 64", "[sim][collective]") {
  const coll::Pattern patterns[] = {coll::Pattern::kAllReduce, coll::Pattern::kAllToAll, coll::Pattern::kIncast,
                                    coll::Pattern::kPermutation, coll::Pattern::kBisection};
  // Sizes that split evenly, unevenly, and into fewer elements than ranks (empty blocks left out).
  const std::uint64_t sizes[] = {4, 12, 4 * 1000, 4 * 4099, 1 << 20};
  std::uint64_t compared = 0;
  for (coll::Pattern p : patterns)
    for (std::uint32_t n : {2u, 3u, 5u, 8u, 16u, 17u, 33u, 64u})
      for (std::uint64_t size : sizes) {
        CollectiveConfig c;
        c.pattern = p;
        c.ranks = n;
        c.size_bytes = size;
        c.seed = 7;
        if (!c.validate().ok()) continue;  // no element per part: droce-coll refuses it too
        const CollectivePlan mine = plan_collective(c);
        coll::ScheduleParams sp;
        sp.pattern = p;
        sp.ranks = n;
        sp.seed = 7;
        sp.plan = coll::plan_size(p, n, size, coll::DataType::kFloat32);
        REQUIRE(coll::check_params(sp).ok());
        const coll::Schedule s = coll::build_schedule(sp);
        INFO(coll::pattern_name(p) << " N=" << n << " size=" << size);
        CHECK(mine.plan.count == sp.plan.count);
        CHECK(mine.plan.size_bytes == sp.plan.size_bytes);
        CHECK(mine.plan.busbw_factor == sp.plan.busbw_factor);
        REQUIRE(mine.transfers.size() == s.transfers.size());
        std::uint32_t prev_step = 0;
        for (std::size_t i = 0; i < s.transfers.size(); ++i) {
          const SimTransfer& a = mine.transfers[i];
          const coll::Transfer& b = s.transfers[i];
          INFO("transfer " << i);
          REQUIRE(a.src == b.src);
          REQUIRE(a.dst == b.dst);
          REQUIRE(a.step == b.step);
          REQUIRE(a.after == b.after);
          REQUIRE(a.bytes == b.count * 4);
          REQUIRE(a.step >= prev_step);  // steps in order: the simulator's per-step figures rely on it
          prev_step = a.step;
          ++compared;
        }
      }
  CHECK(compared > 10'000);
}

TEST_CASE("collective options: unsupported patterns, rank counts and sizes are refused by name", "[sim][collective]") {
  CollectiveConfig c;
  c.pattern = coll::Pattern::kBroadcast;
  CHECK(c.validate().message().find("--pattern") != std::string::npos);
  c.pattern = coll::Pattern::kAllReduce;
  c.ranks = 1;
  CHECK(c.validate().message().find("--ranks") != std::string::npos);
  c.ranks = 4096;
  c.size_bytes = 6;
  CHECK(c.validate().message().find("--size") != std::string::npos);
  c.size_bytes = 4;
  CHECK(c.validate().ok());  // one element: most blocks are empty, as in droce-coll
  c.pattern = coll::Pattern::kAllToAll;
  CHECK(c.validate().message().find("--size") != std::string::npos);  // no element per peer
}
