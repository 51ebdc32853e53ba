// droce-gen's open-loop schedule (see arrivals.h).
#include "apps/droce-gen/arrivals.h"

#include <cmath>

namespace droce::gen {

const char* arrivals_name(Arrivals a) { return a == Arrivals::kPoisson ? "poisson" : "constant"; }

ArrivalSchedule::ArrivalSchedule(Arrivals kind, double mean_gap, std::uint32_t burst, std::uint64_t seed,
                                 std::uint64_t stream, std::uint64_t start)
    : kind_(kind),
      group_gap_(mean_gap * (burst == 0 ? 1 : burst)),
      burst_(burst == 0 ? 1 : burst),
      left_(burst_),
      start_(start),
      // One seed, several streams (one per worker): each stream's own well-mixed seed.
      rng_(seed ^ (0x9E3779B97F4A7C15ull * (stream + 1))) {
  if (kind_ == Arrivals::kPoisson) at_ = group_gap_ * exponential();
}

// -ln(u) for u uniform in (0, 1]: 53 random bits, never 0 (the log would be infinite). The
// conversion is ours, not a std:: distribution's, so a seed gives the same gaps everywhere.
double ArrivalSchedule::exponential() {
  const double u = static_cast<double>((rng_() >> 11) + 1) * 0x1p-53;
  return -std::log(u);
}

void ArrivalSchedule::advance() {
  if (--left_ != 0) return;
  left_ = burst_;
  ++group_;
  // Constant: the time from the group's number, not a running sum, so rounding never drifts.
  at_ = kind_ == Arrivals::kConstant ? static_cast<double>(group_) * group_gap_ : at_ + group_gap_ * exponential();
}

std::uint64_t ArrivalSchedule::groups_within(double span) const {
  if (span <= 0) return 0;
  // Constant: the groups after the current one whose time is below at_ + span. Poisson: the
  // expected number of arrivals in `span`, rounded.
  const double groups = span / group_gap_;
  if (kind_ == Arrivals::kPoisson) return static_cast<std::uint64_t>(std::llround(groups));
  auto n = static_cast<std::uint64_t>(std::ceil(groups)) - 1;  // groups strictly inside: n * gap < span
  if (static_cast<double>(n + 1) * group_gap_ < span) ++n;     // float slack either way
  if (n > 0 && static_cast<double>(n) * group_gap_ >= span) --n;
  return n;
}

std::uint64_t ArrivalSchedule::skip_before(std::uint64_t t) {
  if (!enabled() || t <= due()) return 0;
  const double target = static_cast<double>(t - start_);  // due() < t: at_ < target
  const std::uint64_t groups = groups_within(target - at_);
  const std::uint64_t skipped = left_ + groups * burst_;
  left_ = burst_;
  if (kind_ == Arrivals::kConstant) {
    group_ += groups + 1;
    at_ = static_cast<double>(group_) * group_gap_;
  } else {
    ++group_;
    at_ = target + group_gap_ * exponential();
  }
  return skipped;
}

std::uint64_t ArrivalSchedule::due_by(std::uint64_t t) const {
  if (!enabled() || t < due()) return 0;
  // Due at or before t: a time below t + 1 (a due time is its tick, the fraction dropped).
  const double limit = static_cast<double>(t - start_) + 1;
  return left_ + groups_within(limit - at_) * burst_;
}

}  // namespace droce::gen
