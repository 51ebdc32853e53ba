// droce-rping's report: one line on stdout (or the error on stderr), the --json file, and the
// exit status (0 only when every ping of every connection was verified and each ended cleanly).
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <vector>

#include "apps/droce-rping/options.h"
#include "apps/droce-rping/session.h"
#include "apps/droce-rping/setup.h"

namespace droce::rping {

// `conns`: the client's connection, or the server's in the order it accepted them; `rejected`:
// the server's REQs beyond --clients; `failure`: the first error of the run (ok when none).
[[nodiscard]] int report(const Options& o, const Setup& st, const std::vector<Results>& conns, std::uint64_t rejected,
                         const engine::Status& failure);

}  // namespace droce::rping
