// droce-echo's server side.
#include "apps/droce-echo/echo_server.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "apps/common/counters_json.h"
#include "apps/common/oob_waits.h"
#include "apps/common/output_file.h"
#include "apps/droce-echo/end_linger.h"
#include "apps/droce-echo/setup.h"

namespace droce::echo {

using engine::LineWait;
using engine::Status;

EchoServer::EchoServer(engine::RcEndpoint& ep, engine::MemoryRegistry& mem, std::uint32_t qpn, bool rc_pingpong)
    : ep_(ep), qpn_(qpn), rc_pingpong_(rc_pingpong), buf_(kSlots * 65536) {
  // In the QP's own protection domain: its replies' L_Key is checked against it (a failed
  // registration shows as the first reply's error).
  const rc::RcQp* qp = ep.qp(qpn);
  (void)mem.register_memory(buf_.data(), buf_.size(), rc::kAccessLocalWrite,
                            qp == nullptr ? rc::MrTable::kDefaultDomain : qp->attr().pd, mr_);
}

void EchoServer::serve() {
  rc::Completion c[16];
  for (unsigned n = ep_.poll_cq(qpn_, c, 16), i = 0; i < n; ++i) {
    --outstanding_;
    if (c[i].status == rc::WcStatus::kSuccess) continue;
    if (c[i].status == rc::WcStatus::kRetryExcErr && unacked_from_ == 0) unacked_from_ = c[i].wr_id;
    if (c[i].status == rc::WcStatus::kWrFlushErr && unacked_from_ != 0) ++flushed_;
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
    if (Status st = ep_.send_message(qpn_, slot, len, next_, rc_pingpong_ ? nullptr : &imm); st.ok())
      ++outstanding_;
    else if (errors_++ == 0)
      first_error_ = "reply " + std::to_string(next_) + ": " + st.message();
    ++echoed_;
  }
}

void EchoWorker::serve() {
  std::uint64_t echoed = 0;
  bool idle = true;
  for (auto& s : services_) {
    s->serve();
    echoed += s->echoed();
    idle = idle && s->idle();
  }
  echoed_.store(echoed, std::memory_order_relaxed);
  idle_.store(idle, std::memory_order_relaxed);
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

Status EchoWorkers::launch() {
  launches_.reserve(w_.size());  // the lcores hold pointers into it
  unsigned lcore = rte_get_main_lcore();
  for (std::size_t w = 1; w < w_.size(); ++w) {
    lcore = rte_get_next_lcore(lcore, 1, 0);  // worker lcores only, no wrap
    if (lcore >= RTE_MAX_LCORE)
      return Status::error(StatusCode::kInvalidArgument,
                           "no EAL lcore left for worker " + std::to_string(w) + " (see -l)");
    launches_.push_back({w_[w].get(), &quit_});
    const int rc = rte_eal_remote_launch(
        [](void* arg) -> int {
          const auto* l = static_cast<const Launch*>(arg);
          // Ends when the main lcore says so (stop(), always called), not at a stop signal: the
          // server's end-of-run still needs every worker polled.
          while (!l->quit->load(std::memory_order_acquire)) l->worker->poll(rte_rdtsc());
          return 0;
        },
        &launches_.back(), lcore);
    if (rc != 0)
      return Status::error(StatusCode::kError,
                           "cannot launch worker " + std::to_string(w) + " on lcore " + std::to_string(lcore));
    lcores_.push_back(lcore);
  }
  return {};
}

std::uint64_t EchoWorkers::echoed() const {
  std::uint64_t n = 0;
  for (const auto& w : w_) n += w->echoed();
  return n;
}

bool EchoWorkers::idle() const {
  for (const auto& w : w_)
    if (!w->idle()) return false;
  return true;
}

void EchoWorkers::stop() {
  quit_.store(true, std::memory_order_release);
  for (unsigned l : lcores_) (void)rte_eal_wait_lcore(l);
  lcores_.clear();
}

std::uint64_t EchoWorkers::errors() const {
  std::uint64_t n = 0;
  for (const auto& w : w_) n += w->errors();
  return n;
}

std::uint64_t EchoWorkers::mismatched() const {
  std::uint64_t n = 0;
  for (const auto& w : w_) n += w->mismatched();
  return n;
}

const std::string& EchoWorkers::first_error() const {
  for (const auto& w : w_)
    for (const auto& s : w->services())
      if (s->errors() != 0) return s->first_error();
  return w_[0]->services().front()->first_error();
}

unsigned EchoWorkers::lcore(std::size_t w) const {
  if (w == 0) return rte_get_main_lcore();
  return w - 1 < lcores_.size() ? lcores_[w - 1] : RTE_MAX_LCORE;
}

namespace {

// The server's JSON report: totals, then each worker's share.
Status write_server_json(const Options& o, const EchoWorkers& workers, const std::vector<unsigned>& lcores,
                         bool stalled, const std::string& problem, const apps::LabImpairments& impairments) {
  nlohmann::json ws = nlohmann::json::array();
  std::vector<const engine::RcEndpoint*> eps;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    const EchoWorker& x = workers.worker(w);
    nlohmann::json j = {{"worker", w},
                        {"lcore", lcores[w]},
                        {"qps", x.services().size()},
                        {"echoed", x.echoed()},
                        {"errors", x.errors()}};
    if (const engine::Worker* ew = x.worker(); ew != nullptr) {
      j["rx_frames"] = ew->endpoint().counters().rx_frames;
      j["rx_steered_in_software"] = ew->steering().rx_steered_in_software;
      j["rx_steered_in"] = ew->steering().rx_steered_in;
      eps.push_back(&ew->endpoint());
    }
    ws.push_back(j);
  }
  nlohmann::json j = {{"mode", "server"},
                      {"peer", o.peer},
                      {"echoed", workers.echoed()},
                      {"errors", workers.errors()},
                      {"stalled", stalled},
                      {"problem", problem},
                      {"workers", ws}};
  // Neighbour resolution, as the client's report has it: on IPv6, the solicitations for our
  // address answered and the ND frames ignored (others' targets and DAD probes, conflicts).
  std::uint64_t arp_answered = 0, nd_answered = 0, nd_ignored = 0;
  for (const engine::RcEndpoint* ep : eps) {
    arp_answered += ep->counters().arp_requests_answered;
    nd_answered += ep->counters().nd_solicitations_answered;
    nd_ignored += ep->counters().nd_ignored;
  }
  j["endpoint"] = {
      {"arp_requests_answered", arp_answered}, {"nd_solicitations_answered", nd_answered}, {"nd_ignored", nd_ignored}};
  const engine::CounterSums sums = apps::counter_sums(eps);
  j["hw_counters"] = apps::hw_counters_json(sums);
  j["drop_reasons"] = apps::drop_reasons_json(sums, impairments.tally().dropped());
  if (!impairments.empty()) j["impairment"] = impairments.json();
  apps::stamp_report(j);
  return apps::write_text_file(o.json, j.dump(2) + "\n");
}

}  // namespace

int run_server(const Options& o, EchoWorkers& workers, engine::OobConnection& oob, engine::Port* port,
               const apps::LabImpairments& impairments) {
  const std::uint64_t total = o.warmup + o.count;
  const auto stall_tsc = static_cast<std::uint64_t>(o.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  // The end of a run between two droce-echo processes, over the control connection: the client
  // says END (it polls on until the server's DONE: every reply acknowledged), then BYE when it
  // polls no more; the server stops its port and answers BYE; then the client stops its port. No
  // port is torn down while its peer still polls. A server that ends first says STOP.
  const bool lines = !o.rc_pingpong() && oob.is_open();
  constexpr std::uint32_t kEndWaitMs = 10000;                      // each end-of-run step (the peer may be descheduled)
  const EchoServer& echo = *workers.worker(0).services().front();  // the one QP of an rc_pingpong run
  auto keep_serving = [&] { workers.poll(rte_rdtsc()); };

  // ---- echo until stopped or idle for --timeout; against ibv_rc_pingpong, until it has echoed
  // its -n messages and they are acknowledged ----
  std::printf("droce-echo server: connected, echoing\n");
  std::fflush(stdout);
  std::uint64_t last = rte_rdtsc(), seen = 0, iter = 0;
  bool stalled = false, client_ended = false, client_gone = false;
  std::string line;
  while (!engine::stop_requested() && !(o.rc_pingpong() && workers.echoed() >= total && workers.idle())) {
    const std::uint64_t now = rte_rdtsc();
    workers.poll(now);
    if (lines && (++iter & 1023) == 0) {
      // Non-blocking look at the control connection: a line, or the peer gone.
      if (oob.poll_line(line, client_gone)) {
        client_ended = true;
        break;
      }
      if (client_gone) break;
    }
    if (workers.echoed() != seen) {
      seen = workers.echoed();
      last = now;
    } else if (now - last > stall_tsc) {
      stalled = true;
      break;
    }
  }
  if (o.rc_pingpong() && !stalled) {
    // After the last message: keep the endpoint polled so that our final ACKs leave and a peer's
    // retransmission (its ACK from us lost or late) is still answered, instead of leaving the
    // peer to exhaust its retries against a closed port: twice ibv_rc_pingpong's retry span.
    const std::uint64_t until = rte_rdtsc() + tool_linger_tsc(rte_get_tsc_hz());
    for (std::uint64_t now = rte_rdtsc(); now < until && !engine::stop_requested(); now = rte_rdtsc())
      workers.poll(now);
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
    while (!workers.idle() && rte_rdtsc() < until) keep_serving();
    constexpr std::string_view kCut = " interrupted";  // the client's Ctrl-C ended its run
    if (line.rfind("END", 0) != 0)
      problem = "unexpected end-of-run line from the client: " + line.substr(0, 80);
    else if (line.size() > kCut.size() && line.compare(line.size() - kCut.size(), kCut.size(), kCut) == 0)
      problem = "the client ended the run early (interrupted)";
    if (oob.send_line("DONE " + std::to_string(workers.echoed()), 5000).ok())
      (void)engine::wait_line(oob, line, kEndWaitMs, keep_serving, false);
  } else if (lines) {
    problem = client_gone ? "the client disappeared during the run (control connection closed)"
                          : "no end-of-run line from the client";
  }
  std::vector<unsigned> lcores;
  for (std::size_t w = 0; w < workers.size(); ++w) lcores.push_back(workers.lcore(w));
  workers.stop();          // our workers poll no more
  if (port) port->stop();  // the client polls no more, or is gone
  if (lines && client_ended) (void)oob.send_line("BYE", 1000);
  if (problem.empty() && engine::stop_requested()) problem = "interrupted";
  std::printf("droce-echo server: echoed %llu messages, %llu errors", static_cast<unsigned long long>(workers.echoed()),
              static_cast<unsigned long long>(workers.errors()));
  if (o.rc_pingpong())
    std::printf(", %llu requests differing from our previous reply%s",
                static_cast<unsigned long long>(workers.mismatched()),
                stalled ? ", STALLED (no message within --timeout)" : "");
  if (!impairments.empty()) std::printf("; %s", impairments.line().c_str());
  std::printf("\n");
  if (workers.size() > 1)
    for (std::size_t w = 0; w < workers.size(); ++w)
      std::printf("  worker %zu (lcore %u): %zu QPs, echoed %llu\n", w, lcores[w], workers.worker(w).services().size(),
                  static_cast<unsigned long long>(workers.worker(w).echoed()));
  if (workers.errors() != 0) std::printf("  first error: %s\n", workers.first_error().c_str());
  if (!o.json.empty()) {
    if (Status s = write_server_json(o, workers, lcores, stalled, problem, impairments); !s.ok()) {
      std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str());
      return 1;
    }
  }
  if (o.rc_pingpong()) {
    // ibv_rc_pingpong's client exits (destroying its QP) on its last receive: when its ACKs of
    // our last replies are lost, our retransmissions go unanswered. Every request arrived and was
    // checked. A reply followed by a request arrived (the client sends request N+1 only after
    // reply N); whether the last reply arrived, only the client's own exit status tells.
    const bool tail_only = echo.only_unacked_tail() && echo.echoed() == total;
    if (tail_only)
      std::printf(
          "  the last %llu replies were never acknowledged: the client had finished (their ACKs lost); each before "
          "the last was followed by the client's next request, and its exit status says whether the last arrived\n",
          static_cast<unsigned long long>(echo.unacked_tail()));
    return (echo.errors() == 0 || tail_only) && echo.mismatched() == 0 && echo.echoed() == total ? 0 : 1;
  }
  if (!problem.empty()) std::fprintf(stderr, "droce-echo: %s\n", problem.c_str());
  return workers.errors() == 0 && workers.echoed() > 0 && problem.empty() ? 0 : 1;
}

int run_server_workers(const Options& o, Setup& st) {
  std::vector<std::unique_ptr<EchoWorker>> ws;
  for (std::uint16_t w = 0; w < o.workers; ++w)
    ws.push_back(std::make_unique<EchoWorker>(st.group->worker(w).endpoint(), *st.memories[w], o.rc_pingpong(),
                                              &st.group->worker(w)));
  for (const QpPlace& q : st.own_qps) ws[q.worker]->add_qp(q.qpn);
  EchoWorkers workers(std::move(ws));
  int rc = 1;
  if (Status s = workers.launch(); !s.ok())
    std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str());
  else
    rc = run_server(o, workers, st.oob, st.port.get(), st.impairments);
  workers.stop();
  st.group->finish();
  return rc;
}

}  // namespace droce::echo
