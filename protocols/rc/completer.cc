// Completer (IBTA §9.7.5.2, §9.9): ACK/NAK handling, READ response placement, atomic results,
// completions.
#include <cstring>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/ib_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::psn_add;
using wire::psn_diff;
using wire::psn_ge;
using wire::psn_le;
using wire::psn_lt;

namespace {
WcOpcode wc_opcode(WrOpcode o) {
  switch (o) {
    case WrOpcode::kRead:
      return WcOpcode::kRead;
    case WrOpcode::kCmpSwap:
      return WcOpcode::kCompSwap;
    case WrOpcode::kFetchAdd:
      return WcOpcode::kFetchAdd;
    case WrOpcode::kWrite:
    case WrOpcode::kWriteWithImm:
      return WcOpcode::kWrite;
    default:
      return WcOpcode::kSend;
  }
}

bool is_sequence_nak(const wire::PacketInfo& pi) {
  return wire::opcode_info(pi.opcode).kind == wire::OpKind::kAck &&
         (pi.aeth_syndrome & wire::kAethTypeMask) == wire::kAethTypeNak &&
         static_cast<wire::NakCode>(pi.aeth_syndrome & 0x1F) == wire::NakCode::kPsnSequenceError;
}
}  // namespace

// A successful send's completion, inline: retire_through runs it for every acknowledged WQE.
[[gnu::always_inline]] inline void RcQp::complete_send_ok(const SendWqe& w) {
  if (!w.wr.signaled) return;  // unsignaled successes retire silently
  push_completion(w.wr.wr_id, WcStatus::kSuccess, wc_opcode(w.wr.opcode), w.wr.sge.length, /*is_recv=*/false);
}

void RcQp::complete_send(const SendWqe& w, WcStatus st) {
  if (st == WcStatus::kSuccess) {
    complete_send_ok(w);
    return;
  }
  push_completion(w.wr.wr_id, st, wc_opcode(w.wr.opcode), w.wr.sge.length, /*is_recv=*/false);
}

// The WQE at the head fails with `st`; the QP goes to Error and the rest flush (§10.3.1).
void RcQp::fail_send(WcStatus st) {
  if (sq_.head != sq_.tail) {
    complete_send(sq_at(sq_.head), st);
    ++sq_.head;
  }
  enter_error();
}

// Spends one retry (sequence NAK, timeout, implied NAK) or one RNR retry; false when exhausted
// and the QP has moved to Error.
bool RcQp::retry_or_fail(bool rnr) {
  if (rnr) {
    if (attr_.rnr_retry == 7) return true;  // 7 = retry forever (§9.7.5.2.8)
    if (sq_.rnr_left == 0) {
      ++c_.rnr_nak_retry_err;
      fail_send(WcStatus::kRnrRetryExcErr);
      return false;
    }
    --sq_.rnr_left;
    return true;
  }
  if (sq_.retry_left == 0) {
    fail_send(WcStatus::kRetryExcErr);
    return false;
  }
  --sq_.retry_left;
  return true;
}

// Whether `w` still needs asking again: a READ or atomic missing (part of) its response whose
// latest request does not already ask from the first missing response. Once per gap: the
// responses of the original request still in flight past the gap must not each re-ask.
bool RcQp::reissue_needed(const SendWqe& w) const {
  return awaits_response(w) && !w.reissue_wanted && !(w.read_reissued && w.read_req_start == w.read_pkts_done);
}

void RcQp::want_reissue(SendWqe& w) {
  w.reissue_wanted = true;
  ++sq_.reissues_wanted;
}

// Implied NAK (§9.7.5.2.3): responses arrive in PSN order, so a response or ACK for a later PSN
// shows that the READ responses (or atomic acknowledgement) still missing before it were lost.
// Go-back-N would re-send every request from the first of them, and the responder would replay
// every READ behind it in full: with a few long READs outstanding and a lossy path, each loss
// re-sends megabytes and the backlog only grows (1 MiB READs against rxe at 1 % loss never
// finished). Only the requests that miss responses are asked again, each from its first missing
// response (an atomic whole: the responder answers it from its saved result); the responses
// already on their way for the READs behind them are placed as they arrive, and completions stay
// in order. One retry per event (the first READ or atomic in [head, psn] newly found missing).
void RcQp::implied_nak_through(std::uint32_t psn) {
  bool any = false;
  for (std::uint64_t i = sq_.head; i != sq_.cur && i != sq_.tail; ++i) {
    SendWqe& w = sq_at(i);
    if (!psn_le(w.first_psn, psn)) break;
    if (!reissue_needed(w)) continue;
    if (!any) {
      any = true;
      ++c_.implied_nak_seq_err;
      if (!retry_or_fail(false)) return;
    }
    want_reissue(w);
  }
}

