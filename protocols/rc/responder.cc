// Responder (IBTA §9.7.5.1): ePSN checks, duplicates (C9-105), RNR, R_Key/length/sequence NAKs,
// data placement, ACK coalescing (ACK only when AckReq is set) and READ responses (atomics:
// responder_atomic.cc).
#include <cstring>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/ib_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::NakCode;
using wire::OpKind;
using wire::OpPosition;
using wire::psn_add;
using wire::psn_diff;

namespace {

// Length rules for SEND and WRITE request packets (§9.7.5.1.6; rxe's check_length): FIRST and
// MIDDLE carry exactly one PMTU, LAST 1..PMTU, ONLY at most PMTU. A packet breaking them is an
// invalid request, NAKed at once: a peer whose PMTU is larger than ours learns it from the NAK
// instead of retrying into its retry limit. The endpoint hands requests of any length here.
bool payload_length_valid(const wire::OpcodeInfo& op, std::uint32_t payload_len, std::uint32_t pmtu) {
  if (op.kind != OpKind::kSend && op.kind != OpKind::kWrite) return true;
  switch (op.position) {
    case OpPosition::kFirst:
    case OpPosition::kMiddle:
      return payload_len == pmtu;
    case OpPosition::kLast:
      return payload_len != 0 && payload_len <= pmtu;
    default:
      return payload_len <= pmtu;
  }
}

}  // namespace

// Coalescing (§9.7.5.1.2: an ACK acknowledges every request up to its PSN, a NAK every request
// before its PSN): an ACK/NAK still queued behind no READ response is superseded by the newer one
// instead of queuing a second, so a burst of small messages received in one poll costs the peer
// one ACK frame, and the queue never holds two ACK/NAK items side by side (its bound, RecvQueue).
// The one exception keeps the stronger item: a NAK still queued already acknowledges the PSN
// before it, which is all a re-ACK of a duplicate (ePSN - 1) would say. Inline: every message
// asking for an ACK comes here, and only this file does.
inline bool RcQp::queue_ack(std::uint32_t psn, std::uint8_t syndrome) { return queue_ack(psn, syndrome, rq_.msn); }

// The same, for an ACK whose MSN is not the current one: a run's coalesced ACK carries the MSN
// its last AckReq packet saw (on_request_run), as the per-packet ACK of that packet would have.
inline bool RcQp::queue_ack(std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn) {
  if (rq_.resp_tail != rq_.resp_head) {
    RespItem& last = resp_at(rq_.resp_tail - 1);
    if (!last.holds_resource_kind()) {
      ++c_.acks_coalesced;
      const bool last_is_nak = (last.syndrome & wire::kAethTypeMask) != wire::kAethTypeAck;
      const bool is_ack = (syndrome & wire::kAethTypeMask) == wire::kAethTypeAck;
      if (is_ack && last_is_nak && wire::psn_lt(psn, last.psn)) return true;
      last.psn = psn;
      last.syndrome = syndrome;
      last.msn = msn;
      return true;
    }
  }
  if (rq_.resp_tail - rq_.resp_head >= resp_cap_) return false;  // cannot happen (RecvQueue::resp)
  RespItem& it = resp_at(rq_.resp_tail);
  it = RespItem{};
  it.psn = psn;
  it.syndrome = syndrome;
  it.msn = msn;
  ++rq_.resp_tail;
  return true;
}

bool RcQp::queue_ack_out_of_line(std::uint32_t psn, std::uint8_t syndrome) { return queue_ack(psn, syndrome); }

// Responder resources (IBTA §9.4.4, max_dest_rd_atomic): a READ's resource is in use until its
// last response has left. A requester within its initiator depth cannot have completed a READ
// whose responses were not all sent, so a new READ beyond the resources breaks the contract:
// responder class C error "too many RDMA READ or ATOMIC requests", NAK invalid request (rxe:
// RESPST_ERR_TOO_MANY_RDMA_ATM_REQ; with 0 resources every READ gets it).
bool RcQp::rd_resource_available() const { return rq_.reads_queued < attr_.max_dest_rd_atomic; }

