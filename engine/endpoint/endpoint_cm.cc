// EndpointCm: QP1's frames in and out, the connection table, and the QP moves the CM's events ask for.
#include "engine/endpoint/endpoint_cm.h"

#include <rte_mbuf.h>
#include <rte_random.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "protocols/cm/rdma_cm_header.h"

namespace droce::engine {

const char* cm_endpoint_event_name(CmEndpointEventKind k) {
  switch (k) {
    case CmEndpointEventKind::kConnectRequest:
      return "connect_request";
    case CmEndpointEventKind::kEstablished:
      return "established";
    case CmEndpointEventKind::kRejected:
      return "rejected";
    case CmEndpointEventKind::kTimedOut:
      return "timed_out";
    case CmEndpointEventKind::kDisconnected:
      return "disconnected";
    case CmEndpointEventKind::kClosed:
      return "closed";
  }
  return "invalid";
}

struct EndpointCm::Conn {
  std::optional<cm::CmConnection> cm;  // empty: a free slot
  std::uint32_t id = 0;                // our communication ID
  std::uint32_t qpn = 0;               // the bound RC QP (0: none yet)
  wire::L2L3Address peer;
  std::uint16_t pkey = wire::kDefaultPkey;  // the REQ's (replies carry it)
  std::uint16_t port = 0, peer_port = 0;
  std::uint64_t opened_ns = 0;  // passive: when its REQ came (the oldest half-open one goes first)
  bool qp_connected = false;    // this connection moved the QP to RTS
  std::uint8_t rep_private[cm::kRepPrivateBytes] = {};                            // active: the REP's private data
  rc::Recovery (*recovery_at_rep)(const std::uint8_t*, std::uint32_t) = nullptr;  // CmConnectTo's
};

namespace {

// IB MTU code (§9.? table: 1 = 256 .. 5 = 4096) of a QP's path MTU in bytes.
std::uint8_t mtu_code(std::uint32_t bytes) {
  std::uint8_t code = 1;
  while (code < 5 && (128u << code) < bytes) ++code;
  return code;
}

// A CA GUID from the port's MAC (modified EUI-64, as Linux rxe derives its node GUID): the
// universal/local bit flipped, ff:fe in the middle.
std::uint64_t guid_from_mac(const std::uint8_t* mac) {
  const std::uint8_t b[8] = {static_cast<std::uint8_t>(mac[0] ^ 2), mac[1], mac[2], 0xFF, 0xFE, mac[3], mac[4], mac[5]};
  std::uint64_t g = 0;
  for (std::uint8_t x : b) g = (g << 8) | x;
  return g;
}

bool same_ip(const std::uint8_t* a, const std::uint8_t* b, bool ipv6) { return std::memcmp(a, b, ipv6 ? 16 : 4) == 0; }

}  // namespace

EndpointCm::EndpointCm(const EndpointConfig& cfg, ControlFrames& out, CmQpControl& qps)
    : cfg_(cfg), out_(out), qps_(&qps), conns_(new Conn[kMaxConnections]), events_(new CmEndpointEvent[kEventQueue]) {
  // Ephemeral source ports as Linux picks them (32768..60999), starting anywhere.
  next_src_port_ = static_cast<std::uint16_t>(32768 + rte_rand_max(28232));
}

EndpointCm::~EndpointCm() = default;

std::uint64_t EndpointCm::api_now_ns() const { return now_ns_ != 0 ? now_ns_ : qps_->clock_ns(rte_rdtsc()); }

std::uint32_t EndpointCm::index_of(std::uint32_t conn) const {
  if (conn == 0) return kMaxConnections;
  for (std::uint32_t i = 0; i < kMaxConnections; ++i)
    if (conns_[i].cm && conns_[i].id == conn) return i;
  return kMaxConnections;
}

EndpointCm::Conn* EndpointCm::find(std::uint32_t conn) {
  const std::uint32_t i = index_of(conn);
  return i == kMaxConnections ? nullptr : &conns_[i];
}

const EndpointCm::Conn* EndpointCm::find(std::uint32_t conn) const {
  const std::uint32_t i = index_of(conn);
  return i == kMaxConnections ? nullptr : &conns_[i];
}

EndpointCm::Conn* EndpointCm::find_by_qpn(std::uint32_t qpn) {
  for (std::uint32_t i = 0; i < kMaxConnections; ++i)
    if (conns_[i].cm && conns_[i].qpn == qpn) return &conns_[i];
  return nullptr;
}

EndpointCm::Conn* EndpointCm::free_slot() {
  for (std::uint32_t i = 0; i < kMaxConnections; ++i)
    if (!conns_[i].cm) return &conns_[i];
  return nullptr;
}

EndpointCm::Conn* EndpointCm::evict_half_open(std::uint64_t now_ns, std::uint64_t now_tsc) {
  Conn* oldest = nullptr;
  for (std::uint32_t i = 0; i < kMaxConnections; ++i) {
    Conn& c = conns_[i];
    if (c.cm && c.cm->half_open() && (oldest == nullptr || c.opened_ns < oldest->opened_ns)) oldest = &c;
  }
  if (oldest == nullptr) return nullptr;
  ++c_.half_open_evicted;
  // REJ (Timeout) to its peer and timed_out to the consumer (its QP, if bound, to ERROR); apply()
  // frees the slot.
  apply(*oldest, oldest->cm->abandon(now_ns), now_tsc);
  return oldest->cm ? nullptr : oldest;
}

// Random and unique among ours (a peer matches messages to connections by it; a reused one
// could take a stale peer's late message for a new connection's).
std::uint32_t EndpointCm::new_comm_id() const {
  for (int tries = 0; tries < 64; ++tries) {
    const auto id = static_cast<std::uint32_t>(rte_rand());
    if (id != 0 && find(id) == nullptr) return id;
  }
  return 0;  // 64 collisions in a 2^32 space: the random source is broken
}

std::uint32_t EndpointCm::active() const {
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < kMaxConnections; ++i) n += conns_[i].cm ? 1 : 0;
  return n;
}

