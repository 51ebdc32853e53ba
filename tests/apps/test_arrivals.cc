// droce-gen's open-loop schedule: due times never go back, keep the configured mean rate (constant,
// Poisson, on-off and bursts), come in groups of --burst, and shed or count a backlog exactly.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "apps/droce-gen/arrivals.h"

using droce::gen::Arrivals;
using droce::gen::ArrivalSchedule;

namespace {

struct Gaps {
  double mean = 0, cv = 0;  // mean gap and coefficient of variation (1 for exponential gaps)
  bool non_decreasing = true;
};

// The gaps between `n` successive due times (of groups, when `burst` > 1: the messages of one
// group must share their due time).
Gaps measure(ArrivalSchedule& s, int n, std::uint32_t burst = 1) {
  Gaps g;
  double sum = 0, sum2 = 0;
  std::uint64_t prev = s.due();
  for (int i = 0; i < n; ++i) {
    for (std::uint32_t k = 1; k < burst; ++k) {
      s.advance();
      if (s.due() != prev) g.non_decreasing = false;  // reported as a failure below
    }
    s.advance();
    const std::uint64_t t = s.due();
    if (t < prev) g.non_decreasing = false;
    const double d = static_cast<double>(t - prev);
    sum += d;
    sum2 += d * d;
    prev = t;
  }
  g.mean = sum / n;
  g.cv = std::sqrt(sum2 / n - g.mean * g.mean) / g.mean;
  return g;
}

}  // namespace

TEST_CASE("arrivals: a default schedule is closed loop", "[arrivals]") {
  const ArrivalSchedule s;
  CHECK_FALSE(s.enabled());
  CHECK(s.due_by(1'000'000) == 0);
}

TEST_CASE("arrivals: constant gaps are exact, from the start, without drift", "[arrivals]") {
  ArrivalSchedule s(Arrivals::kConstant, 10.5, 1, 1, 0, 1000);
  CHECK(s.enabled());
  CHECK(s.due() == 1000);
  for (std::uint64_t i = 1; i <= 2'000'000; ++i) {
    s.advance();
    REQUIRE(s.due() == 1000 + static_cast<std::uint64_t>(static_cast<double>(i) * 10.5));
  }
}

TEST_CASE("arrivals: Poisson gaps are exponential with the configured mean, repeatable by seed", "[arrivals]") {
  ArrivalSchedule s(Arrivals::kPoisson, 1000, 1, 42, 0, 0);
  const Gaps g = measure(s, 1'000'000);
  CHECK(g.non_decreasing);
  CHECK(g.mean == Approx(1000).epsilon(0.01));
  CHECK(g.cv == Approx(1).epsilon(0.02));
  // The same seed and stream give the same times; another stream or seed others.
  ArrivalSchedule a(Arrivals::kPoisson, 1000, 1, 42, 0, 0), b(Arrivals::kPoisson, 1000, 1, 42, 0, 0);
  ArrivalSchedule c(Arrivals::kPoisson, 1000, 1, 42, 1, 0), d(Arrivals::kPoisson, 1000, 1, 43, 0, 0);
  int same = 0, differs_c = 0, differs_d = 0;
  for (int i = 0; i < 1000; ++i) {
    same += a.due() == b.due();
    differs_c += a.due() != c.due();
    differs_d += a.due() != d.due();
    a.advance();
    b.advance();
    c.advance();
    d.advance();
  }
  CHECK(same == 1000);
  CHECK(differs_c > 990);
  CHECK(differs_d > 990);
}