void RcQp::queue_read(const wire::PacketInfo& pi, const std::uint8_t* src, bool replay) {
  if (rq_.resp_tail - rq_.resp_head >= resp_cap_) return;  // cannot happen (RecvQueue::resp)
  RespItem& it = resp_at(rq_.resp_tail);
  it = RespItem{};
  it.is_read = true;
  it.replay = replay;
  it.psn = pi.psn;
  it.data = src;
  it.len = pi.reth_dma_len;
  it.npkts = it.len == 0 ? 1 : (it.len + attr_.pmtu - 1) / attr_.pmtu;
  if (!replay) ++rq_.msn;  // C9-148: a READ counts as a message when it executes
  it.msn = rq_.msn;
  ++rq_.resp_tail;
  ++(replay ? rq_.replays_queued : rq_.reads_queued);
}

// The queued READ response run holding `psn`, if one has not all left yet.
RcQp::RespItem* RcQp::queued_read(std::uint32_t psn) {
  for (std::uint64_t i = rq_.resp_head; i != rq_.resp_tail; ++i) {
    RespItem& it = resp_at(i);
    const std::int32_t off = psn_diff(psn, it.psn);
    if (it.is_read && off >= 0 && static_cast<std::uint32_t>(off) < it.npkts) return &it;
  }
  return nullptr;
}

// Duplicate READ (§9.7.5.1.1): answered again from the responder's memory, re-read through the
// request's own RETH as rxe does. A duplicate of a READ whose responses are still queued resumes
// that run from the PSN asked for instead of queuing a second copy; otherwise a replay joins the
// queue, at most max_dest_rd_atomic of them (beyond that it is dropped, class D: the requester's
// timer asks again once the queue has drained).
void RcQp::replay_read(const wire::PacketInfo& pi) {
  if (RespItem* it = queued_read(pi.psn)) {
    const auto off = static_cast<std::uint32_t>(psn_diff(pi.psn, it->psn));
    if (off < it->sent) it->sent = off;
    return;
  }
  if (rq_.replays_queued >= attr_.max_dest_rd_atomic) return;
  std::uint8_t* src = nullptr;
  if (mrs_.check_remote(pi.reth_rkey, pi.reth_va, pi.reth_dma_len, kAccessRemoteRead, &src, attr_.pd) != MrCheck::kOk)
    return;
  queue_read(pi, src, /*replay=*/true);
}

void RcQp::pop_response() {
  const RespItem& it = resp_at(rq_.resp_head);
  if (it.holds_resource_kind()) --(it.replay ? rq_.replays_queued : rq_.reads_queued);
  ++rq_.resp_head;
}

void RcQp::drop_responses() {
  rq_.resp_head = rq_.resp_tail;
  rq_.reads_queued = rq_.replays_queued = 0;
}

// A NAK that ends the connection (invalid request, remote access error): rxe and the spec's
// responder error classes move the QP to Error after sending it.
void RcQp::responder_nak(std::uint32_t psn, std::uint8_t syndrome) {
  ++c_.naks_sent;
  if (!queue_ack(psn, syndrome)) return;
  // The NAK stays queued: next_packet() still sends responses in Error; everything else flushes.
  enter_error(/*keep_responses=*/true);
}

// The two fatal NAKs, each with its own counter. Out of line like responder_nak (error paths:
// a call, not a copy of the NAK code at every check).
void RcQp::nak_invalid_request(std::uint32_t psn) {
  ++c_.resp_invalid_request;
  responder_nak(psn, wire::nak_syndrome(NakCode::kInvalidRequest));
}

void RcQp::nak_remote_access_error(std::uint32_t psn, MrCheck why) {
  ++c_.resp_remote_access_errors;
  if (why == MrCheck::kWrongDomain) ++c_.resp_wrong_domain;
  responder_nak(psn, wire::nak_syndrome(NakCode::kRemoteAccessError));
}

void RcQp::fail_accepted_message(std::uint32_t psn) {
  if (state_ == QpState::kError || state_ == QpState::kReset) return;
  ++c_.resp_remote_operational_errors;
  responder_nak(psn, wire::nak_syndrome(NakCode::kRemoteOperationalError));
}

