// SizeSchedule: everything every rank needs to run one size — the parameters, the schedule, each
// rank's buffer layout and each transfer's hazards — built once per size by whoever drives the
// ranks (each process builds the same one: the schedule is a pure function of the parameters).
#pragma once

#include <cstdint>
#include <vector>

#include "apps/droce-coll/schedule.h"

namespace droce::coll {

struct SizeSchedule {
  ScheduleParams params;
  bool in_place = false;
  Schedule schedule;
  std::vector<Layout> layouts;                    // per rank
  std::vector<std::vector<std::int32_t>> hazard;  // per transfer

  [[nodiscard]] static SizeSchedule build(const ScheduleParams& p, bool in_place) {
    SizeSchedule s;
    s.params = p;
    s.in_place = in_place && in_place_supported(p.pattern);
    s.schedule = build_schedule(p);
    for (std::uint32_t r = 0; r < p.ranks; ++r) s.layouts.push_back(layout(p, s.schedule.buffers[r], r, s.in_place));
    s.hazard = hazards(s.schedule, s.layouts);
    return s;
  }
};

}  // namespace droce::coll
