// droce-gen's end-of-run report: perftest-style text, the JSON file, and the exit status.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "apps/droce-gen/feed.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/run.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

// Prints the report (and writes --json, and the feed's final line); returns the exit status: 0
// only when every message was verified and nothing went wrong. Call after run() (every job stopped).
[[nodiscard]] int report(const Options& o, Setup& st, const RunOutcome& r, Feed& feed);

// The report's figures as every part of it writes them (the run's, a sweep's sizes', the groups').
// Peak and minimum goodput over the full intervals; null figures when the run had none.
[[nodiscard]] nlohmann::json interval_json(const Options& o, const IntervalBandwidth& bw);
// "min N  p50 N  p90 N  p99 N  p99.9 N  max N" (ns), and the same as {"min", "p50", .., "max"}.
[[nodiscard]] std::string percentiles_text(const engine::LatencyHistogram& h);
[[nodiscard]] nlohmann::json percentiles_json(const engine::LatencyHistogram& h);

}  // namespace droce::gen
