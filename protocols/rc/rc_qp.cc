// RcQp lifecycle, posting, dispatch of received packets, timers and the completion queue.
#include "protocols/rc/rc_qp.h"

#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::psn_add;

namespace {

// The smallest power of two >= n (n <= 2^31): rings of that size are indexed with a mask.
std::uint64_t ring_size_for(std::uint64_t n) {
  std::uint64_t size = 1;
  while (size < n) size <<= 1;
  return size;
}

// A queue depth as created: 0 means one entry; an unvalidated depth beyond validate()'s 65536 is
// clamped here so it cannot size the allocation (such a QP never reaches RTR anyway).
std::uint32_t queue_capacity(std::uint32_t depth) { return depth == 0 ? 1 : depth > 65536 ? 65536 : depth; }

}  // namespace

RcQp::RcQp(const QpAttr& attr, MrTable& mrs) : attr_(attr), mrs_(mrs) {
  sq_cap_ = queue_capacity(attr.sq_depth);
  rq_cap_ = queue_capacity(attr.rq_depth);
  sq_.ring.resize(ring_size_for(sq_cap_));
  rq_.ring.resize(ring_size_for(rq_cap_));
  sq_mask_ = sq_.ring.size() - 1;
  rq_mask_ = rq_.ring.size() - 1;
  // Every WQE produces at most one completion, so the CQ can never overflow.
  cq_.resize(ring_size_for(static_cast<std::uint64_t>(sq_cap_) + rq_cap_));
  cq_mask_ = cq_.size() - 1;
  // Sized from the responder resources (see RecvQueue::resp); an invalid count is refused by
  // modify() before the QP can receive, and clamped here so it cannot size the allocation.
  size_resp_ring(attr.max_dest_rd_atomic < kMaxRdAtomic ? attr.max_dest_rd_atomic : kMaxRdAtomic);
  set_ack_timeout_from_attr();
  set_recovery_from_attr();
}

// Control path: the response ring holds resp_ring_size() items (its bound, RecvQueue::resp) in
// a power-of-two ring.
void RcQp::size_resp_ring(std::uint32_t max_dest_rd_atomic) {
  resp_cap_ = static_cast<std::uint32_t>(resp_ring_size(max_dest_rd_atomic));
  rq_.resp.assign(ring_size_for(resp_cap_), RespItem{});
  resp_mask_ = rq_.resp.size() - 1;
  rq_.atomic_results.assign(max_dest_rd_atomic == 0 ? 1 : max_dest_rd_atomic, AtomicResult{});
  rq_.atomic_next = 0;
}

Status RcQp::modify(QpState to, const QpAttr* attr) {
  if (!transition_allowed(state_, to)) return Status::fail(StatusCode::kBadState, "invalid QP state transition");
  if (attr != nullptr) {
    if (Status s = attr->validate(); !s.ok()) return s;
    if (attr->sq_depth != attr_.sq_depth || attr->rq_depth != attr_.rq_depth)
      return Status::fail(StatusCode::kInvalidArgument, "sq_depth/rq_depth: fixed at creation");
    if (attr->recovery != attr_.recovery && state_ != QpState::kReset && state_ != QpState::kInit)
      return Status::fail(StatusCode::kBadState, "recovery: fixed once the QP is past INIT");
    if (attr->recovery == Recovery::kSelectiveRepeat && srq_ != nullptr)
      return Status::fail(StatusCode::kInvalidArgument, "recovery: selective repeat takes no shared receive queue");
    if (attr->max_dest_rd_atomic != attr_.max_dest_rd_atomic) {
      // The response queue is sized from it: it may change only while nothing can be queued.
      if (state_ != QpState::kReset && state_ != QpState::kInit)
        return Status::fail(StatusCode::kBadState, "max_dest_rd_atomic: fixed once the QP is past INIT");
      size_resp_ring(attr->max_dest_rd_atomic);
      drop_responses();
    }
    attr_ = *attr;
    set_ack_timeout_from_attr();
    set_recovery_from_attr();
  } else if (to == QpState::kRtr || to == QpState::kRts) {
    if (Status s = attr_.validate(); !s.ok()) return s;
  }
  if (to == QpState::kError) {
    enter_error();
    ring_doorbell();
    return {};
  }
  if (to == QpState::kReset) {
    sq_.head = sq_.cur = sq_.tail = 0;
    rq_.head = rq_.tail = 0;
    drop_responses();
    clear_atomic_results();
    sq_.rd_outstanding = 0;
    cq_head_ = cq_tail_ = 0;
  }
  if (to == QpState::kRtr) {
    clear_atomic_results();  // results are of this connection's PSNs only
    rq_.epsn = attr_.rq_psn;
    rq_.msn = 0;
    rq_.nak_sent = false;
    rq_.in_progress = 0;
    rq_.rsn_base = rq_.head;
    rq_.sr_held = 0;
    if (sr_) sr_rx_.assign(wire::kSrWindow, SrRxSlot{});
  }
  if (to == QpState::kRts && state_ == QpState::kRtr) {
    sq_.una = sq_.nxt = sq_.high = sq_.post_psn = attr_.sq_psn;
    sq_.retry_left = attr_.retry_cnt;
    sq_.rnr_left = attr_.rnr_retry;
    disarm_loss_timers();
    sq_.rnr_until = kNever;
    sq_.rto_backoff = 0;
    sq_.probes = 0;
    sq_.pto_backoff = 0;
    sq_.needless_probes = 0;
    sq_.rtt_timing = sq_.probe_open = sq_.resend_open = sq_.probing = sq_.ackreq_valid = false;
    rtt_.reset();  // a new connection: its round trip is still to be measured
    update_rto();
    sq_.since_ack_req = 0;
    sq_.rd_outstanding = 0;
    sq_.seq_nak_acted = false;
    sq_.reissues_wanted = 0;
    sq_.acked_psn = psn_add(attr_.sq_psn, -1);
    sq_.next_rsn = 0;
    sq_.sr_lost = false;
    sq_.sr_sends = 0;
    if (sr_) {
      sr_tx_.assign(wire::kSrWindow, 0);
      sr_tx_seq_.assign(wire::kSrWindow, 0);
    }
  }
  state_ = to;
  ring_doorbell();
  return {};
}