TEST_CASE("arrivals: bursts are N messages due together, spaced to keep the mean rate", "[arrivals]") {
  SECTION("constant") {
    ArrivalSchedule s(Arrivals::kConstant, 10, 8, 1, 0, 0);
    const Gaps g = measure(s, 100'000, 8);
    CHECK(g.non_decreasing);
    CHECK(g.mean == Approx(80).epsilon(1e-9));  // groups of 8 every 8 gaps: the message rate is 1/10
    CHECK(g.cv == Approx(0).margin(1e-9));
  }
  SECTION("poisson") {
    ArrivalSchedule s(Arrivals::kPoisson, 10, 8, 7, 0, 0);
    const Gaps g = measure(s, 400'000, 8);
    CHECK(g.non_decreasing);
    CHECK(g.mean == Approx(80).epsilon(0.01));
    CHECK(g.cv == Approx(1).epsilon(0.03));
  }
}

TEST_CASE("arrivals: the backlog is counted and shed exactly (constant)", "[arrivals]") {
  ArrivalSchedule s(Arrivals::kConstant, 10, 1, 1, 0, 0);
  CHECK(s.due_by(0) == 1);
  CHECK(s.due_by(99) == 10);  // 0, 10, .. 90
  CHECK(s.due_by(100) == 11);
  CHECK(s.skip_before(95) == 10);  // 0 .. 90 shed
  CHECK(s.due() == 100);
  CHECK(s.skip_before(100) == 0);  // the one due at 100 is not before 100
  CHECK(s.skip_before(101) == 1);
  CHECK(s.due() == 110);
  // Bursts of 4 every 40: one of the group at 0 taken, the rest of it and the groups at 40 and
  // 80 are due before 81.
  ArrivalSchedule b(Arrivals::kConstant, 10, 4, 1, 0, 0);
  b.advance();
  CHECK(b.due() == 0);
  CHECK(b.due_by(81) == 3 + 4 + 4);
  CHECK(b.skip_before(81) == 3 + 4 + 4);
  CHECK(b.due() == 120);
  CHECK(b.due_by(119) == 0);
  // Skipping keeps the schedule on its grid: what follows is due exactly as if taken one by one.
  for (int i = 0; i < 4; ++i) b.advance();
  CHECK(b.due() == 160);
}

TEST_CASE("arrivals: a Poisson backlog is shed by its expectation, and the schedule goes on after it", "[arrivals]") {
  ArrivalSchedule s(Arrivals::kPoisson, 100, 1, 5, 0, 0);
  std::uint64_t shed = 0;
  std::uint64_t t = 0;
  for (int i = 0; i < 1000; ++i) {
    t += 100'000;  // about 1000 due in each step
    const std::uint64_t before = s.due_by(t - 1);
    const std::uint64_t n = s.skip_before(t);
    CHECK(n == before);
    CHECK(s.due() >= t);
    shed += n;
  }
  CHECK(static_cast<double>(shed) == Approx(1'000'000).epsilon(0.01));
}

TEST_CASE("arrivals: on-off sends periodic bursts at the peak rate that keeps the mean", "[arrivals]") {
  // Mean gap 10, period 100 on + 900 off: while on, one message a tick (ten times the mean rate).
  ArrivalSchedule s(Arrivals::kOnOff, 10, 1, 1, 0, 0, droce::gen::OnOffPeriod{100, 900});
  for (std::uint64_t k = 0; k < 100; ++k) {
    CHECK(s.due() == k);
    s.advance();
  }
  CHECK(s.due() == 1000);  // nothing due while off
  ArrivalSchedule m(Arrivals::kOnOff, 10, 1, 1, 0, 0, droce::gen::OnOffPeriod{100, 900});
  const Gaps g = measure(m, 100'000);
  CHECK(g.non_decreasing);
  CHECK(g.mean == Approx(10).epsilon(1e-3));  // the mean rate is the configured one
  // The backlog: counted and shed exactly, the schedule staying on its grid.
  ArrivalSchedule b(Arrivals::kOnOff, 10, 1, 1, 0, 0, droce::gen::OnOffPeriod{100, 900});
  CHECK(b.due_by(99) == 100);
  CHECK(b.due_by(500) == 100);
  CHECK(b.due_by(1000) == 101);
  CHECK(b.skip_before(1050) == 150);  // 0 .. 99 and 1000 .. 1049
  CHECK(b.due() == 1050);
  // Groups of 2: a group every 2 ticks while on, 100 messages a period.
  ArrivalSchedule two(Arrivals::kOnOff, 10, 2, 1, 0, 0, droce::gen::OnOffPeriod{100, 900});
  CHECK(two.due_by(99) == 100);
  for (int i = 0; i < 100; ++i) two.advance();
  CHECK(two.due() == 1000);
}
