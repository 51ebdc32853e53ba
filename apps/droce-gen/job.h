// droce-gen's job: one worker's share of the run — its QPs (QP i of the run is on worker
// i % workers), their workload (offered load, posting, verification of every message) and its
// counters — polled on the worker's lcore. The main lcore reads only what the job publishes.
#pragma once

#include <droce/engine/endpoint/rc_endpoint.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/latency_histogram.h"
#include "apps/droce-gen/arrivals.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/workload.h"

namespace droce::engine {
class LoopbackLab;
class Worker;
}  // namespace droce::engine

namespace droce::gen {

// What the run is doing, set by the main lcore and followed by every job.
enum class Phase : int {
  kWait,  // not started: the job has not touched anything yet
  kRun,   // offered load, posting, verification
  // Between the sizes of a sweep: post nothing, complete and verify what is in flight, then park
  // (figures().parked) touching nothing until the main lcore has planned the next size.
  kPause,
  kDrain,  // the end-of-run exchange: keep the transport polled (retransmissions, ACKs), post nothing
  kStop,   // leave the loop: nothing polls the port any more
};

// Figures for the main lcore (live line, end of run, the workers array), written only by the job
// with relaxed atomics: a reader sees each value whole, perhaps one publication old.
struct JobFigures {
  std::atomic<std::uint64_t> messages{0}, bytes{0};          // measured (from the end of the warm-up)
  std::atomic<std::uint64_t> all_messages{0}, all_bytes{0};  // since the start, never reset (live line)
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> retransmitted{0}, naks_sent{0}, naks_received{0}, rnr_naks{0};
  std::atomic<std::uint64_t> cnps_sent{0}, cnps_received{0};
  std::atomic<std::uint64_t> ack_timeouts{0};
  std::atomic<std::uint64_t> scheduled{0}, posted{0}, late{0}, shed{0};  // the schedule (measured, see LoadCounters)
  // Per QP entry of the job (its requesters' completions; a server: its responders' messages),
  // since the start: the live feed's per-QP figures. Sized in plan(), before the run.
  std::unique_ptr<std::atomic<std::uint64_t>[]> qp_messages, qp_bytes;
  std::uint32_t qp_entries = 0;
  std::atomic<std::uint64_t> rate_lo_bps{0}, rate_hi_bps{0};   // its requesters' DCQCN rates
  std::atomic<std::uint64_t> first_rx_tsc{0}, last_rx_tsc{0};  // server: first and last message verified
  std::atomic<std::uint64_t> steered_in_software{0}, steered_in{0};
  std::atomic<bool> ended{false};     // a failed completion, or its share of --count all completed
  std::atomic<bool> parked{false};    // kPause: nothing in flight, the job's state the main lcore's
  std::atomic<bool> draining{false};  // it saw kDrain: its workload state is the main lcore's to read
  std::atomic<bool> finished{false};  // it left its loop (kStop): everything is the main lcore's
};

// JobFigures' counters as plain numbers, summed over the jobs that add() theirs (relaxed loads:
// each is a consistent count, not a snapshot of all at one instant). The live line and the feed.
struct FigureTotals {
  std::uint64_t messages = 0, bytes = 0, all_messages = 0, all_bytes = 0, errors = 0;
  std::uint64_t retx = 0, naks_sent = 0, naks_received = 0, rnr = 0, cnps_sent = 0, cnps_received = 0;
  std::uint64_t ack_timeouts = 0, scheduled = 0, posted = 0, late = 0, shed = 0;
  void add(const JobFigures& f);
};

// A --mix run's figures for one op, from the end of the warm-up: what its requesters saw complete
// (a READ's data checked there; SEND and WRITE data at the responder, in the run's totals).
struct OpFigures {
  std::uint64_t messages = 0, bytes = 0;
  engine::LatencyHistogram hist;  // as the run's latency: due (closed loop: posted) to completion
  OpFigures& operator+=(const OpFigures& o) {
    messages += o.messages;
    bytes += o.bytes;
    hist.merge(o.hist);
    return *this;
  }
};
// Indexed by Op (send, write, read: the ops a mix takes).
inline constexpr std::size_t kMixOps = 3;
using PerOp = std::array<OpFigures, kMixOps>;
// Weighted sizes (--size SIZE:WEIGHT,..): the messages completed of each size, in the order given.
using PerSize = std::array<std::uint64_t, WeightedDraw::kMaxChoices>;

// A flow group's figures in one job, from the end of the warm-up: what its requesters saw complete
// (the responders' verification of its QPs is in their Responder::t).
struct GroupFigures {
  Totals t;
  engine::LatencyHistogram hist;  // as the run's latency: due (closed loop: posted) to completion
};

// What every job shares (read-only during the run).
struct RunPlan {
  const Options* opt = nullptr;
  const Pattern* pattern = nullptr;
  std::uint32_t slots = 1;     // inflight buffers per active QP
  std::size_t slot_bytes = 0;  // the largest message
  bool server = false;
  // --connect cm: the run ends in a disconnect (DREQ), which moves the QPs to ERROR and flushes
  // the receives still posted (IBTA §10.3.1): those are the end, not failures.
  bool cm = false;
  double hz = 0;  // TSC ticks per second
  std::uint64_t start_tsc = 0;
  std::uint64_t warm_end_tsc = 0;
};

class Job {
 public:
  Job(std::uint16_t index, unsigned lcore) : index_(index), lcore_(lcore) {}
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // ---- set-up (main lcore, before the run) ----
  // Who polls the transport: a loopback lab (both ends), an endpoint on the port, or an engine worker.
  void poll_through(engine::LoopbackLab* lab, engine::RcEndpoint* ep, engine::Worker* worker);
  [[nodiscard]] std::vector<Requester>& requesters() { return reqs_; }
  [[nodiscard]] std::vector<Responder>& responders() { return rsps_; }
  // The job's one buffer for each side, sliced per QP (one registration, whatever the QP count).
  [[nodiscard]] std::vector<std::uint8_t>& requester_buffer() { return req_buf_; }
  [[nodiscard]] std::vector<std::uint8_t>& responder_buffer() { return rsp_buf_; }
  // Its share of the workload: the first `active` QPs of each side carry traffic, at most `count`
  // messages (0: by duration), at `msg_rate` messages/s (0: closed loop) due as --arrivals and
  // --burst say (its own stream of --seed). Flow groups: each group's QPs here carry their share
  // of its offered load (msg_rate is not used), within its start and stop. Again for each size of a sweep (the job
  // parked): the step's counters, latency and schedule start from zero; the QPs' sequences go on.
  void plan(const RunPlan& plan, std::uint32_t active, std::uint64_t count, double msg_rate);

