// The leaf-spine carrying droce-coll's patterns on droce's own RC transport (--transport rcqp):
// every transfer placed once, in the schedule's order, the same result twice for a seed, losses
// recovered by go-back-N and by selective repeat, DCQCN pacing each QP, ECMP on the QPs' own UDP
// source ports, and the model's refusals.
#include <catch2/catch.hpp>

#include "apps/droce-sim/leaf_spine.h"

using namespace droce::sim;
namespace coll = droce::coll;

namespace {

// 16 ranks on 2 leaves of 8 hosts at 100 Gb/s, 2 spines at 400 Gb/s (non-blocking), 4096-byte PMTU
// frames (4158 bytes on the wire): few events, for the ASan build.
LeafSpineConfig fabric16(coll::Pattern p, std::uint64_t size, Recovery mode) {
  LeafSpineConfig c;
  c.fabric.base.link_gbps = 100;
  c.fabric.base.packet_bytes = 4158;
  c.fabric.base.duration_ms = 1000;  // a cap: every run here finishes long before it
  c.fabric.base.buffer_bytes = 4'000'000;
  c.fabric.base.cc = false;
  c.fabric.base.recovery.rcqp = true;
  c.fabric.base.recovery.mode = mode;
  c.fabric.pfc = true;
  c.leaves = 2;
  c.spines = 2;
  c.uplink_gbps = 400;
  c.coll.pattern = p;
  c.coll.ranks = 16;
  c.coll.size_bytes = size;
  return c;
}

// Every byte of every transfer placed by its responder exactly once, and nothing lost to the
// simulation's bookkeeping.
void check_delivered_once(const LeafSpineResult& r) {
  REQUIRE(r.complete);
  CHECK(r.delivered_bytes == r.expected_bytes);
  CHECK(r.transport.placed_bytes == r.expected_bytes);
  CHECK(r.transport.failed_qps == 0);
  CHECK(r.transport.transport_drops == 0);
  CHECK(r.dependency_violations == 0);
  for (const StepStats& s : r.steps) CHECK(s.transfers == 16);
}

}  // namespace

TEST_CASE("leaf-spine on droce's RcQps: ring allreduce placed once, one QP pair a neighbour, as the model",
          "[sim][leafspine][rcqp]") {
  const auto c = fabric16(coll::Pattern::kAllReduce, 2 << 20, Recovery::kGoBackN);
  REQUIRE(c.validate().ok());
  const LeafSpineResult r = run_leaf_spine(c);
  check_delivered_once(r);
  CHECK(r.expected_bytes == 2ull * 15 * (2 << 20));
  CHECK(r.steps.size() == 30);
  CHECK(r.transport.qp_pairs == 16);  // each rank writes to its ring neighbour only, across all steps
  CHECK(r.drops == 0);
  CHECK(r.transport.retransmitted == 0);  // lossless: nothing to resend
  // The same fabric and transfers as the model: within a few per cent of its time (the QPs' WRITEs
  // are 64 KiB messages of 4096-byte packets, the model's chunks the same frames), and the same
  // spines, ECMP hashing the QPs' own UDP source ports.
  LeafSpineConfig m = c;
  m.fabric.base.recovery = RecoveryConfig{};
  const LeafSpineResult rm = run_leaf_spine(m);
  REQUIRE(rm.complete);
  CHECK(r.time_us == Approx(rm.time_us).epsilon(0.05));
  CHECK(r.flows_per_spine == rm.flows_per_spine);
  CHECK(r.links.size() == rm.links.size());
}

