// Pacer spacing and the timing wheel's ordering, horizon and capacity behaviour.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "protocols/dcqcn/pacer.h"
#include "protocols/dcqcn/timing_wheel.h"

using namespace droce::dcqcn;

TEST_CASE("pacer spaces packets at bytes*8/rate and keeps the long-run rate exact", "[dcqcn][pacer]") {
  Pacer p;
  std::uint64_t now = 0;
  std::uint64_t sent = 0;
  for (int i = 0; i < 10000; ++i) {
    now = std::max(now, p.next_send_ticks());
    REQUIRE(p.may_send(now));
    p.on_send(1000, 3e9, now);  // 1000 B at 3 Gb/s = 2666.67 ns
    sent += 1000;
  }
  const double rate = static_cast<double>(sent) * 8e9 / static_cast<double>(p.next_send_ticks());
  CHECK(rate == Approx(3e9).epsilon(1e-6));
}

TEST_CASE("pacer does not bank credit while idle beyond its burst allowance", "[dcqcn][pacer]") {
  Pacer p(1000);
  p.on_send(1000, 8e9, 0);          // next at 1000 ns
  p.on_send(1000, 8e9, 1'000'000);  // idle for 1 ms
  CHECK(p.next_send_ticks() == 1'000'000 - 1000 + 1000);
}

TEST_CASE("timing wheel returns ids in time order of their buckets, none early", "[dcqcn][wheel]") {
  TimingWheel w(64, 16, 100);
  w.schedule(1, 550);
  w.schedule(2, 120);
  w.schedule(3, 5000);  // beyond the 1600-unit horizon
  std::uint32_t out[8];
  CHECK(w.poll(100, out, 8) == 0);
  REQUIRE(w.poll(200, out, 8) == 1);
  CHECK(out[0] == 2);
  REQUIRE(w.poll(600, out, 8) == 1);
  CHECK(out[0] == 1);
  CHECK(w.poll(4999, out, 8) == 0);
  REQUIRE(w.poll(5000, out, 8) == 1);
  CHECK(out[0] == 3);
  CHECK(w.size() == 0);
}

TEST_CASE("timing wheel reschedule moves an id, cancel removes it, max bounds the output", "[dcqcn][wheel]") {
  TimingWheel w(100, 8, 10);
  for (std::uint32_t i = 0; i < 50; ++i) w.schedule(i, 5);
  w.schedule(7, 70);
  w.cancel(8);
  CHECK(w.size() == 49);
  std::vector<std::uint32_t> got;
  std::uint32_t out[16];
  for (int round = 0; round < 10; ++round) {
    const auto n = w.poll(10, out, 16);
    got.insert(got.end(), out, out + n);
  }
  CHECK(got.size() == 48);  // 50 scheduled, 8 cancelled, 7 moved to t=70
  CHECK(std::find(got.begin(), got.end(), 7u) == got.end());
  CHECK(std::find(got.begin(), got.end(), 8u) == got.end());
  REQUIRE(w.poll(80, out, 16) == 1);
  CHECK(out[0] == 7);
}