// Forward progress: the retry budget refills and the ACK timer restarts (§9.7.6.1.3).
void RcQp::on_progress(std::uint64_t now_ns) {
  sq_.seq_nak_acted = false;
  sq_.retry_left = attr_.retry_cnt;
  sq_.rnr_left = attr_.rnr_retry;
  arm_loss_timers(now_ns);
}

// Everything up to and including `psn` is acknowledged (executed by the responder): retire WQEs
// in order. A READ whose responses have not all arrived, or an atomic whose acknowledgement has
// not, cannot be retired by that: retirement stops there, and the implied NAK asks it again. What
// the responder executed beyond it is remembered (acked_psn) and retired once it completes.
void RcQp::retire_through(std::uint32_t psn, std::uint64_t now_ns) {
  if (psn_lt(sq_.acked_psn, psn) && psn_lt(psn, sq_.high)) sq_.acked_psn = psn;
  psn = sq_.acked_psn;
  bool progressed = false;
  while (sq_.head != sq_.tail) {
    SendWqe& w = sq_at(sq_.head);
    const std::uint32_t last = psn_add(w.first_psn, w.npkts - 1);
    if (!psn_le(w.first_psn, psn)) break;
    if (!psn_lt(w.first_psn, sq_.nxt) && sq_.cur <= sq_.head) break;  // never sent
    if (awaits_response(w)) {
      if (progressed) on_progress(now_ns);
      // Selective repeat asks again only the responses shown missing (requester_sr_read.cc).
      if (!sr_) implied_nak_through(psn);
      return;
    }
    if (!psn_le(last, psn)) {
      // Partially acknowledged multi-packet message: nothing to retire yet.
      sq_.una = psn_add(psn, 1);
      progressed = true;
      break;
    }
    release_rd_credit(w);
    complete_send_ok(w);
    ++sq_.head;
    sq_.una = psn_add(last, 1);
    progressed = true;
  }
  // A late ACK can overtake a rewind (go-back-N resent from an older PSN): never resend what is
  // already acknowledged, and never leave sq.nxt inside a retired WQE.
  if (sq_.cur < sq_.head || psn_lt(sq_.nxt, sq_.una)) rewind_to(sq_.una);
  if (progressed) on_progress(now_ns);
}

// §9.7.5.2.1: a response for a PSN never sent is a ghost, one older than the oldest unacknowledged
// PSN a duplicate (a delayed or duplicated ACK, NAK or READ response). Both are dropped before
// they can retire, rewind or disarm anything: rewinding to a retired PSN would skip requests
// posted but not yet sent.
bool RcQp::response_is_stale(const wire::PacketInfo& pi) {
  if (!psn_lt(pi.psn, sq_.high)) {
    ++c_.ghost_acks;
    return true;
  }
  if (psn_lt(pi.psn, sq_.una)) {
    // Go-back-0: a responder that discarded a message NAKs from its first PSN, below what its
    // mid-message ACKs acknowledged; that NAK is news (on_sequence_nak forgets those ACKs), and
    // dropping it as a duplicate left every restart to the local ACK timer.
    if (gb0_ && is_sequence_nak(pi) && outstanding_contains(pi.psn)) return false;
    ++c_.duplicate_responses;
    return true;
  }
  return false;
}

void RcQp::on_response(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns) {
  if (response_is_stale(pi)) {
    // A re-ACK of sq.una - 1 retires nothing, but it is how a probe's answer looks once the ACKs
    // in flight before the probe are in (on_probe_answer): the responder held everything before.
    // Sooner than min RTT after the probe it answers an earlier resend, whose duplicate the
    // responder re-ACKed the same way: no news.
    if (sq_.probe_open && psn_add(pi.psn, 1) == sq_.una && wire::opcode_info(pi.opcode).kind == wire::OpKind::kAck &&
        (pi.aeth_syndrome & wire::kAethTypeMask) == wire::kAethTypeAck &&
        now_ns - sq_.probe_sent_ns >= rtt_.min_rtt_ns())
      on_probe_answer(pi.psn, /*answers_probe=*/true, now_ns);
    return;
  }
  switch (wire::opcode_info(pi.opcode).kind) {
    case wire::OpKind::kAck:
      on_ack_or_nak(pi, now_ns);
      return;
    case wire::OpKind::kAtomicAck:
      on_atomic_ack(pi, now_ns);
      return;
    default:
      on_read_response(pi, payload, now_ns);
  }
}