TEST_CASE("leaf-spine on droce's RcQps: the same result twice for a seed, another for another seed",
          "[sim][leafspine][rcqp]") {
  auto c = fabric16(coll::Pattern::kAllReduce, 1 << 20, Recovery::kSelectiveRepeat);
  c.fabric.base.loss = 0.005;
  const LeafSpineResult a = run_leaf_spine(c), b = run_leaf_spine(c);
  check_delivered_once(a);
  CHECK(a.time_us == b.time_us);
  CHECK(a.events == b.events);
  CHECK(a.packets == b.packets);
  CHECK(a.transport.retransmitted == b.transport.retransmitted);
  CHECK(a.transport.losses == b.transport.losses);
  REQUIRE(a.steps.size() == b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) CHECK(a.steps[i].max_us == b.steps[i].max_us);
  c.fabric.base.seed = 2;
  const LeafSpineResult d = run_leaf_spine(c);
  check_delivered_once(d);
  CHECK(d.events != a.events);  // the losses fall elsewhere
}

TEST_CASE("leaf-spine on droce's RcQps: 1 % loss on every link, recovered by go-back-N and by selective repeat",
          "[sim][leafspine][rcqp]") {
  for (const Recovery mode : {Recovery::kGoBackN, Recovery::kSelectiveRepeat}) {
    INFO(recovery_name(mode));
    auto c = fabric16(coll::Pattern::kAllReduce, 1 << 20, mode);
    c.fabric.base.loss = 0.01;
    REQUIRE(c.validate().ok());
    const LeafSpineResult r = run_leaf_spine(c);
    check_delivered_once(r);
    CHECK(r.transport.losses > 0);
    CHECK(r.transport.retransmitted >= r.transport.losses);
    if (mode == Recovery::kGoBackN) {
      CHECK(r.transport.naks > 0);  // a gap NAK'd (IBTA §9.7.5.1.3) and everything after it resent
    } else {
      CHECK(r.transport.naks == 0);  // selective repeat SACKs; only what is missing is resent
      CHECK(r.transport.retransmitted < 3 * r.transport.losses);
    }
  }
}

TEST_CASE("leaf-spine on droce's RcQps: alltoall on a lossy 4:1 fabric, DCQCN paces, drops recovered",
          "[sim][leafspine][rcqp]") {
  auto c = fabric16(coll::Pattern::kAllToAll, 1 << 20, Recovery::kSelectiveRepeat);
  c.fabric.pfc = false;
  c.fabric.base.buffer_bytes = 1'000'000;
  c.uplink_gbps = 100;  // 8 hosts x 100 over 2 x 100: 4:1
  c.fabric.base.cc = true;
  REQUIRE(c.validate().ok());
  const LeafSpineResult r = run_leaf_spine(c);
  REQUIRE(r.complete);
  CHECK(r.transport.placed_bytes == r.expected_bytes);
  CHECK(r.transport.qp_pairs == 16 * 15);
  CHECK(r.ecn_marks > 0);
  CHECK(r.transport.cnps > 0);
  CHECK(r.transport.failed_qps == 0);
}

TEST_CASE("leaf-spine: the model refuses what only droce's transport carries", "[sim][leafspine][rcqp]") {
  auto c = fabric16(coll::Pattern::kAllReduce, 1 << 20, Recovery::kGoBackN);
  c.fabric.base.recovery.rcqp = false;
  CHECK(c.validate().message().find("--recovery: needs --transport rcqp") != std::string::npos);
  c.fabric.base.recovery.mode = Recovery::kNone;
  c.fabric.base.loss = 0.01;
  CHECK(c.validate().message().find("--loss: needs --transport rcqp") != std::string::npos);
  c.fabric.base.loss = 0;
  c.fabric.base.cc = true;
  CHECK(c.validate().message().find("--cc dcqcn: needs --transport rcqp") != std::string::npos);
  auto q = fabric16(coll::Pattern::kAllReduce, 1 << 20, Recovery::kNone);
  CHECK(q.validate().message().find("--transport rcqp: needs --recovery gbn or sr") != std::string::npos);
  q.fabric.base.recovery.mode = Recovery::kGoBackN;
  q.fabric.base.recovery.flow_bytes = 1 << 20;
  CHECK(q.validate().message().find("--flow-bytes") != std::string::npos);
}