// C9-118 style: one NAK per gap, then silent drops until ePSN shows up (go-back-N).
void RcQp::on_out_of_sequence() {
  ++c_.out_of_sequence;
  if (rq_.nak_sent) return;
  if (queue_ack(rq_.epsn, wire::nak_syndrome(NakCode::kPsnSequenceError))) {
    rq_.nak_sent = true;
    ++c_.naks_sent;
  }
}

void RcQp::on_duplicate_request(const wire::PacketInfo& pi, const wire::OpcodeInfo& op) {
  ++c_.duplicate_request;
  if (op.kind == OpKind::kReadRequest) {
    replay_read(pi);
    return;
  }
  if (op.kind == OpKind::kAtomic) {
    replay_atomic(pi);
    return;
  }
  // C9-105: a duplicate SEND/WRITE is never executed again, and is re-ACKed whether or not it
  // asks (§9.7.5.1.1, rxe's duplicate_request): its first ACK was lost, and waiting for an
  // AckReq would cost the requester a local ACK timeout.
  if (queue_ack(psn_add(rq_.epsn, -1), wire::kAethAckUnlimited)) ++c_.acks_sent;
}

// A new READ: checked against the responder resources, its length and R_Key, then queued; it
// consumes one PSN per response packet (§9.7.4.1.4).
void RcQp::execute_read(const wire::PacketInfo& pi) {
  if (!rd_resource_available() || pi.reth_dma_len > kMaxMessageBytes) {
    nak_invalid_request(pi.psn);
    return;
  }
  std::uint8_t* src = nullptr;
  if (const MrCheck chk =
          mrs_.check_remote(pi.reth_rkey, pi.reth_va, pi.reth_dma_len, kAccessRemoteRead, &src, attr_.pd);
      chk != MrCheck::kOk) {
    nak_remote_access_error(pi.psn, chk);
    return;
  }
  queue_read(pi, src, /*replay=*/false);
  const std::uint32_t npkts = pi.reth_dma_len == 0 ? 1 : (pi.reth_dma_len + attr_.pmtu - 1) / attr_.pmtu;
  rq_.epsn = psn_add(rq_.epsn, npkts);
}

// The request checks below run in on_request's order, each named after its clause, and each
// answers "go on" (true) or has already dealt with the packet (false). Forced inline (as
// parse_headers_fast is): every received request runs through them, and left to itself the
// compiler keeps the SEND/WRITE steps out of line, a call and a second register save per packet.

// PSN check (§9.7.5.1.1): only the expected PSN executes. A later one opens (or widens) a gap,
// an earlier one is a duplicate.
[[gnu::always_inline]] inline bool RcQp::check_psn(const wire::PacketInfo& pi, const wire::OpcodeInfo& op) {
  const std::int32_t d = psn_diff(pi.psn, rq_.epsn);
  if (d == 0) [[likely]]
    return true;
  if (gb0_ && rq_.in_progress != 0 && gb0_restarts(pi)) return pi.psn == rq_.epsn;
  if (d > 0) {
    on_out_of_sequence();
    return false;
  }
  on_duplicate_request(pi, op);
  return false;
}

// Go-back-0 (Recovery::kGoBack0, lab only), with a message in progress: a gap, or a packet of
// that message sent again (the requester restarted it), discards the message: ePSN goes back to
// its first PSN. A gap is then NAKed from there; a resent first packet executes anew. Whether it
// did is the answer: the caller goes on only for that first packet.
bool RcQp::gb0_restarts(const wire::PacketInfo& pi) {
  const bool gap = psn_diff(pi.psn, rq_.epsn) > 0;
  if (!gap && wire::psn_lt(pi.psn, rq_.msg_first_psn)) return false;  // a message before it: a duplicate
  gb0_discard_message();
  if (pi.psn != rq_.epsn) on_out_of_sequence();
  return true;
}

void RcQp::gb0_discard_message() {
  ++c_.gb0_messages_discarded;
  rq_.epsn = rq_.msg_first_psn;
  rq_.in_progress = 0;
  rq_.nak_sent = false;  // the rewound ePSN is a new gap: it gets its NAK
}

