// The simulator's reliability model: go-back-N and selective repeat, rule by rule and over whole
// runs (every packet handed on once, in order; the same seed gives the same run).
#include <catch2/catch.hpp>

#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/fabric.h"
#include "apps/droce-sim/reliability.h"
#include "tests/sim/two_hop_incast.h"

using namespace droce::sim;

namespace {
// One flow at 100 Gb/s, no congestion control: the runs measure recovery alone.
SimConfig lossy(Recovery mode, double loss, double delay_us = 2.5) {
  SimConfig c;
  c.flows = 1;
  c.link_gbps = 100;
  c.cc = false;
  c.link_delay_us = delay_us;  // RTT about 4 x delay
  c.duration_ms = 5;           // hundreds of losses at 1 %; short enough for the sanitizer builds
  c.loss = loss;
  c.seed = 7;
  c.recovery.mode = mode;
  return c;
}
}  // namespace

TEST_CASE("gbn responder: in order ACKed, one NAK per gap, silence until ePSN, duplicates ACKed again",
          "[sim][recovery]") {
  RcReceiver rx;
  rx.reset(Recovery::kGoBackN, 0);
  auto a = rx.on_packet(0);
  REQUIRE(a);
  CHECK(a->kind == AckKind::kAck);
  CHECK(a->psn == 1);
  a = rx.on_packet(2);  // 1 lost
  REQUIRE(a);
  CHECK(a->kind == AckKind::kNakSequence);
  CHECK(a->psn == 1);
  CHECK_FALSE(rx.on_packet(3));  // the gap already NAK'd: dropped silently
  a = rx.on_packet(1);
  REQUIRE(a);
  CHECK(a->psn == 2);  // 2 and 3 were dropped, not held
  a = rx.on_packet(0);
  REQUIRE(a);
  CHECK(a->kind == AckKind::kAck);
  CHECK(a->psn == 2);
  a = rx.on_packet(4);  // a new gap gets its own NAK
  REQUIRE(a);
  CHECK(a->kind == AckKind::kNakSequence);
  CHECK(rx.stats().delivered == 2);
  CHECK(rx.stats().duplicates == 1);
  CHECK(rx.stats().order_errors == 0);
}

TEST_CASE("sr responder: holds out-of-order packets, SACKs them, hands all on in order once the gap fills",
          "[sim][recovery]") {
  RcReceiver rx;
  rx.reset(Recovery::kSelectiveRepeat, 8);
  CHECK(rx.on_packet(0)->psn == 1);
  for (std::uint64_t p : {2, 3, 5}) {
    const auto a = rx.on_packet(p);
    REQUIRE(a);
    CHECK(a->kind == AckKind::kSack);
    CHECK(a->psn == 1);
    CHECK(a->arrived == p);
  }
  CHECK(rx.on_packet(3)->kind == AckKind::kSack);  // a held duplicate
  CHECK(rx.stats().duplicates == 1);
  CHECK(rx.stats().delivered == 1);
  auto a = rx.on_packet(1);
  CHECK(a->kind == AckKind::kAck);
  CHECK(a->psn == 4);                // 1, 2, 3 handed on; 5 still waits for 4
  CHECK_FALSE(rx.on_packet(4 + 8));  // beyond the window: dropped
  CHECK(rx.on_packet(4)->psn == 6);
  CHECK(rx.stats().delivered == 6);
  CHECK(rx.stats().order_errors == 0);
}

TEST_CASE("gbn requester: a NAK rewinds to its PSN, a timeout to the oldest unacknowledged", "[sim][recovery]") {
  RcSender tx;
  tx.reset(Recovery::kGoBackN, 0, 0, 1000);
  for (std::uint64_t p = 0; p < 5; ++p) CHECK(tx.next_psn(0) == p);
  tx.on_ack(Ack{AckKind::kNakSequence, 2, 3}, 10);
  CHECK(tx.una() == 2);
  CHECK(tx.next_psn(11) == 2);
  CHECK(tx.next_psn(12) == 3);
  CHECK(tx.stats().retransmitted == 2);
  CHECK(tx.deadline() == 1010);  // restarted by the NAK's progress
  tx.on_timeout(1010);
  CHECK(tx.next_psn(1011) == 2);
  CHECK(tx.stats().timeouts == 1);
}

