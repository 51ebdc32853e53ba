// RankFigures: what one rank measured over one size and placement, as it crosses to rank 0 in
// MPI mode (JSON text, checked on arrival), and how rank 0 combines every rank's into the row
// the one-process lab computes (results.h).
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-coll/rank.h"
#include "apps/droce-coll/results.h"
#include "apps/droce-coll/size_schedule.h"

namespace droce::coll {

struct RankFigures {
  std::vector<double> iter_us;  // warm-up included
  std::uint64_t wrong = 0, wrong_on_arrival = 0;
  std::vector<PeerFigures> peers;  // QP counters: this placement's own
  std::uint64_t cnps_sent = 0, cnps_handled = 0, pfc_pauses = 0;
};

[[nodiscard]] std::string figures_text(const RankFigures& f);
// Empty and `out` filled, or why rank `from`'s text is refused (iterations, peers out of range).
[[nodiscard]] engine::Status parse_figures(const std::string& text, std::uint32_t from, std::uint32_t world,
                                           std::size_t iterations, RankFigures& out);

// The placement's row from every rank's figures (indexed by rank), the warm-up left out.
[[nodiscard]] PlacementResult combine_figures(const std::vector<RankFigures>& ranks, std::uint32_t warmup,
                                              const SizeSchedule& s);

}  // namespace droce::coll