// Opcode sequence check (§9.7.5.1.2): a message in progress only continues with MIDDLE/LAST of
// its own kind; nothing else may start with MIDDLE/LAST. Kinds are never 0 (kInvalid), so both
// rules are one compare: in_progress must be the packet's kind if it continues, and 0 (none) if
// it does not.
[[gnu::always_inline]] inline bool RcQp::check_op_sequence(const wire::PacketInfo& pi, const wire::OpcodeInfo& op) {
  const bool continues = op.position == OpPosition::kMiddle || op.position == OpPosition::kLast;
  if (rq_.in_progress == (continues ? static_cast<std::uint8_t>(op.kind) : 0)) return true;
  nak_invalid_request(pi.psn);
  return false;
}

// Length check (§9.7.5.1.6): the PMTU rules of payload_length_valid.
[[gnu::always_inline]] inline bool RcQp::check_length(const wire::PacketInfo& pi, const wire::OpcodeInfo& op) {
  if (payload_length_valid(op, pi.payload_len, attr_.pmtu)) return true;
  nak_invalid_request(pi.psn);
  return false;
}

// R_Key check (§9.7.5.1.3): a WRITE's RETH, on its FIRST or ONLY packet, must name memory this
// QP may write, for its whole DMA length, and the packet may not carry more than that length;
// otherwise remote access error. The RETH's target then holds for the rest of the message.
[[gnu::always_inline]] inline bool RcQp::check_rkey(const wire::PacketInfo& pi, const wire::OpcodeInfo& op,
                                                    bool starts) {
  if (op.kind != OpKind::kWrite || !starts) return true;
  std::uint8_t* dst = nullptr;
  const auto chk = mrs_.check_remote(pi.reth_rkey, pi.reth_va, pi.reth_dma_len, kAccessRemoteWrite, &dst, attr_.pd);
  if (chk != MrCheck::kOk || pi.payload_len > pi.reth_dma_len) {
    nak_remote_access_error(pi.psn, chk);
    return false;
  }
  rq_.write_ptr = dst;
  rq_.write_left = rq_.write_len = pi.reth_dma_len;
  return true;
}

// Receive resources check (§9.7.5.1.5): a SEND at its first packet, and a WRITE with immediate
// at its last, need a posted receive (a SEND's later packets use the one its first found).
// Without one: RNR NAK with our timer; nothing executes, ePSN stays. The RNR NAK is this gap's
// one NAK: the packets already behind it in flight are dropped silently. A sequence-error NAK for
// each would cost the requester a retry (retry_cnt) per RNR episode and end a connection whose
// only problem is a slow receiver.
// With a shared receive queue the QP takes its WQE from it here, into its own (otherwise unused)
// queue, where it stays the QP's until the message completes or the QP flushes it.
[[gnu::always_inline]] inline bool RcQp::check_recv_resources(const wire::PacketInfo& pi, const wire::OpcodeInfo& op,
                                                              bool starts, bool needs_recv) {
  if (!(needs_recv && rq_.head == rq_.tail && (starts || op.kind == OpKind::kWrite)) || take_from_srq()) return true;
  if (queue_ack(pi.psn, wire::rnr_nak_syndrome(attr_.min_rnr_timer))) {
    ++c_.rnr_naks_sent;
    rq_.nak_sent = true;
  }
  return false;
}

// Out of line: only a QP with an empty own queue comes here (an SRQ's, or an RNR NAK's).
bool RcQp::take_from_srq() {
  if (srq_ == nullptr || !srq_->take(rq_at(rq_.tail))) return false;
  ++rq_.tail;
  return true;
}

// Execute a SEND packet: its payload goes to the head receive WQE at the message's offset. A
// message that does not fit the posted buffer (or the credit's limit) is an invalid request
// (§9.7.5.1.6). Views: the payload stays in the received frame, which the owner keeps (no copy).
[[gnu::always_inline]] inline bool RcQp::execute_send(const wire::PacketInfo& pi, const std::uint8_t* payload,
                                                      bool starts, bool views) {
  const std::uint32_t plen = pi.payload_len;
  RecvWqe& r = rq_at(rq_.head);
  if (starts) rq_.offset = 0;
  if (rq_.offset + plen > r.wr.sge.length) {
    nak_invalid_request(pi.psn);
    return false;
  }
  if (plen != 0 && !views) std::memcpy(r.local + rq_.offset, payload, plen);
  rq_.offset += plen;
  return true;
}

