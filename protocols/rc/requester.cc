// Requester (IBTA §9.7.4): segmentation by PMTU, PSN window, AckReq policy, go-back-N rewind.
#include "protocols/rc/rc_qp.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::Opcode;
using wire::psn_add;
using wire::psn_diff;
using wire::psn_lt;

namespace {

std::uint8_t op(Opcode o) { return static_cast<std::uint8_t>(o); }

// Opcode of packet `idx` of `n` for a SEND or WRITE (§9.5 packet sequences).
std::uint8_t request_opcode(WrOpcode wr, std::uint32_t idx, std::uint32_t n) {
  const bool first = idx == 0, last = idx + 1 == n;
  switch (wr) {
    case WrOpcode::kSend:
      return op(first && last ? Opcode::kSendOnly
                : first       ? Opcode::kSendFirst
                : last        ? Opcode::kSendLast
                              : Opcode::kSendMiddle);
    case WrOpcode::kSendWithImm:
      return op(first && last ? Opcode::kSendOnlyImm
                : first       ? Opcode::kSendFirst
                : last        ? Opcode::kSendLastImm
                              : Opcode::kSendMiddle);
    case WrOpcode::kSendWithInv:
      // The IETH rides on the message's last packet only (§9.3.7; opcodes 0x16/0x17, §9.2.1).
      return op(first && last ? Opcode::kSendOnlyInv
                : first       ? Opcode::kSendFirst
                : last        ? Opcode::kSendLastInv
                              : Opcode::kSendMiddle);
    case WrOpcode::kWrite:
      return op(first && last ? Opcode::kWriteOnly
                : first       ? Opcode::kWriteFirst
                : last        ? Opcode::kWriteLast
                              : Opcode::kWriteMiddle);
    case WrOpcode::kWriteWithImm:
      return op(first && last ? Opcode::kWriteOnlyImm
                : first       ? Opcode::kWriteFirst
                : last        ? Opcode::kWriteLastImm
                              : Opcode::kWriteMiddle);
    case WrOpcode::kRead:
      return op(Opcode::kReadRequest);
    case WrOpcode::kCmpSwap:
      return op(Opcode::kCmpSwap);
    case WrOpcode::kFetchAdd:
      return op(Opcode::kFetchAdd);
  }
  return 0;
}

}  // namespace

// A READ request for the rest of the READ from response `idx`, or the atomic's request. A READ
// consumes one PSN per expected response (§9.7.4.1.4); an atomic one (§9.4.5). A request sent
// again carries the same operands: the responder answers a duplicate atomic from its saved result
// (§9.7.5.1.1), so it runs once.
void RcQp::fill_read_or_atomic(SendWqe& w, std::uint32_t idx, TxDescriptor& d) {
  d.psn = psn_add(w.first_psn, idx);
  d.opcode = request_opcode(w.wr.opcode, idx, w.npkts);
  d.ack_req = true;
  if (w.wr.opcode == WrOpcode::kRead) {
    const std::uint32_t offset = idx * attr_.pmtu;
    d.reth_va = w.wr.remote_addr + offset;
    d.reth_rkey = w.wr.rkey;
    d.reth_len = w.wr.sge.length - offset;
  } else {
    d.atomic_va = w.wr.remote_addr;
    d.atomic_rkey = w.wr.rkey;
    d.atomic_swap_add = w.wr.opcode == WrOpcode::kCmpSwap ? w.wr.swap : w.wr.compare_add;
    d.atomic_compare = w.wr.opcode == WrOpcode::kCmpSwap ? w.wr.compare_add : 0;
  }
  w.read_req_start = idx;
  w.read_reissued = psn_lt(d.psn, sq_.high);
  take_rd_credit(w);
  if (w.reissue_wanted) {  // sent again anyway (a rewind reached it): no separate re-issue
    w.reissue_wanted = false;
    --sq_.reissues_wanted;
  }
}

// Packet `idx` of a SEND or WRITE as selective repeat sends it (docs/selective-repeat.md): the SR
// opcode of its RC counterpart, and a RETH on every packet that places it — a WRITE packet's own
// target address, a SEND packet's offset in its message and the message's receive sequence
// number — with the message's length. First send and resend alike.
void RcQp::fill_sr_packet(const SendWqe& w, std::uint32_t idx, TxDescriptor& d) {
  const std::uint32_t len = w.wr.sge.length;
  const std::uint32_t offset = idx * attr_.pmtu;
  d = TxDescriptor{};
  d.psn = psn_add(w.first_psn, idx);
  d.opcode = wire::sr_opcode_of(request_opcode(w.wr.opcode, idx, w.npkts));
  d.payload = w.local + offset;
  d.payload_len = len == 0 ? 0 : (len - offset < attr_.pmtu ? len - offset : attr_.pmtu);
  const auto& info = wire::opcode_info(d.opcode);
  if (info.kind == wire::OpKind::kWrite) {
    d.reth_va = w.wr.remote_addr + offset;
    d.reth_rkey = w.wr.rkey;
  } else {
    d.reth_va = offset;
    d.reth_rkey = w.rsn;
  }
  d.reth_len = len;
  d.imm = w.wr.imm;
  if (info.headers & wire::kHdrIeth) d.ieth_rkey = w.wr.invalidate_rkey;
  d.se = idx + 1 == w.npkts && w.wr.solicited;
}

