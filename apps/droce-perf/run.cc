// droce-perf's run: perftest's per-size barriers and end of test (perftest_resources.c
// ctx_hand_shake around run_iter_*, xchg_bw_reports, ctx_close_connection).
#include "apps/droce-perf/run.h"

#include <cstdio>

#include <rte_cycles.h>

#include <droce/engine/core/stop_signal.h>

namespace droce::perf {

using engine::PerftestTest;
using engine::Status;

StallWatch::StallWatch(double timeout_s)
    : stall_tsc_(static_cast<std::uint64_t>(timeout_s * static_cast<double>(rte_get_tsc_hz()))),
      last_rx_tsc_(rte_rdtsc()) {}

void StallWatch::on_idle(std::uint64_t now_tsc, std::uint64_t rx_frames) {
  if ((++idle_calls_ & 1023) != 0 || !armed_ || stalled_) return;
  if (rx_frames != last_rx_frames_) {
    last_rx_frames_ = rx_frames;
    last_rx_tsc_ = now_tsc;
  } else if (now_tsc - last_rx_tsc_ > stall_tsc_) {
    stalled_ = true;
    engine::end_tcp_waits_now();  // the step's own deadline is the whole run's: end it here
  }
}

void StallWatch::arm(std::uint64_t now_tsc) {
  last_rx_tsc_ = now_tsc;
  armed_ = true;
}

namespace {

// The servers that only answer (atomic_bw and atomic_lat as read_bw and read_lat: perftest's
// servers of them wait at the end barrier while the client runs).
bool passive_server(const Options& o) {
  return o.server() && (o.test == PerftestTest::kWriteBw || o.test == PerftestTest::kReadBw ||
                        o.test == PerftestTest::kReadLat || o.test == PerftestTest::kAtomicBw ||
                        o.test == PerftestTest::kAtomicLat);
}

// One size between its barriers; the row is printed as soon as it is known.
std::string run_size(const Options& o, engine::PerftestSession& session, PerfWorkers& workers,
                     const engine::PerftestKeys& mine, std::uint32_t size, RunOutcome& out) {
  if (Status s = workers.prepare(size); !s.ok()) return s.message();
  if (Status s = session.before_size(o.test, mine); !s.ok()) return s.message();
  if (o.bw()) {
    BwRow row;
    if (Status s = workers.run_bw(size, row); !s.ok()) return s.message();
    out.bw_rows.push_back(row);
    std::printf("%s\n", bw_line(row).c_str());
  } else {
    LatRow row;
    if (Status s = workers.run_lat(size, row); !s.ok()) return s.message();
    out.lat_rows.push_back(row);
    std::printf("%s\n", lat_line(row).c_str());
  }
  std::fflush(stdout);
  if (Status s = session.after_size(o.test, o.all_sizes, mine); !s.ok()) return s.message();
  return {};
}

}  // namespace

RunOutcome run_test(const Options& o, engine::PerftestSession& session, PerfWorkers& workers,
                    const engine::PerftestKeys& mine, StallWatch& watch) {
  RunOutcome out;
  const bool passive = passive_server(o);
  if (!passive)
    for (std::uint32_t size : o.sizes())
      if (out.problem = run_size(o, session, workers, mine, size, out); !out.problem.empty()) return out;
  // The end: barrier, BW reports, "done" (a passive server waits here while the client runs).
  engine::PerftestBwReport mine_report, peer_report;
  if (!out.bw_rows.empty()) {
    // perftest swaps its last row's figures (MB/sec, whatever the client printed).
    const BwRow& r = out.bw_rows.back();
    mine_report = {r.size, r.iters, r.peak, r.avg, r.msg_rate};
  }
  if (passive) {
    // The client's whole run happens inside this step: its deadline is a day, the stall watch
    // (--timeout seconds without a frame from the client) the working limit.
    session.set_timeout(24u * 3600 * 1000);
    watch.arm(rte_rdtsc());
  }
  if (Status s = session.finish(o.test, mine, mine_report, peer_report); !s.ok()) {
    out.problem = watch.stalled() ? "no frame from the client for " + std::to_string(static_cast<int>(o.timeout_s)) +
                                        " s while it should be running its test (is it running the same test?)"
                                  : s.message();
  } else if (passive && o.bw()) {
    // The server of write_bw/read_bw/atomic_bw prints the client's figures, as perftest does.
    BwRow r{peer_report.size, peer_report.iters, peer_report.bw_peak, peer_report.bw_avg, peer_report.msg_rate};
    out.bw_rows.push_back(r);
    std::printf("%s\n", bw_line(r).c_str());
  }
  return out;
}

}  // namespace droce::perf
