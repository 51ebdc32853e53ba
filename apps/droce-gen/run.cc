// droce-gen's run from the main lcore (see run.h).
#include "apps/droce-gen/run.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>
#include <rte_launch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/oob_waits.h"
#include "apps/droce-gen/clients.h"
#include "apps/droce-gen/connect_waits.h"
#include "apps/droce-gen/control_lines.h"
#include "apps/droce-gen/group_report.h"

namespace droce::gen {

using engine::LineWait;
using engine::Status;

namespace {

// The figures the main lcore sums over the jobs.
struct Sums : FigureTotals {
  std::uint64_t first_rx = 0, last_rx = 0;
  double rate_lo = 0, rate_hi = 0;
  bool all_ended = true;
};

Sums sum_figures(const Setup& st) {
  Sums s;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  for (const auto& j : st.jobs) {
    const JobFigures& f = j->figures();
    s.add(f);
    const std::uint64_t first = f.first_rx_tsc.load(kRelaxed);
    if (first != 0) s.first_rx = s.first_rx == 0 ? first : std::min(s.first_rx, first);
    s.last_rx = std::max(s.last_rx, f.last_rx_tsc.load(kRelaxed));
    const double lo = static_cast<double>(f.rate_lo_bps.load(kRelaxed)) / 1e9;
    const double hi = static_cast<double>(f.rate_hi_bps.load(kRelaxed)) / 1e9;
    if (hi > 0) {
      s.rate_lo = s.rate_lo == 0 ? lo : std::min(s.rate_lo, lo);
      s.rate_hi = std::max(s.rate_hi, hi);
    }
    s.all_ended = s.all_ended && f.ended.load(kRelaxed);
  }
  return s;
}

// The DCQCN rate of the requesters' QPs: "line" without congestion control, else min..max.
std::string rate_text(const Options& o, const Sums& s) {
  if (o.cc != "dcqcn" || o.mode == Mode::kServer) return "line (cc none)";
  char b[64];
  std::snprintf(b, sizeof(b), s.rate_lo == s.rate_hi ? "%.3f Gb/s" : "%.3f..%.3f Gb/s", s.rate_lo, s.rate_hi);
  return b;
}

// Each job's share of --count and of the offered load, following its active QPs: the run's
// active QP k carries count / active messages, the first count % active one more.
void plan_jobs(const Options& o, Setup& st, const RunPlan& plan) {
  const double msg_rate = o.offered_msg_rate();
  const std::uint32_t active = o.active();
  for (auto& j : st.jobs) {
    const std::uint16_t w = j->index();
    const std::uint32_t mine = share_of(active, w, o.workers);
    const std::uint64_t count =
        o.count / active * mine + share_of(static_cast<std::uint32_t>(o.count % active), w, o.workers);
    j->plan(plan, mine, count, msg_rate * mine / active);
  }
}

// Workers 1.. on their lcores; they wait for kRun.
Status launch_workers(Setup& st) {
  for (std::size_t w = 1; w < st.jobs.size(); ++w) {
    Job& j = *st.jobs[w];
    if (rte_eal_remote_launch(&Job::lcore_main, &j, j.lcore()) != 0) {
      for (std::size_t k = 1; k < w; ++k) st.jobs[k]->set_phase(Phase::kStop);
      for (std::size_t k = 1; k < w; ++k) (void)rte_eal_wait_lcore(st.jobs[k]->lcore());
      return Status::error(StatusCode::kBadState, "cannot launch worker " + std::to_string(w) + " on lcore " +
                                                      std::to_string(j.lcore()) + ": the lcore is busy");
    }
  }
  return {};
}

// Every job to `p`; worker 0 (ours) follows at once. Waits (bounded) until each has seen it:
// kDrain until it posts and verifies no more, kStop until it has left its loop.
bool move_jobs_to(Setup& st, Phase p) {
  for (auto& j : st.jobs) j->set_phase(p);
  Job& ours = *st.jobs[0];
  ours.publish(rte_rdtsc());
  if (p == Phase::kDrain) ours.enter_drain();
  if (p == Phase::kStop) ours.leave();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kEndWaitMs);
  for (auto& j : st.jobs) {
    const std::atomic<bool>& seen = p == Phase::kDrain ? j->figures().draining : j->figures().finished;
    while (!seen.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      if (p == Phase::kDrain)
        ours.poll_only(rte_rdtsc());
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  if (p == Phase::kStop)
    for (std::size_t w = 1; w < st.jobs.size(); ++w) (void)rte_eal_wait_lcore(st.jobs[w]->lcore());
  return true;
}

std::vector<std::string> end_lines(const std::vector<std::uint64_t>& counts) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < counts.size(); i += kEndCountsPerLine)
    lines.push_back(format_end_line(std::vector<std::uint64_t>(
        counts.begin() + static_cast<std::ptrdiff_t>(i),
        counts.begin() + static_cast<std::ptrdiff_t>(std::min(counts.size(), i + kEndCountsPerLine)))));
  return lines;
}

// The end over RDMA-CM: whichever side ends first disconnects every QP (DREQ), the other answers
// (DREP); both wait, bounded, for every kDisconnected. No counts cross: each side reports what it
// verified itself (a server of READs or atomics: what it served).
void end_cm_run(const Options& o, Setup& st, Connection& c, const std::function<void()>& keep_polling, bool peer_ended,
                const std::string& server_stop, RunOutcome& out) {
  const bool server = st.server;
  const std::uint32_t left = cm_disconnect_all(st, c.cm, keep_polling, kEndWaitMs);
  if (left != 0)
    std::fprintf(stderr, "droce-gen: %u of %u RDMA-CM disconnections unconfirmed within %u s\n", left, o.qps,
                 kEndWaitMs / 1000);
  if (!server) {
    // The server's DREQ may come first as flushed completions (its disconnect moved our QPs to
    // ERROR): its event, taken here, names the cause.
    if (!server_stop.empty() || c.cm.peer_disconnected)
      out.problem = "the server ended the run early (" +
                    (server_stop.empty() ? std::string("it disconnected") : server_stop) + ")";
    return;
  }
  if (!peer_ended) out.problem = out.interrupted ? "interrupted" : "the client did not disconnect before the deadline";
  if (o.op == Op::kRead) out.served_only = true;
  if (is_atomic_op(o.op)) {
    // Each operation added one to its QP's counter: the counters are the operations served.
    out.t.messages = 0;
    for (std::uint32_t i = 0; i < o.active(); ++i)
      out.t.messages += std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(st.responder(i).buf))
                            .load(std::memory_order_acquire);
  }
}