TEST_CASE("sr requester: resends only what SACK evidence shows missing, never past the BDP cap", "[sim][recovery]") {
  RcSender tx;
  tx.reset(Recovery::kSelectiveRepeat, 4, 0, 1000);
  for (std::uint64_t p = 0; p < 4; ++p) CHECK(tx.next_psn(0) == p);
  CHECK_FALSE(tx.next_psn(0));  // 4 outstanding: the cap
  CHECK_FALSE(tx.can_send());
  tx.on_ack(Ack{AckKind::kSack, 0, 2}, 5);  // 2 arrived: 0 and 1, sent before it, were lost
  CHECK(tx.can_send());
  CHECK(tx.next_psn(6) == 0);
  CHECK(tx.next_psn(6) == 1);
  CHECK_FALSE(tx.next_psn(6));  // 3 is still in flight, 2 arrived: nothing else is resent
  tx.on_ack(Ack{AckKind::kSack, 0, 3}, 7);
  tx.on_ack(Ack{AckKind::kAck, 1, 0}, 8);  // the resent 0 arrives: 2 and 3 still wait for 1
  CHECK(tx.una() == 1);
  CHECK(tx.next_psn(8) == 4);  // the cap moved with the cumulative ACK
  CHECK_FALSE(tx.next_psn(8));
  tx.on_ack(Ack{AckKind::kAck, 4, 1}, 9);  // 1 fills the gap
  CHECK(tx.una() == 4);
  CHECK(tx.next_psn(9) == 5);
  CHECK(tx.stats().retransmitted == 2);
  // Nothing comes back for a whole timeout: what is outstanding is resent, then new PSNs follow.
  CHECK(tx.deadline() == 1009);
  tx.on_timeout(1009);
  CHECK(tx.next_psn(1010) == 4);
  CHECK(tx.next_psn(1010) == 5);
  CHECK(tx.next_psn(1010) == 6);
  CHECK(tx.stats().timeouts == 1);
  CHECK(tx.stats().retransmitted == 4);
}

TEST_CASE("sr requester: a timeout resends what is outstanding except what was selectively acknowledged",
          "[sim][recovery]") {
  RcSender tx;
  tx.reset(Recovery::kSelectiveRepeat, 4, 0, 1000);
  for (std::uint64_t p = 0; p < 3; ++p) CHECK(tx.next_psn(0) == p);
  tx.on_ack(Ack{AckKind::kSack, 0, 1}, 5);  // 1 arrived: 0 lost; 2 still in flight
  CHECK(tx.next_psn(5) == 0);
  CHECK(tx.next_psn(5) == 3);
  CHECK_FALSE(tx.next_psn(5));
  tx.on_timeout(tx.deadline());
  CHECK(tx.next_psn(1000) == 0);
  CHECK(tx.next_psn(1000) == 2);
  CHECK(tx.next_psn(1000) == 3);  // not 1: the SACK said it arrived
  CHECK_FALSE(tx.next_psn(1000));
}

TEST_CASE("no loss: gbn and sr give the same goodput and resend nothing", "[sim][recovery]") {
  for (double delay : {2.5, 25.0}) {
    const auto g = run_dumbbell(lossy(Recovery::kGoBackN, 0, delay));
    const auto s = run_dumbbell(lossy(Recovery::kSelectiveRepeat, 0, delay));
    CHECK(g.goodput_gbps > 90);
    CHECK(s.goodput_gbps == Approx(g.goodput_gbps).epsilon(0.01));
    CHECK(g.flows[0].retransmitted == 0);
    CHECK(s.flows[0].retransmitted == 0);
    CHECK(s.bdp_packets >= 100);
  }
}

