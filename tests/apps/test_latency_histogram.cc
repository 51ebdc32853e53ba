// The apps' latency histogram: percentiles within the bucket error, and the CDF droce-gen's
// report and --plot carry (steps rise to exactly 1.0 at the exact max, never more than asked).
#include <catch2/catch.hpp>
#include <cstdint>

#include "apps/common/latency_histogram.h"

using droce::engine::LatencyHistogram;

TEST_CASE("an empty histogram has no CDF") {
  LatencyHistogram h;
  CHECK(h.cdf().empty());
  CHECK(h.percentile(0.5) == 0);
}

TEST_CASE("the CDF rises to 1.0 at the exact max and agrees with the percentiles") {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100'000; ++v) h.record(v * 7);  // 7 ns .. 700 us, uniform
  const auto steps = h.cdf(200);
  REQUIRE(!steps.empty());
  CHECK(steps.size() <= 200);
  CHECK(steps.back().first == 700'000);
  CHECK(steps.back().second == 1.0);
  for (std::size_t i = 1; i < steps.size(); ++i) {
    CHECK(steps[i].first > steps[i - 1].first);
    CHECK(steps[i].second > steps[i - 1].second);
  }
  // Uniform values: the fraction at value x is about x / max (bucket edges: ~1.6 % relative).
  for (const auto& [ns, frac] : steps) {
    if (ns < 7'000) continue;
    CHECK(frac == Approx(static_cast<double>(ns) / 700'000).epsilon(0.04));
  }
  CHECK(h.percentile(0.5) == Approx(350'000).epsilon(0.02));
}

TEST_CASE("a CDF of few distinct values keeps every step") {
  LatencyHistogram h;
  for (int i = 0; i < 3; ++i) h.record(10);
  h.record(1000);
  const auto steps = h.cdf();
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].first == 10);
  CHECK(steps[0].second == Approx(0.75));
  CHECK(steps[1].first == 1000);
  CHECK(steps[1].second == 1.0);
}
