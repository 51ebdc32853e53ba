// RED/ECN marking on the instantaneous queue, the DCQCN paper's switch profile (§4): no mark at or
// below Kmin, probability rising linearly to Pmax at Kmax, every packet marked above Kmax.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

namespace droce::dcqcn {

struct RedProfile {
  std::uint64_t kmin_bytes = 5'000;
  std::uint64_t kmax_bytes = 200'000;
  double pmax = 0.01;

  // Whether a packet arriving at a queue of `queue_bytes` is marked CE. A random draw is taken
  // only between Kmin and Kmax, so a seeded run is repeatable.
  template <typename Rng>
  [[nodiscard]] bool mark(std::uint64_t queue_bytes, Rng& rng) const {
    if (queue_bytes > kmax_bytes) return true;
    if (queue_bytes <= kmin_bytes) return false;
    const double p = pmax * static_cast<double>(queue_bytes - kmin_bytes) /
                     static_cast<double>(std::max<std::uint64_t>(1, kmax_bytes - kmin_bytes));
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p;
  }
};

}  // namespace droce::dcqcn
