// LabRunner: one generation counter tells the workers what to do next (set the size, prepare,
// start, finish, halt); each acknowledges once done, and keeps polling in between so that frames
// (late ACKs, retransmissions) keep moving.
#include "apps/droce-coll/lab_run.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <algorithm>
#include <cstdio>

#include "apps/droce-coll/rank_figures.h"

namespace droce::coll {

struct LabRunner::Worker {
  LabRunner* run = nullptr;
  unsigned lcore = 0;
  bool owns_switch = false;
  std::vector<std::uint32_t> ranks;
  std::vector<std::uint8_t> reported;
  std::uint32_t gen = 0;
  bool running = false, halted = false, stalling = false;

  void step() {
    const std::uint64_t now = rte_rdtsc();
    if (owns_switch) run->lab_.poll_switch(now);
    rte_mbuf* rx[engine::RcEndpoint::kRxBurst];
    if (!halted)
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        const std::uint32_t r = ranks[i];
        if (stalling && static_cast<int>(r) == run->cfg_.stall_rank) continue;
        CollRank& rank = *run->ranks_[r];
        const std::uint16_t n = run->lab_.receive(r, rx, engine::RcEndpoint::kRxBurst);
        rank.poll(now, rx, n);
        if (running && reported[i] == 0 && rank.done()) {
          reported[i] = 1;
          run->ranks_done_.fetch_add(1, std::memory_order_acq_rel);
        }
        if (rank.failed()) run->failed_.store(true, std::memory_order_release);
      }
    const std::uint32_t g = run->gen_.load(std::memory_order_acquire);
    if (g == gen) return;
    gen = g;
    switch (run->op_) {
      case Op::kPrepare:
        for (std::uint32_t r : ranks) run->ranks_[r]->prepare(run->op_iteration_);
        std::fill(reported.begin(), reported.end(), 0);
        break;
      case Op::kStart:
        for (std::uint32_t r : ranks) run->ranks_[r]->start(run->op_start_tsc_);
        running = true;
        stalling = run->cfg_.stall_rank >= 0;
        break;
      case Op::kFinish:
        for (std::uint32_t r : ranks) run->ranks_[r]->finish_iteration(run->tsc_per_us_);
        running = false;
        break;
      case Op::kHalt:
        halted = true;
        break;
      case Op::kResume:
        halted = false;
        break;
      case Op::kNone:
        break;
    }
    run->acked_.fetch_add(1, std::memory_order_acq_rel);
  }
};

int lab_worker_main(void* arg) {
  auto* w = static_cast<LabRunner::Worker*>(arg);
  while (!w->run->quit_.load(std::memory_order_acquire)) w->step();
  return 0;
}

LabRunner::LabRunner(CollLab& lab, std::vector<std::unique_ptr<CollRank>>& ranks, const RunnerConfig& cfg)
    : lab_(lab), ranks_(ranks), cfg_(cfg) {
  tsc_per_us_ = static_cast<double>(rte_get_tsc_hz()) / 1e6;
}

LabRunner::~LabRunner() { stop(); }

engine::Status LabRunner::launch() {
  const std::uint32_t w = cfg_.workers;
  if (w == 0 || w > rte_lcore_count())
    return engine::Status::error(engine::StatusCode::kInvalidArgument,
                                 "--workers " + std::to_string(w) + ": EAL has " + std::to_string(rte_lcore_count()) +
                                     " lcore(s); give -l with as many (e.g. -l 0-" + std::to_string(w - 1) + ")");
  for (std::uint32_t i = 0; i < w; ++i) {
    auto wk = std::make_unique<Worker>();
    wk->run = this;
    wk->owns_switch = i == 0;
    workers_.push_back(std::move(wk));
  }
  // Ranks in blocks: neighbours in a ring share a worker, so most hops stay on one thread.
  const std::uint32_t n = static_cast<std::uint32_t>(ranks_.size());
  for (std::uint32_t r = 0; r < n; ++r) workers_[r * w / n]->ranks.push_back(r);
  for (auto& wk : workers_) wk->reported.assign(wk->ranks.size(), 0);
  unsigned lcore = rte_get_main_lcore();
  workers_[0]->lcore = lcore;
  for (std::uint32_t i = 1; i < w; ++i) {
    lcore = rte_get_next_lcore(lcore, 1, 0);
    workers_[i]->lcore = lcore;
    if (rte_eal_remote_launch(lab_worker_main, workers_[i].get(), lcore) != 0)
      return engine::Status::error(engine::StatusCode::kBadState,
                                   "cannot launch a worker on lcore " + std::to_string(lcore));
  }
  launched_ = true;
  return engine::Status();
}

