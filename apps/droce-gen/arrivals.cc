// droce-gen's open-loop schedule (see arrivals.h).
#include "apps/droce-gen/arrivals.h"

#include <algorithm>
#include <cmath>

namespace droce::gen {

const char* arrivals_name(Arrivals a) {
  return a == Arrivals::kPoisson ? "poisson" : a == Arrivals::kOnOff ? "onoff" : "constant";
}

ArrivalSchedule::ArrivalSchedule(Arrivals kind, double mean_gap, std::uint32_t burst, std::uint64_t seed,
                                 std::uint64_t stream, std::uint64_t start, OnOffPeriod onoff)
    : kind_(kind),
      group_gap_(mean_gap * (burst == 0 ? 1 : burst)),
      burst_(burst == 0 ? 1 : burst),
      left_(burst_),
      start_(start),
      // One seed, several streams (one per worker): each stream's own well-mixed seed.
      rng_(seed ^ (0x9E3779B97F4A7C15ull * (stream + 1))) {
  if (kind_ == Arrivals::kPoisson) at_ = group_gap_ * exponential();
  if (kind_ == Arrivals::kOnOff) {
    onoff_ = onoff;
    on_gap_ = group_gap_ * onoff.on / (onoff.on + onoff.off);
  }
}

// Group n sits n * on_gap_ into the "on" time; each full `on` of it is one whole period.
double ArrivalSchedule::onoff_time(std::uint64_t n) const {
  const double u = static_cast<double>(n) * on_gap_;
  const double periods = std::floor(u / onoff_.on);
  return periods * (onoff_.on + onoff_.off) + (u - periods * onoff_.on);
}

// The "on" time elapsed before t, and the groups placed in it: those with n * on_gap_ < on time.
std::uint64_t ArrivalSchedule::onoff_groups_before(double t) const {
  if (t <= 0) return 0;
  const double period = onoff_.on + onoff_.off;
  const double periods = std::floor(t / period);
  const double on_time = periods * onoff_.on + std::min(t - periods * period, onoff_.on);
  auto n = static_cast<std::uint64_t>(std::ceil(on_time / on_gap_));
  // Float slack either way: exactly the groups whose time is below t.
  while (n > 0 && onoff_time(n - 1) >= t) --n;
  while (onoff_time(n) < t) ++n;
  return n;
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
  if (kind_ == Arrivals::kOnOff)
    at_ = onoff_time(group_);
  else
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
  if (kind_ == Arrivals::kOnOff) {
    // Every group before t is taken: the current one's messages left, and the whole groups after it.
    const std::uint64_t before = onoff_groups_before(target);
    const std::uint64_t skipped = left_ + (before - group_ - 1) * burst_;
    left_ = burst_;
    group_ = before;
    at_ = onoff_time(group_);
    return skipped;
  }
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
  if (kind_ == Arrivals::kOnOff) return left_ + (onoff_groups_before(limit) - group_ - 1) * burst_;
  return left_ + groups_within(limit - at_) * burst_;
}

}  // namespace droce::gen
