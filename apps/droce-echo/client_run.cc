// droce-echo's client run (see client_run.h).
#include "apps/droce-echo/client_run.h"

#include <droce/engine/core/stop_signal.h>
#include <droce/engine/endpoint/qp_channel.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "apps/common/oob_waits.h"
#include "apps/droce-echo/end_linger.h"

namespace droce::echo {

using engine::LineWait;
using engine::MessageView;
using engine::Status;

std::uint64_t Client::done() const {
  std::uint64_t n = 0;
  for (const auto& q : qps) n += q.st->done;
  return n;
}

std::uint64_t Client::bad() const {
  std::uint64_t n = 0;
  for (const auto& q : qps) n += q.st->bad;
  return n;
}

Status prepare_client(const Options& o, Setup& st, Client& c) {
  if (st.lab) st.own_qps = {{0, st.client_qpn}};
  for (const QpPlace& q : st.own_qps) {
    ClientQp& cq = c.qps.emplace_back();
    cq.ep = st.lab ? st.client_ep : &st.group->worker(static_cast<std::uint16_t>(q.worker)).endpoint();
    cq.qpn = q.qpn;
    cq.req.resize(o.size);
    cq.st->hist = &c.hist;
    engine::MemoryRegistry& mem = st.lab ? *st.client_mem : *st.memories[q.worker];
    if (Status s = mem.register_memory(cq.req.data(), cq.req.size(), rc::kAccessLocalWrite, cq.mr); !s.ok()) return s;
  }
  return {};
}

namespace {

// The end of a run between two droce-echo processes, over the control connection: the client
// says END (it polls on until the server's DONE: every reply acknowledged), then BYE when it
// polls no more; the server stops its port and answers BYE; then the client stops its port. No
// port is torn down while its peer still polls. A server that ends first says STOP.
bool end_lines(const Options& o, const Setup& st) { return !o.rc_pingpong() && st.oob.is_open(); }
constexpr std::uint32_t kEndWaitMs = 10000;  // each end-of-run step (the peer may be descheduled)

void poll_all(Setup& st, std::uint64_t now) {
  if (st.lab) {
    st.lab->poll(now);
  } else {
    for (std::uint16_t w = 0; w < st.group->size(); ++w) st.group->worker(w).poll(now);
  }
  // The loopback lab's server side serves as its endpoint's application stage (EchoWorker).
}

// After the last message against ibv_rc_pingpong: keep polling so that our final ACKs leave and
// a peer's retransmission (its ACK from us lost or late) is still answered, instead of leaving the
// peer to exhaust its retries against a closed port. The tool retries a request for up to 8 x
// 67.1 ms (its QP timeout 14, retry_cnt 7, as srq_pingpong's): linger twice that (kToolLingerNs).
void linger(Setup& st) {
  const std::uint64_t until = rte_rdtsc() + tool_linger_tsc(rte_get_tsc_hz());
  for (std::uint64_t now = rte_rdtsc(); now < until && !engine::stop_requested(); now = rte_rdtsc()) poll_all(st, now);
}

void count_send(Client& c, const rc::Completion& wc) {
  if (wc.status == rc::WcStatus::kSuccess) return;
  if (c.send_errors++ == 0) c.first_send_error = std::string(rc::wc_status_name(wc.status));
}

// What both poll loops share: the timing, the stall watch and the look at the control connection.
struct Loop {
  Loop(const Options& opt, Setup& setup, Client& client)
      : o(opt),
        st(setup),
        c(client),
        lines(end_lines(opt, setup)),
        stall_tsc(static_cast<std::uint64_t>(opt.timeout_s * static_cast<double>(rte_get_tsc_hz()))) {}
  const Options& o;
  Setup& st;
  Client& c;
  const bool lines;
  const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
  const std::uint64_t stall_tsc;
  std::uint64_t last_progress = rte_rdtsc(), last_done = 0, iter = 0;

