// droce-rping's report: one line on stdout (or the error on stderr), the --json file, and the
// exit status (0 only when every ping was verified and the connection ended cleanly).
#pragma once

#include <droce/engine/core/status.h>

#include "apps/droce-rping/options.h"
#include "apps/droce-rping/session.h"
#include "apps/droce-rping/setup.h"

namespace droce::rping {

// `failure`: the first error of the run (ok when there was none).
[[nodiscard]] int report(const Options& o, const Setup& st, const Results& r, const engine::Status& failure);

}  // namespace droce::rping
