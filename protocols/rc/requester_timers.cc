// The requester's timers (IBTA §9.7.6.1.3; docs/transport.md, "Loss recovery in round trips"):
// the local ACK timeout, which spends retry_cnt; under it an adaptive retransmission timeout a few
// round trips long (RFC 6298's estimator); and tail-loss probes after a probe timeout of silence
// (RFC 8985 §7: a round-trip term with RTTVAR in it plus a floor of its own, never past the RTO).
// Only the IBTA timeout spends a retry, so a peer that never answers fails the QP
// after the same retry_cnt timeouts, at the same time, as with the plain timer.
#include "protocols/rc/rc_qp.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::psn_add;
using wire::psn_diff;
using wire::psn_lt;

// The next probe, PTO << probes after its base, while probes are allowed and an answer is due.
void RcQp::rearm_probe() {
  const bool due = sq_.ackreq_valid && !psn_lt(sq_.ackreq_psn, sq_.una);
  sq_.probe_deadline = sq_.probing && pto_ns_ != 0 && due ? sq_.probe_base_ns + (pto_ns_ << sq_.probes) : kNever;
  update_timer_deadline();
}

// A request the responder answers at once is leaving (note_request_sent's filter passed it): an
// answer is due a round trip from now, so the next probe waits from here (RFC 8985 §7.2 restarts
// the PTO on new data; a go-back-N resend after a NAK counts too, or the probe would fire while
// the resent window is still on its way; a probe's own wait doubles, by sq.probes). A new one is
// timed if nothing is (one packet at a time, RFC 6298 §3).
void RcQp::note_answer_due(const TxDescriptor& d, std::uint64_t now_ns) {
  if (!d.ack_req) {  // selective repeat: only its READ and atomic requests are answered without AckReq
    const wire::OpKind k = wire::opcode_info(d.opcode).kind;
    if (k != wire::OpKind::kReadRequest && k != wire::OpKind::kAtomic) return;
  }
  if (!d.retransmission) {
    sq_.ackreq_valid = true;
    sq_.ackreq_psn = d.psn;
  }
  if (sq_.probing) {
    // Moving an armed deadline later is left to on_timer, which finds it early and re-arms from
    // this base: one store per packet instead of a deadline recomputed per packet.
    sq_.probe_base_ns = now_ns;
    if (sq_.probe_deadline == kNever) rearm_probe();
  }
  if (d.retransmission || sq_.rtt_timing) return;
  sq_.rtt_timing = true;
  sq_.rtt_psn = d.psn;
  sq_.rtt_sent_ns = now_ns;
}

void RcQp::disarm_loss_timers() {
  sq_.ibta_deadline = sq_.rto_deadline = sq_.probe_deadline = sq_.timer_deadline = kNever;
  sq_.probe_pending = false;
}

// A silence starts at `from_ns`: progress, a NAK, the end of an RNR wait, or a request sent with
// nothing outstanding. The IBTA and adaptive timeouts count from it; the probes start over, due
// a PTO after it or after the newest request that asks for an answer (note_request_sent)
// — only while such an answer is due: a QP still sending a long message, waiting for its turn at
// the port, has asked for nothing yet.
void RcQp::arm_loss_timers(std::uint64_t from_ns) {
  sq_.probes = 0;
  if (ack_timeout_ns_ == 0 || !psn_lt(sq_.una, sq_.high)) {
    disarm_loss_timers();
    return;
  }
  sq_.ibta_deadline = from_ns + ack_timeout_ns_;
  // Without a round trip measured rto_ns_ is the IBTA timeout and pto_ns_ 0: the plain timer.
  sq_.rto_deadline = adaptive_ ? from_ns + rto_ns_ : kNever;
  sq_.probing = adaptive_;
  sq_.probe_base_ns = from_ns;
  rearm_probe();
}

void RcQp::on_timer(std::uint64_t now_ns) {
  if (state_ != QpState::kRts || sq_.timer_deadline == kNever || now_ns < sq_.timer_deadline) return;
  if (!psn_lt(sq_.una, sq_.high)) {  // nothing unacknowledged: disarm
    disarm_loss_timers();
    return;
  }
  // The IBTA deadline first: an adaptive deadline capped to it is the IBTA timeout itself.
  if (now_ns >= sq_.ibta_deadline)
    expire_and_resend(now_ns, /*ibta=*/true);
  else if (now_ns >= sq_.rto_deadline)
    expire_and_resend(now_ns, /*ibta=*/false);
  else if (now_ns < sq_.probe_base_ns + (pto_ns_ << sq_.probes))
    rearm_probe();  // a request asking for an answer left since the probe was armed: wait from it
  else
    start_probe(now_ns);
}

