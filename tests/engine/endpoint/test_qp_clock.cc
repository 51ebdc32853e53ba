// The QPs' clock (engine/endpoint/qp_clock.h), on poll times the test chooses: a stall of the
// process counts as at most max_poll_gap_ns, and the QP timers skip the poll that ends a stall
// and wait while the RX bursts come back full, so that the answers queued during the stall are
// read before any probe or timeout may fire on them; bounded by kMaxHeldPolls.
#include <catch2/catch.hpp>
#include <cstdint>

#include "engine/endpoint/qp_clock.h"

using droce::QpClock;

namespace {
constexpr std::uint16_t kBurst = 32;
}

TEST_CASE("QP clock: polls a few microseconds apart run the timers at every poll, on the poll's time",
          "[endpoint][qp_clock]") {
  QpClock c(1'000'000);
  CHECK(c.advance(5'000) == 5'000);
  for (std::uint64_t t = 10'000; t <= 100'000; t += 5'000) {
    CHECK(c.advance(t) == t);
    CHECK(c.timers_may_run(kBurst, kBurst));  // full bursts, but no stall: nothing to wait for
  }
  CHECK(c.stalls() == 0);
  CHECK(c.held_timer_polls() == 0);
}

TEST_CASE("QP clock: after a stall the timers skip its poll, then run at the first burst short of full",
          "[endpoint][qp_clock]") {
  QpClock c(1'000'000);
  (void)c.advance(1'000'000);
  CHECK(c.advance(5'000'000) == 2'000'000);  // a 4 ms stall counts as 1 ms
  CHECK(c.stalls() == 1);
  CHECK_FALSE(c.timers_may_run(3, kBurst));  // the stall's poll: an in-process peer has not answered yet
  CHECK(c.advance(5'001'000) == 2'001'000);
  CHECK_FALSE(c.timers_may_run(kBurst, kBurst));  // a full burst: more answers may wait behind it
  CHECK(c.advance(5'002'000) == 2'002'000);
  CHECK_FALSE(c.timers_may_run(kBurst, kBurst));
  (void)c.advance(5'003'000);
  CHECK(c.timers_may_run(7, kBurst));  // the ring read to its end: the timers run, after these answers
  (void)c.advance(5'004'000);
  CHECK(c.timers_may_run(kBurst, kBurst));  // and from then on at every poll
  CHECK(c.held_timer_polls() == 3);
}

TEST_CASE("QP clock: a port that never drains holds the timers for at most kMaxHeldPolls polls",
          "[endpoint][qp_clock]") {
  QpClock c(1'000'000);
  (void)c.advance(0);
  std::uint64_t t = 10'000'000;
  (void)c.advance(t);
  std::uint32_t held = 0;
  for (std::uint32_t i = 0; i < 2 * QpClock::kMaxHeldPolls; ++i) {
    if (c.timers_may_run(kBurst, kBurst)) break;
    ++held;
    (void)c.advance(t += 1'000);
  }
  CHECK(held == QpClock::kMaxHeldPolls - 1);
  CHECK(c.timers_may_run(kBurst, kBurst));
}

// An app that polls slowly (or a sanitizer build beside CPU hogs) sees every gap as a stall: the
// timers must still run, or a peer that never answers would never fail the QP.
TEST_CASE("QP clock: when every gap is a stall, the timers still run every other poll", "[endpoint][qp_clock]") {
  QpClock c(1'000'000);
  (void)c.advance(0);
  std::uint32_t ran = 0;
  for (std::uint64_t i = 1; i <= 100; ++i) {
    (void)c.advance(i * 500'000);  // 500 us apart
    if (c.timers_may_run(0, kBurst)) ++ran;
  }
  CHECK(ran == 50);
  CHECK(c.stalls() == 50);
}

TEST_CASE("QP clock: max_poll_gap_ns 0 keeps the poll's time and never holds the timers", "[endpoint][qp_clock]") {
  QpClock c(0);
  CHECK(c.advance(1'000) == 1'000);
  CHECK(c.advance(50'000'000) == 50'000'000);
  CHECK(c.timers_may_run(kBurst, kBurst));
  CHECK(c.stalls() == 0);
}