cm::CmState EndpointCm::state(std::uint32_t conn) const {
  const Conn* c = find(conn);
  return c == nullptr ? cm::CmState::kClosed : c->cm->state();
}

cm::CmLocalConfig EndpointCm::local_config(std::uint32_t qpn, Status& err) const {
  cm::CmLocalConfig cfg;
  rc::QpAttr a;
  err = qps_->attr_in_init(qpn, a);
  if (err.code() == StatusCode::kNotFound) {
    err = Status::error(StatusCode::kNotFound, "CM: unknown QPN " + std::to_string(qpn));
    return cfg;
  }
  if (!err.ok()) {
    err = Status::error(StatusCode::kBadState, "CM: QP " + std::to_string(qpn) + " is not in INIT");
    return cfg;
  }
  cfg.qpn = qpn;
  cfg.start_psn = a.sq_psn;
  cfg.responder_resources = static_cast<std::uint8_t>(std::min<std::uint32_t>(a.max_dest_rd_atomic, 255));
  cfg.initiator_depth = static_cast<std::uint8_t>(std::min<std::uint32_t>(a.max_rd_atomic, 255));
  cfg.max_path_mtu = mtu_code(a.pmtu);
  cfg.retry_count = a.retry_cnt;
  cfg.rnr_retry_count = a.rnr_retry;
  cfg.local_ack_timeout = a.timeout;
  cfg.pkey = a.pkey;
  cfg.ca_guid = guid_from_mac(cfg_.addresses.local.mac);
  err = {};
  return cfg;
}

Status EndpointCm::listen(std::uint16_t port) {
  if (port == 0) return Status::error(StatusCode::kInvalidArgument, "cm_listen: port 0");
  if (!listener_.listen(cm::rdma_cm_tcp_service_id(port)))
    return Status::error(StatusCode::kNoMemory, "cm_listen: at most " + std::to_string(cm::CmListener::kMaxServices) +
                                                    " ports listened at once");
  return {};
}