// Execute a WRITE packet: its payload goes to the RETH's target (check_rkey). More bytes than the
// RETH announced, or fewer by the last packet, is a length error: invalid request (§9.7.5.1.6).
[[gnu::always_inline]] inline bool RcQp::execute_write(const wire::PacketInfo& pi, const std::uint8_t* payload,
                                                       bool ends) {
  const std::uint32_t plen = pi.payload_len;
  if (plen > rq_.write_left) {
    nak_invalid_request(pi.psn);
    return false;
  }
  if (plen != 0) std::memcpy(rq_.write_ptr, payload, plen);
  rq_.write_ptr += plen;
  rq_.write_left -= plen;
  if (ends && rq_.write_left != 0) {
    nak_invalid_request(pi.psn);
    return false;
  }
  return true;
}

// Execute the invalidation of a SEND LAST/ONLY with Invalidate (§9.3.7): the IETH's R_Key, of a
// region registered with kAccessRemoteInvalidate, becomes unusable for remote access. It runs
// after the payload is placed, so a message refused for its length invalidates nothing, and only
// for a new message: a duplicate is never executed again (C9-105), so a retransmission cannot
// fail on the key its first copy invalidated. A key this QP may not invalidate (unknown, stale,
// already invalidated, or of a region without kAccessRemoteInvalidate) is fatal: the receive the
// message consumed completes with remote invalid request error, the QP goes to Error (the rest
// flush), and the requester is answered NAK invalid request, counted. rxe files this error as
// responder class J and completes the receive the same way; the spec clause naming the NAK code
// for it could not be checked here, so invalid request is chosen to match that receive status.
[[gnu::always_inline]] inline bool RcQp::execute_invalidate(const wire::PacketInfo& pi, const wire::OpcodeInfo& op) {
  if ((op.headers & wire::kHdrIeth) == 0 || mrs_.invalidate_remote(pi.ieth_rkey, attr_.pd) == MrCheck::kOk) return true;
  refuse_invalidate(pi.psn);
  return false;
}

// Out of line, as the other fatal NAKs: an error path is a call, not a copy on every SEND.
void RcQp::refuse_invalidate(std::uint32_t psn) {
  ++c_.resp_invalidate_errors;
  if (attr_.recv_mode != RecvMode::kMessageViews) {  // a view QP's credits complete nothing
    push_completion(rq_at(rq_.head).wr.wr_id, WcStatus::kRemInvReqErr, WcOpcode::kRecv, 0, /*is_recv=*/true);
    ++rq_.head;
  }
  nak_invalid_request(psn);
}

// Complete an executed SEND/WRITE packet: byte counters and the message in progress; at the
// message's end the MSN (the AETH's, §9.3.5) and the receive completion — a message view in
// kMessageViews mode, which uses the credit up, else a CQ entry; then ePSN moves on and an
// AckReq is answered (coalesced, queue_ack).
[[gnu::always_inline]] inline RxDelivery RcQp::complete_send_write(const wire::PacketInfo& pi,
                                                                   const wire::OpcodeInfo& op, bool ends,
                                                                   bool needs_recv, bool views) {
  const std::uint32_t plen = pi.payload_len;
  const bool kept = views && op.kind == OpKind::kSend && plen != 0;
  if (!kept) c_.bytes_copied += plen;
  c_.bytes_delivered += plen;
  if (!ends && rq_.in_progress == 0) rq_.msg_first_psn = pi.psn;  // a FIRST packet: go-back-0 restarts here
  rq_.in_progress = ends ? 0 : static_cast<std::uint8_t>(op.kind);
  RxDelivery delivery = kept ? (ends ? RxDelivery::kKeepEnd : RxDelivery::kKeep) : RxDelivery::kNone;
  if (ends) {
    ++rq_.msn;
    if (needs_recv && views) {
      if (!kept) delivery = RxDelivery::kEnd;
      ++rq_.head;
    } else if (needs_recv) {
      const bool has_imm = (op.headers & wire::kHdrImmDt) != 0;
      const bool has_inv = (op.headers & wire::kHdrIeth) != 0;
      const WcOpcode wc = has_imm ? WcOpcode::kRecvWithImm : has_inv ? WcOpcode::kRecvWithInv : WcOpcode::kRecv;
      // byte_len: a SEND's bytes; a WRITE with immediate's DMA length, as verbs reports it for
      // IBV_WC_RECV_RDMA_WITH_IMM (and rxe: the responder's resp.length).
      push_completion(rq_at(rq_.head).wr.wr_id, WcStatus::kSuccess, wc,
                      op.kind == OpKind::kSend ? rq_.offset : rq_.write_len,
                      /*is_recv=*/true, has_imm, has_imm ? pi.imm_data : 0, has_inv, has_inv ? pi.ieth_rkey : 0);
      ++rq_.head;
    }
  }
  rq_.epsn = psn_add(rq_.epsn, 1);
  if (pi.ack_req && queue_ack(pi.psn, wire::kAethAckUnlimited)) ++c_.acks_sent;
  return delivery;
}

