// RcQp lifecycle, posting, dispatch of received packets, timers and the completion queue.
#include "protocols/rc/rc_qp.h"

#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::psn_add;

RcQp::RcQp(const QpAttr& attr, const MrTable& mrs) : attr_(attr), mrs_(mrs) {
  sq_.ring.resize(attr.sq_depth == 0 ? 1 : attr.sq_depth);
  rq_.ring.resize(attr.rq_depth == 0 ? 1 : attr.rq_depth);
  // Every WQE produces at most one completion, so the CQ can never overflow.
  cq_.resize(sq_.ring.size() + rq_.ring.size());
  // Sized from the responder resources (see RecvQueue::resp); an invalid count is refused by
  // modify() before the QP can receive, and clamped here so it cannot size the allocation.
  rq_.resp.resize(resp_ring_size(attr.max_dest_rd_atomic < kMaxRdAtomic ? attr.max_dest_rd_atomic : kMaxRdAtomic));
}

Status RcQp::modify(QpState to, const QpAttr* attr) {
  if (!transition_allowed(state_, to)) return Status::fail(StatusCode::kBadState, "invalid QP state transition");
  if (attr != nullptr) {
    if (std::string e = attr->validate(); !e.empty()) return Status::error(StatusCode::kInvalidArgument, std::move(e));
    if (attr->sq_depth != attr_.sq_depth || attr->rq_depth != attr_.rq_depth)
      return Status::fail(StatusCode::kInvalidArgument, "sq_depth/rq_depth: fixed at creation");
    if (attr->max_dest_rd_atomic != attr_.max_dest_rd_atomic) {
      // The response queue is sized from it: it may change only while nothing can be queued.
      if (state_ != QpState::kReset && state_ != QpState::kInit)
        return Status::fail(StatusCode::kBadState, "max_dest_rd_atomic: fixed once the QP is past INIT");
      rq_.resp.assign(resp_ring_size(attr->max_dest_rd_atomic), RespItem{});  // control path
      drop_responses();
    }
    attr_ = *attr;
  } else if (to == QpState::kRtr || to == QpState::kRts) {
    if (std::string e = attr_.validate(); !e.empty()) return Status::error(StatusCode::kInvalidArgument, std::move(e));
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
    sq_.rd_outstanding = 0;
    cq_head_ = cq_tail_ = 0;
  }
  if (to == QpState::kRtr) {
    rq_.epsn = attr_.rq_psn;
    rq_.msn = 0;
    rq_.nak_sent = false;
    rq_.in_progress = 0;
  }
  if (to == QpState::kRts && state_ == QpState::kRtr) {
    sq_.una = sq_.nxt = sq_.high = sq_.post_psn = attr_.sq_psn;
    sq_.retry_left = attr_.retry_cnt;
    sq_.rnr_left = attr_.rnr_retry;
    sq_.timer_deadline = 0;
    sq_.rnr_until = 0;
    sq_.since_ack_req = 0;
    sq_.rd_outstanding = 0;
    sq_.seq_nak_acted = false;
  }
  state_ = to;
  ring_doorbell();
  return {};
}

Status RcQp::post_send(const SendWr& wr) {
  if (state_ != QpState::kRts) return Status::fail(StatusCode::kBadState, "post_send: QP is not in RTS");
  if (sq_.tail - sq_.head >= sq_.ring.size()) return Status::fail(StatusCode::kQueueFull, "post_send: send queue full");
  // The largest message of any operation (IBTA §9.4: DMA length, 2^31 bytes): a longer SEND or
  // WRITE could not be described to the responder, which rejects it (rxe: check_length).
  if (wr.sge.length > kMaxMessageBytes)
    return Status::fail(StatusCode::kInvalidArgument, "post_send: message longer than 2^31 bytes");
  if (wr.opcode == WrOpcode::kRead && attr_.max_rd_atomic == 0)
    return Status::fail(StatusCode::kInvalidArgument, "post_send: READ on a QP with max_rd_atomic 0 (no READ credits)");
  SendWqe w;
  w.wr = wr;
  const std::uint32_t need = wr.opcode == WrOpcode::kRead ? static_cast<std::uint32_t>(kAccessLocalWrite) : 0u;
  if (wr.sge.length != 0) {
    if (mrs_.check_local(wr.sge.lkey, wr.sge.addr, wr.sge.length, need, &w.local) != MrCheck::kOk)
      return Status::fail(StatusCode::kBadKey, "post_send: local buffer not in a registered region (lkey, bounds or access)");
  }
  const std::uint32_t len = wr.sge.length;
  w.npkts = len == 0 ? 1 : (len + attr_.pmtu - 1) / attr_.pmtu;
  w.first_psn = sq_.post_psn;
  sq_.post_psn = psn_add(sq_.post_psn, w.npkts);
  sq_.ring[sq_.tail % sq_.ring.size()] = w;
  ++sq_.tail;
  ring_doorbell();
  return {};
}