// Packet `idx` of a SEND or WRITE (§9.5 packet sequences): its opcode, its part of the message,
// the RETH on the first packet, the immediate and IETH on the last. AckReq is the caller's.
// Inline: next_request's every packet comes through here, and so does send_probe below (both in
// this file); called out of line it cost ~20 instructions a frame (bench/callgrind).
[[gnu::always_inline]] inline void RcQp::fill_send_write(const SendWqe& w, std::uint32_t idx, TxDescriptor& d) const {
  const std::uint32_t len = w.wr.sge.length;
  const std::uint32_t offset = idx * attr_.pmtu;
  d.psn = psn_add(w.first_psn, idx);
  d.opcode = request_opcode(w.wr.opcode, idx, w.npkts);
  d.payload = w.local + offset;
  d.payload_len = len == 0 ? 0 : (len - offset < attr_.pmtu ? len - offset : attr_.pmtu);
  const auto& info = wire::opcode_info(d.opcode);
  if (info.headers & wire::kHdrReth) {
    d.reth_va = w.wr.remote_addr;
    d.reth_rkey = w.wr.rkey;
    d.reth_len = len;
  }
  d.imm = w.wr.imm;
  if (info.headers & wire::kHdrIeth) d.ieth_rkey = w.wr.invalidate_rkey;
  d.se = idx + 1 == w.npkts && w.wr.solicited;
}

// The tail-loss probe itself (the timers that make it due are requester_timers.cc's). Go-back-N resends the oldest
// unacknowledged packet with AckReq: whatever the responder's state, it answers with its ePSN - 1 (the packet is its
// ePSN: executed and ACKed; older: a duplicate, re-ACKed, C9-105, even in its NAK-sent state, which drops every later
// packet silently). So the probe recovers a lost tail, a lost ACK and a lost NAK against any
// responder (on_probe_answer). A READ or atomic there is asked again from its first missing
// response. Selective repeat marks its newest packet the responder is not known to hold
// (sr_mark_probe) and sends it through its resends.
bool RcQp::send_probe(std::uint64_t now_ns, TxDescriptor& d) {
  sq_.probe_pending = false;
  if (!psn_lt(sq_.una, sq_.high)) return false;
  std::uint64_t i = response_target(sq_.una);
  // A READ or atomic whose responses are all in is executed, only not retired yet (a rewind left
  // it looking unsent): asking it again would replay it at best. The probe is the first packet
  // after it that still waits — as skip_answered_requests passes it on a rewind.
  while (i != sq_.tail && is_read_or_atomic(sq_at(i).wr.opcode) && !awaits_response(sq_at(i))) ++i;
  if (i == sq_.tail || (i >= sq_.cur && !psn_lt(sq_at(i).first_psn, sq_.nxt))) return false;  // nothing sent waits
  SendWqe& w = sq_at(i);
  const std::int32_t off = psn_diff(sq_.una, w.first_psn);
  const std::uint32_t idx = off > 0 ? static_cast<std::uint32_t>(off) : 0;
  d = TxDescriptor{};
  if (is_read_or_atomic(w.wr.opcode)) {
    fill_read_or_atomic(w, idx > w.read_pkts_done ? idx : w.read_pkts_done, d);
  } else {
    fill_send_write(w, idx, d);
    d.ack_req = true;
  }
  d.retransmission = true;
  ++c_.tail_probes;
  sq_.probe_open = true;
  sq_.probe_high = sq_.high;
  sq_.probe_sent_ns = now_ns;
  sq_.resend_open = true;
  sq_.resend_probe = true;
  sq_.resend_psn = d.psn;
  sq_.resend_ns = now_ns;
  sent_request(d, now_ns);
  return true;
}

// The READs and atomics the implied NAK asks again (completer.cc, implied_nak_through), each on
// its own, from its first missing response; sq.nxt and sq.cur stay where they are, since the
// requests behind them were received and are being answered.
bool RcQp::next_reissue(std::uint64_t now_ns, TxDescriptor& d) {
  for (std::uint64_t i = sq_.head; i != sq_.cur && i != sq_.tail; ++i) {
    SendWqe& w = sq_at(i);
    if (!w.reissue_wanted) continue;
    if (!awaits_response(w)) {  // its response came after all (a late one): nothing to ask
      w.reissue_wanted = false;
      --sq_.reissues_wanted;
      continue;
    }
    d = TxDescriptor{};
    fill_read_or_atomic(w, w.read_pkts_done, d);
    d.retransmission = true;
    w.read_reissued = true;
    sent_request(d, now_ns);
    return true;
  }
  sq_.reissues_wanted = 0;  // the rest were sent again by a rewind (or retired): nothing left
  return false;
}

