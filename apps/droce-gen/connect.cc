// droce-gen's connection (see connect.h).
#include "apps/droce-gen/connect.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>

#include "apps/common/address_text.h"
#include "apps/common/oob_waits.h"
#include "apps/common/peer_mac.h"
#include "apps/common/rss_line.h"
#include "apps/droce-gen/connect_waits.h"
#include "apps/droce-gen/control_lines.h"

namespace droce::gen {

using engine::Status;

namespace {

// The peer's MAC is --peer-mac's, or found by ARP (IPv4) or Neighbor Discovery (IPv6) through
// worker 0's endpoint: the queue the peer's ARP and ND frames reach (its worker 0 sends them on
// queue 0, which is our queue 0; docs/arp.md). Worker 0's transport is polled whenever we wait for
// the peer: the peer may be resolving our MAC meanwhile, and only a polled endpoint answers.
engine::RcEndpoint& arp_endpoint(Setup& st) { return st.server ? *st.shards[0].rsp_ep : *st.shards[0].req_ep; }
std::function<void()> poll_worker0(Setup& st) {
  Job* j = st.jobs[0].get();
  return [j] { j->poll_only(rte_rdtsc()); };
}

// The client's run length: the server waits for the client's end-of-run line as long as the
// client may run (its --duration or its --count limit, after its warm-up).
std::string run_line(double limit_s, double warmup_s) {
  char b[96];
  std::snprintf(b, sizeof(b), "RUN limit_s=%.3f warmup_s=%.3f", limit_s, warmup_s);
  return b;
}

// Strict: the whole line, finite values within a year.
bool parse_run_line(const std::string& line, double& limit_s, double& warmup_s) {
  int used = 0;
  if (std::sscanf(line.c_str(), "RUN limit_s=%lf warmup_s=%lf%n", &limit_s, &warmup_s, &used) != 2 ||
      static_cast<std::size_t>(used) != line.size())
    return false;
  constexpr double kYear = 365.0 * 86400;
  return limit_s >= 0 && limit_s <= kYear && warmup_s >= 0 && warmup_s <= kYear;
}

// Our own Ctrl-C closed the connection: the exchange's error says "peer closed", not the cause.
Status exchange_error(const Status& why) {
  if (engine::stop_requested()) return Status::error(StatusCode::kError, "interrupted during the connection exchange");
  return why;
}

Status connect_loopback(const Options& o, Setup& st) {
  for (std::uint32_t i = 0; i < o.qps; ++i) {
    Requester& q = st.requester(i);
    Responder& r = st.responder(i);
    const auto qa = q.ep->qp(q.qpn)->attr();
    const auto ra = r.ep->qp(r.qpn)->attr();
    if (Status s = q.ep->connect(q.qpn, engine::RemoteQp{engine::LoopbackLab::address(1), r.qpn, ra.sq_psn}); !s.ok())
      return s;
    if (Status s = r.ep->connect(r.qpn, engine::RemoteQp{engine::LoopbackLab::address(0), q.qpn, qa.sq_psn}); !s.ok())
      return s;
    q.remote_va = reinterpret_cast<std::uint64_t>(r.buf);
    q.rkey = r.mr.rkey;
    q.remote_slots = i < o.active() ? o.inflight : 1;
  }
  return {};
}

// The client's proposal of selective repeat: a suffix of its workload line, absent for go-back-N
// (so a go-back-N run speaks the line as before).
constexpr const char* kProposeSr = " recovery=sr";

std::string recovery_line(rc::Recovery r) { return std::string("RECOVERY ") + recovery_name(r); }

// What one peer's exchange settled: the client's run length (a server learns it from the RUN
// line), the recovery both use, and the peer's address (its GID's).
struct PeerRun {
  double limit_s = 0, warmup_s = 0;
  bool from_client = false;
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  std::string peer_ip;
};

// Every wait of one peer's exchange: at most `cap_ms`, and no later than `until` (a server of
// several clients gathers them all within one deadline, so that the first, waiting for its
// buffer keys, is not kept past its own bound by a later one that stalls).
struct StepWaits {
  std::uint32_t cap_ms = 0;
  std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max();
  [[nodiscard]] std::uint32_t ms() const {
    const auto now = std::chrono::steady_clock::now();
    if (until == std::chrono::steady_clock::time_point::max()) return cap_ms;
    if (now >= until) return 1;  // the deadline has passed: a last look, then the wait's own timeout
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    return static_cast<std::uint32_t>(std::clamp<long long>(left, 1, cap_ms));
  }
};

// The first QP's exchange is followed by droce's own lines, before that QP connects (a QP's
// recovery is fixed once it leaves INIT): the client's workload, which the server must be running
// too, then how long it will run, so that the server waits for it as long as it may take. A client
// asking for selective repeat says so at the end of its workload line; the server answers with the
// recovery both use, sr only when it runs --recovery sr too, else gbn (issue 19: only droce peers
// that both want it use it), once its first QP is connected (send_recovery): the client connects
// its own only then, so its first packets find the server's QP ready, as rc_pingpong's order
// (connect, then answer) ensures for the others.
Status announce_or_check_workload(const Options& o, engine::OobConnection& oob, const StepWaits& waits,
                                  const std::function<void()>& poll, PeerRun& run) {
  const bool propose_sr = o.recovery == rc::Recovery::kSelectiveRepeat;
  std::string line;
  if (o.mode == Mode::kClient) {
    if (Status s = oob.send_line(config_line(o) + (propose_sr ? kProposeSr : ""), waits.ms()); !s.ok())
      return exchange_error(s);
    if (Status s = oob.send_line(run_line(run.limit_s, run.warmup_s), waits.ms()); !s.ok()) return exchange_error(s);
    if (Status s = engine::recv_line_stoppable(oob, line, waits.ms(), "the server's recovery line", poll); !s.ok())
      return exchange_error(s);
    if (line == recovery_line(rc::Recovery::kSelectiveRepeat) && propose_sr)
      run.recovery = rc::Recovery::kSelectiveRepeat;
    else if (line == recovery_line(rc::Recovery::kGoBackN))
      run.recovery = rc::Recovery::kGoBackN;
    else
      return Status::error(StatusCode::kPeer, "the server sent '" + line.substr(0, 80) +
                                                  "' where its recovery was expected (is it this droce-gen?)");
    return {};
  }
  if (Status s = engine::recv_line_stoppable(oob, line, waits.ms(), "the client's workload line", poll); !s.ok())
    return exchange_error(s);
  const std::size_t suffix = std::char_traits<char>::length(kProposeSr);
  const bool client_sr = line.size() > suffix && line.compare(line.size() - suffix, suffix, kProposeSr) == 0;
  if (client_sr) line.resize(line.size() - suffix);
  run.recovery = client_sr && propose_sr ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN;
  if (line != config_line(o))
    return Status::error(StatusCode::kPeer, "the client runs '" + line.substr(std::min<std::size_t>(7, line.size())) +
                                                "' but this server '" + config_line(o).substr(7) +
                                                "': start both with the same workload options");
  if (Status s = engine::recv_line_stoppable(oob, line, waits.ms(), "the client's run length", poll); !s.ok())
    return exchange_error(s);
  if (!parse_run_line(line, run.limit_s, run.warmup_s))
    return Status::error(StatusCode::kPeer, "the client sent '" + line.substr(0, 80) +
                                                "' where its run length was expected (is it this droce-gen?)");
  run.from_client = true;
  return {};
}

// The peer's local QPs `first` .. `first + n - 1` (all still in INIT) to the agreed recovery.
Status apply_recovery(const Options& o, Setup& st, std::uint32_t first, std::uint32_t n, rc::Recovery agreed) {
  for (std::uint32_t i = first; agreed != o.recovery && i < first + n; ++i) {
    engine::RcEndpoint& ep = st.server ? *st.responder(i).ep : *st.requester(i).ep;
    if (Status s = ep.set_recovery(st.server ? st.responder(i).qpn : st.requester(i).qpn, agreed); !s.ok()) return s;
  }
  return {};
}

// rc_pingpong's exchange on `oob` for the run's QPs `first` .. `first + n - 1` (one peer's), with
// droce's workload lines after the first, each QP connected as it goes.
Status exchange_peer_qps(const Options& o, Setup& st, engine::OobConnection& oob, std::uint32_t first, std::uint32_t n,
                         apps::PeerMac& peer_mac, const StepWaits& waits, PeerRun& run) {
  const bool server = st.server;
  const std::function<void()> poll = poll_worker0(st);
  for (std::uint32_t i = first; i < first + n; ++i) {
    engine::RcEndpoint& ep = server ? *st.responder(i).ep : *st.requester(i).ep;
    const std::uint32_t qpn = server ? st.responder(i).qpn : st.requester(i).qpn;
    engine::ConnInfo local, peer;
    local.qpn = qpn;
    local.psn = ep.qp(qpn)->attr().sq_psn;
    engine::gid_of(st.local, local.gid);
    Status s =
        server ? oob.server_read_peer(peer, waits.ms(), poll) : oob.exchange_as_client(local, peer, waits.ms(), poll);
    if (!s.ok()) return exchange_error(s.context("exchange for QP " + std::to_string(i - first) + ": "));
    // The peer's IP is its GID's, of our family (one endpoint speaks one IP version). Its MAC:
    // --peer-mac, or ARP / Neighbor Discovery (once: later QPs find it known). The peer polls
    // while it waits for us; resolutions go on until the connect timeout, so that lab loss (which
    // drops ARP and ND frames too) cannot end the run.
    engine::IpAddress pip;
    if (Status g = engine::peer_ip_of_gid(peer.gid, st.local, pip); !g.ok()) return g;
    if (i == first) run.peer_ip = engine::ip_text(pip);
    std::uint8_t mac[6];
    if (Status m = peer_mac.of_gid(peer.gid, waits.ms(), mac); !m.ok()) return exchange_error(m);
    if (i == first) {
      // The first QP's answer goes before the workload lines; the client connects only after the
      // server's recovery line, which follows the server's connect (announce_or_check_workload).
      if (server)
        if (Status a = oob.server_answer(local, waits.ms(), poll); !a.ok()) return exchange_error(a);
      if (Status w = announce_or_check_workload(o, oob, waits, poll, run); !w.ok()) return w;
      if (Status r = apply_recovery(o, st, first, n, run.recovery); !r.ok()) return r;
    }
    if (Status cs = ep.connect(qpn, engine::RemoteQp{engine::lab_address(pip, mac), peer.qpn, peer.psn}); !cs.ok())
      return cs;
    if (server && i == first)
      if (Status s = oob.send_line(recovery_line(run.recovery), waits.ms()); !s.ok()) return exchange_error(s);
    // As rc_pingpong: connect first, then answer and wait for "done".
    if (server && i != first)
      if (Status a = oob.server_answer(local, waits.ms(), poll); !a.ok()) return exchange_error(a);
  }
  return {};
}

// Then the responder's buffers (WRITE target, READ source) for each of the peer's QPs.
Status exchange_buffers(const Options& o, Setup& st, engine::OobConnection& oob, std::uint32_t first, std::uint32_t n,
                        std::uint32_t timeout_ms) {
  const std::function<void()> poll = poll_worker0(st);
  for (std::uint32_t i = first; i < first + n; ++i) {
    if (st.server) {
      const Responder& r = st.responder(i);
      const std::string mr =
          format_mr_line(MrLine{reinterpret_cast<std::uint64_t>(r.buf), r.mr.rkey, i < o.active() ? o.inflight : 1});
      if (Status s = oob.send_line(mr, timeout_ms); !s.ok()) return exchange_error(s);
      continue;
    }
    std::string line;
    if (Status s = engine::recv_line_stoppable(oob, line, timeout_ms, "the server's buffer keys", poll); !s.ok())
      return exchange_error(s);
    MrLine mr;
    if (Status s = parse_mr_line(line, mr); !s.ok())
      return Status::error(StatusCode::kPeer, "the server's buffer keys: " + s.message() + " (is it droce-gen?)");
    Requester& q = st.requester(i);
    q.remote_va = mr.vaddr;
    q.rkey = mr.rkey;
    q.remote_slots = mr.slots;
  }
  return {};
}

Status exchange_qps(const Options& o, Setup& st, Connection& c, const engine::PeerWaits& waits) {
  const bool server = st.server;
  const std::uint32_t timeout_ms = waits.bound_ms();  // every step but the wait for a client
  apps::PeerMac peer_mac(o.peer_mac, arp_endpoint(st), poll_worker0(st));
  peer_mac.announce();  // without --peer-mac only; it leaves with the first poll
  if (server) {
    std::uint16_t bound = 0;
    if (Status s = c.listener.listen(o.oob_port, bound); !s.ok()) return s;
    if (!o.quiet) std::printf("droce-gen: server waiting for a client on TCP port %u\n", bound);
    std::fflush(stdout);
    if (Status s = engine::accept_stoppable(c.listener, waits.for_client_ms, c.oob); !s.ok()) return exchange_error(s);
  } else if (Status s = engine::connect_stoppable(o.oob_host, o.oob_port, timeout_ms, c.oob); !s.ok()) {
    return exchange_error(s);
  }
  PeerRun run;
  run.limit_s = c.run_limit_s;
  run.warmup_s = c.run_warmup_s;
  if (Status s = exchange_peer_qps(o, st, c.oob, 0, o.qps, peer_mac, StepWaits{timeout_ms}, run); !s.ok()) return s;
  st.peer_ip = run.peer_ip;
  st.recovery = run.recovery;
  if (server) {
    c.run_limit_s = run.limit_s;
    c.run_warmup_s = run.warmup_s;
    c.run_from_client = run.from_client;
  }
  return exchange_buffers(o, st, c.oob, 0, o.qps, timeout_ms);
}

// --clients N: the server takes its clients one after the other, each through the whole exchange
// on its own QPs; once one has completed it (it then waits for its buffer keys, for the connect
// timeout at most), the others must complete theirs within half the connect timeout. Then every
// client gets its buffer keys at once, so they all start together. A client that fails its
// exchange, or does not come in time, is reported failed and runs nothing; the others run. No
// client at all is the run's error.
Status serve_clients(const Options& o, Setup& st, Connection& c, const engine::PeerWaits& waits) {
  using Clock = std::chrono::steady_clock;
  const std::uint32_t timeout_ms = waits.bound_ms();
  const std::uint32_t per = o.per_client_qps();
  apps::PeerMac peer_mac(o.peer_mac, arp_endpoint(st), poll_worker0(st));
  peer_mac.announce();
  std::uint16_t bound = 0;
  if (Status s = c.listener.listen(o.oob_port, bound); !s.ok()) return s;
  if (!o.quiet) std::printf("droce-gen: server waiting for %u clients on TCP port %u\n", o.clients, bound);
  std::fflush(stdout);
  c.clients.resize(o.clients);
  StepWaits steps{timeout_ms};  // gains its deadline once a client waits for its keys
  bool any = false;
  std::string last_failure;
  for (std::uint32_t k = 0; k < o.clients; ++k) {
    ClientLink& cl = c.clients[k];
    Status s = engine::accept_stoppable(c.listener, any ? steps.ms() : waits.for_client_ms, cl.oob, k + 1 < o.clients);
    if (!s.ok()) {
      if (engine::stop_requested() || !any) return exchange_error(s);
      char why[96];
      std::snprintf(why, sizeof(why), "it did not connect within %.1f s of the first client ready",
                    timeout_ms / 2000.0);
      for (std::uint32_t m = k; m < o.clients; ++m) c.clients[m].failed = why;
      std::fprintf(stderr, "droce-gen: client %u: %s\n", k, why);
      break;
    }
    PeerRun run;
    if (Status e = exchange_peer_qps(o, st, cl.oob, k * per, per, peer_mac, steps, run); !e.ok()) {
      if (engine::stop_requested()) return e;
      cl.failed = last_failure = e.message();
      cl.oob = engine::OobConnection{};  // closed: the client hears it at once
      std::fprintf(stderr, "droce-gen: client %u: %s\n", k, e.message().c_str());
      continue;
    }
    cl.peer_ip = run.peer_ip;
    cl.recovery = run.recovery;
    cl.run_limit_s = run.limit_s;
    cl.run_warmup_s = run.warmup_s;
    if (!any) {
      st.peer_ip = run.peer_ip;
      st.recovery = run.recovery;
      steps.until = Clock::now() + std::chrono::milliseconds(timeout_ms / 2);
    }
    any = true;
  }
  c.listener.close();
  if (!any)
    return Status::error(StatusCode::kPeer, "no client completed the exchange (the last: " + last_failure + ")");
  // The run lasts as long as the longest of theirs (a server's own --duration does not count).
  c.run_limit_s = c.run_warmup_s = 0;
  for (std::uint32_t k = 0; k < o.clients; ++k) {
    ClientLink& cl = c.clients[k];
    if (!cl.failed.empty()) continue;
    if (Status e = exchange_buffers(o, st, cl.oob, k * per, per, timeout_ms); !e.ok()) {
      if (engine::stop_requested()) return e;
      cl.failed = e.message();
      cl.oob = engine::OobConnection{};
      continue;
    }
    c.run_limit_s = std::max(c.run_limit_s, cl.run_limit_s);
    c.run_warmup_s = std::max(c.run_warmup_s, cl.run_warmup_s);
  }
  c.run_from_client = true;
  return {};
}

// The peer's QPN of the run's QP i in a static connection: the peer numbers its QPs like we do —
// one endpoint from --remote-qpn, or (several workers) worker w's range from --remote-qpn + w x
// its per-worker QP count, the run's QP i being entry i / workers of worker i % workers.
std::uint32_t static_remote_qpn(const Options& o, std::uint32_t i) {
  if (o.workers == 1) return o.remote_qpn + i;
  const std::uint32_t per = (o.qps + o.workers - 1) / o.workers;
  return o.remote_qpn + job_of(i, o.workers) * per + slot_in_job(i, o.workers);
}

Status connect_static(const Options& o, Setup& st, std::uint32_t wait_ms) {
  // --peer-ip's MAC: --peer-mac, or ARP (IPv4) or Neighbor Discovery (IPv6). Without an exchange
  // the peer may still be starting: resolutions go on until --connect-timeout.
  apps::PeerMac peer_mac(o.peer_mac, arp_endpoint(st), poll_worker0(st));
  peer_mac.announce();
  engine::IpAddress ip;
  std::uint8_t mac[6];
  (void)engine::parse_ip(st.peer_ip, ip);  // checked by the option parser: of our family
  if (Status m = ip.ipv6 ? peer_mac.of_ipv6(ip.bytes, wait_ms, mac) : peer_mac.of_ipv4(ip.bytes, wait_ms, mac); !m.ok())
    return m;
  const wire::L2L3Address peer_static = engine::lab_address(ip, mac);
  for (std::uint32_t i = 0; i < o.qps; ++i) {
    engine::RcEndpoint& ep = st.server ? *st.responder(i).ep : *st.requester(i).ep;
    const std::uint32_t qpn = st.server ? st.responder(i).qpn : st.requester(i).qpn;
    if (Status c = ep.connect(
            qpn, engine::RemoteQp{peer_static, static_remote_qpn(o, i), (o.remote_psn + 0x10000 * i) & 0xFFFFFF});
        !c.ok())
      return c;
  }
  return {};
}

}  // namespace

std::string config_line(const Options& o) {
  // A server of several clients: one client's share (its --qps), as each client says it.
  std::string l = "CONFIG op=" + std::string(op_name(o.op)) + " size=" + sizes_text(o.sizes) +
                  " mtu=" + std::to_string(o.mtu) + " qps=" + std::to_string(o.per_client_qps()) +
                  " inflight=" + std::to_string(o.inflight);
  // Only when some QPs are idle, so that a run with all QPs busy speaks the line as before.
  if (o.active() != o.qps) l += " active=" + std::to_string(o.active());
  return l;
}

Status connect_qps(const Options& o, Setup& st, Connection& c) {
  c.run_limit_s = o.count != 0 ? std::max(60.0, o.duration_s) : o.duration_s;
  c.run_warmup_s = o.warmup_s;
  // Loopback: both ends are ours and run as asked. A static connection has no exchange to agree
  // in: it keeps go-back-N (parse_options refuses --recovery sr with --oob-port 0).
  st.recovery = o.mode == Mode::kLoopback ? o.recovery : rc::Recovery::kGoBackN;
  if (o.mode == Mode::kLoopback) return connect_loopback(o, st);
  const engine::PeerWaits waits = connect_waits(o);
  Status s = o.oob_port == 0 ? connect_static(o, st, waits.bound_ms())
             : o.connect == Connect::kCm
                 ? cm_connect_qps(o, st, c.cm, c.run_limit_s, c.run_warmup_s, c.run_from_client, waits.bound_ms())
             : o.clients > 1 ? serve_clients(o, st, c, waits)
                             : exchange_qps(o, st, c, waits);
  if (s.ok() && st.group) apps::place_flows_and_say("droce-gen", *st.group);  // the port's RSS table, where it has one
  return s;
}

}  // namespace droce::gen
