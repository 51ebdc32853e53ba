// Serialisation times in whole nanoseconds without drift. A 590-byte frame at 100 Gb/s takes
// 47.2 ns: rounded on its own every time, a port would send 0.4 % faster than its line. Each link
// end keeps the rounding's remainder and adds it to its next frame, so over many frames the port
// runs at exactly its rate (frames of a size that divides evenly, the model's, are unaffected).
#pragma once

#include <cmath>
#include <cstdint>

namespace droce::sim {

struct SerialClock {
  double carry = 0;  // ns owed (positive) or taken early (negative) by the frames before

  std::uint64_t ns(std::uint32_t bytes, double bps) {
    const double exact = static_cast<double>(bytes) * 8e9 / bps + carry;
    const auto whole = static_cast<std::uint64_t>(std::llround(exact));
    carry = exact - static_cast<double>(whole);
    return whole;
  }
};

}  // namespace droce::sim