  // Every 1024 rounds of a poll loop: has the server stopped the run, or gone? A non-blocking look
  // at the control connection: a line, or the peer gone.
  bool server_ended() {
    if (!lines || (++iter & 1023) != 0) return false;
    std::string line;
    if (st.oob.poll_line(line, c.server_gone)) {
      c.server_stop = line.rfind("STOP ", 0) == 0 ? line.substr(5, 80) : "unexpected line '" + line.substr(0, 80) + "'";
      return true;
    }
    return c.server_gone;
  }
  // The stall watch: false (and c.stalled) once `done` has not moved for --timeout.
  bool progressing(std::uint64_t done, std::uint64_t now) {
    if (done != last_done) {
      last_done = done;
      last_progress = now;
    } else if (now - last_progress > stall_tsc) {
      c.stalled = true;
      return false;
    }
    return true;
  }
};

// The application is the worker: one thread, no handoff; each QP one round trip in flight.
void run_on_worker(Loop& l) {
  const Options& o = l.o;
  const std::uint64_t all_total = (o.warmup + o.count) * l.c.qps.size();
  while (!engine::stop_requested() && l.c.done() < all_total && !l.server_ended()) {
    poll_all(l.st, rte_rdtsc());
    for (auto& q : l.c.qps) {
      rc::Completion c[8];
      for (unsigned n = q.ep->poll_cq(q.qpn, c, 8), i = 0; i < n; ++i) count_send(l.c, c[i]);
      client_step(
          *q.st, o, q.req.data(), l.ns_per_tsc,
          [&](std::uint32_t seq) {
            return q.ep->send_message(q.qpn, q.req.data(), o.size, seq, o.rc_pingpong() ? nullptr : &seq).ok();
          },
          [&](MessageView& v) { return q.ep->receive_message(q.qpn, v); }, [&](MessageView& v) { q.ep->release(v); });
    }
    if (!l.progressing(l.c.done(), rte_rdtsc())) break;
  }
  if (o.rc_pingpong() && !l.c.stalled) linger(l.st);
}

// The application is another thread: it talks to the worker only through the channel (one QP on
// one worker: the parser allows nothing else).
void run_on_app_thread(Loop& l, const cpu_set_t& allowed) {
  const Options& o = l.o;
  const std::uint64_t total = o.warmup + o.count;
  ClientState& state = *l.c.qps[0].st;
  std::vector<std::uint8_t>& req = l.c.qps[0].req;
  const rc::MemoryRegion& req_mr = l.c.qps[0].mr;
  engine::QpChannel channel(256);
  std::atomic<bool> stop{false};
  cpu_set_t others = allowed;
  const unsigned worker_cpu = rte_lcore_to_cpu_id(static_cast<int>(rte_lcore_id()));
  if (CPU_COUNT(&others) > 1) CPU_CLR(worker_cpu, &others);
  std::thread app([&] {
    (void)sched_setaffinity(0, sizeof(others), &others);
    ClientState& s = state;
    while (!stop.load(std::memory_order_relaxed) && s.done < total) {
      rc::Completion c;
      while (channel.poll(c)) count_send(l.c, c);
      client_step(
          s, o, req.data(), l.ns_per_tsc,
          [&](std::uint32_t seq) {
            rc::SendWr w;
            w.wr_id = seq;
            w.opcode = rc::WrOpcode::kSendWithImm;
            w.imm = seq;
            w.sge = {reinterpret_cast<std::uint64_t>(req.data()), o.size, req_mr.lkey};
            return channel.post_send(w);
          },
          [&](MessageView& v) { return channel.poll_message(v); },
          [&](MessageView& v) {
            if (!channel.release(v)) ++s.bad;  // cannot happen: capacity >= rq_depth
          });
    }
  });
  while (!engine::stop_requested() && state.progress.load(std::memory_order_relaxed) < total && !l.server_ended()) {
    const std::uint64_t now = rte_rdtsc();
    poll_all(l.st, now);
    channel.service(*l.st.client_ep, l.st.client_qpn);
    // Progress watch: the app thread publishes its count; relaxed is enough for a timeout.
    if (!l.progressing(state.progress.load(std::memory_order_relaxed), now)) break;
  }
  stop = true;
  app.join();
  for (int i = 0; i < 4; ++i) channel.service(*l.st.client_ep, l.st.client_qpn);
}

}  // namespace

void run_client(const Options& o, Setup& st, const cpu_set_t& allowed, Client& c) {
  Loop l(o, st, c);
  if (st.lab == nullptr) {
    std::printf("droce-echo client: connected, %llu round trips to go\n",
                static_cast<unsigned long long>((o.warmup + o.count) * c.qps.size()));
    std::fflush(stdout);
  }
  if (o.thread == "worker")
    run_on_worker(l);
  else
    run_on_app_thread(l, allowed);
}

void end_client_run(const Options& o, Setup& st, Client& c) {
  const bool lines = end_lines(o, st);
  if (lines && c.server_gone) {
    c.problem = "the server disappeared during the run (control connection closed)";
  } else if (lines) {
    // Poll on until the server's DONE (our last ACKs delivered), then BYE once we poll no more.
    // Our own Ctrl-C says so after the count, so that the server names it instead of reporting a
    // run that ended as planned (a server reading only "END n" ignores the rest).
    std::string line;
    const bool cut = engine::stop_requested() && c.server_stop.empty();
    const bool sent = st.oob.send_line("END " + std::to_string(c.done()) + (cut ? " interrupted" : ""), 5000).ok();
    const LineWait w = sent ? engine::wait_line(
                                  st.oob, line, kEndWaitMs, [&] { poll_all(st, rte_rdtsc()); }, false)
                            : LineWait::kClosed;
    if (w != LineWait::kLine)
      c.problem = w == LineWait::kClosed ? "the server closed the control connection before the end of the run"
                                         : "no end-of-run answer from the server within 10 s";
    if (!c.server_stop.empty()) c.problem = "the server ended the run early (" + c.server_stop + ")";
    if (w == LineWait::kLine && st.oob.send_line("BYE", 5000).ok())
      (void)engine::wait_line(st.oob, line, kEndWaitMs, {}, false);
  }
  if (st.port) st.port->stop();
  if (c.problem.empty() && engine::stop_requested()) c.problem = "interrupted";
  if (st.lab)
    st.lab->finish();
  else
    st.group->finish();
}

}  // namespace droce::echo