// An expiry: everything unacknowledged is resent (go-back-N from sq.una; selective repeat what
// the responder does not hold). Nothing came for a whole timeout, so nothing in flight can be
// trusted to arrive: asking the oldest request alone, as the implied NAK does, sends one frame per
// timeout, and a loss burst counted in frames (the lab's --burst-frames) would outlast the retry
// count. The IBTA timeout spends a retry (§9.7.6.1.3); an adaptive one does not. Either doubles the
// next adaptive timeout (RFC 6298 §5.5) until a round trip is measured again, and the probes wait
// for progress: after an expiry the timer backs off alone.
void RcQp::expire_and_resend(std::uint64_t now_ns, bool ibta) {
  ++c_.local_ack_timeout_err;
  if (ibta) {
    if (!retry_or_fail(false)) return;
  } else {
    ++c_.adaptive_timeouts;
  }
  if (adaptive_ && sq_.rto_backoff < kMaxRtoBackoff) {
    ++sq_.rto_backoff;
    update_rto();
  }
  // The silence outlasted the RTO, so no probe ran in it: the probe timeout had backed off past
  // the RTO (needless probes double it, only a probe that finds a loss halves it). Without this,
  // a backed-off PTO never probes again to come down, and every later lost NAK or tail waits for
  // the RTO (seen: 75-120 adaptive expiries per 5 s go-back-N run at 1 % loss, half the goodput).
  if (adaptive_) back_off_pto(/*found_loss=*/true);
  sq_.probe_pending = false;
  sq_.probe_open = false;
  sq_.probing = false;
  sq_.resend_open = true;
  sq_.resend_probe = false;
  // Go-back-0: the oldest message from its first packet (the responder keeps no part of it).
  if (gb0_ && sq_.head != sq_.tail) gb0_forget_from(sq_at(sq_.head).first_psn);
  sq_.resend_psn = sq_.una;
  sq_.resend_ns = now_ns;
  if (sr_)
    sr_mark_unsacked_lost();
  else
    rewind_to(sq_.una);
  if (ibta) sq_.ibta_deadline = now_ns + ack_timeout_ns_;
  sq_.rto_deadline = adaptive_ ? now_ns + rto_ns_ : kNever;
  rearm_probe();
}

// A probe timeout without an acknowledgement while requests are outstanding (RFC 8985 §7.2): a
// probe is due, and the next one twice as far, until the RTO would come first. Each is one packet
// that asks for an acknowledgement, and none spends a retry.
void RcQp::start_probe(std::uint64_t now_ns) {
  sq_.probe_pending = true;
  if (sq_.probes < kMaxRtoBackoff) ++sq_.probes;
  sq_.probe_base_ns = now_ns;
  rearm_probe();
}

// Selective repeat's probe (RFC 8985 §7.3: the last packet): the newest PSN in flight that no SACK
// showed held (a READ's or atomic's: not answered), marked lost and resent with AckReq; the SACK
// that answers it shows every hole below it, and on_sack resends them. When every PSN looks held
// the oldest goes, as after a timeout (sr_mark_unsacked_lost): unacknowledged, it was released,
// or the SACKs saying so were lost, and its answer brings a fresh SACK. Bounded by the PSNs in
// flight (at most kSrWindow).
void RcQp::sr_mark_probe(std::uint64_t now_ns) {
  std::uint32_t p = psn_add(sq_.high, -1);
  for (;; p = psn_add(p, -1)) {
    const std::uint8_t f = sr_tx_at(p);
    if ((f & kSrReadAtomic) != 0 ? (f & kSrAnswered) == 0 : (f & kSrSacked) == 0) break;
    if (p == sq_.una) break;
  }
  std::uint8_t& f = sr_tx_at(p);
  if ((f & kSrAnswered) != 0) return;  // the oldest is a READ's answered PSN: nothing to ask
  sr_set_lost(f);
  sq_.sr_lost = true;
  ++c_.tail_probes;
  sq_.resend_open = true;
  sq_.resend_probe = true;
  sq_.resend_psn = p;
  sq_.resend_ns = now_ns;
}

