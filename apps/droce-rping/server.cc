// droce-rping's server (see server.h).
#include "apps/droce-rping/server.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>

#include <cstdio>
#include <cstring>

#include "apps/common/address_text.h"

namespace droce::rping {

using engine::CmEndpointEvent;
using engine::CmEndpointEventKind;
using engine::Status;

namespace {

constexpr std::uint64_t kLingerUs = 50'000;  // as Session::finish

// A REQ's sender, in our family (the engine takes REQs of our family only).
std::string ip_of(const std::uint8_t* ip, bool ipv6) {
  engine::IpAddress a;
  a.ipv6 = ipv6;
  std::memcpy(a.bytes, ip, ipv6 ? 16 : 4);
  return engine::ip_text(a);
}

}  // namespace

Status Server::prepare() {
  allocate_buffers(st_, std::size_t{o_.clients} * Session::kRegionBytes);
  return {};
}

Status Server::next_session() {
  std::uint8_t* region = st_.buffers.get() + sessions_.size() * Session::kRegionBytes;
  std::uint32_t pd = 0;
  if (Status s = st_.memory->create_domain(pd); !s.ok()) return s;
  rc::MemoryRegion mr;
  if (Status s = register_region(st_, region, Session::kRegionBytes, pd, mr); !s.ok()) return s;
  sessions_.push_back(std::make_unique<Session>(o_, st_, region, mr));
  return {};
}

Session* Server::find(std::uint32_t conn) {
  for (auto& s : sessions_)
    if (s->conn() == conn) return s.get();
  return nullptr;
}

Status Server::step(bool& progressed) {
  engine::RcEndpoint& ep = *st_.ep;
  ep.poll();
  // Events first: a disconnect flushes the QP's receives in the same poll, and its event says
  // those flushes are expected.
  CmEndpointEvent e;
  for (int k = 0; k < 16 && ep.cm_next_event(e); ++k) {
    if (e.kind != CmEndpointEventKind::kConnectRequest) {
      if (Session* s = find(e.conn)) s->on_cm_event(e);
      continue;
    }
    if (sessions_.size() >= o_.clients) {
      // Every client we serve has come: this one is turned away (REJ, consumer reject).
      (void)ep.cm_reject(e.conn);
      ++rejected_;
      if (o_.clients > 1)
        std::fprintf(stderr, "droce-rping: rejected a connection request from %s: --clients %u are served already\n",
                     ip_of(e.peer.ip, st_.ip.ipv6).c_str(), o_.clients);
      continue;
    }
    if (Status s = next_session(); !s.ok()) return s;
    if (Status s = sessions_.back()->accept(e); !s.ok()) return s;
    progressed = true;
  }
  for (auto& s : sessions_) {
    s->poll_completions();
    if (Status st = s->serve(progressed); !st.ok()) {
      if (o_.clients == 1) return st;
      return st.context("client " + engine::ip_text(s->results().peer_ip) + ": ");
    }
  }
  return {};
}

Status Server::run() {
  if (Status s = st_.ep->cm_listen(o_.port); !s.ok()) return s;
  // Scripts start the client on this line.
  std::printf("droce-rping: server listening on %s port %u\n", engine::ip_text(st_.ip).c_str(), o_.port);
  std::fflush(stdout);
  const std::uint64_t window = static_cast<std::uint64_t>(o_.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  std::uint64_t deadline = rte_rdtsc() + window;
  // Bounded by the deadline: every pass without progress brings it nearer.
  for (;;) {
    bool progressed = false;
    if (Status s = step(progressed); !s.ok()) return s;
    std::uint32_t done = 0;
    for (const auto& s : sessions_) done += s->served() ? 1 : 0;
    if (done == o_.clients) return {};
    if (progressed) deadline = rte_rdtsc() + window;
    // What we wait for: the first connection still pinging, else another client's REQ.
    auto what = [&]() -> std::string {
      for (const auto& s : sessions_)
        if (!s->served())
          return o_.clients == 1 ? s->waiting_for()
                                 : s->waiting_for() + " (client " + engine::ip_text(s->results().peer_ip) + ")";
      return "connection request on port " + std::to_string(o_.port);
    };
    if (engine::stop_requested()) return Status::error(StatusCode::kError, "interrupted while waiting for " + what());
    if (rte_rdtsc() > deadline) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", o_.timeout_s);
      return Status::error(StatusCode::kTimeout, "no " + what() + " within " + secs + " s");
    }
  }
}

void Server::finish() {
  const std::uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1'000'000 * kLingerUs;
  bool progressed = false;
  for (std::uint64_t k = 0; k < 1'000'000'000ull && rte_rdtsc() < end; ++k) (void)step(progressed);
  for (auto& s : sessions_) s->take_counters();
}

std::vector<Results> Server::results() const {
  std::vector<Results> out;
  out.reserve(sessions_.size());
  for (const auto& s : sessions_) out.push_back(s->results());
  return out;
}

}  // namespace droce::rping