Status RcQp::post_send(const SendWr& wr) {
  if (state_ != QpState::kRts) return Status::fail(StatusCode::kBadState, "post_send: QP is not in RTS");
  if (sq_.tail - sq_.head >= sq_cap_) return Status::fail(StatusCode::kQueueFull, "post_send: send queue full");
  // The largest message of any operation (IBTA §9.4: DMA length, 2^31 bytes): a longer SEND or
  // WRITE could not be described to the responder, which rejects it (rxe: check_length).
  if (wr.sge.length > kMaxMessageBytes)
    return Status::fail(StatusCode::kInvalidArgument, "post_send: message longer than 2^31 bytes");
  // Selective repeat holds all of a READ's PSNs in flight at once (docs/selective-repeat.md): a
  // READ may span at most sr_bdp_pkts packets.
  if (wr.opcode == WrOpcode::kRead && sr_ && wr.sge.length > static_cast<std::uint64_t>(attr_.sr_bdp_pkts) * attr_.pmtu)
    return Status::fail(StatusCode::kInvalidArgument,
                        "post_send: a READ over selective repeat spans at most sr_bdp_pkts packets");
  if (is_read_or_atomic(wr.opcode) && attr_.max_rd_atomic == 0)
    return Status::fail(StatusCode::kInvalidArgument,
                        "post_send: READ or atomic on a QP with max_rd_atomic 0 (no READ/atomic credits)");
  if (is_atomic(wr.opcode)) {
    // §9.4.5: an atomic operates on 8 bytes at an 8-byte aligned address; verbs asks for an
    // 8-byte local buffer for the original value. Refused here, at once, rather than by the
    // responder's NAK, which would end the connection.
    if (wr.sge.length != kAtomicBytes)
      return Status::fail(StatusCode::kInvalidArgument, "post_send: atomic local buffer must be exactly 8 bytes");
    if ((wr.remote_addr & (kAtomicBytes - 1)) != 0)
      return Status::fail(StatusCode::kInvalidArgument, "post_send: atomic remote_addr must be 8-byte aligned");
  }
  const std::uint32_t need = is_read_or_atomic(wr.opcode) ? static_cast<std::uint32_t>(kAccessLocalWrite) : 0u;
  std::uint8_t* local = nullptr;
  if (wr.sge.length != 0) {
    if (mrs_.check_local(wr.sge.lkey, wr.sge.addr, wr.sge.length, need, &local, attr_.pd) != MrCheck::kOk)
      return Status::fail(StatusCode::kBadKey,
                          "post_send: local buffer not in a registered region of the QP's domain (lkey, bounds, "
                          "access or domain)");
  }
  // Filled in place, every field (the slot is reused).
  SendWqe& w = sq_at(sq_.tail);
  w.wr = wr;
  w.local = local;
  const std::uint32_t len = wr.sge.length;
  w.npkts = len <= attr_.pmtu ? 1 : (len + attr_.pmtu - 1) / attr_.pmtu;
  w.first_psn = sq_.post_psn;
  w.read_pkts_done = 0;
  w.read_req_start = 0;
  w.read_reissued = false;
  w.reissue_wanted = false;
  w.holds_rd_credit = false;
  // Selective repeat names the receive a message consumes (docs/selective-repeat.md: RSN).
  w.rsn = sq_.next_rsn;
  if (wr.opcode == WrOpcode::kSend || wr.opcode == WrOpcode::kSendWithImm || wr.opcode == WrOpcode::kSendWithInv ||
      wr.opcode == WrOpcode::kWriteWithImm)
    ++sq_.next_rsn;
  sq_.post_psn = psn_add(sq_.post_psn, w.npkts);
  ++sq_.tail;
  ring_doorbell();
  return {};
}