// A SEND or WRITE packet in sequence: the R_Key and receive resources checks, then execute and
// complete. A SEND consumes a receive WQE, and so does a WRITE with immediate at its last packet.
[[gnu::always_inline]] inline RxDelivery RcQp::on_send_write(const wire::PacketInfo& pi, const wire::OpcodeInfo& op,
                                                             const std::uint8_t* payload) {
  const bool starts = op.position == OpPosition::kFirst || op.position == OpPosition::kOnly;
  const bool ends = op.position == OpPosition::kLast || op.position == OpPosition::kOnly;
  const bool needs_recv = op.kind == OpKind::kSend || (ends && (op.headers & wire::kHdrImmDt));
  if (!check_rkey(pi, op, starts) || !check_recv_resources(pi, op, starts, needs_recv)) return RxDelivery::kNone;
  const bool views = attr_.recv_mode == RecvMode::kMessageViews;
  const bool done =
      op.kind == OpKind::kSend ? execute_send(pi, payload, starts, views) : execute_write(pi, payload, ends);
  if (!done || !execute_invalidate(pi, op)) return RxDelivery::kNone;
  return complete_send_write(pi, op, ends, needs_recv, views);
}

// The responder's receive path (§9.7.5.1): PSN, opcode sequence and length checks, then by kind
// the remaining checks, execution and completion.
RxDelivery RcQp::on_request(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload) {
  if (!check_psn(pi, op) || !check_op_sequence(pi, op) || !check_length(pi, op)) return RxDelivery::kNone;
  rq_.nak_sent = false;  // ePSN arrived and is well formed: the gap, if any, is closed
  const bool starts = op.position == OpPosition::kFirst || op.position == OpPosition::kOnly;
  switch (op.kind) {
    case OpKind::kSend:
      c_.send_requests += starts;
      return on_send_write(pi, op, payload);
    case OpKind::kWrite:
      c_.write_requests += starts;
      return on_send_write(pi, op, payload);
    case OpKind::kReadRequest:
      ++c_.read_requests;
      execute_read(pi);
      return RxDelivery::kNone;
    case OpKind::kAtomic:
      ++c_.atomic_requests;
      on_atomic(pi);
      return RxDelivery::kNone;
    default:
      nak_invalid_request(pi.psn);  // no request kind reaches here; answered as one not understood
      return RxDelivery::kNone;
  }
}