// A sweep between sizes: every job completes what it has in flight and parks (bounded; worker 0
// is ours to run meanwhile).
Status pause_jobs(Setup& st) {
  for (auto& j : st.jobs) j->set_phase(Phase::kPause);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kEndWaitMs);
  for (;;) {
    bool all = st.jobs[0]->pause_once(rte_rdtsc());
    for (std::size_t w = 1; w < st.jobs.size(); ++w)
      all = all && st.jobs[w]->figures().parked.load(std::memory_order_acquire);
    if (all) return {};
    if (std::chrono::steady_clock::now() > deadline)
      return Status::error(StatusCode::kTimeout,
                           "messages still in flight " + std::to_string(kEndWaitMs / 1000) + " s after its end");
  }
}

// One measurement's figures, summed over the jobs (each job's also into out.job_totals), its window
// `secs` long and ending at `end_tsc`.
StepResult collect_step(const Setup& st, std::uint32_t size, double secs, std::uint64_t end_tsc, RunOutcome& out) {
  StepResult r;
  r.size = size;
  r.secs = secs;
  for (const auto& j : st.jobs) {
    r.t += j->totals();
    out.job_totals[j->index()] += j->totals();
    r.hist.merge(j->latency());
    r.service.merge(j->service_latency());
    r.load += j->load(end_tsc);
    for (std::size_t k = 0; k < kMixOps; ++k) r.ops[k] += j->per_op()[k];
    for (std::size_t k = 0; k < r.sizes.size(); ++k) r.sizes[k] += j->per_size()[k];
  }
  return r;
}

}  // namespace