void LabRunner::stop() {
  if (!launched_) return;
  quit_.store(true, std::memory_order_release);
  for (std::size_t i = 1; i < workers_.size(); ++i) rte_eal_wait_lcore(workers_[i]->lcore);
  launched_ = false;
}

void LabRunner::step_main() { workers_[0]->step(); }

void LabRunner::broadcast(Op op) {
  op_ = op;
  acked_.store(0, std::memory_order_release);
  gen_.fetch_add(1, std::memory_order_acq_rel);
  while (acked_.load(std::memory_order_acquire) < workers_.size()) step_main();
}

std::string LabRunner::stall_report(double elapsed_s, bool timed_out) const {
  // The rank that stopped: of the ranks not done, the one whose last progress is oldest (a rank
  // that stops, stops first; the ranks waiting on it go on until they run out of work).
  int culprit = -1;
  std::uint32_t not_done = 0;
  for (const auto& r : ranks_) {
    if (r->done()) continue;
    ++not_done;
    if (culprit < 0 || r->last_progress_tsc() < ranks_[static_cast<std::size_t>(culprit)]->last_progress_tsc())
      culprit = static_cast<int>(r->rank());
  }
  if (culprit < 0) return "every rank done";
  const CollRank& c = *ranks_[static_cast<std::size_t>(culprit)];
  const double quiet_s = static_cast<double>(rte_rdtsc() - c.last_progress_tsc()) / (tsc_per_us_ * 1e6);
  if (!timed_out && quiet_s < 1 && quiet_s < cfg_.timeout_s / 10) {
    // A failure ended an iteration that was still moving: where the ranks stood, not a stall.
    char moving[160];
    std::snprintf(moving, sizeof moving, "the iteration %.3f s old, %u of %zu ranks not done; rank %d waits for",
                  elapsed_s, not_done, ranks_.size(), culprit);
    return moving + c.waiting_for();
  }
  if (quiet_s < 1 && quiet_s < cfg_.timeout_s / 10) {
    // Every rank still moves: the iteration is slow, not stuck (a port rate too low for the size).
    char slow[200];
    std::snprintf(slow, sizeof slow,
                  "an iteration passed --timeout (%.3f s) with every rank still making progress (%u of %zu not "
                  "done): raise --timeout for this size and port rate; rank %d waits for",
                  elapsed_s, not_done, ranks_.size(), culprit);
    return slow + c.waiting_for();
  }
  char line[160];
  std::snprintf(
      line, sizeof line,
      "rank %d stalled: no progress for %.3f s of an iteration %.3f s old (%u of %zu ranks not done); it waits for",
      culprit, static_cast<double>(rte_rdtsc() - c.last_progress_tsc()) / (tsc_per_us_ * 1e6), elapsed_s, not_done,
      ranks_.size());
  return line + c.waiting_for();
}

void LabRunner::collect(const SizeSchedule& s, PlacementResult& out) {
  // Called halted: the workers poll nothing but the switch. The same combination rank 0 makes
  // of every process's figures under mpirun; the counters are cumulative (run() subtracts).
  std::vector<RankFigures> figs;
  for (const auto& r : ranks_) {
    RankFigures f;
    f.iter_us = r->stats().iter_us;
    f.wrong = r->stats().wrong;
    f.wrong_on_arrival = r->stats().wrong_on_arrival;
    f.peers = r->peer_figures(tsc_per_us_);
    const auto& c = r->endpoint().counters();
    f.cnps_sent = c.np_cnp_sent;
    f.cnps_handled = c.rp_cnp_handled;
    f.pfc_pauses = c.pfc_pause_frames;
    figs.push_back(std::move(f));
  }
  out = combine_figures(figs, cfg_.warmup, s);
}