// Receive by bursts (issue 37): a run of SEND and WRITE packets the caller found consecutive in
// PSN (each the one before it plus one) is checked once where a check holds for the whole run, and
// packet by packet where it does not:
//  - once: the QP may receive (RTR/RTS), takes runs at all (run_capable: go-back-N, posted
//    buffers, no SRQ), the run's first PSN is ePSN (§9.7.5.1.1: the rest follow it, so none is a
//    duplicate or opens a gap, and the window arithmetic of check_psn is not needed), and the
//    count of posted receives not held by a message in progress (§9.7.5.1.5), which each SEND
//    message the run starts and each WRITE with immediate data it ends takes one of, in order;
//    the run ends before the first packet they do not cover;
//  - per packet, before it executes: that it is a packet of a run's kind and the next PSN (one
//    compare each: the caller's promise, not trusted), the opcode sequence (§9.7.5.1.2), the PMTU
//    length rules (§9.7.5.1.6), and the room left: in the receive buffer for a SEND; for a WRITE
//    the R_Key check of its RETH at FIRST/ONLY (§9.7.5.1.3) and the bytes its RETH announced (not
//    more, and all of them by the last packet). A packet that fails one ends the run unexecuted,
//    with nothing of it changed: it and the rest go through on_packet() one by one, which answers
//    it exactly as it would have been answered alone (the NAK, the QP's move to Error);
//  - after the run: one coalesced ACK for its last AckReq packet (what queue_ack would have made
//    of one ACK per AckReq packet: each supersedes the one before; the counters as if each came).
// Returns how many packets (a prefix of the run) it executed; 0 when a once-check fails or the
// first packet fails its own, and then nothing changed.
std::uint32_t RcQp::on_request_run(const wire::PacketInfo* pi, const std::uint8_t* const* payload, std::uint32_t n) {
  if (n == 0 || !run_capable() || pi[0].psn != rq_.epsn) return 0;
  // Credits: the posted receives not held by a message in progress, taken in order by what the
  // run consumes (kRunConsumesWqe: a SEND at its first packet, a WRITE with immediate data at its
  // last). The run ends before the first packet they do not cover (its RNR NAK is the per-packet
  // path's).
  std::uint64_t credits = rq_.tail - rq_.head;
  if (rq_.in_progress == static_cast<std::uint8_t>(OpKind::kSend) && credits != 0) --credits;
  const std::uint32_t pmtu = attr_.pmtu;
  std::uint32_t psn = rq_.epsn;
  std::uint32_t acks = 0, ack_psn = 0, ack_msn = 0;
  std::uint32_t done = 0;
  for (; done < n; ++done) {
    const wire::PacketInfo& p = pi[done];
    // What the opcode decides, from one table (request_run_traits.h): whether it may be in a run,
    // the message in progress it needs, its length rule (§9.7.5.1.6: FIRST and MIDDLE exactly one
    // PMTU, LAST 1..PMTU, ONLY 0..PMTU: one unsigned compare against the rule's least length).
    const RunTraits t = run_traits(p.opcode);
    const std::uint32_t plen = p.payload_len;
    const std::uint32_t least = (t.flags & kRunFullPmtu) ? pmtu : (t.flags & (kRunStarts | kRunEnds)) == kRunEnds;
    const bool consumes = (t.flags & kRunConsumesWqe) != 0;
    if (!(t.flags & kRunJoins) || p.psn != psn || rq_.in_progress != t.expects || plen - least > pmtu - least ||
        (consumes && credits == 0)) [[unlikely]]
      break;
    if (!(t.flags & kRunWrite)) {
      const std::uint32_t offset = (t.flags & kRunStarts) ? 0 : rq_.offset;
      RecvWqe& r = rq_at(rq_.head);
      if (offset + plen > r.wr.sge.length) [[unlikely]]
        break;
      if (plen != 0) std::memcpy(r.local + offset, payload[done], plen);
      c_.send_requests += (t.flags & kRunStarts) != 0;
      rq_.offset = offset + plen;
    } else if (!write_run_packet(p, payload[done], (t.flags & kRunStarts) != 0, (t.flags & kRunEnds) != 0))
        [[unlikely]] {
      break;
    }
    credits -= consumes;
    c_.bytes_copied += plen;
    c_.bytes_delivered += plen;
    // (msg_first_psn, which complete_send_write keeps, is go-back-0's alone: no run QP has it.)
    rq_.in_progress = t.leaves;
    if (t.flags & kRunEnds) {
      ++rq_.msn;
      // A SEND's receive completes with its bytes; a WRITE with immediate data's with its DMA
      // length, as verbs reports IBV_WC_RECV_RDMA_WITH_IMM (complete_send_write).
      if (t.flags & kRunCompletes) {
        const bool has_imm = (t.flags & kRunImm) != 0;
        push_completion(rq_at(rq_.head).wr.wr_id, WcStatus::kSuccess,
                        has_imm ? WcOpcode::kRecvWithImm : WcOpcode::kRecv,
                        (t.flags & kRunWrite) ? rq_.write_len : rq_.offset,
                        /*is_recv=*/true, has_imm, has_imm ? p.imm_data : 0);
        ++rq_.head;
      }
    }
    if (p.ack_req) {
      ++acks;
      ack_psn = p.psn;
      ack_msn = rq_.msn;
    }
    psn = wire::psn_next(psn);
  }
  if (done == 0) return 0;
  rq_.nak_sent = false;  // ePSN arrived and is well formed: the gap, if any, is closed
  rq_.epsn = psn;
  if (acks != 0 && queue_ack(ack_psn, wire::kAethAckUnlimited, ack_msn)) {
    c_.acks_sent += acks;
    c_.acks_coalesced += acks - 1;
  }
  return done;
}

