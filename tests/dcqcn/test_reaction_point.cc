// DCQCN reaction point and notification point, each rule as stimulus -> expectation.
#include <catch2/catch.hpp>

#include "protocols/dcqcn/notification_point.h"
#include "protocols/dcqcn/reaction_point.h"

using namespace droce::dcqcn;
using Catch::Detail::Approx;

TEST_CASE("a new QP starts at line rate with alpha = initial alpha", "[dcqcn][rp]") {
  DcqcnReactionPoint rp(DcqcnParams::paper(), 0);
  CHECK(rp.rate_bps() == 40e9);
  CHECK(rp.state().target_rate_bps == 40e9);
  CHECK(rp.state().alpha == 1.0);
}

TEST_CASE("CNP -> Rt = Rc, Rc = Rc(1 - a/2), a = (1-g)a + g", "[dcqcn][rp]") {
  auto p = DcqcnParams::paper();
  p.min_time_between_cuts_ns = 1;  // back-to-back cuts: Algorithm 1's arithmetic, not the cut monitor
  DcqcnReactionPoint rp(p, 0);
  rp.on_cnp(1000);
  CHECK(rp.state().target_rate_bps == 40e9);
  CHECK(rp.rate_bps() == Approx(20e9));    // alpha 1 halves the rate
  CHECK(rp.state().alpha == Approx(1.0));  // (1-g)*1 + g
  rp.on_cnp(2000);
  CHECK(rp.state().target_rate_bps == Approx(20e9));
  CHECK(rp.rate_bps() == Approx(10e9));
  CHECK(rp.state().rp_cnp_handled == 2);
}

TEST_CASE("alpha decays by (1-g) every alpha period without a CNP, also over a long gap", "[dcqcn][rp]") {
  auto p = DcqcnParams::paper();
  DcqcnReactionPoint rp(p, 0);
  rp.advance(p.alpha_update_period_ns);
  CHECK(rp.state().alpha == Approx(1 - p.g));
  rp.advance(p.alpha_update_period_ns * 11);
  CHECK(rp.state().alpha == Approx(std::pow(1 - p.g, 11)));
  rp.advance(p.alpha_update_period_ns * 1'000'000);  // an hour-long idle: bounded work
  CHECK(rp.state().alpha < 1e-10);
}

TEST_CASE("fast recovery: F timer events halve the gap to Rt without raising Rt", "[dcqcn][rp]") {
  auto p = DcqcnParams::paper();
  DcqcnReactionPoint rp(p, 0);
  rp.on_cnp(0);  // Rc 20G, Rt 40G
  for (std::uint32_t i = 1; i <= p.fast_recovery_steps - 1; ++i) {
    rp.advance(i * p.rate_increase_period_ns);
    CHECK(rp.state().timer_stage == i);
    CHECK(rp.state().target_rate_bps == 40e9);
  }
  CHECK(rp.rate_bps() == Approx(40e9 - 20e9 / 16));  // four halvings of the 20G gap
}

TEST_CASE("additive increase once one stage reaches F: Rt += R_AI", "[dcqcn][rp]") {
  auto p = DcqcnParams::paper();
  p.fast_recovery_steps = 2;
  p.min_time_between_cuts_ns = 1;  // two cuts 10 ns apart
  DcqcnReactionPoint rp(p, 0);
  rp.on_cnp(0);
  rp.on_cnp(10);                                   // Rt 20G, Rc 10G
  rp.advance(2 * p.rate_increase_period_ns + 10);  // timer stage 2 == F, byte stage 0
  CHECK(rp.state().timer_stage == 2);
  CHECK(rp.state().target_rate_bps == Approx(20e9 + p.ai_rate_bps));
}

TEST_CASE("hyper increase once both stages reach F: Rt += i * R_HAI", "[dcqcn][rp]") {
  auto p = DcqcnParams::paper();
  p.fast_recovery_steps = 1;
  p.byte_counter_bytes = 1000;
  p.min_time_between_cuts_ns = 1;  // two cuts 1 ns apart
  DcqcnReactionPoint rp(p, 0);
  rp.on_cnp(0);
  rp.on_cnp(1);               // Rt 20G
  rp.on_bytes_sent(1000, 2);  // byte stage 1 == F, timer stage 0: additive
  CHECK(rp.state().target_rate_bps == Approx(20e9 + p.ai_rate_bps));
  const double before = rp.state().target_rate_bps;
  rp.advance(p.rate_increase_period_ns + 1);  // timer stage 1: both >= F, i = 1
  CHECK(rp.state().target_rate_bps == Approx(before + p.hai_rate_bps));
  rp.on_bytes_sent(1000, p.rate_increase_period_ns + 2);  // byte stage 2, timer 1: i = min - F + 1 = 1
  CHECK(rp.state().target_rate_bps == Approx(before + 2 * p.hai_rate_bps));
}

TEST_CASE("byte counter: every B bytes is one increase event", "[dcqcn][rp]") {
  auto p = DcqcnParams::paper();
  DcqcnReactionPoint rp(p, 0);
  rp.on_cnp(0);
  rp.on_bytes_sent(p.byte_counter_bytes * 3 + 5, 1);
  CHECK(rp.state().byte_stage == 3);
  CHECK(rp.state().rate_increases == 3);
}

