// The leaf-spine model carrying droce-coll's patterns: every byte delivered, in the schedule's
// order, busbw at the formula's bound on a non-blocking fabric, the same result for a seed, less
// under oversubscription, ECMP spreading flows over the spines, and drops counted, not hung on.
#include <catch2/catch.hpp>
#include <vector>

#include "apps/droce-sim/leaf_spine.h"

using namespace droce::sim;
namespace coll = droce::coll;

namespace {

// 16 ranks on 2 leaves of 8 hosts at 100 Gb/s; 2 spines with uplinks at 4 x 100 Gb/s: 8 x 100 in,
// 2 x 400 up, non-blocking (1:1). PFC on, so nothing is lost. Frames of a 4096-byte PMTU (4158
// bytes on the wire), a quarter of the events 1000-byte packets would take (the ASan build).
LeafSpineConfig fabric16(coll::Pattern p, std::uint64_t size) {
  LeafSpineConfig c;
  c.fabric.base.link_gbps = 100;
  c.fabric.base.packet_bytes = 4158;
  c.fabric.base.duration_ms = 1000;  // a cap: every run here finishes long before it
  c.fabric.base.buffer_bytes = 4'000'000;
  c.fabric.base.cc = false;
  c.fabric.pfc = true;
  c.fabric.xoff_bytes = 300'000;
  c.fabric.xon_bytes = 250'000;
  c.leaves = 2;
  c.spines = 2;
  c.uplink_gbps = 400;
  c.coll.pattern = p;
  c.coll.ranks = 16;
  c.coll.size_bytes = size;
  REQUIRE(c.validate().ok());
  return c;
}

}  // namespace

TEST_CASE("leaf-spine ring allreduce: every byte delivered in step order, busbw at the formula's bound",
          "[sim][leafspine]") {
  const auto c = fabric16(coll::Pattern::kAllReduce, 32 << 20);
  REQUIRE(c.oversubscription() == 1.0);
  const LeafSpineResult r = run_leaf_spine(c);
  REQUIRE(r.complete);
  // Ring allreduce moves 2 (n - 1) / n of the buffer out of each of n ranks: 2 (n - 1) x size.
  CHECK(r.expected_bytes == 2ull * 15 * (32 << 20));
  CHECK(r.delivered_bytes == r.expected_bytes);
  CHECK(r.dependency_violations == 0);
  CHECK(r.drops == 0);
  CHECK(r.steps.size() == 30);  // 2 (n - 1)
  for (const StepStats& s : r.steps) CHECK(s.transfers == 16);
  // busbw's bound is one link's payload rate: 100 Gb/s x 4096 / 4158 bytes a frame = 12.31 GB/s.
  // Each of the 30 steps also waits for a 2 MiB chunk's last frame to cross up to 4 links (about
  // 4 x 1.33 us on the chunk's 170 us), so the run may fall short of the bound by up to 5 %, never
  // exceed it.
  const double bound = 100.0 / 8 * 4096 / 4158;
  CHECK(r.busbw_gbytes <= bound);
  CHECK(r.busbw_gbytes >= 0.95 * bound);
  CHECK(r.plan.busbw_factor == Approx(2.0 * 15 / 16));
}

TEST_CASE("leaf-spine: the same seed gives the same result", "[sim][leafspine]") {
  auto c = fabric16(coll::Pattern::kAllToAll, 4 << 20);
  c.uplink_gbps = 100;  // 4:1, so queues build, RED marks (random) and PFC pauses
  const LeafSpineResult a = run_leaf_spine(c), b = run_leaf_spine(c);
  REQUIRE(a.complete);
  CHECK(a.ecn_marks > 0);
  CHECK(a.pauses > 0);
  CHECK(a.time_us == b.time_us);
  CHECK(a.events == b.events);
  CHECK(a.ecn_marks == b.ecn_marks);
  CHECK(a.pauses == b.pauses);
  REQUIRE(a.steps.size() == b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) CHECK(a.steps[i].max_us == b.steps[i].max_us);
  REQUIRE(a.links.size() == b.links.size());
  for (std::size_t i = 0; i < a.links.size(); ++i) {
    CHECK(a.links[i].up.bytes == b.links[i].up.bytes);
    CHECK(a.links[i].down.max_queue_bytes == b.links[i].down.max_queue_bytes);
  }
}

