// Judging a run's goodput and p99 latency against --expect-gbps and --expect-p99-us.
#include "apps/droce-gen/verdict.h"

#include <cstdio>

namespace droce::gen {

Verdict judge(const Options& o, double goodput_gbps, std::uint64_t p99_ns, const std::string& what) {
  Verdict v;
  char text[160];
  if (o.expect_gbps > 0) {
    v.judged = true;
    if (goodput_gbps < o.expect_gbps) {
      std::snprintf(text, sizeof text, "%sgoodput %.3f Gb/s is below --expect-gbps %g", what.c_str(), goodput_gbps,
                    o.expect_gbps);
      combine(v, Verdict{true, false, text});
    }
  }
  if (o.expect_p99_us > 0) {
    v.judged = true;
    const double p99_us = static_cast<double>(p99_ns) / 1e3;
    if (p99_us > o.expect_p99_us) {
      std::snprintf(text, sizeof text, "%sp99 latency %.3f us is above --expect-p99-us %g", what.c_str(), p99_us,
                    o.expect_p99_us);
      combine(v, Verdict{true, false, text});
    }
  }
  return v;
}

void combine(Verdict& into, const Verdict& v) {
  into.judged = into.judged || v.judged;
  if (v.pass) return;
  into.pass = false;
  into.reason += (into.reason.empty() ? "" : "; ") + v.reason;
}

const char* verdict_name(const Verdict& v) { return !v.judged ? "none" : v.pass ? "pass" : "fail"; }

}  // namespace droce::gen