// A NAK acknowledges everything before its PSN (§9.7.5.2.4), but a READ or atomic before it whose
// response was lost cannot be retired by that: retire_through() stops there and its implied NAK
// asks that request again on its own. The NAK's rewind still resends from the NAK's PSN: the two
// are separate losses, and neither may undo the other (an earlier version let the NAK rewind past
// the unanswered request, and each such NAK spent a retry until the QP failed).

// A NAK PSN sequence error asks for a resend from `psn` (§9.7.5.2.4). The responder sends one per
// gap (C9-118 style, until ePSN arrives), so a second one for the PSN we already resent from is a
// duplicate (the network's, or a delayed copy): it costs no retry and rewinds nothing.
void RcQp::on_sequence_nak(std::uint32_t psn, std::uint64_t now_ns) {
  ++c_.packet_seq_err;
  if (sr_) {  // a selective-repeat responder sends none; resend from it only what is not held
    sr_mark_lost(psn);
    return;
  }
  if (sq_.seq_nak_acted && sq_.seq_nak_psn == psn) return;
  if (!retry_or_fail(false)) return;
  sq_.seq_nak_acted = true;
  sq_.seq_nak_psn = psn;
  // Go-back-0: the responder discarded the message, parts it had acknowledged included.
  if (gb0_ && psn_lt(psn, sq_.una) && outstanding_contains(psn)) gb0_forget_from(psn);
  rewind_to(psn);
  restart_timer_after_nak(now_ns);
}

// After a NAK the local ACK timer runs on from `from_ns` while anything is unacknowledged
// (§9.7.6.1.3), instead of waiting to be re-armed by the retransmission: the rewind may find
// nothing to resend (every READ or atomic from the NAK's PSN on was answered, and is passed
// over), while an earlier one still waits for the response its re-issue asked for. Were that
// re-issue or its answer lost too, no timer would bring it back, and the QP would wait for
// ever with no error (seen once under a loaded CI run: 16 CmpSwaps executed, never completed).
void RcQp::restart_timer_after_nak(std::uint64_t from_ns) { arm_loss_timers(from_ns); }