TEST_CASE("a CNP flood never pushes the rate below Rmin nor stalls the QP", "[dcqcn][rp]") {
  auto p = DcqcnParams::paper();
  DcqcnReactionPoint rp(p, 0);
  for (std::uint64_t t = 0; t < 100'000; ++t) rp.on_cnp(t * 10);
  CHECK(rp.rate_bps() == p.min_rate_bps);
  CHECK(rp.rate_bps() > 0);
  // And it recovers once the CNPs stop.
  rp.advance(1'000'000 + 200 * p.rate_increase_period_ns);
  CHECK(rp.rate_bps() > 100 * p.min_rate_bps);
}

TEST_CASE("rates never exceed line rate however long the recovery", "[dcqcn][rp]") {
  auto p = DcqcnParams::mlx5();
  DcqcnReactionPoint rp(p, 0);
  rp.on_cnp(0);
  for (int i = 1; i < 1000; ++i) rp.on_bytes_sent(100'000, static_cast<std::uint64_t>(i) * 1000);
  rp.advance(10'000'000'000ull);
  CHECK(rp.rate_bps() <= p.line_rate_bps);
  CHECK(rp.state().target_rate_bps <= p.line_rate_bps);
  CHECK(rp.rate_bps() == Approx(p.line_rate_bps));
}

TEST_CASE("CNPs within min_time_between_cuts are ignored and counted", "[dcqcn][rp]") {
  auto p = DcqcnParams::mlx5();  // 4 us monitor period
  DcqcnReactionPoint rp(p, 0);
  rp.on_cnp(10'000);
  rp.on_cnp(11'000);
  rp.on_cnp(13'999);
  CHECK(rp.state().rp_cnp_handled == 1);
  CHECK(rp.state().rp_cnp_ignored == 2);
  rp.on_cnp(14'000);
  CHECK(rp.state().rp_cnp_handled == 2);
}

TEST_CASE("every preset bounds how often a QP's rate can be cut; a zero monitor period is refused",
          "[dcqcn][rp][hardening]") {
  CHECK(DcqcnParams{}.min_time_between_cuts_ns > 0);
  CHECK(DcqcnParams::paper().min_time_between_cuts_ns == DcqcnParams::paper().np_min_time_between_cnps_ns);
  CHECK(DcqcnParams::mlx5().min_time_between_cuts_ns > 0);
  auto p = DcqcnParams::paper();
  p.min_time_between_cuts_ns = 0;
  CHECK(p.validate().code() == droce::StatusCode::kInvalidArgument);
  CHECK(p.validate().message().rfind("min_time_between_cuts_ns:", 0) == 0);
}

TEST_CASE("spoofed CNP flood at the paper preset -> one cut per monitor period, the rate far above its floor",
          "[dcqcn][rp][hardening]") {
  const auto p = DcqcnParams::paper();
  DcqcnReactionPoint rp(p, 0);
  // 2,000 CNPs in 200 us (one every 100 ns): at most one cut per 50 us period, at 0, 50, 100, 150, 200 us.
  for (std::uint64_t i = 0; i <= 2'000; ++i) rp.on_cnp(i * 100);
  CHECK(rp.state().rp_cnp_handled == 5);
  CHECK(rp.state().rp_cnp_ignored == 2'001 - 5);
  // Five cuts at alpha ~1 leave about line/32; an unbounded flood would have hit Rmin (line/4000).
  CHECK(rp.rate_bps() >= p.line_rate_bps / 64);
  CHECK(rp.rate_bps() > 50 * p.min_rate_bps);
}

TEST_CASE("notification point: one CNP per QP per interval, every CE mark counted", "[dcqcn][np]") {
  DcqcnNotificationPoint np(50'000);
  CHECK_FALSE(np.on_packet(false, 0));
  CHECK(np.on_packet(true, 100));
  CHECK_FALSE(np.on_packet(true, 200));
  CHECK_FALSE(np.on_packet(true, 50'099));
  CHECK(np.on_packet(true, 50'100));
  CHECK(np.counters().np_ecn_marked_roce_packets == 4);
  CHECK(np.counters().np_cnp_sent == 2);
}

TEST_CASE("parameter validation names the bad parameter", "[dcqcn][params]") {
  CHECK(DcqcnParams::paper().validate().ok());
  CHECK(DcqcnParams::mlx5().validate().ok());
  auto p = DcqcnParams::paper();
  p.g = 0;
  CHECK(p.validate().code() == droce::StatusCode::kInvalidArgument);
  CHECK(p.validate().message().rfind("g:", 0) == 0);
  p = DcqcnParams::paper();
  p.g = 1.5;
  CHECK(p.validate().message().rfind("g:", 0) == 0);
  p = DcqcnParams::paper();
  p.min_rate_bps = -1;
  CHECK(p.validate().message().rfind("min_rate_bps", 0) == 0);
  p = DcqcnParams::paper();
  p.min_rate_bps = 50e9;
  CHECK(p.validate().message().rfind("min_rate_bps", 0) == 0);
  p = DcqcnParams::paper();
  p.rate_increase_period_ns = 0;
  CHECK(p.validate().message().rfind("rate_increase_period_ns", 0) == 0);
  p = DcqcnParams::paper();
  p.alpha_update_period_ns = 0;
  CHECK(p.validate().message().rfind("alpha_update_period_ns", 0) == 0);
  p = DcqcnParams::paper();
  p.line_rate_bps = 0;
  CHECK(p.validate().message().rfind("line_rate_bps", 0) == 0);
}
