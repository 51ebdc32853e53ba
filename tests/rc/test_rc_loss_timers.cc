// Loss recovery in round trips (docs/transport.md): the round-trip estimate, the adaptive
// retransmission timeout and its bounds, and the tail-loss probes, on a clock the test drives (a
// round trip that doubles under queueing draws no probe; an ACK in flight when a probe leaves does
// not rewind go-back-N); a
// lost tail, a lost ACK and a lost NAK recovered within a few round trips over the loopback link;
// a peer that never answers still failing the QP after retry_cnt IBTA timeouts, when it did before.
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "tests/rc/sr_harness.h"

using namespace droce;
using namespace droce::test;
using rc::WcStatus;

namespace {

constexpr std::uint64_t kNever = UINT64_MAX;

// A requester QP in RTS (first PSN 10) whose responses the test crafts, at times it chooses.
struct Requester {
  rc::MrTable m;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096);
  rc::MemoryRegion mr;
  rc::RcQp qp;
  // The probe timeout's own floor is 0 unless given: these cases reason in round trips of microseconds.
  Requester(std::uint8_t timeout, std::uint32_t floor_us, bool adaptive = true, std::uint32_t pto_floor_us = 0)
      : qp(make_attr(timeout, floor_us, adaptive, pto_floor_us), m) {
    mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
    to_rts(qp);
  }
  static rc::QpAttr make_attr(std::uint8_t timeout, std::uint32_t floor_us, bool adaptive, std::uint32_t pto_floor_us) {
    auto a = attr(0x11, 0x12, 10, 1);
    a.timeout = timeout;
    a.rto_floor_us = floor_us;
    a.pto_floor_us = pto_floor_us;
    a.adaptive_rto = adaptive;
    return a;
  }
  std::uint64_t ibta() const { return qp.attr().ack_timeout_ns(); }
  void send(std::uint64_t id, std::uint32_t len = 64) {
    rc::SendWr w;
    w.wr_id = id;
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), len, mr.lkey};
    REQUIRE(qp.post_send(w).ok());
  }
  rc::TxDescriptor transmit(std::uint64_t now) {
    rc::TxDescriptor d;
    REQUIRE(qp.next_packet(now, d));
    return d;
  }
  void ack(std::uint32_t psn, std::uint64_t now, std::uint8_t syndrome = wire::kAethAckUnlimited) {
    wire::PacketInfo pi{};
    pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kAck);
    pi.psn = psn;
    pi.aeth_syndrome = syndrome;
    qp.on_packet(pi, nullptr, now);
  }
  void atomic_ack(std::uint32_t psn, std::uint64_t orig, std::uint64_t now) {
    wire::PacketInfo pi{};
    pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kAtomicAck);
    pi.psn = psn;
    pi.aeth_syndrome = wire::kAethAckUnlimited;
    pi.atomic_ack_orig = orig;
    qp.on_packet(pi, nullptr, now);
  }
  // One message sent at `at` and acknowledged `rtt` later: a round trip measured.
  void round_trip(std::uint64_t id, std::uint64_t at, std::uint64_t rtt) {
    send(id);
    const rc::TxDescriptor d = transmit(at);
    REQUIRE(d.ack_req);
    ack(d.psn, at + rtt);
  }
};

}  // namespace