void RcQp::on_ack_or_nak(const wire::PacketInfo& pi, std::uint64_t now_ns) {
  const std::uint8_t syn = pi.aeth_syndrome;
  switch (syn & wire::kAethTypeMask) {
    case wire::kAethTypeAck: {
      ++c_.acks_received;
      const bool answers_probe = sq_.probe_open && answers_a_resend(pi.psn);  // before retiring
      // An ACK for a packet sent before the probe, with AckReq, is an ACK in flight or the probe's
      // answer where the responder's ePSN was a message's first packet (its re-ACK of ePSN - 1
      // lands on the last packet of the message before): nothing tells which. A probe the timer
      // sent (sq.probes: no progress since) draws one follow-up probe at once, of the new sq.una:
      // were the responder waiting at it (its NAK lost, or the resend of its gap lost, so it drops
      // the rest silently), the follow-up arrives as its ePSN, and its ACK, for a packet that left
      // without AckReq, answers for certain. Without it the answer waited a whole PTO (28 of 64
      // probes a second at 1 % loss in loopback, bench/loss/results.md). Where the ACK was one in
      // flight the follow-up costs one packet, re-ACKed; a follow-up's own such answer (sent after
      // progress, sq.probes 0) draws none, so a stalled peer's backlog of ACKs draws one.
      // (An ACK through the last packet sent before the probe shows nothing lost, whichever it is.)
      const bool may_answer =
          sq_.probe_open && !answers_probe && sq_.probes != 0 && psn_lt(psn_add(pi.psn, 1), sq_.probe_high);
      // The probe's answer is judged by what it shows (on_probe_answer), never by the minimum RTT:
      // a lone probe meets no queue, and comes back sooner than any packet of a window did (seen
      // in loopback: 5 us against a min RTT of 13 us), so the time rule took probes that found a
      // loss for spurious ones and backed the PTO off. One that may be the answer judges nothing
      // either: its follow-up is judged instead.
      if (answers_probe || may_answer) sq_.resend_open = false;
      // An ACK for the probed packet and nothing after it may be the probe's own answer: the probe
      // moved it, not the window. It restarts the IBTA timer (it is progress, §9.7.6.1.3) but not
      // the adaptive RTO, so a chain of such probes (a lost NAK behind one-packet messages, one
      // PSN per probe) ends in one go-back-N round an RTO after the last real progress instead
      // of one PTO per message in the window (docs/transport.md, "Which ACK answers the probe").
      // (While a go-back-N probe is open, sq.resend_psn is its PSN: only an expiry moves it, and
      // an expiry closes the probe.)
      const bool probe_only = sq_.probe_open && !answers_probe && pi.psn == sq_.resend_psn;
      const std::uint64_t rto_before = sq_.rto_deadline;
      answered_through(pi.psn, now_ns);
      retire_through(pi.psn, now_ns);
      if (probe_only && sq_.rto_deadline != kNever && rto_before < sq_.rto_deadline) {
        sq_.rto_deadline = rto_before;
        update_timer_deadline();
      }
      if (sq_.probe_open) on_probe_answer(pi.psn, answers_probe, now_ns);
      if (may_answer && state_ == QpState::kRts && psn_lt(sq_.una, sq_.high)) sq_.probe_pending = true;
      return;
    }
    case wire::kAethTypeRnrNak:
      ++c_.rnr_naks_received;
      sq_.probe_open = false;
      answered_through(psn_add(pi.psn, -1), now_ns);
      retire_through(psn_add(pi.psn, -1), now_ns);
      if (state_ != QpState::kRts || !retry_or_fail(true)) return;
      sq_.rnr_until = now_ns + wire::kRnrTimerNs[syn & 0x1F];
      if (sr_)
        sr_mark_lost(pi.psn);  // selective repeat: from that PSN, only what is not held
      else
        rewind_to(pi.psn);
      // The responder is alive and answering: the local ACK timer counts from the end of the
      // RNR wait, so a long RNR episode never turns into RETRY_EXC_ERR (§9.7.5.2.8).
      restart_timer_after_nak(sq_.rnr_until);
      return;
    case wire::kAethTypeNak:
      ++c_.naks_received;
      sq_.probe_open = false;
      answered_through(psn_add(pi.psn, -1), now_ns);
      retire_through(psn_add(pi.psn, -1), now_ns);
      if (state_ != QpState::kRts) return;
      switch (static_cast<wire::NakCode>(syn & 0x1F)) {
        case wire::NakCode::kPsnSequenceError:
          on_sequence_nak(pi.psn, now_ns);
          return;
        case wire::NakCode::kInvalidRequest:
          ++c_.req_remote_invalid_request;
          fail_send(WcStatus::kRemInvReqErr);
          return;
        case wire::NakCode::kRemoteAccessError:
          ++c_.req_remote_access_errors;
          fail_send(WcStatus::kRemAccessErr);
          return;
        default:
          fail_send(WcStatus::kRemOpErr);
          return;
      }
    default:
      return;  // reserved syndrome: ignore
  }
}

// A READ response for an outstanding PSN shows the responder working through our requests,
// even when it is not the one expected next (the rest of a stream after a loss, before the
// re-issued READ is answered): the local ACK timer restarts, as rxe's completer re-arms it after
// every response it handles. Otherwise a long response stream outlasts the timeout, the READ
// is re-issued again while its answer is still arriving, and each replay lengthens the backlog.
void RcQp::restart_ack_timer(std::uint64_t now_ns) { arm_loss_timers(now_ns); }

// The sent WQE whose PSNs hold `psn` (sq_.tail if none): the request a READ response or an
// atomic acknowledgement answers.
std::uint64_t RcQp::response_target(std::uint32_t psn) const {
  for (std::uint64_t i = sq_.head; i != sq_.tail && i <= sq_.cur; ++i) {
    const SendWqe& w = sq_.ring[i & sq_mask_];
    const std::int32_t off = psn_diff(psn, w.first_psn);
    if (off >= 0 && static_cast<std::uint32_t>(off) < w.npkts) return i;
  }
  return sq_.tail;
}

