// droce-perf's run: perftest's per-size barriers and end of test (perftest_resources.c
// ctx_hand_shake around run_iter_*, xchg_bw_reports, ctx_close_connection).
#include "apps/droce-perf/run.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>

#include <cstdio>

#include "apps/droce-perf/banner.h"

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
  return o.server() && !o.duplex &&
         (o.test == PerftestTest::kWriteBw || o.test == PerftestTest::kReadBw || o.test == PerftestTest::kReadLat ||
          o.test == PerftestTest::kAtomicBw || o.test == PerftestTest::kAtomicLat);
}

engine::PerftestBwReport as_report(const BwRow& r) { return {r.size, r.iters, r.peak, r.avg, r.msg_rate}; }
BwRow as_row(const engine::PerftestBwReport& r) { return {r.size, r.iters, r.bw_peak, r.bw_avg, r.msg_rate}; }

// -b, after a size's traffic (perftest 6.06's write_bw.c / read_bw.c / send_bw.c with duplex):
// WRITE and READ meet at one more barrier under -a (perftest >= 4.6), then both swap BW reports
// and print the sum of both directions: peak, average and message rate added, the size and
// iterations their own. send_bw -D swaps nothing: its figures already count both directions.
Status duplex_report(const Options& o, engine::PerftestControl& session, const engine::PerftestKeys& mine,
                     const BwRow& own, RunOutcome& out) {
  const bool send = o.test == PerftestTest::kSendBw;
  if (send && o.duration_s != 0) {
    out.bw_rows.push_back(own);
    std::printf("%s\n", bw_line(own).c_str());
    return {};
  }
  engine::PerftestKeys ignored;
  if (!send && o.all_sizes)
    if (Status s = session.handshake(mine, ignored); !s.ok()) return s;
  engine::PerftestBwReport theirs;
  if (Status s = session.exchange_bw_report(as_report(own), theirs); !s.ok()) return s;
  // The session checks a client's report only where it prints it (a passive server); here both
  // sides print the peer's figures.
  if (Status s = engine::validate_perftest_bw_report(theirs); !s.ok()) return s;
  const BwRow remote = as_row(theirs);
  BwRow sum = own;
  sum.peak += remote.peak;
  sum.avg += remote.avg;
  sum.msg_rate += remote.msg_rate;
  out.local_rows.push_back(own);
  out.remote_rows.push_back(remote);
  out.bw_rows.push_back(sum);
  std::printf("%s\n", bw_line(sum).c_str());
  return {};
}

// --report-both with -b: each direction's table after the sums (perftest prints them for a
// single size only, as here).
void print_both(const Options& o, const RunOutcome& out) {
  if (!o.report_both || out.local_rows.empty() || o.all_sizes) return;
  const char* titles[2] = {"Local results", "Remote results"};
  const BwRow* rows[2] = {&out.local_rows.back(), &out.remote_rows.back()};
  for (int k = 0; k < 2; ++k)
    std::printf("%s\n %s: \n%s%s\n%s\n", kLine, titles[k], kLine, bw_header(o.report_gbits).c_str(),
                bw_line(*rows[k]).c_str());
  std::fflush(stdout);
}

// One size between its barriers; the row is printed as soon as it is known.
Status run_size(const Options& o, engine::PerftestControl& session, PerfWorkers& workers,
                const engine::PerftestKeys& mine, std::uint32_t size, RunOutcome& out) {
  if (Status s = workers.prepare(size); !s.ok()) return s;
  // -b: WRITE and READ meet at a barrier before each size too (SEND always does).
  engine::PerftestKeys ignored;
  if (o.duplex && o.test != PerftestTest::kSendBw) {
    if (Status s = session.handshake(mine, ignored); !s.ok()) return s;
  } else if (Status s = session.before_size(o.test, mine); !s.ok()) {
    return s;
  }
  if (o.bw()) {
    BwRow row;
    if (Status s = workers.run_bw(size, row); !s.ok()) return s;
    if (o.duplex) {
      if (Status s = duplex_report(o, session, mine, row, out); !s.ok()) return s;
    } else {
      out.bw_rows.push_back(row);
      std::printf("%s\n", bw_line(row).c_str());
    }
  } else {
    LatRow row;
    if (Status s = workers.run_lat(size, row); !s.ok()) return s;
    out.lat_rows.push_back(row);
    std::printf("%s\n", lat_line(row).c_str());
  }
  std::fflush(stdout);
  if (Status s = session.after_size(o.test, o.all_sizes, mine); !s.ok()) return s;
  return {};
}

}  // namespace

RunOutcome run_test(const Options& o, engine::PerftestControl& session, PerfWorkers& workers,
                    const engine::PerftestKeys& mine, StallWatch& watch) {
  RunOutcome out;
  const bool passive = passive_server(o);
  if (!passive)
    for (std::uint32_t size : o.sizes())
      if (Status s = run_size(o, session, workers, mine, size, out); !s.ok()) {
        out.problem = s.message();
        return out;
      }
  if (o.duplex) {
    // -b ends with the close alone (perftest's duplex sides swapped their reports size by size).
    print_both(o, out);
    if (Status s = session.close(mine); !s.ok()) out.problem = s.message();
    return out;
  }
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