Status EndpointCm::connect(std::uint32_t qpn, const CmConnectTo& to, std::uint32_t& conn) {
  if (to.port == 0) return Status::error(StatusCode::kInvalidArgument, "cm_connect: port 0");
  if (to.private_len > cm::kRdmaCmReqUserBytes || (to.private_len != 0 && to.private_data == nullptr))
    return Status::error(StatusCode::kInvalidArgument, "cm_connect: private data over 56 bytes");
  if (find_by_qpn(qpn) != nullptr)
    return Status::error(StatusCode::kBadState, "cm_connect: QP " + std::to_string(qpn) + " has a connection already");
  Status err;
  const cm::CmLocalConfig cfg = local_config(qpn, err);
  if (!err.ok()) return err;
  Conn* c = free_slot();
  if (c == nullptr) return Status::error(StatusCode::kNoMemory, "cm_connect: every CM connection slot is in use");
  const std::uint32_t id = new_comm_id();
  if (id == 0) return Status::error(StatusCode::kError, "cm_connect: no free communication ID");
  const bool v6 = cfg_.addresses.ipv6;
  cm::RdmaCmHeader h;
  h.ipv6 = v6;
  h.src_port = to.src_port;
  if (h.src_port == 0) {
    h.src_port = next_src_port_;
    next_src_port_ = next_src_port_ >= 60999 ? 32768 : static_cast<std::uint16_t>(next_src_port_ + 1);
  }
  std::memcpy(h.src_ip, cfg_.addresses.local.ip, 16);
  std::memcpy(h.dst_ip, to.peer.ip, 16);
  std::uint8_t priv[cm::kReqPrivateBytes] = {};
  const std::uint32_t priv_len = cm::write_rdma_cm_req_private(h, to.private_data, to.private_len, priv);
  cm::CmConnectParams p;
  p.service_id = cm::rdma_cm_tcp_service_id(to.port);
  p.path_mtu = cfg.max_path_mtu;
  // The path as Linux's rdma_cm fills it for RoCE: permissive LIDs, GIDs from the IPs, the hop
  // limit of a routed path (IPv6's default), the traffic class from our DSCP.
  cm::roce_gid_from_ip(cfg_.addresses.local.ip, v6, p.primary.local_gid);
  cm::roce_gid_from_ip(to.peer.ip, v6, p.primary.remote_gid);
  p.primary.hop_limit = 64;
  p.primary.traffic_class = static_cast<std::uint8_t>(cfg_.addresses.dscp << 2);
  p.primary.local_ack_timeout = cfg.local_ack_timeout;
  p.private_data = priv;
  p.private_len = priv_len;
  c->cm.emplace(cm::CmRole::kActive, cfg, id);
  c->id = id;
  c->qpn = qpn;
  c->peer = to.peer;
  c->pkey = cfg.pkey;
  c->port = to.port;
  c->peer_port = h.src_port;
  c->qp_connected = false;
  c->recovery_at_rep = to.recovery_at_rep;
  conn = id;
  const std::uint64_t tsc = rte_rdtsc();
  apply(*c, c->cm->connect(p, api_now_ns()), tsc);
  return {};
}

Status EndpointCm::accept(std::uint32_t conn, std::uint32_t qpn, const std::uint8_t* priv, std::uint32_t len) {
  Conn* c = find(conn);
  if (c == nullptr) return Status::error(StatusCode::kNotFound, "cm_accept: no connection " + std::to_string(conn));
  if (c->cm->role() != cm::CmRole::kPassive || c->qpn != 0 ||
      (c->cm->state() != cm::CmState::kReqRcvd && c->cm->state() != cm::CmState::kMraReqSent))
    return Status::error(StatusCode::kBadState,
                         "cm_accept: connection " + std::to_string(conn) + " has no REQ waiting");
  if (len > cm::kRepPrivateBytes || (len != 0 && priv == nullptr))
    return Status::error(StatusCode::kInvalidArgument, "cm_accept: private data over 196 bytes");
  if (find_by_qpn(qpn) != nullptr)
    return Status::error(StatusCode::kBadState, "cm_accept: QP " + std::to_string(qpn) + " has a connection already");
  Status err;
  const cm::CmLocalConfig cfg = local_config(qpn, err);
  if (!err.ok()) return err;
  // The REP is built on a trial copy: should the QP fail to move, the connection itself is still
  // in REQ received, where a REJ is legal, with no REP kept for its timer to resend.
  cm::CmConnection trial = *c->cm;
  (void)trial.set_local(cfg);
  const std::uint64_t tsc = rte_rdtsc();
  const cm::CmOutput o = trial.accept(priv, len, api_now_ns());
  if (o.mad_count == 0)
    return Status::error(StatusCode::kBadState, std::string("cm_accept: ") + (o.note ? o.note : "refused"));
  // rdma_accept's order: the QP is ready (RTR, then RTS) before the REP tells the peer to send.
  const cm::CmQpParams& q = trial.qp_params();
  if (Status st = qps_->connect_agreed(qpn, c->peer, q); !st.ok()) {
    // The REP stays unsent: the peer gets a REJ instead, and the slot goes.
    apply(*c, c->cm->reject(cm::RejReason::kNoQp, api_now_ns()), tsc);
    return st.context("cm_accept: ");
  }
  c->cm = std::move(trial);
  c->qpn = qpn;
  c->qp_connected = true;
  qps_->set_waits_for_traffic(qpn, true);
  apply(*c, o, tsc);
  return {};
}