// Go-back-N: which ACK answers the probe. The responder answers the probe with its ePSN - 1 when
// the probe arrives, after every packet sent before it (one path, in order), so that answer shows
// what was lost: every packet sent before the probe from ePSN on. But ACKs the responder sent
// before the probe arrived are still arriving after it leaves, each for a PSN below that answer,
// and on a path whose round trip a queue or a descheduled peer has stretched they come late, long
// after min RTT; taking one of them for the answer rewinds go-back-N over packets that were never
// lost. RFC 8985 acts only on what an ACK shows of packets sent after the lost one (§6.2, RACK's
// rule), and so does this: an ACK is taken for the probe's answer only when no packet sent before
// the probe could have drawn it (answers_a_resend). Any other ACK is progress (it re-arms the probe
// timeout), never a reason to rewind (but may draw a follow-up probe, on_ack_or_nak); one for a packet sent
// after the probe closes it unjudged. The answer is taken whenever it comes: a lone probe meets no
// queue and may come back sooner than min RTT, which packets of a window set (a re-ACK of sq.una - 1
// that soon is an earlier resend's, on_response). An answer that shows nothing
// missing made the probe needless: the PTO backs off (back_off_pto). A response that is not an ACK
// ends the probe too (the caller): a NAK rewinds on its own, a READ response or atomic
// acknowledgement goes through the implied NAK.
void RcQp::on_probe_answer(std::uint32_t acked_psn, bool answers_probe,
                           std::uint64_t /*now_ns: the answer is taken whenever it comes*/) {
  if (!answers_probe) {
    // An ACK for a packet sent after the probe: the answer came before it (or was coalesced into
    // it, queue_ack), and every packet the probe asked about is acknowledged. One for a packet sent
    // before it may draw a follow-up probe (on_ack_or_nak).
    if (!psn_lt(acked_psn, sq_.probe_high)) sq_.probe_open = false;
    return;
  }
  sq_.probe_open = false;
  if (state_ != QpState::kRts) return;
  const std::uint32_t from = psn_add(acked_psn, 1);
  const bool lost = psn_lt(from, sq_.probe_high) && psn_lt(from, sq_.nxt);
  if (lost) rewind_to(from);
  back_off_pto(lost);
}

// Whether an ACK for `acked_psn` (not below sq.una) can only have been drawn by a resent packet (the
// probe), never by a first transmission. A responder ACKs a packet that arrives in sequence only if
// it asks (AckReq, §9.7.5.1.2; coalescing keeps the newest such PSN), and re-ACKs a duplicate with
// its ePSN - 1 (C9-105). So an ACK for a SEND or WRITE packet that left without AckReq (not a
// message's last packet, in a message no longer than ack_req_every packets: next_request asks on
// the last packet and every ack_req_every packets, counting from the message's first or a rewind's)
// answers the probe, which found the responder's ePSN there. The other form of the answer, a re-ACK
// of sq.una - 1 once the ACKs in flight before the probe are in (the probed packet had arrived),
// acknowledges nothing and is taken before retiring anything (on_response). Bounded by the send
// queue; called only while a probe is open.
bool RcQp::answers_a_resend(std::uint32_t acked_psn) const {
  const std::uint64_t i = response_target(acked_psn);
  if (i == sq_.tail) return false;
  const SendWqe& w = sq_.ring[i & sq_mask_];
  if (is_read_or_atomic(w.wr.opcode)) return false;
  const auto idx = static_cast<std::uint32_t>(psn_diff(acked_psn, w.first_psn));
  return idx + 1 < w.npkts && w.npkts <= attr_.ack_req_every;
}

// The PTO adapts to what probes find (rtt_estimator.h, kMaxPtoBackoff): kNeedlessProbesPerBackoff
// needless probes in a row (nothing found lost) double it, one that found a loss halves it again
// and starts the count over. A needless probe costs one packet, where a lost tail left waiting
// costs the whole PTO: a single stall of the peer (one late answer) does not double the wait of
// every loss after it, while a path whose round trip the PTO really undershoots still backs it off
// within a few probes. The RTO caps it (update_rto).
void RcQp::back_off_pto(bool found_loss) {
  if (found_loss) {
    sq_.needless_probes = 0;
    if (sq_.pto_backoff == 0) return;
    --sq_.pto_backoff;
  } else {
    if (++sq_.needless_probes < kNeedlessProbesPerBackoff) return;
    sq_.needless_probes = 0;
    if (sq_.pto_backoff >= kMaxPtoBackoff) return;
    ++sq_.pto_backoff;
  }
  update_rto();
}

// A response covered the timed packet: one round trip. The backoff ends with it: Karn's algorithm
// keeps a backed-off timeout until a packet that was never resent is acknowledged (RFC 6298 §5).
void RcQp::take_rtt_sample(std::uint64_t now_ns) {
  sq_.rtt_timing = false;
  rtt_.sample(now_ns > sq_.rtt_sent_ns ? now_ns - sq_.rtt_sent_ns : 0);
  sq_.rto_backoff = 0;
  update_rto();
}

// A timer or probe resend is spurious when a response covering its PSN arrives sooner than the
// smallest round trip ever measured after it left: that response answered the first
// transmission, which was never lost. (A resend answered later may still have been needless; the
// rule counts only the ones that certainly were.)
void RcQp::judge_resend(std::uint64_t now_ns) {
  sq_.resend_open = false;
  if (!rtt_.valid() || now_ns - sq_.resend_ns >= rtt_.min_rtt_ns()) return;
  ++c_.spurious_retransmits;
  if (sq_.resend_probe) back_off_pto(false);  // a needless probe: the PTO backs off
}

}  // namespace droce::rc