Status RcQp::post_recv(const RecvWr& wr) {
  if (state_ == QpState::kReset || state_ == QpState::kError)
    return Status::fail(StatusCode::kBadState, "post_recv: QP is not initialised");
  if (rq_.tail - rq_.head >= rq_.ring.size()) return Status::fail(StatusCode::kQueueFull, "post_recv: receive queue full");
  RecvWqe r;
  r.wr = wr;
  // A credit for a message view carries no buffer (see RecvMode::kMessageViews).
  if (wr.sge.length != 0 && attr_.recv_mode == RecvMode::kPostedBuffers &&
      mrs_.check_local(wr.sge.lkey, wr.sge.addr, wr.sge.length, kAccessLocalWrite, &r.local) != MrCheck::kOk)
    return Status::fail(StatusCode::kBadKey, "post_recv: buffer not in a registered, locally writable region");
  rq_.ring[rq_.tail % rq_.ring.size()] = r;
  ++rq_.tail;
  ring_doorbell();
  return {};
}

bool RcQp::next_packet(std::uint64_t now_ns, TxDescriptor& out) {
  // Responses queued before an error (the NAK that caused it) still leave.
  if (state_ != QpState::kReset && next_response(out)) return true;
  if (state_ != QpState::kRts) return false;
  return next_request(now_ns, out);
}

bool RcQp::next_packet(std::uint64_t now_ns, TxDescriptor& out, bool data_allowed) {
  if (data_allowed) return next_packet(now_ns, out);
  if (state_ == QpState::kReset || rq_.resp_head == rq_.resp_tail) return false;
  if (rq_.resp[rq_.resp_head % rq_.resp.size()].is_read) return false;  // READ responses are data
  return next_response(out);
}

RxDelivery RcQp::on_packet(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns) {
  if (state_ != QpState::kRtr && state_ != QpState::kRts) return RxDelivery::kNone;  // counted by the caller
  const auto& op = wire::opcode_info(pi.opcode);
  if (op.is_request) {
    return on_request(pi, payload);
  } else if (state_ == QpState::kRts &&
             (op.kind == wire::OpKind::kAck || op.kind == wire::OpKind::kReadResponse)) {
    on_response(pi, payload, now_ns);
  }
  return RxDelivery::kNone;
}

std::uint64_t RcQp::next_timer_ns() const {
  std::uint64_t t = UINT64_MAX;
  if (sq_.timer_deadline != 0) t = sq_.timer_deadline;
  if (sq_.rnr_until != 0 && sq_.rnr_until < t) t = sq_.rnr_until;
  return t;
}

void RcQp::push_completion(const Completion& c) {
  if (cq_tail_ - cq_head_ >= cq_.size()) return;  // cannot happen: one entry per WQE at most
  Completion& slot = cq_[cq_tail_ % cq_.size()];
  slot = c;
  slot.qp_num = attr_.qpn;
  ++cq_tail_;
}

bool RcQp::poll_cq(Completion& out) {
  if (cq_head_ == cq_tail_) return false;
  out = cq_[cq_head_ % cq_.size()];
  ++cq_head_;
  return true;
}

void RcQp::enter_error(bool keep_responses) {
  if (state_ == QpState::kError) return;
  state_ = QpState::kError;
  // §10.3.1: outstanding and new work completes with "flushed in error".
  for (; sq_.head != sq_.tail; ++sq_.head) complete_send(sq_.ring[sq_.head % sq_.ring.size()], WcStatus::kWrFlushErr);
  sq_.cur = sq_.head;
  sq_.rd_outstanding = 0;
  sq_.timer_deadline = 0;
  for (; rq_.head != rq_.tail; ++rq_.head) {
    Completion c;
    c.wr_id = rq_.ring[rq_.head % rq_.ring.size()].wr.wr_id;
    c.status = WcStatus::kWrFlushErr;
    c.opcode = WcOpcode::kRecv;
    c.is_recv = true;
    push_completion(c);
  }
  if (!keep_responses) drop_responses();
}

}  // namespace droce::rc