// ATOMIC ACKNOWLEDGE (§9.4.5, §9.5.3): the original value of the target, for the atomic at its
// PSN. It also acknowledges every earlier request (an earlier READ or atomic still missing its
// response is asked again: implied NAK); the original value goes to the local buffer in host byte
// order (verbs' layout) and the atomic completes, in order. Anything else with opcode 0x12 —
// for a PSN that is not an atomic's, a second copy, or a NAK syndrome on it — answers nothing
// this requester asked and is dropped, counted (a NAK comes as an ACK packet, §9.3.5).
void RcQp::on_atomic_ack(const wire::PacketInfo& pi, std::uint64_t now_ns) {
  const std::uint64_t target = response_target(pi.psn);
  if (target == sq_.tail || !is_atomic(sq_at(target).wr.opcode) || sq_at(target).read_pkts_done != 0 ||
      (pi.aeth_syndrome & wire::kAethTypeMask) != wire::kAethTypeAck) {
    ++c_.duplicate_responses;
    return;
  }
  SendWqe& w = sq_at(target);
  sq_.probe_open = false;
  answered_through(pi.psn, now_ns);
  retire_through(psn_add(w.first_psn, -1), now_ns);
  if (state_ != QpState::kRts) return;  // the implied NAK found the retries spent
  std::memcpy(w.local, &pi.atomic_ack_orig, kAtomicBytes);
  c_.bytes_copied += kAtomicBytes;
  w.read_pkts_done = 1;
  retire_through(pi.psn, now_ns);
  on_progress(now_ns);
}

void RcQp::on_read_response(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns) {
  restart_ack_timer(now_ns);
  const auto& op = wire::opcode_info(pi.opcode);
  // READ response: it belongs to the READ whose PSNs hold it, and goes to that READ's buffer at
  // its offset even while an earlier READ still misses responses (they were lost: implied NAK,
  // asked again alone). Responses arrive in PSN order, so one also acknowledges every earlier
  // request; completions stay in order (retire_through).
  const std::uint64_t target = response_target(pi.psn);
  if (target == sq_.tail || sq_at(target).wr.opcode != WrOpcode::kRead) {
    ++c_.duplicate_responses;  // none of ours, or a READ response for a SEND/WRITE/atomic PSN
    return;
  }
  SendWqe& w = sq_at(target);
  sq_.probe_open = false;
  answered_through(pi.psn, now_ns);  // the READ request reached the responder, and all before it
  const auto off = static_cast<std::uint32_t>(psn_diff(pi.psn, w.first_psn));
  const std::uint32_t expected = w.read_pkts_done;
  if (off < expected) {
    ++c_.duplicate_responses;
    return;
  }
  retire_through(psn_add(w.first_psn, -1), now_ns);
  if (state_ != QpState::kRts) return;  // the implied NAK found the retries spent
  if (off > expected) {
    // A gap inside this READ: its responses from `expected` on are asked again (once per gap).
    if (reissue_needed(w)) {
      ++c_.implied_nak_seq_err;
      if (retry_or_fail(false)) want_reissue(w);
    }
    return;
  }
  // Position and length must match what this READ asked for (§9.7.5.2.2).
  const std::uint32_t len = w.wr.sge.length;
  const std::uint32_t off_bytes = expected * attr_.pmtu;
  const std::uint32_t want = len - off_bytes < attr_.pmtu ? len - off_bytes : attr_.pmtu;
  const bool last = expected + 1 == w.npkts;
  const auto pos = op.position;
  // Positions count from the READ request that was sent last: a READ re-issued from its
  // middle is a new request for the rest, answered FIRST..LAST (or ONLY) again. Linux rxe
  // (rxe_resp.c, duplicate_request: it replays the response resource it already sent) answers a
  // re-issued READ as the continuation of the original message instead — MIDDLE..LAST, and LAST
  // even for a one-packet READ re-issued whole: accepted too, the PSN and length being the ones
  // asked for. An original READ still gets only the strict positions.
  const bool first = expected == w.read_req_start;
  const bool resumed = expected != 0 || w.read_reissued;
  auto at = [&](bool f) {
    return f && last ? pos == wire::OpPosition::kOnly
           : f       ? pos == wire::OpPosition::kFirst
           : last    ? pos == wire::OpPosition::kLast
                     : pos == wire::OpPosition::kMiddle;
  };
  const bool pos_ok = at(first) || (first && resumed && at(false));
  if (!pos_ok || pi.payload_len != want) {
    ++c_.duplicate_responses;  // not the response this READ expects: dropped, the timer retries
    return;
  }
  if (want != 0) std::memcpy(w.local + off_bytes, payload, want);
  c_.bytes_copied += want;
  ++w.read_pkts_done;
  if (target == sq_.head) sq_.una = psn_add(pi.psn, 1);  // else the head's missing PSN stays the oldest
  if (last) retire_through(pi.psn, now_ns);
  on_progress(now_ns);
}

}  // namespace droce::rc
