// Selective repeat, send side (docs/selective-repeat.md): new packets under the BDP cap, resends of
// exactly the PSNs a SACK (or a timeout, or an RNR NAK) shows missing, completions in order.
#include <cstring>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/ib_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::psn_add;
using wire::psn_diff;
using wire::psn_lt;

namespace {

std::uint64_t load_be64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return __builtin_bswap64(v);
}

}  // namespace

// What leaves next: a resend first (the responder waits on it to deliver in order), then a new
// packet while fewer than sr_bdp_pkts PSNs are unacknowledged. The cap (IRN's BDP-FC) keeps a
// lossy path from filling the switch queues, and keeps every PSN in flight inside the
// responder's window, whose start (ePSN) is never behind sq.una. sq.nxt only moves forward:
// nothing is ever rewound.
bool RcQp::next_request_sr(std::uint64_t now_ns, TxDescriptor& d) {
  if (sq_.rnr_until != kNever) {
    if (now_ns < sq_.rnr_until) return false;  // §9.7.5.2.8: wait out the RNR NAK timer
    sq_.rnr_until = kNever;
  }
  if (sq_.probe_pending) {  // requester_timers.cc: marked here, sent as a resend
    sq_.probe_pending = false;
    sr_mark_probe(now_ns);
  }
  if (sq_.sr_lost && sr_resend_lost(now_ns, d)) return true;
  if (sq_.cur == sq_.tail) return false;
  if (psn_diff(sq_.nxt, sq_.una) >= static_cast<std::int32_t>(attr_.sr_bdp_pkts)) return false;
  SendWqe& w = sq_at(sq_.cur);
  if (is_read_or_atomic(w.wr.opcode)) return next_read_or_atomic_sr(w, now_ns, d);  // requester_sr_read.cc
  const std::int32_t pos = psn_diff(sq_.nxt, w.first_psn);
  if (pos < 0 || static_cast<std::uint32_t>(pos) >= w.npkts) {
    sq_.nxt = w.first_psn;  // cannot happen by construction; never send garbage
    return false;
  }
  const auto idx = static_cast<std::uint32_t>(pos);
  fill_sr_packet(w, idx, d);
  const bool last = idx + 1 == w.npkts;
  // AckReq as go-back-N asks it (§9.7.4.1.3): last packet of a message, and every ack_req_every.
  d.ack_req = last || ++sq_.since_ack_req >= attr_.ack_req_every;
  if (d.ack_req) sq_.since_ack_req = 0;
  sr_tx_at(d.psn) = 0;  // a new PSN in the slot: nothing held, nothing lost
  sr_tx_seq_at(d.psn) = ++sq_.sr_sends;
  sq_.nxt = psn_add(sq_.nxt, 1);
  if (last) ++sq_.cur;
  if (psn_lt(sq_.high, sq_.nxt)) sq_.high = sq_.nxt;
  sent_request(d, now_ns);
  return true;
}

// The oldest PSN marked lost and not held by the responder, resent with AckReq (its SACK says
// whether the gap closed); or the oldest READ or atomic PSN marked lost and not answered, asked
// again (held or not: its response is what is missing). Bounded by the PSNs in flight (at most
// kSrWindow).
bool RcQp::sr_resend_lost(std::uint64_t now_ns, TxDescriptor& d) {
  for (std::uint32_t p = sq_.una; psn_lt(p, sq_.high); p = psn_add(p, 1)) {
    std::uint8_t& f = sr_tx_at(p);
    if ((f & kSrLost) == 0) continue;
    f = static_cast<std::uint8_t>(f & ~kSrLost);
    if ((f & kSrReadAtomic) != 0 ? (f & kSrAnswered) != 0 : (f & kSrSacked) != 0) continue;
    const std::uint64_t i = response_target(p);
    if (i == sq_.tail) continue;
    const SendWqe& w = sq_at(i);
    if ((f & kSrReadAtomic) != 0) {
      sr_resend_read_or_atomic(w, p, now_ns, d);
      return true;
    }
    fill_sr_packet(w, static_cast<std::uint32_t>(psn_diff(p, w.first_psn)), d);
    d.ack_req = true;
    d.retransmission = true;
    f = static_cast<std::uint8_t>(f | kSrResent);
    sr_tx_seq_at(p) = ++sq_.sr_sends;
    sent_request(d, now_ns);
    return true;
  }
  sq_.sr_lost = false;
  return false;
}

// Every PSN in flight the responder does not hold is resent, and every READ or atomic PSN whose
// response is missing asked again (the local ACK timer fired: a resend may itself have been lost,
// so the once-per-SACK rule starts over). The oldest is resent even if
// a SACK showed it held: it is not acknowledged, so the responder released it (or the SACKs saying
// so were lost), and its answer brings a fresh SACK — without it a requester whose every PSN in
// flight looked held would send nothing and time out until its retries ran out.
void RcQp::sr_mark_unsacked_lost() {
  for (std::uint32_t p = sq_.una; psn_lt(p, sq_.high); p = psn_add(p, 1)) {
    std::uint8_t& f = sr_tx_at(p);
    if ((f & kSrAnswered) == 0 && ((f & kSrSacked) == 0 || (f & kSrReadAtomic) != 0)) sr_set_lost(f);
  }
  if (psn_lt(sq_.una, sq_.high) && (sr_tx_at(sq_.una) & kSrAnswered) == 0) sr_set_lost(sr_tx_at(sq_.una));
  sq_.sr_lost = true;
}