  // ---- the run ----
  // On a worker lcore: waits for kRun (or kStop), runs until kStop; see Phase.
  static int lcore_main(void* job);
  void set_phase(Phase p) { phase_.store(p, std::memory_order_release); }
  // One iteration of the workload (the main lcore calls these for worker 0).
  void run_once(std::uint64_t now);
  // The transport alone: timers, retransmissions, ACKs (no posting, no completions).
  void poll_only(std::uint64_t now);
  // kPause, one iteration: completes and verifies what is in flight; once nothing is, publishes
  // and parks (figures().parked). True once parked.
  bool pause_once(std::uint64_t now);
  // The main lcore, once the next step is planned (the job parked): it runs again on kRun.
  void unpark() { figures_.parked.store(false, std::memory_order_relaxed); }
  // kDrain seen (always true for a job the caller polls itself).
  void enter_drain() { figures_.draining.store(true, std::memory_order_release); }
  void leave() { figures_.finished.store(true, std::memory_order_release); }
  // Copies the counters into figures(): every 50 ms in the loop, and at phase changes.
  void publish(std::uint64_t now);
  [[nodiscard]] const JobFigures& figures() const { return figures_; }

  // ---- after kDrain (figures().draining) or kStop (figures().finished) ----
  [[nodiscard]] const Totals& totals() const { return t_; }
  // Latency from when each message was due (open loop; closed loop: from its posting) and, the
  // service time, from its posting, both to its completion.
  [[nodiscard]] const engine::LatencyHistogram& latency() const { return hist_; }
  [[nodiscard]] const engine::LatencyHistogram& service_latency() const { return service_; }
  // A --mix run: each op's share (empty figures otherwise).
  [[nodiscard]] const PerOp& per_op() const { return ops_; }
  [[nodiscard]] const PerSize& per_size() const { return sizes_; }
  // Flow groups: each group's figures, by group index (empty without groups).
  [[nodiscard]] std::vector<GroupFigures> group_figures() const;
  // The schedule's account up to `end_tsc`, the measured window's end (the run's clock, not this
  // job's: a job last run before it still owes what fell due since, counted as backlog).
  [[nodiscard]] LoadCounters load(std::uint64_t end_tsc) const;
  [[nodiscard]] const std::string& first_failure() const { return first_failure_; }
  // A --count run: some active QP's postings have not all completed.
  [[nodiscard]] bool unfinished() const;
  // Its endpoints, each once (loopback: both ends).
  [[nodiscard]] const std::vector<engine::RcEndpoint*>& endpoints() const { return eps_; }
  [[nodiscard]] std::uint16_t index() const { return index_; }
  [[nodiscard]] unsigned lcore() const { return lcore_; }
  [[nodiscard]] engine::Worker* worker() const { return worker_; }