Status EndpointCm::reject(std::uint32_t conn) {
  Conn* c = find(conn);
  if (c == nullptr) return Status::error(StatusCode::kNotFound, "cm_reject: no connection " + std::to_string(conn));
  if (c->cm->state() != cm::CmState::kReqRcvd && c->cm->state() != cm::CmState::kMraReqSent)
    return Status::error(StatusCode::kBadState,
                         "cm_reject: connection " + std::to_string(conn) + " has no REQ waiting");
  const std::uint64_t tsc = rte_rdtsc();
  apply(*c, c->cm->reject(cm::RejReason::kConsumerReject, api_now_ns()), tsc);
  return {};
}

Status EndpointCm::disconnect(std::uint32_t conn) {
  Conn* c = find(conn);
  if (c == nullptr) return Status::error(StatusCode::kNotFound, "cm_disconnect: no connection " + std::to_string(conn));
  if (c->cm->state() != cm::CmState::kEstablished)
    return Status::error(StatusCode::kBadState, "cm_disconnect: connection " + std::to_string(conn) + " is " +
                                                    std::string(cm::cm_state_name(c->cm->state())) +
                                                    ", not established");
  // rdma_disconnect's order: the QP goes to ERROR (its work completes flushed), then the DREQ.
  if (c->qp_connected) (void)qps_->set_qp_error(c->qpn);
  const std::uint64_t tsc = rte_rdtsc();
  apply(*c, c->cm->disconnect(api_now_ns()), tsc);
  return {};
}

bool EndpointCm::next_event(CmEndpointEvent& out) {
  if (ev_len_ == 0) return false;
  out = events_[ev_head_];
  ev_head_ = (ev_head_ + 1) % kEventQueue;
  --ev_len_;
  return true;
}

void EndpointCm::push_event(const CmEndpointEvent& e) {
  if (ev_len_ == kEventQueue) {
    ++c_.events_lost;
    return;
  }
  events_[(ev_head_ + ev_len_) % kEventQueue] = e;
  ++ev_len_;
}

void EndpointCm::on_qp_traffic(std::uint32_t qpn, std::uint64_t now_tsc) {
  qps_->set_waits_for_traffic(qpn, false);
  Conn* c = find_by_qpn(qpn);
  if (c == nullptr) {
    // A worker's QP whose connection is the port owner's CM's: tell it there.
    if (forward_ != nullptr) forward_->qp_traffic(qpn);
    return;
  }
  apply(*c, c->cm->on_qp_traffic(qps_->clock_ns(now_tsc)), now_tsc);
}

