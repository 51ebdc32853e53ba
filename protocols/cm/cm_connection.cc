// CM connection: dispatch, timers, disconnection (DREQ/DREP, TimeWait) and the helpers both
// sides share. Establishment (REQ/MRA/REP/RTU/REJ) is in cm_establish.cc.
#include "protocols/cm/cm_connection.h"

#include <cstring>

namespace droce::cm {

CmConnection::CmConnection(CmRole role, const CmLocalConfig& cfg, std::uint32_t local_comm_id)
    : role_(role), cfg_(cfg), local_comm_id_(local_comm_id) {}

void CmConnection::send(CmOutput& o, const CmBody& body, std::uint64_t tid, std::uint8_t* keep) {
  if (o.mad_count >= CmOutput::kMaxMads) return;  // never more than two per step (see callers)
  std::uint8_t* mad = o.mads[o.mad_count++];
  encode_cm(body, tid, mad);
  if (keep != nullptr) std::memcpy(keep, mad, kMadBytes);
}

void CmConnection::resend(CmOutput& o, const std::uint8_t* mad) {
  if (o.mad_count >= CmOutput::kMaxMads) return;
  std::memcpy(o.mads[o.mad_count++], mad, kMadBytes);
}

void CmConnection::event(CmOutput& o, CmEventKind k, std::uint16_t reason, bool by_peer, bool timed_out) {
  if (o.event_count >= CmOutput::kMaxEvents) return;
  o.events[o.event_count++] = CmEvent{k, reason, by_peer, timed_out};
}

std::uint64_t CmConnection::wait_ns() const { return cm_wait_ns(peer_response_timeout_, cfg_.packet_life_time); }

// A message for this connection names our communication ID as its receiver's and, once we know
// the peer's, the peer's as its sender's (§12.9.2: messages are matched by communication IDs).
bool CmConnection::from_peer(std::uint32_t receiver, std::uint32_t sender) const {
  return receiver == local_comm_id_ && (remote_comm_id_ == 0 || sender == remote_comm_id_);
}

// §12.6.7: a REJ with reason Timeout carries this side's CA GUID as its ARI.
void CmConnection::send_timeout_rej(CmOutput& o) {
  CmRej rej;
  rej.local_comm_id = local_comm_id_;
  rej.remote_comm_id = remote_comm_id_;
  rej.message = RejTarget::kNoMessage;
  rej.reason = static_cast<std::uint16_t>(RejReason::kTimeout);
  rej.ari_length = 8;
  for (int i = 0; i < 8; ++i) rej.ari[i] = static_cast<std::uint8_t>(cfg_.ca_guid >> (56 - 8 * i));
  send(o, rej, tid_);
}

// TimeWait (§12.9.8, disconnection): long enough for packets of the old connection to drain from the
// fabric before the QPN is reused: the packet lifetime both ways plus the local ACK timeout.
void CmConnection::enter_timewait(std::uint64_t now) {
  state_ = CmState::kTimeWait;
  retries_ = 0;
  deadline_ = now + 2 * cm_time_ns(cfg_.packet_life_time) + cm_time_ns(qp_.local_ack_timeout);
}

CmOutput CmConnection::on_message(const CmMessage& m, std::uint64_t now) {
  switch (static_cast<CmAttr>(m.header.attr_id)) {
    case CmAttr::kReq:
      return on_req(m, now);
    case CmAttr::kMra:
      return on_mra(m, now);
    case CmAttr::kRej:
      return on_rej(m);
    case CmAttr::kRep:
      return on_rep(m, now);
    case CmAttr::kRtu:
      return on_rtu(m, now);
    case CmAttr::kDreq:
      return on_dreq(m, now);
    case CmAttr::kDrep:
      return on_drep(m, now);
    default:
      break;
  }
  CmOutput o;
  o.note = "not a CM message this connection handles";
  return o;
}

CmOutput CmConnection::disconnect(std::uint64_t now) {
  CmOutput o;
  if (state_ != CmState::kEstablished) {
    o.note = "disconnect: not established";
    return o;
  }
  CmDreq dreq;
  dreq.local_comm_id = local_comm_id_;
  dreq.remote_comm_id = remote_comm_id_;
  dreq.remote_qpn = qp_.remote_qpn;
  // A fresh transaction: the DREQ is a new request, not part of the REQ's exchange. Our own
  // communication ID in the high half keeps it unique among this side's requests.
  dreq_tid_ = (std::uint64_t{local_comm_id_} << 32) | 1;
  send(o, dreq, dreq_tid_, retransmit_);
  state_ = CmState::kDreqSent;
  retries_ = 0;
  deadline_ = now + wait_ns();
  return o;
}

CmOutput CmConnection::on_dreq(const CmMessage& m, std::uint64_t now) {
  CmOutput o;
  const auto& dreq = std::get<CmDreq>(m.body);
  // §12.6.10: the DREQ names the receiver's QPN; one naming another QP is not for us.
  if (!from_peer(dreq.remote_comm_id, dreq.local_comm_id) || remote_comm_id_ == 0 || dreq.remote_qpn != cfg_.qpn) {
    o.note = "DREQ: not for this connection";
    return o;
  }
  CmDrep drep;
  drep.local_comm_id = local_comm_id_;
  drep.remote_comm_id = remote_comm_id_;
  switch (state_) {
    case CmState::kRepSent:
    case CmState::kMraRepRcvd:  // the RTU was lost, but the peer was established: disconnect
    case CmState::kEstablished:
    case CmState::kDreqSent:  // both sides asked at once: each answers the other
      dreq_tid_ = m.header.tid;
      send(o, drep, dreq_tid_, reply_);
      have_reply_ = true;
      event(o, CmEventKind::kDisconnected, 0, true);
      enter_timewait(now);
      return o;
    case CmState::kTimeWait:  // our DREP was lost: the same answer again
      send(o, drep, m.header.tid);
      o.note = "DREQ repeated: DREP sent again";
      return o;
    default:
      o.note = "DREQ: not connected";
      return o;
  }
}

CmOutput CmConnection::on_drep(const CmMessage& m, std::uint64_t now) {
  CmOutput o;
  const auto& drep = std::get<CmDrep>(m.body);
  if (state_ != CmState::kDreqSent || !from_peer(drep.remote_comm_id, drep.local_comm_id)) {
    o.note = "DREP: no DREQ outstanding for this connection";
    return o;
  }
  event(o, CmEventKind::kDisconnected);
  enter_timewait(now);
  return o;
}

CmOutput CmConnection::on_timer(std::uint64_t now) {
  CmOutput o;
  if (deadline_ == 0 || now < deadline_) {
    o.note = "timer: not due";
    return o;
  }
  switch (state_) {
    case CmState::kReqSent:
    case CmState::kMraReqRcvd:
    case CmState::kRepSent:
    case CmState::kMraRepRcvd:
    case CmState::kDreqSent:
      if (retries_ < max_retries_) {
        ++retries_;
        resend(o, retransmit_);
        // After an MRA the peer is back to its normal response time for the resent message.
        if (state_ == CmState::kMraReqRcvd) state_ = CmState::kReqSent;
        if (state_ == CmState::kMraRepRcvd) state_ = CmState::kRepSent;
        deadline_ = now + wait_ns();
        return o;
      }
      if (state_ == CmState::kDreqSent) {  // §12.9.8: give up on the DREP, disconnect anyway
        event(o, CmEventKind::kDisconnected, 0, false, true);
        enter_timewait(now);
        return o;
      }
      send_timeout_rej(o);
      event(o, CmEventKind::kTimedOut, static_cast<std::uint16_t>(RejReason::kTimeout), false, true);
      state_ = CmState::kClosed;
      deadline_ = 0;
      return o;
    case CmState::kReqRcvd:
    case CmState::kMraReqSent:
      // The consumer never answered and the active side has given up: free the slot.
      send_timeout_rej(o);
      event(o, CmEventKind::kTimedOut, static_cast<std::uint16_t>(RejReason::kTimeout), false, true);
      state_ = CmState::kClosed;
      deadline_ = 0;
      return o;
    case CmState::kTimeWait:
      state_ = CmState::kClosed;
      deadline_ = 0;
      event(o, CmEventKind::kClosed);
      return o;
    default:
      deadline_ = 0;
      o.note = "timer: nothing waits";
      return o;
  }
}

}  // namespace droce::cm
