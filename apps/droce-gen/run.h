// droce-gen's run, from the main lcore: starts the jobs (worker 0 here, the others on their
// lcores), watches them (live line, CSV, the peer's lines, the ends of a run), then the
// end-of-run exchange with the peer and the stop of every job.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/latency_histogram.h"
#include "apps/droce-gen/connect.h"
#include "apps/droce-gen/feed.h"
#include "apps/droce-gen/interval_bandwidth.h"
#include "apps/droce-gen/job.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/setup.h"
#include "apps/droce-gen/workload.h"

namespace droce::gen {

// What one measurement saw: a whole run, or one size of a sweep.
struct StepResult {
  std::uint32_t size = 0;  // a sweep's size (a whole run: 0)
  Totals t;
  engine::LatencyHistogram hist, service;
  LoadCounters load;
  double secs = 0;
  IntervalBandwidth interval_bw;
  PerOp ops;        // a --mix run: each op's share
  PerSize sizes{};  // weighted sizes: the messages of each
};

// A server of several clients (--clients): one client's share of the run, from its QPs.
struct ClientResult {
  std::string peer_ip;                  // its GID's address ("" when it never completed the exchange)
  std::uint32_t first_qp = 0, qps = 0;  // the run's QPs it held
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  Totals t;             // what its QPs verified, with the losses its END counts showed
  double secs = 0;      // its first to last message verified after the warm-up
  std::string problem;  // empty when its run and its end-of-run exchange went right
  [[nodiscard]] bool ok() const {
    return problem.empty() && t.messages > 0 && t.lost == 0 && t.duplicated == 0 && t.out_of_order == 0 &&
           t.corrupted == 0 && t.errors == 0;
  }
};

// --flow-group: one group's share of the run, from the end of the warm-up.
struct GroupResult {
  // What its requesters completed (messages, bytes, their checks) and its responders verified.
  Totals t;
  engine::LatencyHistogram hist;  // due (closed loop: posted) to completion
  double secs = 0;                // the measured window within its start and stop
  IntervalBandwidth interval_bw;  // over the full intervals within that window
};

struct RunOutcome {
  Totals t;                          // both ends' verification (the client adds the server's report)
  engine::LatencyHistogram hist;     // from the due time (closed loop: from the posting) to completion
  engine::LatencyHistogram service;  // from the posting to completion
  LoadCounters load;                 // the requesters' schedule (open loop), summed over the jobs
  double secs = 0;                   // measured time (the server: first to last message verified)
  IntervalBandwidth interval_bw;     // peak and minimum over the full intervals after the warm-up
  PerOp ops;                         // a --mix run: each op's share of t (its requesters' view)
  std::uint64_t mix_received = 0;    // a --mix run: the SENDs and WRITEs its responders verified
  PerSize sizes{};                   // weighted sizes: the messages completed of each, in the order given
  bool unfinished = false;           // a --count run that did not complete its postings
  bool interrupted = false;
  bool served_only = false;  // a server of READs over RDMA-CM: it served, the client counted
  std::string problem;       // empty when the run and the end-of-run exchange went right
  std::uint64_t peer_received = 0;
  // Atomic runs (loopback or server): the responders' counters summed, against the operations the
  // requesters saw complete (the client's END counts on a server).
  bool atomic_checked = false;
  std::uint64_t atomic_counter = 0;
  std::uint64_t atomic_completed = 0;
  // A sweep (o.sweep): one entry per size run, in order (fewer than o.sizes when it stopped
  // early: problem says why); the figures above are their sums. Empty for a single-size run.
  std::vector<StepResult> steps;
  // A sweep: each size's options, o with that size alone (the jobs' plans point into it).
  std::vector<Options> step_options;
  // Each job's verification over the whole run (every size of a sweep), by job index.
  std::vector<Totals> job_totals;
  // --clients N: each client's share, in the order they connected (empty otherwise).
  std::vector<ClientResult> clients;
  // --flow-group: each group's share, in the order given (empty otherwise).
  std::vector<GroupResult> groups;
};

// The run. An error is what kept it from starting (a CSV file, a busy lcore); after it starts,
// everything that goes wrong is in the outcome's problem. The jobs have stopped and the port is
// stopped when it returns. Every --interval: the live line, a --csv row and a feed line.
[[nodiscard]] engine::Status run(const Options& o, Setup& st, Connection& c, Feed& feed, RunOutcome& out);

}  // namespace droce::gen