TEST_CASE("leaf-spine alltoall: a 2:1 oversubscribed fabric gives less busbw than 1:1", "[sim][leafspine]") {
  auto c = fabric16(coll::Pattern::kAllToAll, 4 << 20);
  const LeafSpineResult full = run_leaf_spine(c);
  c.uplink_gbps = 200;
  REQUIRE(c.oversubscription() == 2.0);
  const LeafSpineResult half = run_leaf_spine(c);
  REQUIRE(full.complete);
  REQUIRE(half.complete);
  CHECK(full.delivered_bytes == half.delivered_bytes);
  // Half of every rank's alltoall bytes cross the uplinks: at 2:1 they take at least ~1.5 x as long.
  CHECK(half.busbw_gbytes < 0.8 * full.busbw_gbytes);
}

TEST_CASE("leaf-spine: ECMP spreads the flows over every spine, by the lab's names", "[sim][leafspine]") {
  auto c = fabric16(coll::Pattern::kAllToAll, 1 << 20);
  c.spines = 4;
  c.uplink_gbps = 200;
  const LeafSpineResult r = run_leaf_spine(c);
  REQUIRE(r.complete);
  // 2 leaves x 8 ranks x 8 peers on the other leaf: 128 flows between leaves.
  REQUIRE(r.flows_per_spine.size() == 4);
  std::uint64_t flows = 0;
  for (std::uint64_t f : r.flows_per_spine) {
    CHECK(f > 0);
    CHECK(f < 64);  // none takes half of them
    flows += f;
  }
  CHECK(flows == 128);
  REQUIRE(r.links.size() == 16 + 2 * 4);
  CHECK(r.links[3].name == "ep3-leaf0");
  CHECK(r.links[16 + 1].name == "leaf0-spine1");
  for (std::size_t i = 16; i < r.links.size(); ++i) {
    INFO(r.links[i].name);
    CHECK(r.links[i].up.bytes > 0);
    CHECK(r.links[i].down.bytes > 0);
  }
  // The counts are the hash's picks for the 128 pairs, and another hash seed moves some of them.
  std::vector<std::uint64_t> recount(4, 0);
  std::uint32_t moved = 0;
  auto reseeded = c;
  reseeded.ecmp.seed = 1;
  for (std::uint32_t a = 0; a < 16; ++a)
    for (std::uint32_t b = 0; b < 16; ++b)
      if (a / 8 != b / 8) {
        ++recount[spine_of(c, a, b)];
        moved += spine_of(c, a, b) != spine_of(reseeded, a, b);
      }
  CHECK(recount == r.flows_per_spine);
  CHECK(moved > 0);
}

TEST_CASE("leaf-spine without PFC: a small buffer's drops are counted and the run ends incomplete",
          "[sim][leafspine]") {
  auto c = fabric16(coll::Pattern::kIncast, 256 << 10);
  c.fabric.pfc = false;
  c.fabric.base.buffer_bytes = 100'000;
  const LeafSpineResult r = run_leaf_spine(c);
  CHECK_FALSE(r.complete);
  CHECK(r.drops > 0);
  CHECK(r.delivered_bytes < r.expected_bytes);
  CHECK(r.expected_bytes == 15ull * (256 << 10));
  CHECK(r.busbw_gbytes == 0);
  std::uint64_t link_drops = 0;
  for (const LinkStats& l : r.links) link_drops += l.up.drops + l.down.drops;
  CHECK(link_drops == r.drops);
}

TEST_CASE("leaf-spine options are validated with the option's name", "[sim][leafspine]") {
  auto c = fabric16(coll::Pattern::kAllReduce, 1 << 20);
  c.leaves = 3;
  CHECK(c.validate().message().find("--ranks") != std::string::npos);
  c.leaves = 2;
  c.spines = 0;
  CHECK(c.validate().message().find("--spines") != std::string::npos);
}
