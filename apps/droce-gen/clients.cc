// droce-gen's server of several clients, and the end-of-run pieces run.cc shares (see clients.h).
#include "apps/droce-gen/clients.h"

#include <algorithm>
#include <atomic>

#include "apps/common/oob_waits.h"
#include "apps/droce-gen/control_lines.h"

namespace droce::gen {

using engine::LineWait;
using engine::Status;

Status read_end_counts(engine::OobConnection& oob, const std::string& first, std::size_t qps,
                       const std::function<void()>& keep_polling, std::vector<std::uint64_t>& counts) {
  counts.clear();
  std::string line = first;
  for (std::size_t k = 0; counts.size() < qps; ++k) {
    if (k != 0) {
      switch (engine::wait_line(oob, line, kEndWaitMs, keep_polling, false)) {
        case LineWait::kLine:
          break;
        case LineWait::kClosed:
          return Status::error(StatusCode::kPeer, "the client closed the connection in its END lines");
        default:
          return Status::error(StatusCode::kPeer,
                               "the client's END lines stopped after " + std::to_string(counts.size()) + " counts");
      }
    }
    std::vector<std::uint64_t> part;
    if (Status e = parse_end_line(line, std::min(kEndCountsPerLine, qps - counts.size()), part); !e.ok()) return e;
    counts.insert(counts.end(), part.begin(), part.end());
  }
  return {};
}

// Each operation adds exactly one to its QP's counter, so counter and completions are equal,
// except that operations still in flight when the run ended may have run or not.
void check_atomic_counter(const Responder& r, std::uint64_t completed, std::uint64_t unresolved, RunOutcome& out) {
  // The responder's worker may still poll (retransmissions answered from saved results change
  // nothing): read the word whole.
  const std::uint64_t counter =
      std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(r.buf)).load(std::memory_order_acquire);
  out.atomic_checked = true;
  out.atomic_counter += counter;
  out.atomic_completed += completed;
  if (counter < completed) out.t.lost += completed - counter;
  if (counter > completed + unresolved) out.t.duplicated += counter - completed - unresolved;
}

namespace {

bool running(const ClientLink& cl) { return cl.failed.empty() && !cl.ended && !cl.gone; }

// One client's share of the verification: its QPs' figures (the jobs' state, after the drain) and
// its first to last message verified after the warm-up.
void collect_client(Setup& st, std::uint32_t first, std::uint32_t n, std::uint64_t measured_start, double hz,
                    ClientResult& r) {
  std::uint64_t first_rx = 0, last_rx = 0;
  for (std::uint32_t i = first; i < first + n; ++i) {
    const Responder& q = st.responder(i);
    r.t += q.t;
    if (q.first_rx_tsc != 0) first_rx = first_rx == 0 ? q.first_rx_tsc : std::min(first_rx, q.first_rx_tsc);
    last_rx = std::max(last_rx, q.last_rx_tsc);
  }
  if (first_rx != 0 && last_rx > std::max(first_rx, measured_start))
    r.secs = static_cast<double>(last_rx - std::max(first_rx, measured_start)) / hz;
}

// The client's END counts against what its QPs verified, as the one-client server does (run.cc):
// what the client saw acknowledged beyond what we verified is lost, unless we ended first (our
// transport acknowledged its window after our workers stopped verifying: unchecked, not lost).
// Returns the RESULT line's figures; `note` says what arrived unchecked.
void check_client(const Options& o, Setup& st, ClientLink& cl, std::uint32_t first, std::uint32_t n,
                  const std::function<void()>& keep_polling, bool ended_first, ClientResult& r, RunOutcome& out,
                  std::string& note) {
  std::vector<std::uint64_t> counts;
  if (Status e = read_end_counts(cl.oob, cl.end_line, n, keep_polling, counts); !e.ok()) {
    r.problem = "malformed end-of-run line from the client: " + e.message();
    return;
  }
  std::uint64_t sent_ok = 0, unchecked = 0, lost = 0;
  const Totals before = out.t;
  for (std::uint32_t k = 0; k < n; ++k) {
    const Responder& q = st.responder(first + k);
    if (o.op != Op::kRead && !is_atomic_op(o.op) && counts[k] > q.expected)
      (ended_first ? unchecked : lost) += counts[k] - q.expected;
    if (is_atomic_op(o.op)) check_atomic_counter(q, counts[k], o.inflight, out);
    sent_ok += counts[k];
  }
  // The atomic checks add to out.t: this client's share of them is its own too.
  r.t.lost += lost + out.t.lost - before.lost;
  r.t.duplicated += out.t.duplicated - before.duplicated;
  out.t.lost += lost;
  // READs and atomics complete at the client; the server only served.
  if (o.op == Op::kRead || is_atomic_op(o.op)) {
    out.t.messages += sent_ok - r.t.messages;
    r.t.messages = sent_ok;
  }
  if (unchecked != 0)
    note = std::to_string(unchecked) +
           " messages it saw acknowledged arrived after this server stopped verifying (its in-flight window at our "
           "stop: acknowledged in order, not checked)";
}

}  // namespace

