// droce-rping's server (see server.h).
#include "apps/droce-rping/server.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/address_text.h"

namespace droce::rping {

using engine::CmEndpointEvent;
using engine::CmEndpointEventKind;
using engine::Status;

namespace {

constexpr std::uint64_t kLingerUs = 50'000;  // as Session::finish
// A connection brings at most four events to its worker (REQ, established, disconnected, or a
// rejection or time-out), and a worker holds at most kMaxClients connections.
constexpr std::uint32_t kInboxEvents = 512;

// A REQ's sender, in our family (the engine takes REQs of our family only).
std::string ip_of(const std::uint8_t* ip, bool ipv6) {
  engine::IpAddress a;
  a.ipv6 = ipv6;
  std::memcpy(a.bytes, ip, ipv6 ? 16 : 4);
  return engine::ip_text(a);
}

}  // namespace

Server::~Server() { stop(); }

Status Server::prepare() {
  allocate_buffers(st_, std::size_t{o_.clients} * Session::kRegionBytes);
  for (std::uint32_t i = 0; i < o_.clients; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->worker = st_.worker_of(i);
    std::uint8_t* region = st_.buffers.get() + std::size_t{i} * Session::kRegionBytes;
    std::uint32_t pd = 0;
    if (Status s = st_.memories[slot->worker]->create_domain(pd); !s.ok()) return s;
    rc::MemoryRegion mr;
    if (Status s = register_region(st_, slot->worker, region, Session::kRegionBytes, pd, mr); !s.ok()) return s;
    slot->session = std::make_unique<Session>(o_, st_, slot->worker, region, mr);
    slots_.push_back(std::move(slot));
  }
  inboxes_.resize(st_.workers());
  for (std::uint16_t w = 1; w < st_.workers(); ++w) {
    Status err;
    inboxes_[w] = CmInbox::create("rping_cm" + std::to_string(w), kInboxEvents, err);
    if (!inboxes_[w]) return err;
  }
  return {};
}

// ---- the slots' threads ----

void Server::handle(std::uint32_t i, const CmEndpointEvent& e, std::uint32_t psn) {
  Slot& s = *slots_[i];
  if (e.kind != CmEndpointEventKind::kConnectRequest) {
    s.session->on_cm_event(e);
    return;
  }
  if (Status st = s.session->prepare_accept(e, psn); !st.ok()) {
    s.failure = st;
    s.accept_stage.store(2, std::memory_order_release);
    return;
  }
  s.accept_stage.store(1, std::memory_order_release);
}

void Server::serve_slot(Slot& s) {
  if (s.done.load(std::memory_order_relaxed) || s.failed.load(std::memory_order_relaxed)) return;
  Session& ss = *s.session;
  ss.poll_completions();
  bool progressed = false;
  if (Status st = ss.serve(progressed); !st.ok()) {
    s.failure = st;
    s.failed.store(true, std::memory_order_release);
    return;
  }
  if (progressed) s.progress.fetch_add(1, std::memory_order_relaxed);
  if (ss.served()) s.done.store(true, std::memory_order_release);
}

void Server::work(std::uint16_t w) {
  // The inbox before the poll: the moves the CM posted to this worker's control ring before an
  // event (RTR/RTS before the RTU's establishment) are then run by the poll that follows it.
  InboxEvent in[16];
  const unsigned n = inboxes_[w]->take(in, 16);
  for (unsigned k = 0; k < n; ++k) handle(in[k].slot, in[k].event, in[k].psn);
  st_.group->worker(w).poll(rte_rdtsc());
  for (auto& s : slots_)
    if (s->worker == w) serve_slot(*s);
}

int Server::worker_main(void* arg) {
  auto* loop = static_cast<WorkerLoop*>(arg);
  // Bounded by the main lcore: it sets stop_ when the run ends, however it ends.
  while (!loop->server->stop_.load(std::memory_order_acquire)) loop->server->work(loop->worker);
  return 0;
}

Status Server::launch() {
  loops_.resize(st_.workers());
  for (std::uint16_t w = 1; w < st_.workers(); ++w) {
    loops_[w] = WorkerLoop{this, w};
    const unsigned lcore = st_.lcores[w];
    if (rte_eal_remote_launch(worker_main, &loops_[w], lcore) != 0)
      return Status::error(StatusCode::kBadState,
                           "cannot launch worker " + std::to_string(w) + " on lcore " + std::to_string(lcore));
    launched_lcores_.push_back(lcore);
  }
  return {};
}

void Server::stop() {
  if (!launched()) return;
  stop_.store(true, std::memory_order_release);
  for (unsigned lcore : launched_lcores_) (void)rte_eal_wait_lcore(lcore);
  launched_lcores_.clear();
  // Every slot is this thread's now: what the inboxes still hold is handled here.
  for (std::uint16_t w = 1; w < st_.workers(); ++w) {
    InboxEvent in[16];
    for (unsigned n = 0, k = 0; k < kInboxEvents && (n = inboxes_[w]->take(in, 16)) != 0; k += n)
      for (unsigned j = 0; j < n; ++j) handle(in[j].slot, in[j].event, in[j].psn);
  }
}

// ---- the port owner's thread ----

Status Server::deliver(std::uint32_t i, const CmEndpointEvent& e, std::uint32_t psn) {
  const Slot& s = *slots_[i];
  if (!launched() || s.worker == engine::WorkerGroup::kPortOwner) {
    handle(i, e, psn);
    return {};
  }
  if (!inboxes_[s.worker]->post(InboxEvent{i, psn, e}))
    return Status::error(StatusCode::kQueueFull,
                         "worker " + std::to_string(s.worker) + "'s CM event ring is full (is it polled?)");
  return {};
}

Status Server::take_cm_events() {
  engine::RcEndpoint& cm = st_.cm();
  CmEndpointEvent e;
  for (int k = 0; k < 16 && cm.cm_next_event(e); ++k) {
    if (e.kind == CmEndpointEventKind::kClosed) continue;  // no session acts on it
    if (e.kind != CmEndpointEventKind::kConnectRequest) {
      for (std::uint32_t i = 0; i < routed_; ++i)
        if (slots_[i]->conn == e.conn) {
          if (Status s = deliver(i, e, 0); !s.ok()) return s;
          break;
        }
      continue;
    }
    if (routed_ >= o_.clients) {
      // Every client we serve has come: this one is turned away (REJ, consumer reject).
      (void)cm.cm_reject(e.conn);
      ++rejected_;
      if (o_.clients > 1)
        std::fprintf(stderr, "droce-rping: rejected a connection request from %s: --clients %u are served already\n",
                     ip_of(e.peer.ip, st_.ip.ipv6).c_str(), o_.clients);
      continue;
    }
    const std::uint32_t i = routed_++;
    slots_[i]->conn = e.conn;
    if (Status s = deliver(i, e, st_.psns.next()); !s.ok()) return s;
  }
  return {};
}

Status Server::send_ready_reps() {
  for (std::uint32_t i = 0; i < routed_; ++i) {
    Slot& s = *slots_[i];
    if (s.rep_sent) continue;
    const std::uint8_t stage = s.accept_stage.load(std::memory_order_acquire);
    if (stage == 0) continue;
    s.rep_sent = true;
    if (stage == 2) return s.failure;
    if (Status st = s.session->send_rep(); !st.ok()) return st;
  }
  return {};
}

Status Server::first_failure() const {
  for (std::uint32_t i = 0; i < routed_; ++i) {
    const Slot& s = *slots_[i];
    if (!s.failed.load(std::memory_order_acquire)) continue;
    if (o_.clients == 1) return s.failure;
    return s.failure.context("client " + engine::ip_text(s.session->results().peer_ip) + ": ");
  }
  return {};
}

Status Server::owner_round() {
  // Events before completions: a disconnect flushes the QP's receives in the same poll, and its
  // event says those flushes are expected.
  if (launched())
    st_.group->worker(engine::WorkerGroup::kPortOwner).poll(rte_rdtsc());
  else
    st_.poll_all();
  Status s = take_cm_events();
  if (s.ok()) s = send_ready_reps();
  for (auto& slot : slots_)
    if (!launched() || slot->worker == engine::WorkerGroup::kPortOwner) serve_slot(*slot);
  return s;
}

Status Server::run() {
  if (Status s = st_.cm().cm_listen(o_.port); !s.ok()) return s;
  if (Status s = launch(); !s.ok()) {
    stop();
    return s;
  }
  // Scripts start the client on this line.
  std::printf("droce-rping: server listening on %s port %u\n", engine::ip_text(st_.ip).c_str(), o_.port);
  std::fflush(stdout);
  const std::uint64_t window = static_cast<std::uint64_t>(o_.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  std::uint64_t deadline = rte_rdtsc() + window;
  std::uint64_t last_progress = 0;
  std::uint32_t last_routed = 0;
  // Bounded by the deadline: every pass without progress brings it nearer.
  for (;;) {
    Status s = owner_round();
    if (s.ok()) s = first_failure();
    if (!s.ok()) {
      stop();
      return s;
    }
    std::uint32_t done = 0;
    std::uint64_t progress = 0;
    for (const auto& slot : slots_) {
      done += slot->done.load(std::memory_order_acquire) ? 1 : 0;
      progress += slot->progress.load(std::memory_order_relaxed);
    }
    if (done == o_.clients) {
      stop();
      return {};
    }
    if (progress != last_progress || routed_ != last_routed) {
      last_progress = progress;
      last_routed = routed_;
      deadline = rte_rdtsc() + window;
    }
    const bool interrupted = engine::stop_requested();
    if (!interrupted && rte_rdtsc() <= deadline) continue;
    stop();  // the sessions are this thread's from here: what each waits for can be read
    // What we wait for: the first connection still pinging, else another client's REQ.
    std::string what = "connection request on port " + std::to_string(o_.port);
    for (std::uint32_t i = 0; i < routed_; ++i) {
      const Session& ss = *slots_[i]->session;
      if (ss.served()) continue;
      what = o_.clients == 1 ? ss.waiting_for()
                             : ss.waiting_for() + " (client " + engine::ip_text(ss.results().peer_ip) + ")";
      break;
    }
    if (interrupted) return Status::error(StatusCode::kError, "interrupted while waiting for " + what);
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", o_.timeout_s);
    return Status::error(StatusCode::kTimeout, "no " + what + " within " + secs + " s");
  }
}

void Server::finish() {
  stop();
  const std::uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1'000'000 * kLingerUs;
  for (std::uint64_t k = 0; k < 1'000'000'000ull && rte_rdtsc() < end; ++k) (void)owner_round();
  for (std::uint32_t i = 0; i < routed_; ++i) slots_[i]->session->take_counters();
}

std::vector<Results> Server::results() const {
  std::vector<Results> out;
  out.reserve(routed_);
  for (std::uint32_t i = 0; i < routed_; ++i) out.push_back(slots_[i]->session->results());
  return out;
}

}  // namespace droce::rping
