// The requester's timers as next_timer_ns() reports them: after each kind of event, the earliest
// deadline is the one the rules give (local ACK timer §9.7.6.1.3, RNR wait §9.7.5.2.8). These are
// the plain IBTA timer's rules (adaptive_rto off); the adaptive RTO and the tail-loss probes under
// it are test_rc_loss_timers.cc's.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "tests/rc/loopback.h"

using namespace droce;
using namespace droce::test;

namespace {

constexpr std::uint64_t kNever = UINT64_MAX;

// A requester QP in RTS (first PSN 10) with one registered buffer; responses are crafted.
struct TimedRequester {
  rc::MrTable m;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096);
  rc::MemoryRegion mr;
  rc::RcQp qp;
  explicit TimedRequester(std::uint8_t timeout = 8) : qp(with_timeout(timeout), m) {
    mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
    REQUIRE(qp.modify(rc::QpState::kInit).ok());
    REQUIRE(qp.modify(rc::QpState::kRtr).ok());
    REQUIRE(qp.modify(rc::QpState::kRts).ok());
  }
  static rc::QpAttr with_timeout(std::uint8_t timeout) {
    auto a = attr(0x11, 0x12, 10, 1);
    a.timeout = timeout;
    a.adaptive_rto = false;
    return a;
  }
  std::uint64_t ack_timeout() const { return qp.attr().ack_timeout_ns(); }
  void send(std::uint64_t id) {
    rc::SendWr w;
    w.wr_id = id;
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), 64, mr.lkey};
    REQUIRE(qp.post_send(w).ok());
  }
  bool transmit(std::uint64_t now) {
    rc::TxDescriptor d;
    return qp.next_packet(now, d);
  }
  void ack(std::uint32_t psn, std::uint8_t syndrome, std::uint64_t now) {
    wire::PacketInfo pi{};
    pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kAck);
    pi.psn = psn;
    pi.aeth_syndrome = syndrome;
    qp.on_packet(pi, nullptr, now);
  }
};

}  // namespace

TEST_CASE(
    "local ACK timer: armed by the first packet, kept by later ones, restarted by progress, disarmed when "
    "all is acknowledged",
    "[rc][timer]") {
  TimedRequester r;
  const std::uint64_t t = r.ack_timeout();
  CHECK(r.qp.next_timer_ns() == kNever);
  r.send(1);
  r.send(2);
  CHECK(r.qp.next_timer_ns() == kNever);  // posted, nothing on the wire
  REQUIRE(r.transmit(1000));              // PSN 10
  CHECK(r.qp.next_timer_ns() == 1000 + t);
  REQUIRE(r.transmit(2000));  // PSN 11: the timer runs from the oldest unacknowledged packet
  CHECK(r.qp.next_timer_ns() == 1000 + t);
  r.ack(10, wire::kAethAckUnlimited, 3000);  // progress, PSN 11 still out
  CHECK(r.qp.next_timer_ns() == 3000 + t);
  r.ack(11, wire::kAethAckUnlimited, 4000);
  CHECK(r.qp.next_timer_ns() == kNever);
}

TEST_CASE("local ACK timer: expiry with packets outstanding re-arms it from the expiry; with none it disarms",
          "[rc][timer]") {
  TimedRequester r;
  const std::uint64_t t = r.ack_timeout();
  r.send(1);
  REQUIRE(r.transmit(1000));
  r.qp.on_timer(1000 + t - 1);  // not yet
  CHECK(r.qp.next_timer_ns() == 1000 + t);
  r.qp.on_timer(1000 + t);
  CHECK(r.qp.counters().local_ack_timeout_err == 1);
  CHECK(r.qp.next_timer_ns() == 1000 + 2 * t);
  REQUIRE(r.transmit(1000 + t + 5));  // the retransmission keeps the re-armed deadline
  CHECK(r.qp.next_timer_ns() == 1000 + 2 * t);
}

TEST_CASE("RNR NAK: the ACK timer stops and the RNR wait is the next deadline; the resend re-arms the ACK timer",
          "[rc][timer]") {
  TimedRequester r;
  const std::uint64_t t = r.ack_timeout();
  r.send(1);
  REQUIRE(r.transmit(1000));
  r.ack(10, wire::rnr_nak_syndrome(1), 2000);
  const std::uint64_t until = 2000 + wire::kRnrTimerNs[1];
  CHECK(r.qp.next_timer_ns() == until);
  CHECK_FALSE(r.transmit(until - 1));
  REQUIRE(r.transmit(until));
  CHECK(r.qp.next_timer_ns() == until + t);
}

// The NAK restarts the timer while anything is unacknowledged (it does not wait for the
// retransmission: a rewind may find nothing to resend, test_rc_atomics.cc).
TEST_CASE("sequence NAK: the ACK timer restarts from the NAK", "[rc][timer]") {
  TimedRequester r;
  const std::uint64_t t = r.ack_timeout();
  r.send(1);
  r.send(2);
  REQUIRE(r.transmit(1000));
  REQUIRE(r.transmit(1000));
  r.ack(11, wire::nak_syndrome(wire::NakCode::kPsnSequenceError), 2000);  // PSN 10 acknowledged, resend 11
  CHECK(r.qp.next_timer_ns() == 2000 + t);
  REQUIRE(r.transmit(3000));
  CHECK(r.qp.next_timer_ns() == 2000 + t);
}

TEST_CASE(
    "timers: Error disarms them; timeout 0 never arms; a modify that changes timeout is used by the next "
    "packet",
    "[rc][timer]") {
  TimedRequester r;
  r.send(1);
  REQUIRE(r.transmit(1000));
  REQUIRE(r.qp.modify(rc::QpState::kError).ok());
  CHECK(r.qp.next_timer_ns() == kNever);

  TimedRequester infinite(0);
  infinite.send(1);
  REQUIRE(infinite.transmit(1000));
  CHECK(infinite.qp.next_timer_ns() == kNever);

  TimedRequester changed(8);
  auto a = changed.qp.attr();
  a.timeout = 10;
  REQUIRE(changed.qp.modify(rc::QpState::kRts, &a).ok());
  changed.send(1);
  REQUIRE(changed.transmit(1000));
  CHECK(changed.qp.next_timer_ns() == 1000 + (4096ull << 10));
}
