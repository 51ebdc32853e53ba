// Worker: the per-lcore poll loop (read TSC once, let the handler poll) and lcore launching.
#pragma once

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <cstdint>

#include "engine/core/status.h"
#include "engine/core/stop_signal.h"

namespace droce::engine {

// A handler is any type with `void poll(std::uint64_t now_tsc)` and `void finish()`: static
// polymorphism, so the per-packet path has no virtual call or std::function. The loop reads the
// TSC once per iteration and passes it down; rare work (timers, stats) hides behind one compare
// inside the handler. `max_iterations` 0 = until stop is requested.
// A handler whose per-iteration work is a few nanoseconds (the raw forwarder) may declare
// `static constexpr bool kReadsClockItself = true` and sample the TSC less often itself: rdtsc
// costs tens of cycles, which is measurable against a 32-frame pointer-only burst.
template <typename Handler>
void run_poll_loop(Handler& h, std::uint64_t max_iterations = 0) {
  constexpr bool kSelfClocked = requires { Handler::kReadsClockItself; };
  for (std::uint64_t i = 0; (max_iterations == 0 || i < max_iterations) && !stop_requested(); ++i) {
    if constexpr (kSelfClocked)
      h.poll(0);
    else
      h.poll(rte_rdtsc());
  }
  h.finish();
}

// Launches `h`'s poll loop on a worker lcore (not the main one). The handler must outlive the
// loop; join with wait_worker().
template <typename Handler>
[[nodiscard]] Status launch_worker(unsigned lcore, Handler& h) {
  if (lcore == rte_get_main_lcore() || !rte_lcore_is_enabled(lcore))
    return Status::error(StatusCode::kInvalidArgument,
                         "lcore " + std::to_string(lcore) + " is not an enabled worker lcore (see EAL -l)");
  const int rc = rte_eal_remote_launch(
      [](void* arg) -> int {
        run_poll_loop(*static_cast<Handler*>(arg));
        return 0;
      },
      &h, lcore);
  if (rc != 0)
    return Status::error(StatusCode::kBadState, "cannot launch on lcore " + std::to_string(lcore) + ": busy");
  return {};
}

inline int wait_worker(unsigned lcore) { return rte_eal_wait_lcore(lcore); }

}  // namespace droce::engine
