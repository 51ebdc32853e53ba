// droce-echo's server side.
#include "apps/droce-echo/echo_server.h"

#include <cstdio>
#include <cstring>

#include <rte_cycles.h>

#include "apps/common/oob_waits.h"
#include "engine/core/stop_signal.h"

namespace droce::echo {

using engine::LineWait;
using engine::Status;

EchoServer::EchoServer(engine::RcEndpoint& ep, engine::MemoryRegistry& mem, std::uint32_t qpn, bool rc_pingpong)
    : ep_(ep), qpn_(qpn), rc_pingpong_(rc_pingpong), buf_(kSlots * 65536) {
  (void)mem.register_memory(buf_.data(), buf_.size(), rc::kAccessLocalWrite, mr_);
}

void EchoServer::serve() {
  rc::Completion c[16];
  for (unsigned n = ep_.poll_cq(qpn_, c, 16), i = 0; i < n; ++i) {
    --outstanding_;
    if (c[i].status == rc::WcStatus::kSuccess) continue;
    if (c[i].status == rc::WcStatus::kRetryExcErr && c[i].wr_id == next_) last_unacked_ = true;
    if (errors_++ == 0) first_error_ = "reply " + std::to_string(c[i].wr_id) + ": " + rc::wc_status_name(c[i].status);
  }
  engine::MessageView v;
  while (outstanding_ < kSlots && ep_.receive_message(qpn_, v)) {
    std::uint8_t* slot = buf_.data() + (next_++ % kSlots) * 65536;
    const std::uint32_t len = v.copy_to(slot, 65536);
    const std::uint32_t imm = v.imm;
    ep_.release(v);
    if (rc_pingpong_ && echoed_ > 0 && (len != last_len_ || std::memcmp(slot, last_, len) != 0)) ++mismatched_;
    last_ = slot;
    last_len_ = len;
    if (Status st = ep_.send_message(qpn_, slot, len, next_, rc_pingpong_ ? nullptr : &imm); st.ok()) ++outstanding_;
    else if (errors_++ == 0) first_error_ = "reply " + std::to_string(next_) + ": " + st.message();
    ++echoed_;
  }
}

void EchoWorker::serve() {
  std::uint64_t echoed = 0;
  for (auto& s : services_) {
    s->serve();
    echoed += s->echoed();
  }
  echoed_.store(echoed, std::memory_order_relaxed);
}

std::uint64_t EchoWorker::errors() const {
  std::uint64_t n = 0;
  for (const auto& s : services_) n += s->errors();
  return n;
}

std::uint64_t EchoWorker::mismatched() const {
  std::uint64_t n = 0;
  for (const auto& s : services_) n += s->mismatched();
  return n;
}

bool EchoWorker::idle() const {
  for (const auto& s : services_)
    if (!s->idle()) return false;
  return true;
}

int run_server(const Options& o, EchoWorker& worker, engine::OobConnection& oob, engine::Port* port,
               const engine::LinkImpairment* impairment) {
  const std::uint64_t total = o.warmup + o.count;
  const auto stall_tsc = static_cast<std::uint64_t>(o.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  // The end of a run between two droce-echo processes, over the control connection: the client
  // says END (it polls on until the server's DONE: every reply acknowledged), then BYE when it
  // polls no more; the server stops its port and answers BYE; then the client stops its port. No
  // port is torn down while its peer still polls. A server that ends first says STOP.
  const bool lines = !o.rc_pingpong() && oob.is_open();
  constexpr std::uint32_t kEndWaitMs = 10000;  // each end-of-run step (the peer may be descheduled)
  const EchoServer& echo = *worker.services().front();
  auto keep_serving = [&] { worker.poll(rte_rdtsc()); };

  // ---- echo until stopped or idle for --timeout; against ibv_rc_pingpong, until it has echoed
  // its -n messages and they are acknowledged ----
  std::printf("droce-echo server: connected, echoing\n");
  std::fflush(stdout);
  std::uint64_t last = rte_rdtsc(), seen = 0, iter = 0;
  bool stalled = false, client_ended = false, client_gone = false;
  std::string line;
  while (!engine::stop_requested() && !(o.rc_pingpong() && worker.echoed() >= total && worker.idle())) {
    const std::uint64_t now = rte_rdtsc();
    worker.poll(now);
    if (lines && (++iter & 1023) == 0) {
      // Non-blocking look at the control connection: a line, or the peer gone.
      if (oob.poll_line(line, client_gone)) {
        client_ended = true;
        break;
      }
      if (client_gone) break;
    }
    if (worker.echoed() != seen) {
      seen = worker.echoed();
      last = now;
    } else if (now - last > stall_tsc) {
      stalled = true;
      break;
    }
  }
  if (o.rc_pingpong() && !stalled) {
    // After the last message: keep the endpoint polled a little so that our final ACKs leave and
    // a peer's retransmission (its ACK from us lost or late) is still answered, instead of
    // leaving the peer to exhaust its retries against a closed port.
    const std::uint64_t until = rte_rdtsc() + rte_get_tsc_hz() / 5;
    for (std::uint64_t now = rte_rdtsc(); now < until && !engine::stop_requested(); now = rte_rdtsc()) worker.poll(now);
  }
  std::string problem;
  if (lines && !client_ended && !client_gone) {
    // We end first (Ctrl-C or a stall): ask the client to end, serving until it has.
    if (oob.send_line(stalled ? "STOP stalled" : "STOP interrupted", 5000).ok()) {
      const LineWait w = engine::wait_line(oob, line, kEndWaitMs, keep_serving, false);
      client_ended = w == LineWait::kLine;
      client_gone = w == LineWait::kClosed;
    }
  }
  if (lines && client_ended) {
    // Our last replies acknowledged (bounded), then DONE; serve until the client polls no more.
    const std::uint64_t until = rte_rdtsc() + 10 * rte_get_tsc_hz();
    while (!worker.idle() && rte_rdtsc() < until) keep_serving();
    if (line.rfind("END", 0) != 0) problem = "unexpected end-of-run line from the client: " + line.substr(0, 80);
    if (oob.send_line("DONE " + std::to_string(worker.echoed()), 5000).ok())
      (void)engine::wait_line(oob, line, kEndWaitMs, keep_serving, false);
  } else if (lines) {
    problem = client_gone ? "the client disappeared during the run (control connection closed)"
                          : "no end-of-run line from the client";
  }
  if (port) port->stop();  // the client polls no more, or is gone
  if (lines && client_ended) (void)oob.send_line("BYE", 1000);
  if (problem.empty() && engine::stop_requested()) problem = "interrupted";
  worker.finish();
  std::printf("droce-echo server: echoed %llu messages, %llu errors", static_cast<unsigned long long>(worker.echoed()),
              static_cast<unsigned long long>(worker.errors()));
  if (o.rc_pingpong())
    std::printf(", %llu requests differing from our previous reply%s", static_cast<unsigned long long>(worker.mismatched()),
                stalled ? ", STALLED (no message within --timeout)" : "");
  if (impairment)
    std::printf("; impairment dropped %llu of %llu received frames", static_cast<unsigned long long>(impairment->counters().dropped),
                static_cast<unsigned long long>(impairment->counters().frames));
  std::printf("\n");
  if (worker.errors() != 0) std::printf("  first error: %s\n", echo.first_error().c_str());
  if (o.rc_pingpong()) {
    // ibv_rc_pingpong's client exits (destroying its QP) on its last receive: when its ACK of
    // our last reply is lost, our retransmissions go unanswered. Every request arrived and was
    // checked; whether the last reply arrived, only the client's own exit status tells.
    const bool tail_only = echo.only_last_unacked() && echo.echoed() == total;
    if (tail_only)
      std::printf("  the last reply was never acknowledged: the client had finished (its ACK lost); its exit status says "
                  "whether the reply arrived\n");
    return (echo.errors() == 0 || tail_only) && echo.mismatched() == 0 && echo.echoed() == total ? 0 : 1;
  }
  if (!problem.empty()) std::fprintf(stderr, "droce-echo: %s\n", problem.c_str());
  return worker.errors() == 0 && worker.echoed() > 0 && problem.empty() ? 0 : 1;
}

}  // namespace droce::echo