Status RcQp::attach_srq(SharedRecvQueue* srq) {
  if (state_ != QpState::kReset && state_ != QpState::kInit)
    return Status::fail(StatusCode::kBadState, "attach_srq: only before the QP can receive (RESET or INIT)");
  if (srq != nullptr && sr_)
    return Status::fail(StatusCode::kInvalidArgument,
                        "attach_srq: a selective-repeat QP takes no shared receive queue");
  if (srq != nullptr && attr_.recv_mode != RecvMode::kPostedBuffers)
    return Status::fail(StatusCode::kInvalidArgument, "attach_srq: a message-view QP takes no shared receive queue");
  // The SRQ's WQEs name regions of its domain, which the QP places into: one domain for both.
  if (srq != nullptr && srq->pd() != attr_.pd)
    return Status::fail(StatusCode::kInvalidArgument,
                        "attach_srq: the shared receive queue is of another protection domain than the QP");
  if (srq != nullptr && rq_.head != rq_.tail)
    return Status::fail(StatusCode::kBadState, "attach_srq: the QP already has receives posted");
  srq_ = srq;
  return {};
}

Status RcQp::post_recv(const RecvWr& wr) {
  if (srq_ != nullptr)
    return Status::fail(StatusCode::kInvalidArgument,
                        "post_recv: the QP takes its receives from a shared receive queue");
  if (state_ == QpState::kReset || state_ == QpState::kError)
    return Status::fail(StatusCode::kBadState, "post_recv: QP is not initialised");
  if (rq_.tail - rq_.head >= rq_cap_) return Status::fail(StatusCode::kQueueFull, "post_recv: receive queue full");
  std::uint8_t* local = nullptr;
  // A credit for a message view carries no buffer (see RecvMode::kMessageViews).
  if (wr.sge.length != 0 && attr_.recv_mode == RecvMode::kPostedBuffers &&
      mrs_.check_local(wr.sge.lkey, wr.sge.addr, wr.sge.length, kAccessLocalWrite, &local, attr_.pd) != MrCheck::kOk)
    return Status::fail(StatusCode::kBadKey,
                        "post_recv: buffer not in a registered, locally writable region of the QP's domain");
  RecvWqe& r = rq_at(rq_.tail);
  r.wr = wr;
  r.local = local;
  ++rq_.tail;
  ring_doorbell();
  return {};
}

bool RcQp::next_packet(std::uint64_t now_ns, TxDescriptor& out) { return next_packet(now_ns, out, true); }

bool RcQp::next_packet(std::uint64_t now_ns, TxDescriptor& out, bool data_allowed) {
  // Responses queued before an error (the NAK that caused it) still leave.
  if (rq_.resp_head != rq_.resp_tail && state_ != QpState::kReset) {
    // READ responses are data; ACKs, NAKs and atomic acknowledgements are not.
    if (data_allowed || !resp_at(rq_.resp_head).is_read) return next_response(out);
    return false;
  }
  if (!data_allowed || state_ != QpState::kRts) return false;
  return sr_ ? next_request_sr(now_ns, out) : next_request(now_ns, out);
}

void RcQp::enter_error(bool keep_responses) {
  if (state_ == QpState::kError) return;
  state_ = QpState::kError;
  // §10.3.1: outstanding and new work completes with "flushed in error".
  for (; sq_.head != sq_.tail; ++sq_.head) complete_send(sq_at(sq_.head), WcStatus::kWrFlushErr);
  sq_.cur = sq_.head;
  sq_.rd_outstanding = 0;
  sq_.reissues_wanted = 0;
  disarm_loss_timers();
  for (; rq_.head != rq_.tail; ++rq_.head)
    push_completion(rq_at(rq_.head).wr.wr_id, WcStatus::kWrFlushErr, WcOpcode::kRecv, 0, /*is_recv=*/true);
  if (!keep_responses) drop_responses();
}

}  // namespace droce::rc
