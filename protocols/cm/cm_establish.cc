// CM connection establishment: the active side's REQ -> (MRA) -> REP -> RTU and the passive
// side's REQ -> (MRA) -> REP -> RTU, with REJ from either side (IBTA vol. 1 §12.9.6, §12.9.7).
#include <algorithm>
#include <cstring>

#include "protocols/cm/cm_connection.h"

namespace droce::cm {

CmOutput CmConnection::connect(const CmConnectParams& p, std::uint64_t now) {
  CmOutput o;
  if (role_ != CmRole::kActive || state_ != CmState::kIdle) {
    o.note = "connect: only an idle active connection connects";
    return o;
  }
  if (p.private_len > kReqPrivateBytes || (p.private_len != 0 && p.private_data == nullptr)) {
    o.note = "connect: private data longer than a REQ holds (92 bytes)";
    return o;
  }
  if (mtu_bytes(p.path_mtu) == 0 || p.path_mtu > cfg_.max_path_mtu) {
    o.note = "connect: path MTU code out of range";
    return o;
  }
  req_ = CmReq{};
  req_.local_comm_id = local_comm_id_;
  req_.service_id = p.service_id;
  req_.local_ca_guid = cfg_.ca_guid;
  req_.local_qpn = cfg_.qpn;
  req_.responder_resources = cfg_.responder_resources;
  req_.initiator_depth = cfg_.initiator_depth;
  req_.remote_cm_response_timeout = cfg_.cm_response_timeout;
  req_.transport_service_type = kTransportRc;
  req_.starting_psn = cfg_.start_psn;
  req_.local_cm_response_timeout = cfg_.cm_response_timeout;
  req_.retry_count = cfg_.retry_count;
  req_.pkey = cfg_.pkey;
  req_.path_mtu = p.path_mtu;
  req_.rnr_retry_count = cfg_.rnr_retry_count;
  req_.max_cm_retries = cfg_.max_cm_retries;
  req_.srq = cfg_.srq;
  req_.primary = p.primary;
  req_.primary.local_ack_timeout = cfg_.local_ack_timeout;
  // No alternate path: every byte of it zero. A LID there (CmPath's default 0xFFFF) tells Linux
  // there is one (cm_req_has_alt_path), and its zero GID then draws REJ "invalid alternate GID".
  req_.alternate = CmPath{};
  req_.alternate.local_lid = 0;
  req_.alternate.remote_lid = 0;
  if (p.private_len != 0) std::memcpy(req_.private_data, p.private_data, p.private_len);

  qp_ = CmQpParams{};
  qp_.local_qpn = cfg_.qpn;
  // A REQ's or REP's Starting PSN is the one its sender expects to receive first: the other side
  // sends from it (Linux: ib_send_cm_req keeps it as rq_psn, the passive side as sq_psn). Our own
  // send PSN comes with the REP.
  qp_.expected_psn = cfg_.start_psn & 0xFFFFFF;
  qp_.path_mtu = p.path_mtu;
  qp_.retry_count = cfg_.retry_count;
  qp_.local_ack_timeout = cfg_.local_ack_timeout;
  qp_.pkey = cfg_.pkey;

  // The transaction ID: our communication ID in the high half keeps it unique per connection.
  tid_ = std::uint64_t{local_comm_id_} << 32;
  send(o, req_, tid_, retransmit_);
  state_ = CmState::kReqSent;
  peer_response_timeout_ = cfg_.cm_response_timeout;
  max_retries_ = cfg_.max_cm_retries;
  retries_ = 0;
  deadline_ = now + wait_ns();
  return o;
}

CmOutput CmConnection::on_req(const CmMessage& m, std::uint64_t now) {
  CmOutput o;
  const auto& req = std::get<CmReq>(m.body);
  if (role_ != CmRole::kPassive) {
    o.note = "REQ: an active connection takes none";
    return o;
  }
  if (state_ != CmState::kIdle) {
    // §12.9.7: a repeated REQ (its REP or MRA was lost) gets the same answer again.
    if (req.local_comm_id != remote_comm_id_ || req.local_ca_guid != req_.local_ca_guid) {
      o.note = "REQ: another connection's";
      return o;
    }
    if ((state_ == CmState::kMraReqSent || state_ == CmState::kRepSent || state_ == CmState::kMraRepRcvd) &&
        have_reply_) {
      resend(o, reply_);
      o.note = "REQ repeated: answer sent again";
      return o;
    }
    o.note = state_ == CmState::kReqRcvd ? "REQ repeated: the consumer has not answered yet"
                                         : "REQ repeated after the REP was answered: ignored";
    return o;
  }
  req_ = req;
  remote_comm_id_ = req.local_comm_id;
  tid_ = m.header.tid;
  // The peer's timing fields are its choice: capped (cm_timing.h), so a forged REQ's 2.4-hour
  // timeouts cannot hold this slot for hours.
  peer_response_timeout_ = capped_peer_timeout(req.local_cm_response_timeout);
  max_retries_ = req.max_cm_retries > 15 ? 15 : req.max_cm_retries;
  // The REQ's own rules before the consumer sees it (§12.6.7 reasons).
  RejReason refuse{};
  bool refused = false;
  if (req.transport_service_type != kTransportRc) {
    refuse = RejReason::kInvalidTransportType;
    refused = true;
  } else if (mtu_bytes(req.path_mtu) == 0 || req.path_mtu > cfg_.max_path_mtu) {
    refuse = RejReason::kInvalidMtu;
    refused = true;
  }
  if (refused) {
    state_ = CmState::kReqRcvd;
    return reject(refuse, now);
  }
  state_ = CmState::kReqRcvd;
  // The consumer has until the active side gives up; then the CM's own timer frees the slot.
  deadline_ = now + cm_consumer_wait_ns(req.remote_cm_response_timeout, req.max_cm_retries, cfg_.packet_life_time);
  event(o, CmEventKind::kReqReceived);
  return o;
}

CmOutput CmConnection::send_mra(std::uint8_t service_timeout, std::uint64_t now) {
  CmOutput o;
  if (state_ != CmState::kReqRcvd) {
    o.note = "MRA: no REQ waiting";
    return o;
  }
  CmMra mra;
  mra.local_comm_id = local_comm_id_;
  mra.remote_comm_id = remote_comm_id_;
  mra.message = MraTarget::kReq;
  mra.service_timeout = service_timeout;
  send(o, mra, tid_, reply_);
  have_reply_ = true;
  state_ = CmState::kMraReqSent;
  // We owe the REP within service_timeout (the active side waits that long again per try).
  deadline_ = now + cm_consumer_wait_ns(service_timeout, req_.max_cm_retries, cfg_.packet_life_time);
  return o;
}

bool CmConnection::set_local(const CmLocalConfig& cfg) {
  if (role_ != CmRole::kPassive || (state_ != CmState::kReqRcvd && state_ != CmState::kMraReqSent)) return false;
  cfg_ = cfg;
  return true;
}

CmOutput CmConnection::accept(const std::uint8_t* private_data, std::uint32_t private_len, std::uint64_t now) {
  CmOutput o;
  if (state_ != CmState::kReqRcvd && state_ != CmState::kMraReqSent) {
    o.note = "accept: no REQ waiting";
    return o;
  }
  if (private_len > kRepPrivateBytes || (private_len != 0 && private_data == nullptr)) {
    o.note = "accept: private data longer than a REP holds (196 bytes)";
    return o;
  }
  qp_ = CmQpParams{};
  qp_.local_qpn = cfg_.qpn;
  qp_.remote_qpn = req_.local_qpn;
  // The REQ's Starting PSN is where we send from; the REP's (ours) is where the peer will.
  qp_.send_psn = req_.starting_psn;
  qp_.expected_psn = cfg_.start_psn & 0xFFFFFF;
  // Reads we serve are bounded by what the peer will issue, and the reads we issue by what the
  // peer serves (§12.6.5/§12.6.8: responder resources and initiator depth).
  qp_.max_dest_rd_atomic = std::min(cfg_.responder_resources, req_.initiator_depth);
  qp_.max_rd_atomic = std::min(cfg_.initiator_depth, req_.responder_resources);
  qp_.path_mtu = req_.path_mtu;
  qp_.retry_count = req_.retry_count;
  qp_.rnr_retry = req_.rnr_retry_count;
  qp_.local_ack_timeout = req_.primary.local_ack_timeout;
  qp_.pkey = req_.pkey;
  qp_.peer_srq = req_.srq;

  CmRep rep;
  rep.local_comm_id = local_comm_id_;
  rep.remote_comm_id = remote_comm_id_;
  rep.local_qpn = cfg_.qpn;
  rep.starting_psn = qp_.expected_psn;
  rep.responder_resources = qp_.max_dest_rd_atomic;
  rep.initiator_depth = qp_.max_rd_atomic;
  rep.target_ack_delay = cfg_.target_ack_delay;
  rep.rnr_retry_count = cfg_.rnr_retry_count;
  rep.srq = cfg_.srq;
  rep.local_ca_guid = cfg_.ca_guid;
  if (private_len != 0) std::memcpy(rep.private_data, private_data, private_len);
  send(o, rep, tid_, retransmit_);
  std::memcpy(reply_, retransmit_, kMadBytes);  // a repeated REQ gets the REP again
  have_reply_ = true;
  state_ = CmState::kRepSent;
  retries_ = 0;
  deadline_ = now + wait_ns();
  return o;
}

CmOutput CmConnection::reject(RejReason reason, std::uint64_t now) {
  CmOutput o;
  if (state_ != CmState::kReqRcvd && state_ != CmState::kMraReqSent) {
    o.note = "reject: no REQ waiting";
    return o;
  }
  CmRej rej;
  rej.local_comm_id = local_comm_id_;
  rej.remote_comm_id = remote_comm_id_;
  rej.message = RejTarget::kReq;
  rej.reason = static_cast<std::uint16_t>(reason);
  send(o, rej, tid_);
  event(o, CmEventKind::kRejected, rej.reason, false);
  state_ = CmState::kClosed;
  deadline_ = 0;
  (void)now;
  return o;
}

CmOutput CmConnection::on_rep(const CmMessage& m, std::uint64_t now) {
  CmOutput o;
  const auto& rep = std::get<CmRep>(m.body);
  if (role_ != CmRole::kActive || rep.remote_comm_id != local_comm_id_) {
    o.note = "REP: not for this connection";
    return o;
  }
  if (state_ == CmState::kEstablished || state_ == CmState::kDreqSent) {
    // §12.9.6: the RTU was lost and the peer repeats its REP: send the RTU again.
    if (rep.local_comm_id == remote_comm_id_ && have_reply_) {
      resend(o, reply_);
      o.note = "REP repeated: RTU sent again";
    } else {
      o.note = "REP: another connection's";
    }
    return o;
  }
  if (state_ != CmState::kReqSent && state_ != CmState::kMraReqRcvd) {
    o.note = "REP: no REQ outstanding";
    return o;
  }
  remote_comm_id_ = rep.local_comm_id;
  qp_.remote_qpn = rep.local_qpn;
  qp_.send_psn = rep.starting_psn;
  qp_.max_rd_atomic = std::min(cfg_.initiator_depth, rep.responder_resources);
  qp_.max_dest_rd_atomic = std::min(cfg_.responder_resources, rep.initiator_depth);
  qp_.rnr_retry = rep.rnr_retry_count;
  qp_.peer_srq = rep.srq;

  CmRtu rtu;
  rtu.local_comm_id = local_comm_id_;
  rtu.remote_comm_id = remote_comm_id_;
  send(o, rtu, tid_, reply_);
  have_reply_ = true;
  state_ = CmState::kEstablished;
  deadline_ = 0;
  event(o, CmEventKind::kEstablished);
  (void)now;
  return o;
}

CmOutput CmConnection::on_rtu(const CmMessage& m, std::uint64_t now) {
  CmOutput o;
  const auto& rtu = std::get<CmRtu>(m.body);
  if (role_ != CmRole::kPassive || !from_peer(rtu.remote_comm_id, rtu.local_comm_id)) {
    o.note = "RTU: not for this connection";
    return o;
  }
  if (state_ != CmState::kRepSent && state_ != CmState::kMraRepRcvd) {
    o.note = "RTU: no REP outstanding";
    return o;
  }
  return on_qp_traffic(now);
}

CmOutput CmConnection::on_qp_traffic(std::uint64_t now) {
  CmOutput o;
  if (state_ != CmState::kRepSent && state_ != CmState::kMraRepRcvd) {
    o.note = "no REP outstanding";
    return o;
  }
  state_ = CmState::kEstablished;
  deadline_ = 0;
  event(o, CmEventKind::kEstablished);
  (void)now;
  return o;
}

CmOutput CmConnection::on_mra(const CmMessage& m, std::uint64_t now) {
  CmOutput o;
  const auto& mra = std::get<CmMra>(m.body);
  if (!from_peer(mra.remote_comm_id, mra.local_comm_id)) {
    o.note = "MRA: not for this connection";
    return o;
  }
  // §12.6.6: the peer needs service_timeout longer; the wait restarts without spending a retry.
  if (state_ == CmState::kReqSent && mra.message == MraTarget::kReq) {
    state_ = CmState::kMraReqRcvd;
  } else if (state_ == CmState::kRepSent && mra.message == MraTarget::kRep) {
    state_ = CmState::kMraRepRcvd;
  } else {
    o.note = "MRA: for no message outstanding";
    return o;
  }
  deadline_ = now + cm_wait_ns(mra.service_timeout, cfg_.packet_life_time);
  return o;
}

CmOutput CmConnection::on_rej(const CmMessage& m) {
  CmOutput o;
  const auto& rej = std::get<CmRej>(m.body);
  // A REJ of our REQ may come before we know the peer's ID, so only the receiver's is matched.
  if (rej.remote_comm_id != local_comm_id_) {
    o.note = "REJ: not for this connection";
    return o;
  }
  switch (state_) {
    case CmState::kReqSent:
    case CmState::kMraReqRcvd:
    case CmState::kReqRcvd:
    case CmState::kMraReqSent:
    case CmState::kRepSent:
    case CmState::kMraRepRcvd:
      state_ = CmState::kClosed;
      deadline_ = 0;
      event(o, CmEventKind::kRejected, rej.reason, true);
      return o;
    default:
      o.note = "REJ: not establishing";
      return o;
  }
}

bool CmConnection::half_open() const {
  return role_ == CmRole::kPassive && (state_ == CmState::kReqRcvd || state_ == CmState::kMraReqSent ||
                                       state_ == CmState::kRepSent || state_ == CmState::kMraRepRcvd);
}

CmOutput CmConnection::abandon(std::uint64_t now) {
  CmOutput o;
  if (!half_open()) {
    o.note = "abandon: not a half-open passive connection";
    return o;
  }
  // As the timer's give-up: REJ (Timeout) to the peer, which, if real, simply sends its REQ again.
  send_timeout_rej(o);
  event(o, CmEventKind::kTimedOut, static_cast<std::uint16_t>(RejReason::kTimeout), false, true);
  state_ = CmState::kClosed;
  deadline_ = 0;
  (void)now;
  return o;
}

}  // namespace droce::cm