bool poll_clients(Connection& c) {
  bool all = true;
  for (ClientLink& cl : c.clients) {
    if (!running(cl)) continue;
    bool closed = false;
    std::string line;
    // A client's Ctrl-C: "STOP interrupted", its END lines after it (the next look takes the first).
    while (running(cl) && cl.oob.poll_line(line, closed)) {
      if (line.rfind("STOP ", 0) == 0 && cl.stop.empty()) {
        cl.stop = line.substr(5, 80);
        continue;
      }
      cl.end_line = line;
      cl.ended = true;
    }
    if (closed && !cl.ended) cl.gone = true;
    all = all && !running(cl);
  }
  return all;
}

void end_clients(const Options& o, Setup& st, Connection& c, const std::function<void()>& keep_polling,
                 std::uint64_t measured_start, double hz, RunOutcome& out) {
  const std::uint32_t per = o.per_client_qps();
  const auto n = static_cast<std::uint32_t>(c.clients.size());
  std::vector<bool> ended_first(n, false);
  // Those still running (our deadline or Ctrl-C): ask each to end, and keep serving until it has.
  // (One that sent STOP itself, its Ctrl-C, is ending already.)
  for (std::uint32_t k = 0; k < n; ++k) {
    ClientLink& cl = c.clients[k];
    if (!running(cl) || !cl.stop.empty()) continue;
    ended_first[k] = true;
    (void)cl.oob.send_line(out.interrupted ? "STOP interrupted" : "STOP deadline", 5000);
  }
  // Their END lines follow their STOP or ours.
  for (ClientLink& cl : c.clients) {
    if (!running(cl)) continue;
    const LineWait w = engine::wait_line(cl.oob, cl.end_line, kEndWaitMs, keep_polling, false);
    cl.ended = w == LineWait::kLine;
    cl.gone = w == LineWait::kClosed;
  }
  out.clients.assign(n, ClientResult{});
  std::string problems;
  for (std::uint32_t k = 0; k < n; ++k) {
    ClientLink& cl = c.clients[k];
    ClientResult& r = out.clients[k];
    r.peer_ip = cl.peer_ip;
    r.first_qp = k * per;
    r.qps = per;
    r.recovery = cl.recovery;
    collect_client(st, r.first_qp, per, measured_start, hz, r);
    std::string note;
    if (!cl.failed.empty()) {
      r.problem = "no run: " + cl.failed;
    } else if (cl.gone) {
      r.problem = "the client disappeared before the end of the run (control connection closed)";
    } else if (!cl.ended) {
      r.problem = out.interrupted ? "interrupted" : "no end-of-run line from the client before the deadline";
    } else {
      check_client(o, st, cl, r.first_qp, per, keep_polling, ended_first[k], r, out, note);
      const std::string res = format_result_line(
          ResultLine{r.t.messages, r.t.lost, r.t.duplicated, r.t.out_of_order, r.t.corrupted, r.t.errors});
      if (Status e = cl.oob.send_line(res, 5000); !e.ok()) r.problem = e.message();
    }
    if (!cl.stop.empty())
      r.problem = "the client ended its run early (" + cl.stop + ")" + (r.problem.empty() ? "" : "; " + r.problem);
    if (!note.empty()) r.problem += (r.problem.empty() ? "" : "; ") + note;
    if (!r.ok())
      problems += (problems.empty() ? "" : "; ") + std::string("client ") + std::to_string(k) +
                  (r.peer_ip.empty() ? "" : " (" + r.peer_ip + ")") +
                  " failed: " + (r.problem.empty() ? "verification (see its figures)" : r.problem);
  }
  // Keep serving until every client that reported has stopped polling (its BYE): it may still be
  // retransmitting. Each wait bounded; a client that says nothing more is not waited for again.
  for (ClientLink& cl : c.clients) {
    if (!cl.ended || !cl.oob.is_open()) continue;
    std::string bye;
    (void)engine::wait_line(cl.oob, bye, kEndWaitMs, keep_polling, false);
  }
  if (!problems.empty()) out.problem += (out.problem.empty() ? "" : "; ") + problems;
}

void bye_clients(Connection& c) {
  for (ClientLink& cl : c.clients)
    if (cl.ended && cl.oob.is_open()) (void)cl.oob.send_line("BYE", 1000);
}

}  // namespace droce::gen
