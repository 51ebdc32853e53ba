// droce-gen's end-of-run report: perftest-style text, the JSON file, and the exit status.
#pragma once

#include "apps/droce-gen/feed.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/run.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

// Prints the report (and writes --json, and the feed's final line); returns the exit status: 0
// only when every message was verified and nothing went wrong. Call after run() (every job stopped).
[[nodiscard]] int report(const Options& o, Setup& st, const RunOutcome& r, Feed& feed);

}  // namespace droce::gen
