// droce-gen over RDMA-CM (see connect_cm.h; docs/droce-gen.md "Connecting over RDMA-CM").
#include "apps/droce-gen/connect_cm.h"

#include <droce/engine/core/stop_signal.h>
#include <droce/protocols/cm/cm_messages.h>
#include <rte_cycles.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/address_text.h"
#include "apps/common/peer_mac.h"
#include "apps/droce-gen/cm_private.h"
#include "apps/droce-gen/connect.h"
#include "apps/droce-gen/connect_waits.h"

namespace droce::gen {

using engine::CmEndpointEvent;
using engine::CmEndpointEventKind;
using engine::Status;

namespace {

using Clock = std::chrono::steady_clock;

// The port owner's endpoint (worker 0's; the one endpoint of a one-worker run): its CM holds every
// connection of the port, whichever worker owns the QP, and QP1's frames reach it from every
// queue (docs/cm.md, "One CM per port").
engine::RcEndpoint& cm_endpoint(Setup& st) { return st.server ? *st.shards[0].rsp_ep : *st.shards[0].req_ep; }
// While connecting, before the workers run on their lcores, this thread polls every worker in
// turn: another worker's queue may take QP1's frames (steered to the port owner in its poll), and
// the CM's moves of its QPs wait in its control ring for its poll.
void poll_once(Setup& st) {
  const std::uint64_t now = rte_rdtsc();
  for (auto& j : st.jobs) j->poll_only(now);
}

std::string peer_text(const Setup& st, const wire::L2L3Address& peer) {
  engine::IpAddress ip;
  ip.ipv6 = st.local.ipv6;
  std::memcpy(ip.bytes, peer.ip, ip.ipv6 ? 16 : 4);
  return engine::ip_text(ip);
}

// At the REP, before the client's QP leaves INIT: the recovery the server's answer names (a REP
// that is no droce-gen answer leaves go-back-N; the established event then refuses it by name).
rc::Recovery recovery_in_rep(const std::uint8_t* priv, std::uint32_t len) {
  CmRep rep;
  return decode_cm_rep(priv, len, rep).ok() && rep.sr ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN;
}

int qp_of(const CmLink& link, std::uint32_t conn) {
  for (std::size_t i = 0; i < link.conns.size(); ++i)
    if (link.conns[i] == conn && conn != 0) return static_cast<int>(i);
  return -1;
}

void note_down(CmLink& link, int i, bool by_peer) {
  if (i < 0 || link.down[static_cast<std::size_t>(i)]) return;
  link.down[static_cast<std::size_t>(i)] = true;
  ++link.down_count;
  link.peer_disconnected = link.peer_disconnected || by_peer;
}

// A few polls so that a REJ just queued leaves before the caller gives up and stops the port.
void flush(Setup& st) {
  for (int k = 0; k < 64; ++k) poll_once(st);
}

// Established is the port owner's word; the CM's moves of another worker's QP (RTR and RTS)
// wait in that worker's control ring until its poll. Every QP of the run is past them (RTS, or
// ERROR should the peer already have disconnected it: the run then says so) before any worker
// posts. Polls every worker until then, up to `deadline`.
Status wait_qps_moved(const Options& o, Setup& st, Clock::time_point deadline) {
  for (std::uint64_t iter = 0;; ++iter) {
    std::uint32_t moved = 0;
    for (std::uint32_t i = 0; i < o.qps; ++i) {
      engine::RcEndpoint& ep = st.server ? *st.responder(i).ep : *st.requester(i).ep;
      const rc::RcQp* qp = ep.qp(st.server ? st.responder(i).qpn : st.requester(i).qpn);
      if (qp != nullptr && (qp->state() == rc::QpState::kRts || qp->state() == rc::QpState::kError)) ++moved;
    }
    if (moved == o.qps) return {};
    if (engine::stop_requested()) return Status::error(StatusCode::kError, "interrupted during the RDMA-CM connection");
    if ((iter & 255) == 0 && Clock::now() > deadline)
      return Status::error(StatusCode::kTimeout, std::to_string(o.qps - moved) + " of " + std::to_string(o.qps) +
                                                     " QPs established over RDMA-CM were not moved to RTS by their "
                                                     "worker in time (its control ring's commands)");
    poll_once(st);
  }
}

struct ServerState {
  std::uint32_t accepted = 0;
  bool first = true;
};

// One REQ: accepted (true), or refused with a line saying why; `fatal` when the client is a
// droce-gen that cannot run with us (workload, recovery, QP count), so that both sides stop.
bool on_request(const Options& o, Setup& st, CmLink& link, ServerState& ss, const CmEndpointEvent& ev, double& limit_s,
                double& warmup_s, bool& from_client, Status& fatal) {
  engine::RcEndpoint& ep = cm_endpoint(st);
  const std::string who = peer_text(st, ev.peer) + " port " + std::to_string(ev.peer_port);
  // A stray REQ is told on one line and we keep waiting; a droce-gen that cannot run with us ends
  // the server (its error line is the caller's).
  auto refuse = [&](const std::string& why, bool is_fatal) {
    if (!is_fatal)
      std::fprintf(stderr, "droce-gen: refused the RDMA-CM connect request from %s: %s\n", who.c_str(), why.c_str());
    (void)ep.cm_reject(ev.conn);
    if (is_fatal)
      fatal = Status::error(StatusCode::kPeer, "refused the RDMA-CM connect request from " + who + ": " + why);
    return false;
  };
  CmReq req;
  if (Status s = decode_cm_req(ev.private_data, ev.private_len, req); !s.ok())
    return refuse(s.message() + " (not a droce-gen client)", false);
  const std::string ours = config_line(o);
  if (req.workload_digest != workload_digest(ours)) {
    char b[200];
    std::snprintf(b, sizeof(b), "the client runs op=%s mtu=%u qps=%u inflight=%u (workload digest %016" PRIx64 ")",
                  req.op <= static_cast<std::uint8_t>(Op::kCmpSwap) ? op_name(static_cast<Op>(req.op)) : "?",
                  static_cast<unsigned>(req.mtu), static_cast<unsigned>(req.qps), static_cast<unsigned>(req.inflight),
                  req.workload_digest);
    return refuse(
        std::string(b) + " but this server '" + ours.substr(7) + "': start both with the same workload options", true);
  }
  if (req.qp_index >= o.qps || link.conns[req.qp_index] != 0)
    return refuse("QP index " + std::to_string(req.qp_index) + " is out of range or connected already", true);
  // Selective repeat only when both ask: the client's QPs take the REP's answer before they leave
  // INIT (CmConnectTo::recovery_at_rep), so an SR client falls back to go-back-N with us, as over TCP.
  const bool sr_here = o.recovery == rc::Recovery::kSelectiveRepeat;
  const rc::Recovery agreed = req.propose_sr && sr_here ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN;
  if (ss.first) {
    st.recovery = agreed;
    // Each QP through its own worker's endpoint (the workers do not run yet: this thread may).
    for (std::uint32_t i = 0; agreed != o.recovery && i < o.qps; ++i)
      if (Status s = st.responder(i).ep->set_recovery(st.responder(i).qpn, agreed); !s.ok()) {
        fatal = s;
        return false;
      }
    constexpr std::uint64_t kYearMs = 365ull * 86400 * 1000;
    if (req.run_limit_ms > kYearMs || req.warmup_ms > kYearMs) return refuse("a run length over a year", true);
    limit_s = static_cast<double>(req.run_limit_ms) / 1000;
    warmup_s = static_cast<double>(req.warmup_ms) / 1000;
    from_client = true;
    st.peer_ip = peer_text(st, ev.peer);
    ss.first = false;
  } else if (agreed != st.recovery) {
    return refuse("QP " + std::to_string(req.qp_index) + " asks another recovery than the first", true);
  }
  const Responder& r = st.responder(req.qp_index);
  std::uint8_t rep[kCmRepBytes];
  encode_cm_rep(CmRep{agreed == rc::Recovery::kSelectiveRepeat, req.qp_index, reinterpret_cast<std::uint64_t>(r.buf),
                      r.mr.rkey, req.qp_index < o.active() ? o.inflight : 1},
                rep);
  if (Status s = ep.cm_accept(ev.conn, r.qpn, rep, kCmRepBytes); !s.ok()) {
    fatal = s;
    return false;
  }
  link.conns[req.qp_index] = ev.conn;
  ++ss.accepted;
  return true;
}

Status connect_server(const Options& o, Setup& st, CmLink& link, double& limit_s, double& warmup_s, bool& from_client,
                      const engine::PeerWaits& waits) {
  // --connect-timeout 0: no deadline until the client's first REQ; from it, the bound for the rest.
  Clock::time_point deadline =
      waits.forever() ? Clock::time_point::max() : Clock::now() + std::chrono::milliseconds(waits.for_client_ms);
  engine::RcEndpoint& ep = cm_endpoint(st);
  if (Status s = ep.cm_listen(o.oob_port); !s.ok()) return s;
  if (!o.quiet) std::printf("droce-gen: server waiting for a client on RDMA-CM port %u\n", o.oob_port);
  std::fflush(stdout);
  ServerState ss;
  std::uint32_t established = 0;
  for (std::uint64_t iter = 0; established < o.qps; ++iter) {
    if (engine::stop_requested()) return Status::error(StatusCode::kError, "interrupted during the RDMA-CM connection");
    if (waits.forever() && deadline == Clock::time_point::max() && ss.accepted != 0)
      deadline = Clock::now() + std::chrono::milliseconds(waits.bound_ms());
    if ((iter & 255) == 0 && Clock::now() > deadline)
      return Status::error(StatusCode::kTimeout,
                           "no droce-gen client connected its " + std::to_string(o.qps) + " QPs over RDMA-CM within " +
                               std::to_string(static_cast<int>(waits.bound_s)) + " s (" + std::to_string(ss.accepted) +
                               " accepted, " + std::to_string(established) + " established)");
    poll_once(st);
    CmEndpointEvent ev;
    for (int k = 0; k < 64 && ep.cm_next_event(ev); ++k) {
      const int i = qp_of(link, ev.conn);
      switch (ev.kind) {
        case CmEndpointEventKind::kConnectRequest: {
          Status fatal;
          if (!on_request(o, st, link, ss, ev, limit_s, warmup_s, from_client, fatal) && !fatal.ok()) {
            flush(st);
            return fatal;
          }
          break;
        }
        case CmEndpointEventKind::kEstablished:
          if (i >= 0) ++established;
          break;
        case CmEndpointEventKind::kRejected:
        case CmEndpointEventKind::kTimedOut:
        case CmEndpointEventKind::kDisconnected:
          if (i >= 0)
            return Status::error(StatusCode::kPeer, "the client's connection of QP " + std::to_string(i) +
                                                        " ended while connecting (" +
                                                        engine::cm_endpoint_event_name(ev.kind) + ")");
          break;
        case CmEndpointEventKind::kClosed:
          break;
      }
    }
  }
  return wait_qps_moved(o, st, deadline);
}

std::string reject_text(const Setup& st, const Options& o, std::uint32_t i, const CmEndpointEvent& ev) {
  const std::string at = st.peer_ip + " port " + std::to_string(o.oob_port);
  if (ev.kind == CmEndpointEventKind::kTimedOut)
    return "no answer from " + at + " to the RDMA-CM REQ of QP " + std::to_string(i) +
           " (timed out after the CM's retries)";
  if (ev.reject_reason == static_cast<std::uint16_t>(cm::RejReason::kInvalidServiceId))
    return "nobody listens on RDMA-CM port " + std::to_string(o.oob_port) + " at " + st.peer_ip +
           " (REJ: invalid service ID): is the server started, on this --oob-port?";
  const bool consumer = ev.reject_reason == static_cast<std::uint16_t>(cm::RejReason::kConsumerReject);
  return "the server at " + at + " rejected the connection of QP " + std::to_string(i) + " (REJ reason " +
         std::to_string(ev.reject_reason) + (consumer ? ", consumer reject" : "") +
         "): its log says why (workload, recovery, or no droce-gen)";
}

Status connect_client(const Options& o, Setup& st, CmLink& link, double run_limit_s, double run_warmup_s,
                      Clock::time_point deadline, std::uint32_t timeout_ms) {
  engine::RcEndpoint& ep = cm_endpoint(st);
  engine::IpAddress ip;
  if (!engine::parse_ip(st.peer_ip, ip))
    return Status::error(StatusCode::kInvalidArgument, "--connect cm needs the server's RoCE address (--peer-ip)");
  apps::PeerMac peer_mac(o.peer_mac, ep, [&st] { poll_once(st); });
  peer_mac.announce();
  std::uint8_t mac[6];
  if (Status m = ip.ipv6 ? peer_mac.of_ipv6(ip.bytes, timeout_ms, mac) : peer_mac.of_ipv4(ip.bytes, timeout_ms, mac);
      !m.ok())
    return m;
  // The QPs leave INIT at the REP with the recovery its answer names: our proposal, or go-back-N
  // from a server that does not run selective repeat (recovery_in_rep). The first answer sets the
  // run's; every QP's must agree with it.
  st.recovery = rc::Recovery::kGoBackN;
  CmReq req;
  req.propose_sr = o.recovery == rc::Recovery::kSelectiveRepeat;
  req.qps = static_cast<std::uint16_t>(o.qps);
  req.active = static_cast<std::uint16_t>(o.active());
  req.op = static_cast<std::uint8_t>(o.op);
  req.mtu = static_cast<std::uint16_t>(o.mtu);
  req.inflight = o.inflight;
  req.workload_digest = workload_digest(config_line(o));
  req.run_limit_ms = static_cast<std::uint64_t>(run_limit_s * 1000);
  req.warmup_ms = static_cast<std::uint64_t>(run_warmup_s * 1000);
  for (std::uint32_t i = 0; i < o.qps; ++i) {
    req.qp_index = static_cast<std::uint16_t>(i);
    std::uint8_t priv[kCmReqBytes];
    encode_cm_req(req, priv);
    engine::CmConnectTo to;
    to.peer = engine::lab_address(ip, mac);
    to.port = o.oob_port;
    to.private_data = priv;
    to.private_len = kCmReqBytes;
    to.recovery_at_rep = recovery_in_rep;
    if (Status s = ep.cm_connect(st.requester(i).qpn, to, link.conns[i]); !s.ok()) return s;
  }
  std::uint32_t established = 0;
  for (std::uint64_t iter = 0; established < o.qps; ++iter) {
    if (engine::stop_requested()) return Status::error(StatusCode::kError, "interrupted during the RDMA-CM connection");
    if ((iter & 255) == 0 && Clock::now() > deadline)
      return Status::error(StatusCode::kTimeout, "the RDMA-CM connection to " + st.peer_ip + " port " +
                                                     std::to_string(o.oob_port) + " did not complete within " +
                                                     std::to_string(static_cast<int>(timeout_ms / 1000)) + " s (" +
                                                     std::to_string(established) + " of " + std::to_string(o.qps) +
                                                     " QPs established)");
    poll_once(st);
    CmEndpointEvent ev;
    for (int k = 0; k < 64 && ep.cm_next_event(ev); ++k) {
      const int i = qp_of(link, ev.conn);
      if (i < 0) continue;
      const auto qi = static_cast<std::uint32_t>(i);
      switch (ev.kind) {
        case CmEndpointEventKind::kEstablished: {
          CmRep rep;
          if (Status s = decode_cm_rep(ev.private_data, ev.private_len, rep); !s.ok())
            return Status::error(s.code(), "the server's answer for QP " + std::to_string(i) + ": " + s.message() +
                                               " (is it droce-gen?)");
          if (rep.sr && o.recovery != rc::Recovery::kSelectiveRepeat)
            return Status::error(StatusCode::kPeer, "the server's answer for QP " + std::to_string(i) +
                                                        " names selective repeat, which this client did not ask for");
          const rc::Recovery theirs = rep.sr ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN;
          if (established == 0) st.recovery = theirs;
          if (rep.qp_index != i || theirs != st.recovery)
            return Status::error(StatusCode::kPeer, "the server's answer for QP " + std::to_string(i) + " names QP " +
                                                        std::to_string(rep.qp_index) + " and recovery " +
                                                        (rep.sr ? "sr" : "gbn") +
                                                        " (the first QP's: " + recovery_name(st.recovery) + ")");
          Requester& q = st.requester(qi);
          q.remote_va = rep.vaddr;
          q.rkey = rep.rkey;
          q.remote_slots = rep.slots;
          ++established;
          break;
        }
        case CmEndpointEventKind::kRejected:
        case CmEndpointEventKind::kTimedOut:
          return Status::error(ev.kind == CmEndpointEventKind::kTimedOut ? StatusCode::kTimeout : StatusCode::kPeer,
                               reject_text(st, o, qi, ev));
        case CmEndpointEventKind::kDisconnected:
          return Status::error(StatusCode::kPeer,
                               "the server disconnected QP " + std::to_string(i) + " while connecting");
        default:
          break;
      }
    }
  }
  return wait_qps_moved(o, st, deadline);
}

}  // namespace

Status cm_connect_qps(const Options& o, Setup& st, CmLink& link, double& run_limit_s, double& run_warmup_s,
                      bool& from_client, std::uint32_t timeout_ms) {
  // timeout_ms is the bound; a server given --connect-timeout 0 waits for the first REQ forever.
  const engine::PeerWaits waits = connect_waits(o);
  link.on = true;
  link.conns.assign(o.qps, 0);
  link.down.assign(o.qps, false);
  link.down_count = 0;
  if (st.server) return connect_server(o, st, link, run_limit_s, run_warmup_s, from_client, waits);
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  return connect_client(o, st, link, run_limit_s, run_warmup_s, deadline, timeout_ms);
}

bool cm_peer_ended(Setup& st, CmLink& link) {
  engine::RcEndpoint& ep = cm_endpoint(st);
  CmEndpointEvent ev;
  for (int k = 0; k < 64 && ep.cm_next_event(ev); ++k)
    if (ev.kind == CmEndpointEventKind::kDisconnected) note_down(link, qp_of(link, ev.conn), ev.by_peer);
  return link.down_count == link.conns.size();
}

std::uint32_t cm_disconnect_all(Setup& st, CmLink& link, const std::function<void()>& poll, std::uint32_t wait_ms) {
  engine::RcEndpoint& ep = cm_endpoint(st);
  // The peer's own DREQs first (they may have ended the run): those need none of ours.
  (void)cm_peer_ended(st, link);
  for (std::size_t i = 0; i < link.conns.size(); ++i) {
    if (link.down[i] || link.conns[i] == 0) continue;
    // One whose RTU we never saw (and no traffic stood for it) cannot be disconnected: count it down.
    if (!ep.cm_disconnect(link.conns[i]).ok()) note_down(link, static_cast<int>(i), false);
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  while (link.down_count < link.conns.size() && Clock::now() < deadline) {
    poll();
    (void)cm_peer_ended(st, link);
  }
  return static_cast<std::uint32_t>(link.conns.size()) - link.down_count;
}

}  // namespace droce::gen