void EndpointCm::on_frame(const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_ns, std::uint64_t now_tsc) {
  now_ns_ = now_ns;
  wire::UdPacket p;
  wire::DropReason frame_reason = wire::DropReason::kNone;
  wire::UdRefusal r = wire::parse_ud_frame(frame, len, p, frame_reason, true);
  if (r == wire::UdRefusal::kNone) r = wire::ud_accept(p, wire::UdQpRules{});
  if (r != wire::UdRefusal::kNone) {
    ++c_.ud_refused[static_cast<std::size_t>(r)];
    return;
  }
  const bool v6 = cfg_.addresses.ipv6;
  // Only datagrams addressed to us: the GSI answers for this endpoint's address alone.
  if (p.ipv6 != v6 || !same_ip(p.dst_ip, cfg_.addresses.local.ip, v6)) {
    ++c_.wrong_peer;
    return;
  }
  cm::CmMessage m;
  if (const cm::MadRefusal mr = cm::decode_cm(frame + p.payload_offset, p.payload_len, m);
      mr != cm::MadRefusal::kNone) {
    ++c_.mad_refused[static_cast<std::size_t>(mr)];
    return;
  }
  ++c_.mads_received;
  wire::L2L3Address from;
  std::memcpy(from.mac, p.src_mac, 6);
  std::memcpy(from.ip, p.src_ip, 16);
  if (std::holds_alternative<cm::CmReq>(m.body)) {
    const auto& req = std::get<cm::CmReq>(m.body);
    // A repeated REQ (its REP or MRA was lost) belongs to the connection it made: the sender's
    // communication ID and CA GUID name it (§12.9.7).
    for (std::uint32_t i = 0; i < kMaxConnections; ++i) {
      Conn& c = conns_[i];
      if (c.cm && c.cm->role() == cm::CmRole::kPassive && c.cm->remote_comm_id() == req.local_comm_id &&
          c.cm->req().local_ca_guid == req.local_ca_guid) {
        if (!same_ip(c.peer.ip, from.ip, v6)) {
          ++c_.wrong_peer;
          return;
        }
        apply(c, c.cm->on_message(m, now_ns), now_tsc);
        return;
      }
    }
    std::uint8_t rej[cm::kMadBytes];
    wire::L2L3Address to = from;
    Conn* c = free_slot();
    const std::uint32_t id = new_comm_id();
    if (!listener_.take(m, id, rej)) {
      ++c_.rejects_sent;
      (void)send_mad(to, p.pkey, rej, now_tsc);
      return;
    }
    cm::RdmaCmHeader h;
    const bool header_ok =
        cm::parse_rdma_cm_header(req.private_data, cm::kReqPrivateBytes, h) == cm::RdmaCmHeaderRefusal::kNone &&
        h.ipv6 == v6 && same_ip(h.src_ip, from.ip, v6) && same_ip(h.dst_ip, cfg_.addresses.local.ip, v6);
    // A flood of REQs from forged addresses must not lock a real client out: a full table gives
    // up its oldest half-open connection (docs/hardening.md, "The CM under attack").
    if (header_ok && c == nullptr && id != 0) c = evict_half_open(now_ns, now_tsc);
    if (!header_ok || c == nullptr || id == 0) {
      if (!header_ok)
        ++c_.bad_rdma_cm_header;
      else
        ++c_.table_full;
      cm::encode_rej_for(m, id, header_ok ? cm::RejReason::kNoResources : cm::RejReason::kConsumerReject, rej);
      ++c_.rejects_sent;
      (void)send_mad(to, p.pkey, rej, now_tsc);
      return;
    }
    cm::CmLocalConfig cfg;
    cfg.ca_guid = guid_from_mac(cfg_.addresses.local.mac);
    c->cm.emplace(cm::CmRole::kPassive, cfg, id);
    c->id = id;
    c->qpn = 0;
    c->peer = from;
    c->pkey = p.pkey;
    (void)cm::rdma_cm_tcp_port(req.service_id, c->port);
    c->peer_port = h.src_port;
    c->opened_ns = now_ns;
    c->qp_connected = false;
    c->recovery_at_rep = nullptr;  // the slot may have held an active connection
    apply(*c, c->cm->on_message(m, now_ns), now_tsc);
    return;
  }
  Conn* c = find(cm::cm_receiver_comm_id(m.body));
  if (c == nullptr) {
    ++c_.unknown_connection;
    // A DREQ for a connection we no longer have still gets its DREP, or the peer resends it
    // until it gives up (§12.9.8.3; Linux answers the same way).
    if (std::holds_alternative<cm::CmDreq>(m.body)) {
      const auto& dreq = std::get<cm::CmDreq>(m.body);
      cm::CmDrep drep;
      drep.local_comm_id = dreq.remote_comm_id;
      drep.remote_comm_id = dreq.local_comm_id;
      std::uint8_t mad[cm::kMadBytes];
      cm::encode_cm(drep, m.header.tid, mad);
      (void)send_mad(from, p.pkey, mad, now_tsc);
    }
    return;
  }
  if (!same_ip(c->peer.ip, from.ip, v6)) {
    ++c_.wrong_peer;
    return;
  }
  // The REP's private data is the passive consumer's answer (rdma_accept's conn_param): the
  // established event hands it over.
  if (const auto* rep = std::get_if<cm::CmRep>(&m.body); rep != nullptr && c->cm->role() == cm::CmRole::kActive)
    std::memcpy(c->rep_private, rep->private_data, cm::kRepPrivateBytes);
  apply(*c, c->cm->on_message(m, now_ns), now_tsc);
}