Status run(const Options& o, Setup& st, Connection& c, Feed& feed, RunOutcome& out) {
  const bool server = st.server;
  engine::OobConnection& oob = c.oob;
  std::FILE* csv = nullptr;
  if (!o.csv.empty()) {
    csv = std::fopen(o.csv.c_str(), "w");
    if (csv == nullptr) return Status::error(StatusCode::kIo, "cannot write " + o.csv);
    // goodput and message rate per interval; the recovery counts since the start (total_).
    std::fprintf(csv,
                 "time_s,interval_s,goodput_gbps,msg_rate_mps,total_retransmitted_packets,total_naks_sent,"
                 "total_naks_received,total_rnr_naks,partial\n");
  }
  const double hz = static_cast<double>(rte_get_tsc_hz());
  RunPlan plan;
  plan.opt = &o;
  plan.pattern = st.pattern.get();
  plan.slots = o.inflight;
  plan.slot_bytes = o.max_size();
  plan.server = server;
  plan.cm = c.cm.on;
  plan.hz = hz;
  plan.start_tsc = rte_rdtsc();
  plan.warm_end_tsc = plan.start_tsc + static_cast<std::uint64_t>(o.warmup_s * hz);
  // A sweep: each size's own options (that size alone), which the jobs' plans point to in turn.
  const std::size_t n_steps = o.sweep ? o.sizes.size() : 1;
  if (o.sweep) {
    out.step_options.assign(n_steps, o);
    for (std::size_t k = 0; k < n_steps; ++k) out.step_options[k].sizes = {o.sizes[k]};
  }
  auto step_options = [&](std::size_t k) -> const Options& { return o.sweep ? out.step_options[k] : o; };
  plan.opt = &step_options(0);
  plan_jobs(step_options(0), st, plan);
  out.job_totals.assign(st.jobs.size(), Totals{});
  if (Status s = launch_workers(st); !s.ok()) {
    if (csv != nullptr) std::fclose(csv);
    return s;
  }
  const std::uint64_t start = plan.start_tsc;
  // A server waits for the client's end-of-run line as long as the client may run (its warm-up and
  // run length), plus the connect time and a margin for a busy machine. A sweep: each size's.
  const double limit_s =
      server ? (c.run_from_client ? c.run_warmup_s : o.warmup_s) + c.run_limit_s + connect_waits(o).bound_s + 10
             : o.warmup_s + c.run_limit_s;
  auto deadline = start + static_cast<std::uint64_t>(limit_s * hz);
  std::uint64_t measured_start = plan.warm_end_tsc;
  std::size_t step = 0;
  IntervalBandwidth step_bw;  // a sweep's peak and minimum are each size's own
  IntervalBandwidth& bw = o.sweep ? step_bw : out.interval_bw;
  GroupIntervals group_bw;  // --flow-group: each group's, within its window
  group_bw.start(o, start, hz);
  const auto interval_tsc = static_cast<std::uint64_t>(o.interval_s * hz);
  std::uint64_t next_line = start + interval_tsc, last_line = start;
  feed.start();
  std::uint64_t line_msgs_seen = 0, line_bytes_seen = 0;
  std::vector<std::uint64_t> worker_bytes_seen(st.jobs.size(), 0);
  std::string end_line, server_stop, client_stop;
  bool peer_ended = false, peer_gone = false;
  // One interval's outputs: the live line, the --csv row and the feed line. Goodput and message
  // rate are the interval's (per second over it as it ran: the loop may pass the due time); the
  // recovery counts are totals since the start, and say so. The run's end cuts its last interval
  // short: that one is emitted too, marked partial, so every message is in some interval.
  auto emit_line = [&](std::uint64_t at, const Sums& s, bool partial) {
    const std::uint64_t line_bytes = s.all_bytes - line_bytes_seen, line_msgs = s.all_messages - line_msgs_seen;
    const double secs = static_cast<double>(at - last_line) / hz;
    const double gbps = static_cast<double>(line_bytes) * 8.0 / secs / 1e9,
                 mmps = static_cast<double>(line_msgs) / secs / 1e6;
    // Peak and minimum count whole intervals of measured traffic only (interval_bandwidth.h).
    const bool measured = last_line >= measured_start && (!server || (s.first_rx != 0 && last_line >= s.first_rx));
    const bool counted = !partial && measured;
    if (counted) bw.add(gbps);
    if (!o.groups.empty()) group_bw.interval(o, st, last_line, at, counted);
    feed.interval(o, st, s, partial, secs, counted);
    if (!o.quiet) {
      std::string per_worker;
      if (st.jobs.size() > 1) {
        per_worker = "  workers Gb/s:";
        for (std::size_t w = 0; w < st.jobs.size(); ++w) {
          const std::uint64_t b = st.jobs[w]->figures().all_bytes.load(std::memory_order_relaxed);
          char v[32];
          std::snprintf(v, sizeof(v), " %.3f", static_cast<double>(b - worker_bytes_seen[w]) * 8.0 / secs / 1e9);
          per_worker += v;
          worker_bytes_seen[w] = b;
        }
      }
      std::printf(
          "droce-gen: last %.2f s%s: %7.3f Gb/s  %8.4f Mmsg/s%s  | since start: retransmitted %llu  naks %llu/%llu  "
          "cnps %llu/%llu  rate: %s\n",
          secs, partial ? " (partial, the run's end)" : "", gbps, mmps, per_worker.c_str(),
          static_cast<unsigned long long>(s.retx), static_cast<unsigned long long>(s.naks_sent),
          static_cast<unsigned long long>(s.naks_received), static_cast<unsigned long long>(s.cnps_sent),
          static_cast<unsigned long long>(s.cnps_received), rate_text(o, s).c_str());
      std::fflush(stdout);
    }
    if (csv != nullptr)
      std::fprintf(csv, "%.3f,%.3f,%.6f,%.6f,%llu,%llu,%llu,%llu,%d\n", static_cast<double>(at - start) / hz, secs,
                   gbps, mmps, static_cast<unsigned long long>(s.retx), static_cast<unsigned long long>(s.naks_sent),
                   static_cast<unsigned long long>(s.naks_received), static_cast<unsigned long long>(s.rnr),
                   partial ? 1 : 0);
    line_msgs_seen = s.all_messages;
    line_bytes_seen = s.all_bytes;
    last_line = at;
  };
  Job& ours = *st.jobs[0];
  for (auto& j : st.jobs) j->set_phase(Phase::kRun);
  const bool many = !c.clients.empty();  // a server of several clients (--clients)

  std::uint64_t now = start;
  for (;;) {  // each size of a sweep (a single-size run: once)
    for (std::uint64_t iter = 1; !engine::stop_requested() && now < deadline; ++iter) {
      if (!ours.figures().ended.load(std::memory_order_relaxed))
        ours.run_once(now);
      else
        ours.poll_only(now);
      now = rte_rdtsc();
      if ((iter & 63) != 0) continue;
      const Sums s = sum_figures(st);
      // A failed completion ends the run (a server of several clients: only that client's, in its
      // figures); a --count client ends when every job's share completed.
      if (s.errors != 0 && !many) break;
      if (!server && o.count != 0 && s.all_ended) break;
      // The server ends when the client says so (or is gone); statically, after --duration of traffic
      // or --count messages. The client ends early when the server stops the run or is gone.
      if ((iter & 1023) == 0 && oob.is_open()) {
        bool closed = false;
        std::string line;
        if (oob.poll_line(line, closed)) {
          // A client's Ctrl-C: "STOP interrupted", its END lines after it (taken after the drain).
          if (server && line.rfind("STOP ", 0) == 0) {
            client_stop = line.substr(5, 80);
            break;
          }
          if (server) {
            end_line = line;
            peer_ended = true;
            break;
          }
          server_stop =
              line.rfind("STOP ", 0) == 0 ? line.substr(5, 80) : "unexpected line '" + line.substr(0, 80) + "'";
          break;
        }
        if (closed) {
          peer_gone = true;
          break;
        }
      }
      // Several clients: each ends its own run (END, STOP or gone); the run ends with the last.
      if (many && (iter & 1023) == 0 && poll_clients(c)) break;
      // Over RDMA-CM the run ends in a disconnect: the client's DREQs end the server's run; the
      // server's (its deadline, Ctrl-C) end the client's early.
      if (c.cm.on && (iter & 1023) == 0) {
        if (cm_peer_ended(st, c.cm) && server) {
          peer_ended = true;
          break;
        }
        if (!server && c.cm.peer_disconnected) {
          server_stop = "the server disconnected";
          break;
        }
      }
      if (server && !oob.is_open() && !c.cm.on && !many && (iter & 1023) == 0) {
        if ((o.count != 0 && s.messages >= o.count) ||
            (s.first_rx != 0 && now - s.first_rx > static_cast<std::uint64_t>(o.duration_s * hz)))
          break;
      }
      if (now >= next_line) {
        emit_line(now, s, false);
        next_line = now + interval_tsc;
      }
    }
    // A sweep: the next size, once this one's messages have all completed (its figures taken).
    if (o.sweep && step + 1 < n_steps && !engine::stop_requested()) {
      const Sums s = sum_figures(st);
      const std::string size_text = "size " + std::to_string(o.sizes[step]);
      if (o.count != 0 && !s.all_ended && s.errors == 0)
        out.problem = size_text + ": its --count did not complete within its run limit";
      if (s.errors == 0 && out.problem.empty()) {
        if (Status p = pause_jobs(st); !p.ok()) {
          out.problem = size_text + ": " + p.message();
        } else {
          const std::uint64_t at = rte_rdtsc();
          if (at > last_line) emit_line(at, sum_figures(st), true);
          StepResult r = collect_step(st, o.sizes[step], static_cast<double>(now - measured_start) / hz, now, out);
          r.interval_bw = step_bw;
          out.steps.push_back(std::move(r));
          ++step;
          step_bw = IntervalBandwidth{};
          plan.opt = &step_options(step);
          plan.start_tsc = rte_rdtsc();
          plan.warm_end_tsc = plan.start_tsc + static_cast<std::uint64_t>(o.warmup_s * hz);
          plan_jobs(step_options(step), st, plan);
          for (auto& j : st.jobs) {
            j->publish(plan.start_tsc);
            j->unpark();
          }
          deadline = plan.start_tsc + static_cast<std::uint64_t>(limit_s * hz);
          measured_start = plan.warm_end_tsc;
          last_line = plan.start_tsc;
          next_line = plan.start_tsc + interval_tsc;
          now = plan.start_tsc;
          for (auto& j : st.jobs) j->set_phase(Phase::kRun);
          continue;
        }
      }
    }
    break;
  }
  out.interrupted = engine::stop_requested();
  // Every job posts and verifies no more, and keeps its transport polled: from here its workload
  // state is ours to read.
  if (!move_jobs_to(st, Phase::kDrain)) {
    std::fprintf(stderr, "droce-gen: a worker did not stop posting within 10 s\n");
    std::fflush(nullptr);
    std::_Exit(1);  // it still polls the port: nothing may be torn down under it
  }
  // The last, partial interval: what the workers verified since the last line, up to their stop.
  if (const std::uint64_t at = rte_rdtsc(); at > last_line) emit_line(at, sum_figures(st), true);
  std::string first_failure;
  bool pending = false;
  for (auto& j : st.jobs) {
    pending = pending || j->unfinished();
    if (first_failure.empty()) first_failure = j->first_failure();
  }
  const Sums s = sum_figures(st);
  double secs = static_cast<double>(now - measured_start) / hz;
  if (server && s.first_rx != 0) secs = static_cast<double>(s.last_rx - std::max(s.first_rx, measured_start)) / hz;
  StepResult last = collect_step(st, o.sweep ? o.sizes[step] : 0, secs, now, out);
  if (!o.groups.empty()) collect_groups(o, st, group_bw, start, measured_start, now, hz, out);
  if (o.sweep) {
    // The run's figures are the sum of its sizes'.
    last.interval_bw = step_bw;
    out.steps.push_back(std::move(last));
    for (const StepResult& r : out.steps) {
      out.t += r.t;
      out.hist.merge(r.hist);
      out.service.merge(r.service);
      out.load += r.load;
      out.secs += r.secs;
    }
    if (out.steps.size() < n_steps && out.problem.empty() && !engine::stop_requested())
      out.problem = "the sweep stopped at size " + std::to_string(o.sizes[step]) + " (" +
                    std::to_string(out.steps.size()) + " of " + std::to_string(n_steps) + " sizes run)";
  } else {
    out.t = last.t;
    out.hist = last.hist;
    out.service = last.service;
    out.load = last.load;
    out.ops = last.ops;
    out.sizes = last.sizes;
    out.secs = last.secs;
  }
  out.unfinished = pending && out.t.errors == 0;
  if (csv != nullptr) std::fclose(csv);
  // A mix (loopback): what its responders checked, SEND and WRITE data (READs are checked at the
  // requesters), to set beside the requesters' per-op counts.
  if (!o.mix.empty())
    for (std::uint32_t i = 0; i < o.qps; ++i) out.mix_received += st.responder(i).received;
  if (is_atomic_op(o.op) && o.mode == Mode::kLoopback)
    for (std::uint32_t i = 0; i < o.active(); ++i) {
      const Requester& q = st.requester(i);
      check_atomic_counter(st.responder(i), q.completed_ok, q.posted - q.completed_ok, out);
    }

  // ---- end of run: the client tells the server what it sent; the server answers what arrived.
  // Then the goodbye, so that no port is torn down while its peer still polls: the client stops
  // polling and says BYE; the server stops polling, stops its port and answers BYE; the client
  // stops its port. (A server that ends first says STOP; the client then ends the same way.) ----
  Totals& t = out.t;
  std::string& problem = out.problem;
  auto keep_polling = [&] { ours.poll_only(rte_rdtsc()); };
  if (c.cm.on) end_cm_run(o, st, c, keep_polling, peer_ended, server_stop, out);
  if (server && !client_stop.empty()) {
    // The client was stopped (its Ctrl-C): what it saw acknowledged follows, and is checked as at
    // any end; the run's problem names the client's stop.
    const LineWait w = engine::wait_line(oob, end_line, kEndWaitMs, keep_polling, false);
    peer_ended = w == LineWait::kLine;
    peer_gone = w == LineWait::kClosed;
  }
  bool ended_first = false;  // the server's workers stopped verifying before the client stopped posting
  std::string unchecked_note;
  if (server && oob.is_open() && !peer_ended && !peer_gone) {
    // We end first (Ctrl-C or the deadline): ask the client to end, and keep serving until it has.
    ended_first = true;
    if (oob.send_line(out.interrupted ? "STOP interrupted" : "STOP deadline", 5000).ok()) {
      std::string line;
      const LineWait w = engine::wait_line(oob, line, kEndWaitMs, keep_polling, false);
      if (w == LineWait::kLine) {
        end_line = line;
        peer_ended = true;
      }
      peer_gone = w == LineWait::kClosed;
    }
  }
  if (o.mode == Mode::kClient && peer_gone) {
    problem = "the server disappeared during the run (control connection closed)";
  } else if (o.mode == Mode::kClient && oob.is_open()) {
    // Our Ctrl-C ended the run: the server hears it, then our counts, so that it names our stop
    // instead of reporting a run that ended as planned.
    if (out.interrupted && server_stop.empty()) (void)oob.send_line("STOP interrupted", 5000);
    std::vector<std::uint64_t> counts;
    for (std::uint32_t i = 0; i < o.qps; ++i) counts.push_back(st.requester(i).completed_ok);
    Status sent;
    for (const std::string& line : end_lines(counts))
      if (sent.ok()) sent = oob.send_line(line, 5000);
    std::string result;
    // Keep answering the server's retransmissions while it finishes (a bounded wait).
    if (sent.ok()) {
      switch (engine::wait_line(oob, result, kEndWaitMs, keep_polling, false)) {
        case LineWait::kLine:
          break;
        case LineWait::kClosed:
          sent = Status::error(StatusCode::kPeer, "the server closed the connection before reporting");
          break;
        default:
          sent = Status::error(StatusCode::kTimeout, "no end-of-run report from the server within 10 s");
          break;
      }
    }
    ResultLine r;
    if (sent.ok()) sent = parse_result_line(result, r);
    if (sent.ok()) {
      out.peer_received = r.received;
      t.lost += r.lost;
      t.duplicated += r.duplicated;
      t.out_of_order += r.out_of_order;
      t.corrupted += r.corrupted;
      t.errors += r.errors;
    } else {
      problem = "the server's end-of-run report: " + sent.message();
    }
    if (!server_stop.empty()) problem = "the server ended the run early (" + server_stop + ")";
    // We poll no more: the server may stop its port now. Its BYE says it has.
    if (move_jobs_to(st, Phase::kStop) && oob.send_line("BYE", 5000).ok()) {
      std::string bye;
      (void)engine::wait_line(oob, bye, kEndWaitMs, {}, false);
    }
  }
  if (server && oob.is_open()) {
    if (peer_gone) {
      problem = "the client disappeared before the end of the run (control connection closed)";
    } else if (!peer_ended) {
      problem = out.interrupted ? "interrupted" : "no end-of-run line from the client before the deadline";
    } else {
      // Every message the client saw acknowledged must have arrived here. Its counts are strict
      // (digits only, one per QP, bounded): a peer's "-5" is an error, not 2^64 - 5.
      std::vector<std::uint64_t> counts;
      if (Status e = read_end_counts(oob, end_line, o.qps, keep_polling, counts); !e.ok()) {
        problem = "malformed end-of-run line from the client: " + e.message();
        counts.clear();
      }
      std::uint64_t sent_ok = 0, unchecked = 0;
      for (std::size_t i = 0; i < counts.size(); ++i) {
        const std::uint64_t expected = st.responder(static_cast<std::uint32_t>(i)).expected;
        // What the client saw acknowledged beyond what we verified is lost, except when we ended
        // first: then our transport went on acknowledging the client's window (RC acknowledges in
        // order: an ACK covers every earlier PSN) after our workers stopped verifying. Those
        // arrived unchecked, and the problem says how many; they are not lost.
        if (o.op != Op::kRead && !is_atomic_op(o.op) && counts[i] > expected)
          (ended_first ? unchecked : t.lost) += counts[i] - expected;
        // The client's window (the same --inflight: the workloads matched) bounds what was in flight.
        if (is_atomic_op(o.op) && i < o.active())
          check_atomic_counter(st.responder(static_cast<std::uint32_t>(i)), counts[i], o.inflight, out);
        sent_ok += counts[i];
      }
      // READs and atomics complete at the client; the server only served.
      if (o.op == Op::kRead || is_atomic_op(o.op)) t.messages = sent_ok;
      if (unchecked != 0)
        unchecked_note = std::to_string(unchecked) +
                         " messages the client saw acknowledged arrived after this server stopped verifying (its "
                         "in-flight window at our stop: acknowledged in order, not checked)";
      const std::string res =
          format_result_line(ResultLine{t.messages, t.lost, t.duplicated, t.out_of_order, t.corrupted, t.errors});
      // Keep serving until the client has stopped polling (its BYE): it may still be retransmitting.
      if (Status e = oob.send_line(res, 5000); !e.ok()) {
        problem = e.message();
      } else {
        std::string bye;
        (void)engine::wait_line(oob, bye, kEndWaitMs, keep_polling, false);
      }
    }
  }
  // A static connection (--oob-port 0) has no goodbye to wait for: a server whose counts are
  // reached keeps its QPs polled as TCP's TIME_WAIT (RFC 793 §3.5) for twice the client's whole
  // retry span (local ACK timeout 4.096 us x 2^--qp-timeout, --retry-count + 1 sends), so that a
  // request whose ACK from us was lost is acknowledged again (IBTA C9-105) instead of exhausting
  // the client's retries against a stopped port. At most 30 s (--qp-timeout 31 would make it
  // hours); Ctrl-C ends it at once.
  if (server && o.oob_port == 0 && !out.interrupted) {
    const double span_s =
        std::min(30.0, 2.0 * 4.096e-6 * static_cast<double>(std::uint64_t{1} << o.qp_timeout) * (o.retry_cnt + 1));
    const std::uint64_t until = rte_rdtsc() + static_cast<std::uint64_t>(span_s * hz);
    while (rte_rdtsc() < until && !engine::stop_requested()) {
      keep_polling();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  if (many) end_clients(o, st, c, keep_polling, measured_start, hz, out);
  // The client polls no more (or is gone): stop every job, then our port, before saying so.
  if (!move_jobs_to(st, Phase::kStop)) {
    std::fprintf(stderr, "droce-gen: a worker did not stop polling within 10 s\n");
    std::fflush(nullptr);
    std::_Exit(1);
  }
  st.stop_port();
  if (server && oob.is_open() && peer_ended) (void)oob.send_line("BYE", 1000);
  bye_clients(c);
  if (server && !client_stop.empty())
    problem = "the client ended the run early (" + client_stop + ")" + (problem.empty() ? "" : "; " + problem);
  if (problem.empty() && out.interrupted) problem = "interrupted";
  if (!unchecked_note.empty()) problem += (problem.empty() ? "" : "; ") + unchecked_note;
  if (!first_failure.empty()) problem += (problem.empty() ? "" : "; first failed completion: ") + first_failure;
  st.finish();
  st.capture.close();
  return {};
}

}  // namespace droce::gen