// An RNR NAK's PSN (or a sequence NAK's, from a peer that sends one) and every PSN after it that
// the responder does not hold are resent: a responder without a receive for a SEND drops the
// SEND packets behind it unheld too (docs/selective-repeat.md), and nothing later would show them
// missing but the ACK timer, a retry per RNR episode.
void RcQp::sr_mark_lost(std::uint32_t psn) {
  if (psn_lt(psn, sq_.una) || !psn_lt(psn, sq_.high)) return;
  sr_set_lost(sr_tx_at(psn));  // the NAK's PSN is not held, whatever an earlier SACK said
  for (std::uint32_t p = psn_add(psn, 1); psn_lt(p, sq_.high); p = psn_add(p, 1)) {
    std::uint8_t& f = sr_tx_at(p);
    if ((f & (kSrSacked | kSrAnswered)) == 0) sr_set_lost(f);
  }
  sq_.sr_lost = true;
}

// A SACK (docs/selective-repeat.md). Its PSN acknowledges cumulatively: WQEs retire through it,
// completing in order, and the ACK timer restarts on progress, as an ACK's (§9.7.5.2.1). Its
// bitmap marks what the responder holds beyond; a PSN below the highest held one and not held is
// lost, and is resent (IRN's loss recovery: no retry is spent). A resent PSN is asked again only
// when a packet sent after its resend is newly held while it is still missing: the resend was
// lost too (a later send overtook it), which the SACKs show well before the ACK timer would. A
// SACK is a snapshot of what the responder holds, so a PSN it no longer shows is no longer held:
// the responder released it (a WRITE with immediate that found no receive at delivery), and it
// is resent like any other missing PSN. A SACK older than what is known, or for PSNs never sent,
// acknowledges nothing.
void RcQp::on_sack(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns) {
  if (pi.payload_len != wire::kSackBytes || (pi.aeth_syndrome & wire::kAethTypeMask) != wire::kAethTypeAck) {
    ++c_.duplicate_responses;  // not a SACK this responder sends: nothing to learn from it
    return;
  }
  const std::uint32_t cum = pi.psn;
  if (!psn_lt(cum, sq_.high)) {
    ++c_.ghost_acks;
    return;
  }
  if (psn_lt(cum, psn_add(sq_.una, -1))) {
    ++c_.duplicate_responses;
    return;
  }
  ++c_.acks_received;
  answered_through(cum, now_ns);
  retire_through(cum, now_ns);
  if (state_ != QpState::kRts) return;
  // What is acknowledged but not retired (a READ or atomic waiting for its response, and what
  // follows it) is held by the responder: executed, never to be resent as a request.
  // A READ's or atomic's PSN marked lost stays so: its response is what is missing.
  for (std::uint32_t p = sq_.una; !psn_lt(cum, p); p = psn_add(p, 1)) {
    std::uint8_t& f = sr_tx_at(p);
    f = static_cast<std::uint8_t>(((f & kSrReadAtomic) != 0 ? f : f & ~kSrLost) | kSrSacked);
  }
  const std::uint64_t words[2] = {load_be64(payload), load_be64(payload + 8)};
  bool held_any = false, held_new = false;
  std::uint32_t highest = 0;
  std::uint32_t newest_send = 0;  // the latest send (sq.sr_sends number) among the newly held PSNs
  for (std::uint32_t i = 0; i < wire::kSrWindow; ++i) {
    const std::uint32_t p = psn_add(cum, 1 + static_cast<std::int64_t>(i));
    if (!psn_lt(p, sq_.high)) break;
    std::uint8_t& f = sr_tx_at(p);
    if (i == 0 || (words[i / 64] >> (i % 64) & 1) == 0) {  // bit 0 is ePSN: missing by definition
      f = static_cast<std::uint8_t>(f & ~kSrSacked);
      continue;
    }
    if ((f & kSrSacked) == 0) {
      if (!held_new || static_cast<std::int32_t>(sr_tx_seq_at(p) - newest_send) > 0) newest_send = sr_tx_seq_at(p);
      held_new = true;
    }
    f = static_cast<std::uint8_t>(f | kSrSacked);
    held_any = true;
    highest = p;
  }
  if (!held_any) return;
  sr_answered_held(now_ns);
  for (std::uint32_t p = sq_.una; psn_lt(p, highest); p = psn_add(p, 1)) {
    std::uint8_t& f = sr_tx_at(p);
    if ((f & (kSrSacked | kSrLost | kSrAnswered)) != 0) continue;
    if ((f & kSrResent) != 0 && !(held_new && static_cast<std::int32_t>(newest_send - sr_tx_seq_at(p)) > 0)) continue;
    sr_set_lost(f);
    sq_.sr_lost = true;
    ++c_.sr_resent_on_sack;
  }
  // The responder is answering: what it holds is progress, though not cumulative.
  if (held_new) restart_ack_timer(now_ns);
}

}  // namespace droce::rc