TEST_CASE(
    "RTT estimator: RFC 6298's first sample and updates; RTO floored, doubled, capped; PTO max(2 SRTT, SRTT + 4 "
    "RTTVAR) plus its floor, backed off",
    "[rc][rto]") {
  rc::RttEstimator e;
  CHECK_FALSE(e.valid());
  CHECK(e.rto_ns(1000, 50'000, 0) == 50'000);  // nothing measured: the IBTA timeout itself
  CHECK(e.pto_ns(0, 0) == 0);                  // and no probe
  e.sample(8000);                              // SRTT = R, RTTVAR = R/2
  CHECK(e.srtt_ns() == 8000);
  CHECK(e.rttvar_ns() == 4000);
  CHECK(e.rto_ns(1000, 50'000, 0) == 24'000);  // SRTT + 4 RTTVAR
  CHECK(e.rto_ns(1000, 50'000, 1) == 48'000);
  CHECK(e.rto_ns(1000, 50'000, 2) == 50'000);    // never beyond the ceiling
  CHECK(e.rto_ns(30'000, 50'000, 0) == 30'000);  // never below the floor
  CHECK(e.pto_ns(0, 0) == 24'000);               // the variance term: SRTT + 4 RTTVAR > 2 SRTT
  CHECK(e.pto_ns(1000, 0) == 25'000);            // plus the floor
  CHECK(e.pto_ns(1000, 2) == 100'000);           // backed off twice
  e.sample(16'000);                              // RTTVAR = 3/4 4000 + 1/4 8000, SRTT = 7/8 8000 + 1/8 16000
  CHECK(e.rttvar_ns() == 5000);
  CHECK(e.srtt_ns() == 9000);
  e.sample(4000);
  CHECK(e.rttvar_ns() == 5000);  // 3/4 5000 + 1/4 5000
  CHECK(e.srtt_ns() == 8375);    // 9000 - 1125 + 500
  CHECK(e.min_rtt_ns() == 4000);
  rc::RttEstimator steady;  // a round trip that does not vary: RTTVAR decays, 2 SRTT rules
  for (int i = 0; i < 40; ++i) steady.sample(8000);
  CHECK(steady.rttvar_ns() < 1000);
  CHECK(steady.pto_ns(0, 0) == 16'000);
  CHECK(steady.pto_ns(2'000'000, 0) == 2'016'000);
  rc::RttEstimator tiny;
  tiny.sample(100);
  CHECK(tiny.pto_ns(0, 0) == rc::kPtoMinNs);
}

TEST_CASE("adaptive timer: before any round trip is measured, the plain IBTA timer and no probe", "[rc][rto]") {
  Requester r(14, 1000);
  const std::uint64_t t = r.ibta();
  r.send(1);
  r.transmit(1000);
  CHECK(r.qp.next_timer_ns() == 1000 + t);
  CHECK(r.qp.rto_ns() == t);
  r.qp.on_timer(1000 + t);
  CHECK(r.qp.counters().local_ack_timeout_err == 1);
  CHECK(r.qp.counters().adaptive_timeouts == 0);
  CHECK(r.qp.counters().tail_probes == 0);
}

TEST_CASE(
    "tail-loss probe: a PTO of silence resends the oldest unacknowledged packet with AckReq; the next probe "
    "waits twice as long, until the RTO",
    "[rc][rto][probe]") {
  Requester r(14, 1000);        // IBTA 67 ms, RTO floor 1 ms
  r.round_trip(1, 1000, 2000);  // SRTT 2 us, RTTVAR 1 us: RTO 6 us, floored to 1 ms; PTO 6 us
  CHECK(r.qp.srtt_ns() == 2000);
  CHECK(r.qp.rto_ns() == 1'000'000);
  CHECK(r.qp.next_timer_ns() == kNever);  // all acknowledged
  r.send(2);
  r.send(3);
  CHECK(r.transmit(10'000).psn == 11);
  CHECK(r.transmit(10'000).psn == 12);
  CHECK(r.qp.pto_ns() == 6000);
  CHECK(r.qp.next_timer_ns() == 16'000);  // the first probe: SRTT + 4 RTTVAR
  r.qp.on_timer(16'000);
  const rc::TxDescriptor p = r.transmit(16'000);
  CHECK(p.psn == 11);  // the oldest unacknowledged packet
  CHECK(p.ack_req);
  CHECK(p.retransmission);
  CHECK(r.qp.counters().tail_probes == 1);
  CHECK(r.qp.counters().local_ack_timeout_err == 0);
  CHECK(r.qp.next_timer_ns() == 16'000 + 12'000);  // twice the wait
  rc::TxDescriptor none;
  CHECK_FALSE(r.qp.next_packet(16'000, none));  // one packet, nothing rewound
  // The train goes on, doubling, and stops before the RTO (sent at 10 us: due at 1.01 ms).
  std::uint64_t probes = 1;
  while (r.qp.next_timer_ns() < 10'000 + 1'000'000) {
    const std::uint64_t at = r.qp.next_timer_ns();
    r.qp.on_timer(at);
    CHECK(r.transmit(at).psn == 11);
    ++probes;
  }
  CHECK(probes == 7);  // at 16, 28, 52, 100, 196, 388, 772 us; the next (1540 us) would follow the RTO
  CHECK(r.qp.counters().tail_probes == probes);
  CHECK(r.qp.next_timer_ns() == 10'000 + 1'000'000);
  CHECK(r.qp.counters().local_ack_timeout_err == 0);
}

TEST_CASE(
    "adaptive RTO: a few RTTs, doubled by each expiry, never beyond the IBTA timeout; expiries resend everything "
    "and spend no retry",
    "[rc][rto]") {
  Requester r(4, 1);  // IBTA 65.5 us; a 1 us floor shows the round trip's own RTO
  const std::uint64_t t = r.ibta();
  REQUIRE(t == 65'536);
  r.round_trip(1, 1000, 2000);  // RTO = 2 + 4 x 1 = 6 us
  CHECK(r.qp.rto_ns() == 6000);
  CHECK(r.qp.pto_ns() == 6000);  // never past the RTO (RFC 8985 §7.2): the RTO fires, not a probe
  r.send(2);
  r.send(3);
  r.transmit(10'000);
  r.transmit(10'000);
  CHECK(r.qp.next_timer_ns() == 16'000);
  r.qp.on_timer(16'000);
  CHECK(r.qp.counters().tail_probes == 0);
  CHECK(r.qp.counters().local_ack_timeout_err == 1);  // every expiry counts
  CHECK(r.qp.counters().adaptive_timeouts == 1);
  CHECK(r.qp.rto_ns() == 12'000);       // backed off
  CHECK(r.transmit(16'000).psn == 11);  // go-back-N from the oldest
  CHECK(r.transmit(16'000).psn == 12);
  CHECK(r.qp.next_timer_ns() == 28'000);  // no probe after an expiry: the timer backs off alone
  r.qp.on_timer(28'000);
  CHECK(r.qp.rto_ns() == 24'000);
  CHECK(r.qp.next_timer_ns() == 52'000);
  r.qp.on_timer(52'000);
  CHECK(r.qp.rto_ns() == 48'000);
  CHECK(r.qp.counters().adaptive_timeouts == 3);
  // 52 + 48 us is past the IBTA deadline (10 + 65.5 us): that one comes first, and spends a retry.
  CHECK(r.qp.next_timer_ns() == 10'000 + t);
  r.qp.on_timer(10'000 + t);
  CHECK(r.qp.counters().local_ack_timeout_err == 4);
  CHECK(r.qp.counters().adaptive_timeouts == 3);
  CHECK(r.qp.rto_ns() == t);  // 96 us capped at the IBTA timeout
  CHECK(r.qp.state() == rc::QpState::kRts);
}

TEST_CASE("Karn's rule: an ACK for a resent packet gives no sample; a packet sent once does, and ends the backoff",
          "[rc][rto]") {
  Requester r(14, 1);
  r.round_trip(1, 1000, 2000);
  CHECK(r.qp.rto_ns() == 6000);
  r.send(2);
  r.transmit(10'000);     // PSN 11, timed
  r.qp.on_timer(16'000);  // RTO (the PTO is capped to it): backoff
  CHECK(r.qp.rto_ns() == 12'000);
  r.transmit(16'000);  // go-back-N resend: the timing is cancelled
  r.ack(11, 100'000);  // 90 us after the first send: not a sample
  CHECK(r.qp.srtt_ns() == 2000);
  CHECK(r.qp.rto_ns() == 12'000);  // still backed off
  r.round_trip(3, 200'000, 2000);  // sent once, acknowledged: a sample, the backoff ends
  CHECK(r.qp.srtt_ns() == 2000);
  CHECK(r.qp.rto_ns() == 2000 + 4 * 750);  // RTTVAR 3/4 x 1000 + 1/4 x 0
}

TEST_CASE("spurious_retransmits: a resend acknowledged sooner than the minimum RTT after it answered the original",
          "[rc][rto]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);  // min RTT 2 us
  r.send(2);
  r.transmit(10'000);
  CHECK(r.qp.pto_ns() == 6000);
  r.qp.on_timer(16'000);
  r.transmit(16'000);  // the probe
  r.ack(11, 17'999);   // 1.999 us after it: the ACK of the first transmission
  CHECK(r.qp.counters().spurious_retransmits == 1);
  CHECK(r.qp.pto_ns() == 6000);  // one needless probe alone does not back the PTO off
  r.send(3);
  r.transmit(20'000);
  CHECK(r.qp.next_timer_ns() == 26'000);
  r.qp.on_timer(26'000);
  r.transmit(26'000);
  r.ack(12, 28'000);  // a full round trip after the probe: it may have been needed
  CHECK(r.qp.counters().spurious_retransmits == 1);
  CHECK(r.qp.counters().tail_probes == 2);
}

// A PTO backed off by needless probes comes down again at an adaptive expiry: the silence outlasted
// the RTO, so no probe ran in it. Before, only a probe that found a loss could halve it, and a PTO
// backed off past the RTO never probed again: every later lost NAK or tail waited for the RTO.
TEST_CASE("an adaptive RTO expiry halves a PTO that needless probes had backed off", "[rc][rto][probe]") {
  Requester r(14, 1000);        // IBTA 67 ms, RTO floor 1 ms
  r.round_trip(1, 1000, 2000);  // PTO 6 us
  r.send(2);
  r.transmit(10'000);
  r.qp.on_timer(16'000);
  r.transmit(16'000);  // the probe
  r.ack(11, 17'999);   // the original's ACK: the probe was needless
  CHECK(r.qp.pto_ns() == 6'000);
  r.send(3);
  r.transmit(20'000);
  r.qp.on_timer(26'000);
  r.transmit(26'000);  // a second probe
  r.ack(12, 27'999);   // needless again: two in a row back the PTO off
  CHECK(r.qp.pto_ns() == 12'000);
  r.send(4);
  r.transmit(30'000);  // then silence: probes at 42, 66, 114, .. us, unanswered, until the RTO
  std::uint64_t at = 0;
  while ((at = r.qp.next_timer_ns()) < 30'000 + 1'000'000) {
    r.qp.on_timer(at);
    r.transmit(at);
  }
  CHECK(r.qp.counters().adaptive_timeouts == 0);
  r.qp.on_timer(at);  // the RTO
  CHECK(r.qp.counters().adaptive_timeouts == 1);
  CHECK(r.qp.pto_ns() == 6'000);  // halved back
}

// A needless probe costs one packet; a lost tail left waiting costs the whole PTO. So one needless
// probe (a peer's single stall) leaves the PTO as it was, two in a row double it, and a probe that
// finds a loss starts the count over (back_off_pto, kNeedlessProbesPerBackoff).
TEST_CASE("needless probes back the PTO off only two in a row; a probe that finds a loss starts the count over",
          "[rc][rto][probe]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);  // PSN 10; min RTT 2 us, PTO 6 us
  r.send(2);
  r.transmit(10'000);
  r.qp.on_timer(16'000);
  CHECK(r.transmit(16'000).psn == 11);  // the probe
  r.ack(11, 17'999);                    // the original's ACK: needless
  CHECK(r.qp.counters().spurious_retransmits == 1);
  CHECK(r.qp.pto_ns() == 6'000);  // one needless probe: no backoff
  r.send(3, 3 * 1024);            // PSNs 12..14, AckReq on 14
  for (std::uint32_t psn = 12; psn <= 14; ++psn) CHECK(r.transmit(20'000).psn == psn);
  r.qp.on_timer(26'000);
  CHECK(r.transmit(26'000).psn == 12);  // the probe
  r.ack(12, 30'000);                    // only a resend draws it: 13 and 14 were lost
  rc::TxDescriptor d;
  REQUIRE(r.qp.next_packet(30'000, d));
  CHECK(d.psn == 13);
  REQUIRE(r.qp.next_packet(30'000, d));
  CHECK(d.psn == 14);
  r.ack(14, 30'500);
  CHECK(r.qp.sq_una() == 15);
  const std::uint64_t pto = r.qp.pto_ns();
  r.send(4);
  r.transmit(40'000);
  r.qp.on_timer(40'000 + pto);
  CHECK(r.transmit(40'000 + pto).psn == 15);
  r.ack(15, 40'000 + pto + 1'999);  // needless, but the first since the loss: no backoff
  CHECK(r.qp.counters().spurious_retransmits == 2);
  CHECK(r.qp.pto_ns() == pto);
  r.send(5);
  r.transmit(60'000);
  r.qp.on_timer(60'000 + pto);
  CHECK(r.transmit(60'000 + pto).psn == 16);
  r.ack(16, 60'000 + pto + 1'999);  // the second in a row: doubled
  CHECK(r.qp.counters().spurious_retransmits == 3);
  CHECK(r.qp.pto_ns() == 2 * pto);
  CHECK(r.qp.counters().local_ack_timeout_err == 0);
}

// A lossless path whose queue builds (PFC pauses, a DCQCN bottleneck filling): the round trip goes
// from 3 ms to 6 ms in one step and stays there, four one-packet messages in flight at a time, each
// answered a round trip after it left. 2 x SRTT alone would fire exactly when the first doubled
// answer is due; the PTO's floor (added) and variance term keep every probe away, and nothing is
// resent. The default floors throughout (RTO 20 ms, PTO 2 ms).
TEST_CASE("a round trip that doubles under queueing, with nothing lost, draws no probe and no resend",
          "[rc][rto][probe]") {
  Requester r(14, rc::kDefaultRtoFloorUs, true, rc::kDefaultPtoFloorUs);
  constexpr std::uint64_t kR = 3'000'000;
  std::uint64_t now = 1'000'000, resent = 0, id = 0;
  for (int round = 0; round < 60; ++round) {
    const std::uint64_t rtt = round < 20 ? kR : 2 * kR;
    std::uint32_t last = 0;
    for (int i = 0; i < 4; ++i) {  // four messages leave 10 us apart
      r.send(++id);
      const rc::TxDescriptor d = r.transmit(now + 10'000 * static_cast<std::uint64_t>(i));
      if (d.retransmission) ++resent;
      last = d.psn;
    }
    // Their ACKs, each a round trip after its message; any timer due before one runs first.
    for (int i = 0; i < 4; ++i) {
      const std::uint64_t at = now + 10'000 * static_cast<std::uint64_t>(i) + rtt;
      while (r.qp.next_timer_ns() <= at) {
        const std::uint64_t t = r.qp.next_timer_ns();
        r.qp.on_timer(t);
        rc::TxDescriptor d;
        while (r.qp.next_packet(t, d)) ++resent;
      }
      r.ack(last - 3 + static_cast<std::uint32_t>(i), at);
    }
    now += 10'000 * 4 + rtt;
    rc::Completion c;
    while (r.qp.poll_cq(c)) CHECK(c.status == WcStatus::kSuccess);
  }
  CHECK(r.qp.counters().tail_probes == 0);
  CHECK(r.qp.counters().local_ack_timeout_err == 0);
  CHECK(resent == 0);
  CHECK(r.qp.srtt_ns() > 5 * kR / 3);  // the estimate followed the queue
}

// A peer that stalls (a descheduled memif process, a PFC pause) holds the ACKs of four packets while
// the probe goes out; they arrive after it, long after min RTT, and only then the probe's own
// answer, a re-ACK of everything. None of them may rewind go-back-N: nothing was lost. The probe,
// needless, backs the PTO off.
TEST_CASE("an ACK in flight when the probe leaves does not rewind go-back-N; the probe's answer shows nothing lost",
          "[rc][rto][probe]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);  // PSN 10; min RTT 2 us, PTO 6 us
  for (std::uint64_t i = 0; i < 4; ++i) {
    r.send(2 + i);
    CHECK(r.transmit(10'000).psn == 11 + i);
  }
  r.qp.on_timer(16'000);
  const rc::TxDescriptor probe = r.transmit(16'000);
  CHECK(probe.psn == 11);
  CHECK(r.qp.counters().tail_probes == 1);
  rc::TxDescriptor d;
  const std::uint32_t acks[] = {11, 12, 13, 14};
  std::uint64_t at = 40'000;  // 24 us after the probe: far beyond min RTT
  for (const std::uint32_t psn : acks) {
    r.ack(psn, at);
    if (psn == 11) {
      // It may be the probe's answer (a responder waiting at 12 re-ACKs 11): one follow-up probe,
      // of 12, asks again (on_probe_answer).
      REQUIRE(r.qp.next_packet(at, d));
      CHECK(d.psn == 12);
      CHECK(d.ack_req);
    }
    CHECK_FALSE(r.qp.next_packet(at, d));  // nothing rewound, and no second follow-up
    at += 100;
  }
  CHECK(r.qp.sq_una() == 15);
  at += 10'000;
  r.ack(14, at);  // the follow-up's answer: a re-ACK, nothing missing
  CHECK_FALSE(r.qp.next_packet(at, d));
  CHECK(r.qp.counters().tail_probes == 2);
  CHECK(r.qp.counters().spurious_retransmits == 1);  // the follow-up, answered by the ACK for 12 in flight
  CHECK(r.qp.pto_ns() == 12'000);                    // two needless probes in a row: backed off once
  rc::Completion c;
  int done = 0;
  while (r.qp.poll_cq(c)) {
    CHECK(c.status == WcStatus::kSuccess);
    ++done;
  }
  CHECK(done == 5);
}

// The same stall with a three-packet message (AckReq on its last packet only): the ACK for the
// whole message arrives after the probe and is progress; had the responder's ePSN been the second
// packet, its re-ACK of the probe (for the first) would have rewound from there.
TEST_CASE("an ACK for a packet that left without AckReq answers the probe and rewinds from it", "[rc][rto][probe]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);  // PSN 10
  r.send(2, 3 * 1024);          // PSNs 11..13, AckReq on 13
  for (std::uint32_t psn = 11; psn <= 13; ++psn) CHECK(r.transmit(10'000).psn == psn);
  r.qp.on_timer(16'000);
  CHECK(r.transmit(16'000).psn == 11);  // the probe
  r.ack(11, 30'000);                    // only a resend draws an ACK for PSN 11: the responder's ePSN is 12
  rc::TxDescriptor d;
  REQUIRE(r.qp.next_packet(30'000, d));  // 12 and 13 were lost, and go again
  CHECK(d.psn == 12);
  REQUIRE(r.qp.next_packet(30'000, d));
  CHECK(d.psn == 13);
  CHECK(r.qp.counters().local_ack_timeout_err == 0);
}

// A lone probe meets no queue: its answer may come back sooner than the minimum RTT, which the
// packets of a window set (loopback at 1 % loss: 5 us against 13 us). An ACK only the probe could
// have drawn is its answer whenever it comes: it rewinds, and the probe, which found a loss, is
// neither spurious nor a reason to back the PTO off.
TEST_CASE("a probe answered sooner than min RTT by an ACK only it could draw rewinds, and is not spurious",
          "[rc][rto][probe]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);  // PSN 10; min RTT 2 us, PTO 6 us
  r.send(2, 3 * 1024);          // PSNs 11..13, AckReq on 13
  for (std::uint32_t psn = 11; psn <= 13; ++psn) CHECK(r.transmit(10'000).psn == psn);
  r.qp.on_timer(16'000);
  CHECK(r.transmit(16'000).psn == 11);  // the probe
  r.ack(11, 16'500);                    // 0.5 us later: the responder's ePSN was 12
  rc::TxDescriptor d;
  REQUIRE(r.qp.next_packet(16'500, d));
  CHECK(d.psn == 12);
  CHECK(r.qp.counters().spurious_retransmits == 0);
  CHECK(r.qp.pto_ns() == 6'000);
}

// The probe's answer is the responder's ePSN - 1; when ePSN is a message's first packet, that is
// the last packet of the message before, which asked for an ACK when it first left: an ACK in
// flight looks the same. One follow-up probe, of the new sq.una, asks again at once; its answer
// (an ACK for a packet that left without AckReq) rewinds a round trip later, not a PTO later.
TEST_CASE("an ACK that may be the probe's answer or one in flight draws one follow-up probe, whose answer rewinds",
          "[rc][rto][probe]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);  // PSN 10; PTO 6 us
  r.send(2, 3 * 1024);          // PSNs 11..13
  r.send(3, 3 * 1024);          // PSNs 14..16
  for (std::uint32_t psn = 11; psn <= 16; ++psn) CHECK(r.transmit(10'000).psn == psn);
  r.qp.on_timer(16'000);
  CHECK(r.transmit(16'000).psn == 11);  // the probe
  r.ack(13, 16'500);                    // the responder waits at 14 (its NAK lost), or an ACK in flight
  rc::TxDescriptor d;
  REQUIRE(r.qp.next_packet(16'500, d));  // the follow-up
  CHECK(d.psn == 14);
  CHECK(d.ack_req);
  CHECK(d.retransmission);
  CHECK_FALSE(r.qp.next_packet(16'500, d));
  r.ack(14, 17'000);  // it arrived as the responder's ePSN: 15 and 16 were dropped
  REQUIRE(r.qp.next_packet(17'000, d));
  CHECK(d.psn == 15);
  REQUIRE(r.qp.next_packet(17'000, d));
  CHECK(d.psn == 16);
  CHECK(r.qp.counters().tail_probes == 2);
  CHECK(r.qp.counters().spurious_retransmits == 0);
  CHECK(r.qp.counters().local_ack_timeout_err == 0);
  CHECK(r.qp.pto_ns() == 6'000);
}

// A follow-up draws no follow-up of its own: a stalled peer's backlog of ACKs costs one packet.
TEST_CASE("a follow-up probe's own ambiguous answer draws no further probe", "[rc][rto][probe]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);                                    // PSN 10; PTO 6 us
  for (std::uint64_t i = 0; i < 3; ++i) r.send(2 + i, 3 * 1024);  // PSNs 11..19
  for (std::uint32_t psn = 11; psn <= 19; ++psn) CHECK(r.transmit(10'000).psn == psn);
  r.qp.on_timer(16'000);
  CHECK(r.transmit(16'000).psn == 11);
  r.ack(13, 30'000);
  CHECK(r.transmit(30'000).psn == 14);  // the follow-up
  r.ack(16, 30'100);                    // ambiguous again
  rc::TxDescriptor d;
  CHECK_FALSE(r.qp.next_packet(30'100, d));
  CHECK(r.qp.counters().tail_probes == 2);
  r.ack(17, 40'000);  // a packet that left without AckReq: only a resend drew this
  REQUIRE(r.qp.next_packet(40'000, d));
  CHECK(d.psn == 18);
}

// An atomic answered after a rewind reached it is executed but not yet retired (it looks unsent
// until the rewind passes it). A probe once took it for the oldest waiting request and asked it
// from its "first missing response", one past its only PSN: the next request's PSN with the
// atomic's operands, which the responder executed as new (a FetchAdd lost, found by the 5 % loss
// atomics test). The probe passes it, as skip_answered_requests does.
TEST_CASE("tail-loss probe: an answered atomic waiting to retire is never asked again, under any PSN",
          "[rc][rto][probe][atomic]") {
  Requester r(14, 1000);
  r.round_trip(1, 1000, 2000);  // PSN 10
  rc::SendWr fa;
  fa.wr_id = 2;
  fa.opcode = rc::WrOpcode::kFetchAdd;
  fa.sge = {reinterpret_cast<std::uint64_t>(r.buf.data() + 64), 8, r.mr.lkey};
  fa.remote_addr = 0x1000;
  fa.rkey = 0x77;
  fa.compare_add = 1;
  REQUIRE(r.qp.post_send(fa).ok());
  r.send(3);  // PSN 12
  CHECK(r.transmit(10'000).psn == 11);
  CHECK(r.transmit(10'000).psn == 12);
  r.ack(11, 11'000, wire::nak_syndrome(wire::NakCode::kPsnSequenceError));  // rewind to the atomic
  r.atomic_ack(11, 7, 12'000);                                              // answered: executed
  r.qp.on_timer(r.qp.next_timer_ns());
  const rc::TxDescriptor d = r.transmit(r.qp.next_timer_ns());
  CHECK(d.psn == 12);
  CHECK(d.opcode == static_cast<std::uint8_t>(wire::Opcode::kSendOnly));
  r.ack(12, 20'000);
  rc::Completion c;
  int done = 0;
  while (r.qp.poll_cq(c)) {
    CHECK(c.status == WcStatus::kSuccess);
    ++done;
  }
  CHECK(done == 3);
}

TEST_CASE("selective repeat: with every PSN in flight shown held, the probe resends the oldest", "[rc][rto][sr]") {
  rc::MrTable m;
  std::vector<std::uint8_t> buf(4 * kPmtu);
  const rc::MemoryRegion mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
  auto a = sr_attr(0x11, 0x12, 500, 1);
  a.pto_floor_us = 0;
  rc::RcQp qp(a, m);
  to_rts(qp);
  rc::SendWr w;
  w.opcode = rc::WrOpcode::kWrite;
  w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), 3 * kPmtu, mr.lkey};
  w.remote_addr = 0x100000;
  w.rkey = 0x77;
  REQUIRE(qp.post_send(w).ok());
  rc::TxDescriptor d;
  for (int i = 0; i < 3; ++i) REQUIRE(qp.next_packet(1000, d));  // 500..502
  // A SACK at 3 us: nothing acknowledged, 501 and 502 held (bits 1 and 2 past its PSN 499).
  std::uint8_t bitmap[wire::kSackBytes] = {};
  bitmap[7] = 0x06;
  wire::PacketInfo sack{};
  sack.opcode = op(wire::Opcode::kSrAck);
  sack.psn = 499;
  sack.aeth_syndrome = wire::kAethAckUnlimited;
  sack.payload_len = wire::kSackBytes;
  (void)qp.on_packet(sack, bitmap, 3000);
  REQUIRE(qp.next_packet(3000, d));  // 500, shown missing, resent at once
  CHECK(d.psn == 500);
  wire::PacketInfo ack{};  // a plain ACK through 500: 501 and 502 still look held
  ack.opcode = op(wire::Opcode::kAck);
  ack.psn = 500;
  ack.aeth_syndrome = wire::kAethAckUnlimited;
  (void)qp.on_packet(ack, nullptr, 5000);
  REQUIRE(qp.sq_una() == 501);
  CHECK_FALSE(qp.next_packet(5000, d));
  const std::uint64_t t = qp.next_timer_ns();
  CHECK(qp.pto_ns() != 0);
  CHECK(t == 5000 + qp.pto_ns());  // the probe, a PTO later
  qp.on_timer(t);
  REQUIRE(qp.next_packet(t, d));
  CHECK(d.psn == 501);
  CHECK(d.ack_req);
  CHECK(qp.counters().tail_probes == 1);
  CHECK(qp.counters().local_ack_timeout_err == 0);
}

TEST_CASE("--adaptive-rto off: the plain IBTA timer, restarted by progress, with no probe", "[rc][rto]") {
  Requester r(14, 1000, /*adaptive=*/false);
  const std::uint64_t t = r.ibta();
  r.round_trip(1, 1000, 2000);
  CHECK(r.qp.rto_ns() == t);
  r.send(2);
  r.transmit(10'000);
  CHECK(r.qp.next_timer_ns() == 10'000 + t);
  r.qp.on_timer(10'000 + t);
  CHECK(r.qp.counters().local_ack_timeout_err == 1);
  CHECK(r.qp.counters().tail_probes == 0);
  CHECK(r.qp.next_timer_ns() == 10'000 + 2 * t);
}

namespace {

// A loopback pair (1 us steps, the link delay one step: a round trip of 1 us) whose requester
// has measured its round trip with one message, then sends `count` messages of `len` bytes A -> B
// and runs until all complete; returns the steps that took.
struct LossyPair {
  Loopback lb;
  std::vector<std::uint8_t> src = std::vector<std::uint8_t>(8192, 0x3C), dst = std::vector<std::uint8_t>(64 * 4096);
  rc::MemoryRegion smr, dmr;
  int posted = 0, completed = 0;
  explicit LossyPair(bool sr, std::uint8_t timeout = 14, std::uint32_t pto_floor_us = 0)
      : lb(with_timeout(pair_attr(sr, 0x11, 0x12, 100, 200), timeout, pto_floor_us),
           pair_attr(sr, 0x12, 0x11, 200, 100)) {
    connect(lb);
    smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
    dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
    for (int i = 0; i < 64; ++i)
      REQUIRE(lb.qp(1)
                  .post_recv({static_cast<std::uint64_t>(i),
                              {reinterpret_cast<std::uint64_t>(dst.data() + i * 4096), 4096, dmr.lkey}})
                  .ok());
    REQUIRE(run(1, 64) <= 3);  // the round trip, measured
    REQUIRE(lb.qp(0).srtt_ns() == 1000);
  }
  static rc::QpAttr with_timeout(rc::QpAttr a, std::uint8_t timeout, std::uint32_t pto_floor_us) {
    a.timeout = timeout;
    a.pto_floor_us = pto_floor_us;  // 0 by default: round trips of 1 us
    return a;
  }
  int run(int count, std::uint32_t len, int max_steps = 200'000) {
    for (int i = 0; i < count; ++i) {
      rc::SendWr w;
      w.wr_id = static_cast<std::uint64_t>(posted++);
      w.sge = {reinterpret_cast<std::uint64_t>(src.data()), len, smr.lkey};
      REQUIRE(lb.qp(0).post_send(w).ok());
    }
    int steps = 0;
    const int target = completed + count;
    for (; steps < max_steps && completed < target; ++steps) {
      lb.step();
      rc::Completion c;
      while (lb.qp(0).poll_cq(c)) {
        REQUIRE(c.status == WcStatus::kSuccess);
        ++completed;
      }
      while (lb.qp(1).poll_cq(c)) REQUIRE(c.status == WcStatus::kSuccess);
    }
    return steps;
  }
  // Drops the first frame from `side` that `pick` chooses, and no other.
  void drop_once(int side, std::function<bool(const rc::TxDescriptor&)> pick) {
    auto dropped = std::make_shared<bool>(false);
    lb.impair(side).drop_if = [dropped, pick](const rc::TxDescriptor& d) {
      if (*dropped || !pick(d)) return false;
      *dropped = true;
      return true;
    };
  }
  const rc::RcCounters& req() { return lb.qp(0).counters(); }
};

bool is_nak(const rc::TxDescriptor& d) {
  return d.opcode == static_cast<std::uint8_t>(wire::Opcode::kAck) &&
         (d.aeth_syndrome & wire::kAethTypeMask) == wire::kAethTypeNak;
}
bool is_ack(const rc::TxDescriptor& d) { return !wire::opcode_info(d.opcode).is_request; }

}  // namespace

// The IBTA timeout is 67 ms (67,000 steps); each loss below is recovered in a handful of 1 us round
// trips by a probe, with no timer expiry.
TEST_CASE("go-back-N: a lost tail is recovered within a few RTTs by one probe", "[rc][rto][probe][e2e]") {
  LossyPair p(false);
  p.drop_once(0, [](const rc::TxDescriptor& d) { return d.psn == 103; });  // the third of three packets
  CHECK(p.run(1, 3000) <= 10);
  CHECK(p.req().tail_probes == 1);
  CHECK(p.req().local_ack_timeout_err == 0);
  CHECK(p.lb.qp(1).counters().naks_sent == 0);  // nothing reached the responder out of order
}

TEST_CASE("go-back-N: a lost ACK is recovered within a few RTTs by one probe", "[rc][rto][probe][e2e]") {
  LossyPair p(false);
  p.drop_once(1, is_ack);
  CHECK(p.run(1, 64) <= 10);
  CHECK(p.req().tail_probes == 1);
  CHECK(p.req().local_ack_timeout_err == 0);
  CHECK(p.lb.qp(1).counters().duplicate_request == 1);  // the probe, re-ACKed (C9-105)
}

// Every packet here is a one-packet message with AckReq, so an ACK for the probed PSN might have been
// in flight before the probe (on_probe_answer): each probe's answer is progress, not a rewind, and
// each unacknowledged PSN comes back with a probe of its own. Four wait: the responder coalesced
// the ACK for 101 into the NAK that 103 drew (queue_ack), and that NAK was lost; 102 was lost and
// 103, 104 dropped. The first probe (101) is a duplicate, re-ACKed; the other three are each the
// responder's ePSN (docs/transport.md, "Which ACK answers the probe").
TEST_CASE(
    "go-back-N: a lost NAK is recovered within a few RTTs: the probes' answers show the responder's ePSN, and the "
    "responder still NAKs the gap once",
    "[rc][rto][probe][e2e]") {
  LossyPair p(false);
  p.drop_once(0, [](const rc::TxDescriptor& d) { return d.psn == 102; });  // the second of four one-packet messages
  p.drop_once(1, is_nak);
  CHECK(p.run(4, 64) <= 30);
  CHECK(p.req().tail_probes == 4);
  CHECK(p.lb.qp(1).counters().duplicate_request == 1);  // the probe of 101; 102-104 were each its ePSN
  CHECK(p.req().local_ack_timeout_err == 0);
  CHECK(p.req().packet_seq_err == 0);  // the NAK never arrived
  CHECK(p.lb.qp(1).counters().naks_sent == 1);
}

// The same loss behind a window of 16 one-packet messages, with probes 5 ms apart (the default
// RTO floor is 20 ms): one probe per message would take 16 PTOs, 80 ms. The probes' answers are
// progress for the IBTA timer but do not restart the RTO, which then resends the rest in one
// go-back-N round: done about one RTO after the messages left.
TEST_CASE("go-back-N: a lost NAK behind a window of one-packet messages costs at most an RTO, not a PTO per message",
          "[rc][rto][probe][e2e]") {
  LossyPair p(false, 14, /*pto_floor_us=*/5000);
  p.drop_once(0, [](const rc::TxDescriptor& d) { return d.psn == 102; });
  p.drop_once(1, is_nak);
  const int steps = p.run(16, 64);
  CHECK(steps >= 20'000);  // the RTO's floor: the probes alone did not finish
  CHECK(steps <= 21'000);  // one RTO, then a round trip or two
  CHECK(p.req().adaptive_timeouts == 1);
  CHECK(p.req().tail_probes <= 8);            // one every 5 ms before the RTO, each with a follow-up (on_ack_or_nak)
  CHECK(p.req().local_ack_timeout_err == 1);  // that adaptive expiry; no IBTA one, no retry spent
  CHECK(p.lb.qp(1).counters().naks_sent == 1);
}

TEST_CASE("selective repeat: a lost tail and a lost SACK are each recovered by one probe of the last packet",
          "[rc][rto][probe][sr][e2e]") {
  LossyPair p(true);
  p.drop_once(0, [](const rc::TxDescriptor& d) { return d.psn == 103; });  // the third of three
  CHECK(p.run(1, 3000) <= 10);
  CHECK(p.req().tail_probes == 1);
  CHECK(p.req().local_ack_timeout_err == 0);
  p.drop_once(1, is_ack);
  CHECK(p.run(1, 3000) <= 10);
  CHECK(p.req().tail_probes == 2);
  CHECK(p.req().local_ack_timeout_err == 0);
}

TEST_CASE(
    "a peer that never answers fails the QP after retry_cnt IBTA timeouts, at the same time with adaptive "
    "retransmission as without",
    "[rc][rto][timeout]") {
  auto fail_time = [](bool adaptive, rc::RcCounters& out) {
    auto a = attr(0x11, 0x12, 1, 1);
    a.retry_cnt = 3;
    a.timeout = 10;       // 4.2 ms
    a.rto_floor_us = 50;  // adaptive expiries well inside each IBTA timeout
    a.pto_floor_us = 0;   // and probes before them
    a.adaptive_rto = adaptive;
    Loopback lb(a, attr(0x12, 0x11, 1, 1));
    connect(lb);
    std::vector<std::uint8_t> src(64), dst(64);
    auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
    auto dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
    REQUIRE(lb.qp(1).post_recv({1, {reinterpret_cast<std::uint64_t>(dst.data()), 64, dmr.lkey}}).ok());
    rc::SendWr w;
    w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 64, smr.lkey};
    REQUIRE(lb.qp(0).post_send(w).ok());
    rc::Completion c;
    REQUIRE(lb.run([&] { return lb.qp(0).poll_cq(c); }, 100));  // a round trip measured
    lb.impair(0).drop_all = true;                               // then the peer is gone
    REQUIRE(lb.qp(0).post_send(w).ok());
    // Steps of 4.096 us, so that the IBTA deadlines fall on steps.
    const std::uint64_t sent_at = lb.now() + 4096;  // the next step sends
    REQUIRE(lb.run([&] { return lb.qp(0).state() == rc::QpState::kError; }, 100'000, 4096));
    REQUIRE(lb.qp(0).poll_cq(c));
    CHECK(c.status == WcStatus::kRetryExcErr);
    out = lb.qp(0).counters();
    return lb.now() - sent_at;
  };
  rc::RcCounters plain, adaptive;
  const std::uint64_t t_plain = fail_time(false, plain);
  const std::uint64_t t_adaptive = fail_time(true, adaptive);
  CHECK(t_plain == 4 * (4096ull << 10));  // retry_cnt 3: the fourth expiry fails
  CHECK(t_adaptive == t_plain);
  CHECK(plain.local_ack_timeout_err == 4);
  CHECK(plain.adaptive_timeouts == 0);
  CHECK(adaptive.local_ack_timeout_err - adaptive.adaptive_timeouts == 4);  // the IBTA ones
  CHECK(adaptive.adaptive_timeouts > 0);
  CHECK(adaptive.tail_probes > 0);
}
