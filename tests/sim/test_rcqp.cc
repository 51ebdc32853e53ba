// The simulator on droce's own transport (--transport rcqp): requester and responder RcQps on the
// simulator's clock, frames built and parsed as on the wire. Every flow's bytes arrive once, the
// recovery counters are the QPs' own, a seed gives one run, and the model it replaces agrees with
// it where both are exact (no loss).
#include <catch2/catch.hpp>

#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/fabric.h"
#include "apps/droce-sim/qp_flow.h"
#include "apps/droce-sim/reliability.h"
#include "tests/sim/two_hop_incast.h"

using namespace droce::sim;

namespace {
SimConfig real(Recovery mode, double loss) {
  SimConfig c;
  c.flows = 2;
  c.link_gbps = 40;
  c.duration_ms = 20;
  c.loss = loss;
  c.seed = 5;
  c.recovery.mode = mode;
  c.recovery.rcqp = true;
  return c;
}
}  // namespace

TEST_CASE("rcqp: finite flows through 1 % loss deliver every byte once, recovered by the QPs", "[sim][rcqp]") {
  for (Recovery mode : {Recovery::kGoBackN, Recovery::kSelectiveRepeat}) {
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      auto c = real(mode, 0.01);
      c.flows = 3;
      c.seed = seed;
      c.recovery.flow_bytes = 1'000'000;  // 15 WRITEs of 64 KiB and one of 16,960 bytes
      const auto r = run_dumbbell(c);
      CHECK(r.drops > 0);
      for (const auto& f : r.flows) {
        CHECK(f.delivered_bytes == c.recovery.flow_bytes);  // all of it, nothing placed twice
        CHECK(f.messages == 16);
        CHECK(f.completion_us > 0);
        CHECK(f.retransmitted > 0);
        CHECK(f.transport_drops == 0);
        CHECK_FALSE(f.qp_failed);
        CHECK(f.order_errors == 0);
      }
      if (mode == Recovery::kGoBackN) CHECK(r.flows[0].naks + r.flows[1].naks + r.flows[2].naks > 0);
    }
  }
}

TEST_CASE("rcqp: the same seed gives the same run, another seed another", "[sim][rcqp]") {
  auto c = real(Recovery::kSelectiveRepeat, 0.01);
  const auto a = run_dumbbell(c);
  const auto b = run_dumbbell(c);
  CHECK(a.events == b.events);
  CHECK(a.goodput_gbps == b.goodput_gbps);
  CHECK(a.drops == b.drops);
  for (std::size_t i = 0; i < a.flows.size(); ++i) {
    CHECK(a.flows[i].retransmitted == b.flows[i].retransmitted);
    CHECK(a.flows[i].delivered_bytes == b.flows[i].delivered_bytes);
  }
  c.seed = 6;
  const auto d = run_dumbbell(c);
  CHECK((d.events != a.events || d.drops != a.drops));
}

TEST_CASE("rcqp against the model without loss: the link is full, nothing resent", "[sim][rcqp]") {
  for (Recovery mode : {Recovery::kGoBackN, Recovery::kSelectiveRepeat}) {
    auto c = real(mode, 0);
    const auto q = run_dumbbell(c);
    CHECK(q.utilization > 0.95);
    CHECK(q.drops == 0);
    for (const auto& f : q.flows) {
      CHECK(f.retransmitted == 0);
      CHECK(f.transport_drops == 0);
    }
    if (mode == Recovery::kSelectiveRepeat) {
      // Both send within the same BDP cap: the model agrees. (Its go-back-N keeps no window, so
      // its first burst fills the queue to 361 KB and DCQCN's cuts leave 0.84 of the link in the
      // second half, where the QP's 128-PSN window holds the queue under 100 KB: where they differ.)
      c.recovery.rcqp = false;
      const auto m = run_dumbbell(c);
      CHECK(q.utilization == Approx(m.utilization).epsilon(0.05));
    }
  }
}

TEST_CASE("rcqp options: the PMTU from --packet-bytes, refusals by name", "[sim][rcqp]") {
  CHECK(pmtu_for(1000, kRoceOverheadBytes) == 512);
  CHECK(pmtu_for(4158, kRoceOverheadBytes) == 4096);
  CHECK(pmtu_for(317, kRoceOverheadBytes) == 0);
  auto c = real(Recovery::kGoBackN, 0);
  c.packet_bytes = 300;
  const auto s = c.validate();
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("--packet-bytes") != std::string::npos);
  c = real(Recovery::kNone, 0);
  const auto n = c.validate();
  REQUIRE_FALSE(n.ok());
  CHECK(n.message().find("--transport rcqp") != std::string::npos);
}

TEST_CASE("rcqp on the two-hop incast: PFC with go-back-N pauses the innocent flow, sr without PFC spares it",
          "[sim][rcqp][pfc]") {
  FabricConfig f;
  f.base.packet_bytes = 4096 + kRoceOverheadBytes;  // PMTU 4096: sr's 128-PSN cap holds the BDP
  f.base.recovery.rcqp = true;
  const auto [pfc_gbn, sr] = droce::test::run_two_hop_incast(f);
  REQUIRE(!pfc_gbn.sim.flows.empty());
  CHECK(pfc_gbn.sim.drops == 0);
  CHECK(pfc_gbn.pauses_sent > 0);
  CHECK(pfc_gbn.sim.flows.back().goodput_gbps < 40);
  CHECK(sr.pauses_sent == 0);
  CHECK(sr.sim.flows.back().goodput_gbps > 2 * pfc_gbn.sim.flows.back().goodput_gbps);
  CHECK(sr.sim.utilization > 0.95);
  for (const auto* r : {&pfc_gbn, &sr})
    for (const auto& fl : r->sim.flows) {
      CHECK(fl.transport_drops == 0);
      CHECK_FALSE(fl.qp_failed);
    }
}

TEST_CASE("rcqp on the lossless fabric: finite flows complete, every byte once, nothing resent", "[sim][rcqp][pfc]") {
  FabricConfig f;
  f.base.flows = 4;
  f.base.incast = true;
  f.base.link_gbps = 40;
  f.base.duration_ms = 10;
  f.base.cc = false;
  f.base.recovery.rcqp = true;
  f.base.recovery.mode = Recovery::kGoBackN;
  f.base.recovery.flow_bytes = 300'000;
  f.pfc = true;
  f.xoff_bytes = 20'000;  // below a QP's 128-PSN window (73 KB), so its ingress pauses
  f.xon_bytes = 10'000;
  REQUIRE(f.validate().ok());
  const auto a = run_fabric(f);
  const auto b = run_fabric(f);
  CHECK(a.sim.drops == 0);
  CHECK(a.pauses_sent > 0);
  CHECK(a.sim.events == b.sim.events);
  for (const auto& fl : a.sim.flows) {
    CHECK(fl.delivered_bytes == f.base.recovery.flow_bytes);
    CHECK(fl.completion_us > 0);
    CHECK(fl.retransmitted == 0);
    CHECK(fl.messages == 5);
  }
}