bool RcQp::next_request(std::uint64_t now_ns, TxDescriptor& d) {
  if (sq_.rnr_until != kNever) {
    if (now_ns < sq_.rnr_until) return false;  // §9.7.5.2.8: wait out the RNR NAK timer
    sq_.rnr_until = kNever;
  }
  if (sq_.probe_pending && send_probe(now_ns, d)) return true;  // a tail-loss probe is due
  if (sq_.reissues_wanted != 0 && next_reissue(now_ns, d)) return true;
  if (psn_lt(sq_.nxt, sq_.high)) skip_answered_requests();  // only a rewind meets answered requests
  if (sq_.cur == sq_.tail) return false;
  const std::int32_t in_flight = psn_diff(sq_.nxt, sq_.una);
  if (in_flight > 0 && static_cast<std::uint32_t>(in_flight) >= attr_.window_psns) return false;
  SendWqe& w = sq_at(sq_.cur);
  if (!rd_credit_available(w)) return false;
  const std::int32_t pos = psn_diff(sq_.nxt, w.first_psn);
  if (pos < 0 || static_cast<std::uint32_t>(pos) >= w.npkts) {
    // sq.nxt and sq.cur disagree: cannot happen by construction; resynchronise, never send garbage.
    sq_.nxt = w.first_psn;
    return false;
  }
  const auto idx = static_cast<std::uint32_t>(pos);
  const bool retransmission = psn_lt(sq_.nxt, sq_.high);
  if (is_read_or_atomic(w.wr.opcode)) {
    d = TxDescriptor{};  // rare: fill_read_or_atomic sets only its own fields
    // A READ sent again asks only for the responses it still misses: those before read_pkts_done
    // are placed, and Linux rxe silently drops a duplicate READ that starts before the point its
    // last replay of that READ started (rxe_resp.c, duplicate_request: iova < va_org), so asking
    // from 0 after an implied NAK re-asked from the middle would be lost on every retry.
    fill_read_or_atomic(w, idx > w.read_pkts_done ? idx : w.read_pkts_done, d);
    sq_.nxt = psn_add(w.first_psn, w.npkts);
    sq_.since_ack_req = 0;
    ++sq_.cur;
  } else {
    // No reset: fill_send_write sets every field a SEND or WRITE packet's readers may read
    // (TxDescriptor's rule, types.h); the reset of the whole descriptor cost ~18 instructions a
    // frame (bench/callgrind/results.md).
    fill_send_write(w, idx, d);
    const bool last = idx + 1 == w.npkts;
    // AckReq on the last packet of every message and at least every ack_req_every packets,
    // so long messages keep the window moving (§9.7.4.1.3).
    d.ack_req = last || ++sq_.since_ack_req >= attr_.ack_req_every;
    if (d.ack_req) sq_.since_ack_req = 0;
    sq_.nxt = psn_add(sq_.nxt, 1);
    if (last) ++sq_.cur;
  }
  d.retransmission = retransmission;
  if (psn_lt(sq_.high, sq_.nxt)) sq_.high = sq_.nxt;
  sent_request(d, now_ns);
  return true;
}

// A rewind passes READs and atomics whose responses have all arrived (they wait only for an earlier
// request to complete, in order): the responder executed them, so asking again would only replay
// them. Bounded by the send queue.
void RcQp::skip_answered_requests() {
  while (sq_.cur != sq_.tail) {
    const SendWqe& w = sq_at(sq_.cur);
    if (!is_read_or_atomic(w.wr.opcode) || awaits_response(w)) return;
    sq_.nxt = psn_add(w.first_psn, w.npkts);
    ++sq_.cur;
  }
}

bool RcQp::outstanding_contains(std::uint32_t psn) const {
  for (std::uint64_t i = sq_.head; i != sq_.tail; ++i) {
    const SendWqe& w = sq_.ring[i & sq_mask_];
    const std::int32_t off = psn_diff(psn, w.first_psn);
    if (off >= 0 && static_cast<std::uint32_t>(off) < w.npkts) return true;
  }
  return false;
}

void RcQp::rewind_to(std::uint32_t psn) {
  // Go-back-N (§9.7.4.1.2): resend from `psn`, which may be mid-message.
  for (std::uint64_t i = sq_.head; i != sq_.tail; ++i) {
    const SendWqe& w = sq_at(i);
    const std::int32_t off = psn_diff(psn, w.first_psn);
    if (off >= 0 && static_cast<std::uint32_t>(off) < w.npkts) {
      sq_.cur = i;
      sq_.nxt = psn;
      sq_.since_ack_req = 0;
      return;
    }
  }
  // Nothing outstanding contains the PSN: everything before it is done.
  sq_.cur = sq_.tail;
  sq_.nxt = sq_.post_psn;
}

}  // namespace droce::rc
