// droce-perf's run on the main lcore: perftest's barriers around each message size with the
// workers' traffic between them, then the end (the final barrier, the BW reports, the close).
#pragma once

#include <droce/engine/exchange/perftest_exchange.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-perf/options.h"
#include "apps/droce-perf/perf_workers.h"
#include "apps/droce-perf/report.h"

namespace droce::perf {

// A passive server waits in one exchange step for the client's whole run: it gives up after
// --timeout seconds without a frame from the client (the README's stall), not after a guess at
// how long the run takes. Fed from the session's idle callback.
class StallWatch {
 public:
  explicit StallWatch(double timeout_s);
  // Every call while a TCP step waits; looks at the figures every 1024 calls.
  void on_idle(std::uint64_t now_tsc, std::uint64_t rx_frames);
  // From now on, --timeout seconds without a new frame end the waiting step.
  void arm(std::uint64_t now_tsc);
  [[nodiscard]] bool stalled() const { return stalled_; }

 private:
  std::uint64_t stall_tsc_ = 0, idle_calls_ = 0, last_rx_frames_ = 0, last_rx_tsc_ = 0;
  bool armed_ = false, stalled_ = false;
};

struct RunOutcome {
  std::vector<BwRow> bw_rows;  // the rows printed (with -b: both directions summed, as perftest prints them)
  std::vector<BwRow> local_rows, remote_rows;  // -b: each direction's own figures, size by size
  std::vector<LatRow> lat_rows;
  std::string problem;  // empty: the run completed
};

// Every size of the test (printing each row as perftest does), then the end of the exchange; a
// passive server (write_bw, read_bw, read_lat, atomic_bw, atomic_lat) only waits in the end step
// while the client runs.
[[nodiscard]] RunOutcome run_test(const Options& o, engine::PerftestControl& session, PerfWorkers& workers,
                                  const engine::PerftestKeys& mine, StallWatch& watch);

}  // namespace droce::perf