engine::Status LabRunner::run(const SizeSchedule& s, PlacementResult& out) {
  out = PlacementResult{};
  iterations_run_ = 0;
  // Counters are cumulative: the placement's figures are differences.
  PlacementResult before;
  // Halted, the workers touch no rank: the size is set and the counters read from here.
  broadcast(Op::kHalt);
  for (const auto& r : ranks_) {
    const auto& c = r->endpoint().counters();
    before.cnps_sent += c.np_cnp_sent;
    before.cnps_handled += c.rp_cnp_handled;
    before.pfc_pauses += c.pfc_pause_frames;
  }
  std::vector<std::vector<PeerFigures>> peer_before;
  for (const auto& r : ranks_) peer_before.push_back(r->peer_figures(tsc_per_us_));
  for (const auto& r : ranks_)
    if (engine::Status st = r->set_size(&s); !st.ok()) {
      broadcast(Op::kResume);
      return st;
    }
  failed_.store(false, std::memory_order_release);
  broadcast(Op::kResume);
  const std::uint64_t hz = rte_get_tsc_hz();
  const auto timeout_tsc = static_cast<std::uint64_t>(cfg_.timeout_s * static_cast<double>(hz));
  std::uint64_t next_live = rte_rdtsc() + hz;
  const std::uint32_t total = cfg_.warmup + cfg_.iters;
  for (std::uint32_t it = 0; it < total; ++it) {
    op_iteration_ = iteration_++;
    broadcast(Op::kPrepare);
    ranks_done_.store(0, std::memory_order_release);
    op_start_tsc_ = rte_rdtsc();
    // --link-down counts from the first timed iteration (this thread polls the switch).
    if (it == cfg_.warmup) lab_.start_link_clock(op_start_tsc_);
    broadcast(Op::kStart);
    const std::uint64_t deadline = op_start_tsc_ + timeout_tsc;
    while (ranks_done_.load(std::memory_order_acquire) < ranks_.size()) {
      step_main();
      const std::uint64_t now = rte_rdtsc();
      if (failed_.load(std::memory_order_acquire)) {
        // A QP in error (its retries spent on a peer that stopped answering, most often): the
        // failure, and the rank that stopped first.
        broadcast(Op::kHalt);
        std::string why = "a rank failed";
        for (const auto& r : ranks_)
          if (r->failed()) {
            why = r->failure();
            break;
          }
        return engine::Status::error(
            engine::StatusCode::kPeer,
            why + "; " + stall_report(static_cast<double>(now - op_start_tsc_) / static_cast<double>(hz), false));
      }
      if (now > deadline) {
        broadcast(Op::kHalt);
        return engine::Status::error(
            engine::StatusCode::kTimeout,
            stall_report(static_cast<double>(now - op_start_tsc_) / static_cast<double>(hz), true));
      }
      if (cfg_.live && now > next_live) {
        next_live = now + hz;
        std::fprintf(stderr, "# %s %llu B: iteration %u/%u, %u of %zu ranks done\n", pattern_name(s.params.pattern),
                     static_cast<unsigned long long>(s.params.plan.size_bytes), it + 1, total,
                     ranks_done_.load(std::memory_order_acquire), ranks_.size());
      }
    }
    broadcast(Op::kFinish);
    ++iterations_run_;
    if (engine::stop_requested()) break;
  }
  broadcast(Op::kHalt);
  collect(s, out);
  out.cnps_sent -= before.cnps_sent;
  out.cnps_handled -= before.cnps_handled;
  out.pfc_pauses -= before.pfc_pauses;
  // Per-peer QP counters: the size's own.
  std::uint64_t retx_before = 0, naks_before = 0;
  for (const auto& v : peer_before)
    for (const PeerFigures& f : v) {
      retx_before += f.retransmitted_packets;
      naks_before += f.naks_received;
      if (out.slow_done_us > 0 && f.peer == out.slow_dst && &v == &peer_before[out.slow_src]) {
        out.slow_retransmitted -= f.retransmitted_packets;
        out.slow_naks -= f.naks_received;
        out.slow_timeouts -= f.local_ack_timeouts;
      }
    }
  out.retransmitted -= retx_before;
  out.naks -= naks_before;
  broadcast(Op::kResume);
  out.ran = true;
  return engine::Status();
}

}  // namespace droce::coll