 private:
  void poll_transport(std::uint64_t now);
  bool post_one(Requester& q, bool open);
  // --split: the stripes of K consecutive entries (QPs of this job), each entry's part.
  void plan_stripes();
  // Whether `lead`'s stripe may post its next message: every QP in RTS, and fewer than `inflight`
  // messages with a part outstanding.
  [[nodiscard]] bool stripe_ready(const Requester& lead, std::uint32_t inflight) const;
  // Posts `w` (the whole message) as its K parts on `lead`'s stripe. False when nothing was posted.
  bool post_parts(Requester& lead, const rc::SendWr& w, std::uint32_t size);
  // A flow group's share of the job (a run without groups: one lane, the whole workload): its
  // schedule and window, and its figures.
  struct Lane {
    ArrivalSchedule schedule;  // closed loop: disabled
    std::uint64_t start_tsc = 0, stop_tsc = UINT64_MAX;
    std::uint32_t inflight = 0;  // its window per QP (<= the run's slots)
    GroupFigures figs;
  };
  void plan_lanes(double msg_rate);
  void shed_stale(Lane& l, std::uint64_t now);
  void keep_receives_posted(Responder& r);
  // Completions: each endpoint's CQ drained once per iteration, each completion to its QP's entry.
  struct QpnIndex {
    std::uint32_t base = 0;
    std::vector<std::uint32_t> entry;  // QPN - base -> entry index + 1, 0: not this job's
    [[nodiscard]] std::uint32_t find(std::uint32_t qpn) const;
  };
  template <typename Entry>
  static void index_qpns(const std::vector<Entry>& entries, std::uint32_t active, QpnIndex& out);
  // Polls of 32 per endpoint and iteration at most, so posting and the transport keep their turn.
  static constexpr int kCompletionRounds = 8;
  void drain_completions(std::uint64_t now);
  void dispatch(engine::RcEndpoint& ep, const rc::Completion& c, std::uint64_t now);
  void verify_message(Responder& r, const rc::Completion& c, std::uint64_t now);
  void complete_request(Requester& q, const rc::Completion& c, std::uint64_t now);
  // --split: a part completed on `q`; the stripe's messages completed whole are accounted.
  void complete_part(Requester& q, const rc::Completion& c, std::uint64_t now);
  // A message completed (all its parts), its op `op`: its READ data, latency and figures, timed
  // on `q`. Returns its size.
  std::uint32_t complete_message(Requester& q, std::uint64_t seq, Op op, std::uint64_t now);
  // --split: a part arrived at `r`; the targets of the stripe's messages all of whose parts arrived
  // are checked whole (corrupted counted on the stripe's first QP).
  void check_whole(const Responder& r);
  [[nodiscard]] bool atomic_result_ok(const Requester& q, const rc::Completion& c) const;
  void note_failure(std::uint32_t index, engine::RcEndpoint& ep, std::uint32_t qpn, const rc::Completion& c);
  [[nodiscard]] bool share_completed() const;
  [[nodiscard]] bool in_flight() const;  // an active requester's posting not yet completed
  // A --mix run's responder: the first sequence number from `seq` on that reaches it (READs do
  // not), and how many of [from, to) do (those missing are lost).
  [[nodiscard]] static std::uint64_t next_received(const Options& o, std::uint32_t qp, std::uint64_t seq);
  [[nodiscard]] static std::uint64_t received_between(const Options& o, std::uint32_t qp, std::uint64_t from,
                                                      std::uint64_t to);
  void reset_measures();

  const std::uint16_t index_;
  const unsigned lcore_;
  std::atomic<Phase> phase_{Phase::kWait};
  JobFigures figures_;
  RunPlan plan_;
  engine::LoopbackLab* lab_ = nullptr;
  engine::RcEndpoint* ep_ = nullptr;
  engine::Worker* worker_ = nullptr;
  std::vector<engine::RcEndpoint*> eps_;
  std::vector<Requester> reqs_;
  std::vector<Responder> rsps_;
  std::vector<std::uint8_t> req_buf_, rsp_buf_;
  std::uint32_t active_reqs_ = 0, active_rsps_ = 0;
  std::uint32_t first_req_ = 0;  // run_once's first requester this call (turns: fair open-loop posting)
  QpnIndex req_index_, rsp_index_;
  std::uint64_t count_ = 0;                                // this job's share of --count (0: by duration)
  std::vector<Lane> lanes_;                                // by flow group (one without groups)
  std::uint64_t late_after_tsc_ = 0, shed_after_tsc_ = 0;  // kLateAfterNs, kShedAfterNs in ticks
  LoadCounters load_;
  std::uint64_t last_run_ = 0;  // the last iteration's time: the backlog is counted there
  std::uint64_t total_posted_ = 0;
  bool measuring_ = false;
  std::uint64_t all_messages_ = 0, all_bytes_ = 0;
  std::uint64_t first_rx_ = 0, last_rx_ = 0;
  std::uint64_t next_publish_ = 0;
  Totals t_;
  engine::LatencyHistogram hist_, service_;
  PerOp ops_;
  PerSize sizes_{};
  std::string first_failure_;
};

// The job's workload lines up with the run's QP numbering: QP i is job i % workers's entry i / workers.
[[nodiscard]] inline std::uint16_t job_of(std::uint32_t qp, std::uint16_t workers) {
  return static_cast<std::uint16_t>(qp % workers);
}
[[nodiscard]] inline std::uint32_t slot_in_job(std::uint32_t qp, std::uint16_t workers) { return qp / workers; }
// How many of the run's first `n` QPs job `w` of `workers` holds.
[[nodiscard]] inline std::uint32_t share_of(std::uint32_t n, std::uint16_t w, std::uint16_t workers) {
  return n / workers + (w < n % workers ? 1 : 0);
}

}  // namespace droce::gen
