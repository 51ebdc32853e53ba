// droce-echo's run with --peer srq_pingpong, either end: every QP's receives come from the one
// shared receive queue; the server answers each request on the QP its completion names; the
// client keeps one exchange in flight on each QP. Counting follows ibv_srq_pingpong.
#pragma once

#include "apps/droce-echo/options.h"
#include "apps/droce-echo/setup.h"

namespace droce::echo {

// Once connect_srq_qps() has connected the QPs: the run, the linger, the port stopped, the
// workers finished, the report (text and --json). Returns the exit status.
[[nodiscard]] int run_srq(const Options& o, Setup& st);

}  // namespace droce::echo