void EndpointCm::apply(Conn& c, const cm::CmOutput& o, std::uint64_t now_tsc) {
  bool send_mads = true;
  for (std::uint32_t i = 0; i < o.event_count; ++i) {
    const cm::CmEvent& e = o.events[i];
    CmEndpointEvent ev;
    ev.conn = c.id;
    ev.qpn = c.qpn;
    ev.peer = c.peer;
    ev.port = c.port;
    ev.peer_port = c.peer_port;
    ev.reject_reason = e.reject_reason;
    ev.by_peer = e.by_peer;
    ev.timed_out = e.timed_out;
    ev.params = c.cm->qp_params();
    switch (e.kind) {
      case cm::CmEventKind::kReqReceived: {
        ev.kind = CmEndpointEventKind::kConnectRequest;
        const cm::CmReq& req = c.cm->req();
        ev.params.remote_qpn = req.local_qpn;
        ev.params.send_psn = req.starting_psn;  // the PSN the client expects: ours to send from
        ev.params.path_mtu = req.path_mtu;
        ev.params.max_rd_atomic = req.responder_resources;
        ev.params.max_dest_rd_atomic = req.initiator_depth;
        ev.params.retry_count = req.retry_count;
        ev.params.rnr_retry = req.rnr_retry_count;
        ev.params.local_ack_timeout = req.primary.local_ack_timeout;
        ev.params.pkey = req.pkey;
        ev.private_len = cm::kRdmaCmReqUserBytes;
        std::memcpy(ev.private_data, req.private_data + cm::kRdmaCmHeaderBytes, cm::kRdmaCmReqUserBytes);
        break;
      }
      case cm::CmEventKind::kEstablished:
        ev.kind = CmEndpointEventKind::kEstablished;
        if (c.cm->role() == cm::CmRole::kActive && !c.qp_connected) {
          // At the REP: RTR and RTS with what it says, before the RTU tells the peer to send.
          const cm::CmQpParams& q = c.cm->qp_params();
          Status st;
          if (c.recovery_at_rep != nullptr)
            st = qps_->set_qp_recovery(c.qpn, c.recovery_at_rep(c.rep_private, cm::kRepPrivateBytes));
          if (st.ok()) st = qps_->connect_agreed(c.qpn, c.peer, q);
          if (!st.ok()) {
            // The QP cannot take the connection (the consumer moved it): no RTU, so the peer's
            // REP times out into a REJ; the consumer hears it as a local reject.
            send_mads = false;
            ev.kind = CmEndpointEventKind::kRejected;
            ev.reject_reason = static_cast<std::uint16_t>(cm::RejReason::kNoQp);
            break;
          }
          c.qp_connected = true;
        }
        if (c.cm->role() == cm::CmRole::kActive) {
          ev.private_len = cm::kRepPrivateBytes;
          std::memcpy(ev.private_data, c.rep_private, cm::kRepPrivateBytes);
        }
        qps_->set_waits_for_traffic(c.qpn, false);
        break;
      case cm::CmEventKind::kRejected:
        ev.kind = CmEndpointEventKind::kRejected;
        if (c.qp_connected) (void)qps_->set_qp_error(c.qpn);
        break;
      case cm::CmEventKind::kTimedOut:
        ev.kind = CmEndpointEventKind::kTimedOut;
        if (c.qp_connected) (void)qps_->set_qp_error(c.qpn);
        break;
      case cm::CmEventKind::kDisconnected:
        ev.kind = CmEndpointEventKind::kDisconnected;
        if (c.qp_connected) (void)qps_->set_qp_error(c.qpn);
        break;
      case cm::CmEventKind::kClosed:
        ev.kind = CmEndpointEventKind::kClosed;
        break;
    }
    push_event(ev);
  }
  if (send_mads)
    for (std::uint32_t i = 0; i < o.mad_count; ++i) (void)send_mad(c.peer, c.pkey, o.mads[i], now_tsc);
  if (c.cm->state() == cm::CmState::kClosed) {
    if (!o.has_event(cm::CmEventKind::kClosed)) {
      CmEndpointEvent ev;
      ev.kind = CmEndpointEventKind::kClosed;
      ev.conn = c.id;
      ev.qpn = c.qpn;
      ev.peer = c.peer;
      push_event(ev);
    }
    if (c.qpn != 0) qps_->set_waits_for_traffic(c.qpn, false);
    c.cm.reset();
    c.id = 0;
    c.qpn = 0;
  }
  recompute_deadline();
}

