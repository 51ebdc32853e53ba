// Peak and minimum goodput over a run's intervals (issue 40, item 5), beside the average. An
// interval counts when it began after the warm-up (a server: after its first verified message
// too, so the wait for the client is not a minimum of 0) and ran its whole --interval: the last
// one, cut short by the run's end, does not. A run shorter than one interval has none.
#pragma once

#include <cstdint>

namespace droce::gen {

struct IntervalBandwidth {
  std::uint32_t intervals = 0;  // the full intervals counted
  double peak_gbps = 0;
  double min_gbps = 0;

  void add(double gbps) {
    if (intervals == 0 || gbps > peak_gbps) peak_gbps = gbps;
    if (intervals == 0 || gbps < min_gbps) min_gbps = gbps;
    ++intervals;
  }
};

}  // namespace droce::gen