TEST_CASE("1 % loss: selective repeat beats go-back-N, and both deliver in order", "[sim][recovery]") {
  for (double delay : {2.5, 25.0}) {
    const auto g = run_dumbbell(lossy(Recovery::kGoBackN, 0.01, delay));
    const auto s = run_dumbbell(lossy(Recovery::kSelectiveRepeat, 0.01, delay));
    CHECK(s.goodput_gbps > 1.2 * g.goodput_gbps);
    CHECK(g.flows[0].naks > 0);
    CHECK(s.flows[0].sacks > 0);
    // sr resends about what was lost; gbn resends everything behind each loss.
    CHECK(s.flows[0].retransmitted < 2 * s.drops);
    CHECK(g.flows[0].retransmitted > 10 * g.drops);
    CHECK(g.flows[0].order_errors == 0);
    CHECK(s.flows[0].order_errors == 0);
  }
}

TEST_CASE("finite flows through 1 % and 5 % loss: every packet handed on exactly once, in order", "[sim][recovery]") {
  for (Recovery mode : {Recovery::kGoBackN, Recovery::kSelectiveRepeat}) {
    for (double loss : {0.01, 0.05}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        auto c = lossy(mode, loss);
        c.flows = 3;
        c.seed = seed;
        c.duration_ms = 50;  // go-back-N at 5 % through a full buffer waits out timeouts
        c.recovery.flow_bytes = 500'000;
        const auto r = run_dumbbell(c);
        const std::uint64_t payload = c.packet_bytes - kRoceOverheadBytes;
        const std::uint64_t packets = (c.recovery.flow_bytes + payload - 1) / payload;
        CHECK(r.drops > 0);
        for (const auto& f : r.flows) {
          CHECK(f.delivered_bytes == packets * payload);  // all of it, nothing twice
          CHECK(f.order_errors == 0);
          CHECK(f.completion_us > 0);
        }
      }
    }
  }
}

TEST_CASE("recovery runs are deterministic per seed", "[sim][recovery]") {
  auto c = lossy(Recovery::kSelectiveRepeat, 0.01);
  c.flows = 2;
  const auto a = run_dumbbell(c);
  const auto b = run_dumbbell(c);
  CHECK(a.events == b.events);
  CHECK(a.goodput_gbps == b.goodput_gbps);
  CHECK(a.flows[0].retransmitted == b.flows[0].retransmitted);
  c.seed = 8;
  const auto d = run_dumbbell(c);
  CHECK((d.events != a.events || d.drops != a.drops));
}

TEST_CASE("two-hop incast: no PFC with sr spares the innocent flow that PFC with gbn pauses", "[sim][recovery][pfc]") {
  const auto [pfc_gbn, sr] = droce::test::run_two_hop_incast(FabricConfig{});
  REQUIRE(!pfc_gbn.sim.flows.empty());
  CHECK(pfc_gbn.sim.drops == 0);
  CHECK(pfc_gbn.pauses_sent > 0);
  CHECK(pfc_gbn.sim.flows.back().goodput_gbps < 30);
  CHECK(sr.pauses_sent == 0);
  CHECK(sr.sim.flows.back().goodput_gbps > 80);
  CHECK(sr.sim.goodput_gbps > 0.95 * pfc_gbn.sim.goodput_gbps);  // the incast still fills its port
  for (const auto& fl : sr.sim.flows) CHECK(fl.order_errors == 0);
}

TEST_CASE("recovery options are validated with the option's name", "[sim][recovery]") {
  SimConfig c;
  c.recovery.rto_us = 0;
  CHECK(c.validate().message().rfind("--rto-us", 0) == 0);
  c = SimConfig{};
  c.recovery.flow_bytes = 1000;
  CHECK(c.validate().message().rfind("--flow-bytes", 0) == 0);  // needs gbn or sr
  c.recovery.mode = Recovery::kGoBackN;
  CHECK(c.validate().ok());
  c.recovery.bdp_packets = (1U << 20) + 1;
  CHECK(c.validate().message().rfind("--bdp-packets", 0) == 0);
  c = SimConfig{};
  c.recovery.mode = Recovery::kSelectiveRepeat;
  c.packet_bytes = 62;
  CHECK(c.validate().message().rfind("--packet-bytes", 0) == 0);
}