bool EndpointCm::send_mad(const wire::L2L3Address& peer, std::uint16_t pkey, const std::uint8_t* mad,
                          std::uint64_t now_tsc) {
  const EndpointConfig& cfg = cfg_;
  wire::TemplateConfig tc;
  tc.local = cfg.addresses.local;
  tc.remote = peer;
  tc.ipv6 = cfg.addresses.ipv6;
  tc.vlan = cfg.addresses.vlan_id != 0;
  tc.vlan_id = cfg.addresses.vlan_id;
  tc.vlan_pcp = cfg.addresses.vlan_pcp;
  tc.dscp = cfg.addresses.dscp;
  tc.ecn = wire::kEcnNotEct;  // management traffic: nothing for DCQCN to react to
  tc.pkey = wire::pkey_valid(pkey) ? pkey : wire::kDefaultPkey;
  tc.dest_qpn = wire::kGsiQpn;
  tc.udp_src_port = wire::roce_udp_src_port(wire::kGsiQpn, wire::kGsiQpn);
  const wire::HeaderTemplate t = wire::HeaderTemplate::make(tc);
  wire::UdSendFields f;
  f.ip_id = ip_id_++;
  f.pkey = tc.pkey;
  const std::uint32_t need = wire::ud_frame_bytes(t, false, cm::kMadBytes);
  rte_mbuf* m = out_.alloc();
  auto* out =
      m == nullptr ? nullptr : reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(need)));
  const std::uint32_t n = out == nullptr ? 0 : wire::build_ud_send(t, f, mad, cm::kMadBytes, out, need);
  if (n == 0) {
    if (m != nullptr) rte_pktmbuf_free(m);
    ++c_.mad_tx_failures;
    return false;
  }
  if (!out_.send(m, now_tsc)) {
    ++c_.mad_tx_failures;
    return false;
  }
  ++c_.mads_sent;
  return true;
}

void EndpointCm::run_timers(std::uint64_t now_ns, std::uint64_t now_tsc) {
  for (std::uint32_t i = 0; i < kMaxConnections; ++i) {
    Conn& c = conns_[i];
    if (!c.cm) continue;
    const std::uint64_t d = c.cm->deadline();
    if (d != 0 && d <= now_ns) apply(c, c.cm->on_timer(now_ns), now_tsc);
  }
  recompute_deadline();
}

void EndpointCm::recompute_deadline() {
  std::uint64_t next = UINT64_MAX;
  for (std::uint32_t i = 0; i < kMaxConnections; ++i)
    if (conns_[i].cm && conns_[i].cm->deadline() != 0) next = std::min(next, conns_[i].cm->deadline());
  next_deadline_ = next;
}

}  // namespace droce::engine