// One WRITE packet of a run (no immediate data): at FIRST/ONLY the RETH's R_Key check
// (§9.7.5.1.3, as check_rkey), then no more bytes than the RETH announced and all of them by the
// last packet (§9.7.5.1.6, as execute_write). Decided on copies of the WRITE's state, so a packet
// that fails leaves the QP as it was for on_packet() to answer; placed and committed when it
// passes.
bool RcQp::write_run_packet(const wire::PacketInfo& p, const std::uint8_t* payload, bool starts, bool ends) {
  const std::uint32_t plen = p.payload_len;
  std::uint8_t* dst = rq_.write_ptr;
  std::uint32_t left = rq_.write_left;
  if (starts) {
    if (mrs_.check_remote(p.reth_rkey, p.reth_va, p.reth_dma_len, kAccessRemoteWrite, &dst, attr_.pd) != MrCheck::kOk)
      return false;
    left = p.reth_dma_len;
  }
  if (plen > left || (ends && left != plen)) return false;
  if (starts) rq_.write_len = p.reth_dma_len;
  if (plen != 0) std::memcpy(dst, payload, plen);
  c_.write_requests += starts;
  rq_.write_ptr = dst + plen;
  rq_.write_left = left - plen;
  return true;
}

bool RcQp::next_response(TxDescriptor& d) {
  if (rq_.resp_head == rq_.resp_tail) return false;
  RespItem& it = resp_at(rq_.resp_head);
  d = TxDescriptor{};
  // Selective repeat answers with the SR twins of the RC opcodes (docs/selective-repeat.md).
  const std::uint8_t sr_bits = sr_opcode_mask_;
  if (it.is_atomic) {
    d.opcode = static_cast<std::uint8_t>(static_cast<std::uint8_t>(wire::Opcode::kAtomicAck) | sr_bits);
    d.psn = it.psn;
    d.aeth_syndrome = wire::kAethAckUnlimited;
    d.aeth_msn = it.msn;
    d.atomic_ack_orig = it.atomic_orig;
    pop_response();
    return true;
  }
  if (!it.is_read) {
    if (sr_ && (it.syndrome & wire::kAethTypeMask) == wire::kAethTypeAck) {
      fill_sack(d);  // selective repeat acknowledges with the SACK as it stands now
      pop_response();
      return true;
    }
    d.opcode = static_cast<std::uint8_t>(wire::Opcode::kAck);
    d.psn = it.psn;
    d.aeth_syndrome = it.syndrome;
    d.aeth_msn = it.msn;
    pop_response();
    return true;
  }
  // READ responses: FIRST/MIDDLE/LAST or ONLY; AETH on FIRST, LAST and ONLY (§9.3.5); the
  // payload points into the responder's region (zero copy).
  const std::uint32_t i = it.sent;
  const bool first = i == 0, last = i + 1 == it.npkts;
  using wire::Opcode;
  d.opcode = static_cast<std::uint8_t>(static_cast<std::uint8_t>(first && last ? Opcode::kReadRespOnly
                                                                 : first       ? Opcode::kReadRespFirst
                                                                 : last        ? Opcode::kReadRespLast
                                                                               : Opcode::kReadRespMiddle) |
                                       sr_bits);
  d.psn = psn_add(it.psn, i);
  const std::uint32_t off = i * attr_.pmtu;
  d.payload = it.data + off;
  d.payload_len = it.len == 0 ? 0 : (it.len - off < attr_.pmtu ? it.len - off : attr_.pmtu);
  d.aeth_syndrome = wire::kAethAckUnlimited;
  d.aeth_msn = it.msn;
  if (++it.sent == it.npkts) pop_response();
  return true;
}

}  // namespace droce::rc
