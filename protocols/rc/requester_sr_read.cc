// Selective repeat, send side of RDMA READ and the atomics (docs/selective-repeat.md): one request
// for a READ's PSNs, responses placed by their PSN as they come, in any order, and only the
// responses shown missing asked again; an atomic asked again is answered from the responder's
// saved result. Completions stay in posting order.
#include <cstring>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::psn_add;
using wire::psn_diff;
using wire::psn_lt;

// The SR request for responses idx .. idx + npkts - 1 of a READ (the RETH names their bytes: the
// address of response idx and the length up to the last one), or the atomic's request. The
// responses acknowledge it: no AckReq.
void RcQp::fill_sr_read_or_atomic(const SendWqe& w, std::uint32_t idx, std::uint32_t npkts, TxDescriptor& d) const {
  d = TxDescriptor{};
  d.psn = psn_add(w.first_psn, idx);
  if (w.wr.opcode == WrOpcode::kRead) {
    d.opcode = static_cast<std::uint8_t>(wire::Opcode::kSrReadRequest);
    const std::uint64_t offset = static_cast<std::uint64_t>(idx) * attr_.pmtu;
    const std::uint64_t left = w.wr.sge.length - offset;
    const std::uint64_t asked = static_cast<std::uint64_t>(npkts) * attr_.pmtu;
    d.reth_va = w.wr.remote_addr + offset;
    d.reth_rkey = w.wr.rkey;
    d.reth_len = static_cast<std::uint32_t>(left < asked ? left : asked);
    return;
  }
  d.opcode = wire::sr_opcode_of(
      static_cast<std::uint8_t>(w.wr.opcode == WrOpcode::kCmpSwap ? wire::Opcode::kCmpSwap : wire::Opcode::kFetchAdd));
  d.atomic_va = w.wr.remote_addr;
  d.atomic_rkey = w.wr.rkey;
  d.atomic_swap_add = w.wr.opcode == WrOpcode::kCmpSwap ? w.wr.swap : w.wr.compare_add;
  d.atomic_compare = w.wr.opcode == WrOpcode::kCmpSwap ? w.wr.compare_add : 0;
}

// A new READ or atomic: it waits for a READ/atomic credit (max_rd_atomic, §9.4.4), and for room
// for all its PSNs under the BDP cap (post_send refuses a READ longer than the cap). Its PSNs are
// flagged as answered by a response, all with the number of this send.
bool RcQp::next_read_or_atomic_sr(SendWqe& w, std::uint64_t now_ns, TxDescriptor& d) {
  if (!rd_credit_available(w)) return false;
  if (psn_diff(psn_add(w.first_psn, w.npkts), sq_.una) > static_cast<std::int32_t>(attr_.sr_bdp_pkts)) return false;
  if (sq_.nxt != w.first_psn) {
    sq_.nxt = w.first_psn;  // cannot happen by construction; never send garbage
    return false;
  }
  fill_sr_read_or_atomic(w, 0, w.npkts, d);
  take_rd_credit(w);
  const std::uint32_t seq = ++sq_.sr_sends;
  for (std::uint32_t i = 0; i < w.npkts; ++i) {
    const std::uint32_t p = psn_add(w.first_psn, i);
    sr_tx_at(p) = kSrReadAtomic;
    sr_tx_seq_at(p) = seq;
  }
  sq_.nxt = psn_add(w.first_psn, w.npkts);
  ++sq_.cur;
  if (psn_lt(sq_.high, sq_.nxt)) sq_.high = sq_.nxt;
  sent_request(d, now_ns);
  return true;
}

// PSN `p` of a READ or atomic is marked lost (its request unheld, or its response missing): asked
// again, a READ for the run of PSNs from `p` marked lost with it, in one request. The responder
// holds it anew if the first request never reached it, and answers it from memory (an atomic from
// its saved result) if it executed it already.
void RcQp::sr_resend_read_or_atomic(const SendWqe& w, std::uint32_t p, std::uint64_t now_ns, TxDescriptor& d) {
  const auto idx = static_cast<std::uint32_t>(psn_diff(p, w.first_psn));
  const std::uint32_t seq = ++sq_.sr_sends;
  std::uint32_t n = 1;
  sr_tx_at(p) = static_cast<std::uint8_t>(sr_tx_at(p) | kSrResent);
  sr_tx_seq_at(p) = seq;
  for (; idx + n < w.npkts; ++n) {
    const std::uint32_t q = psn_add(p, n);
    std::uint8_t& f = sr_tx_at(q);
    if ((f & kSrLost) == 0 || (f & kSrAnswered) != 0) break;
    f = static_cast<std::uint8_t>((f & ~kSrLost) | kSrResent);
    sr_tx_seq_at(q) = seq;
  }
  fill_sr_read_or_atomic(w, idx, n, d);
  d.retransmission = true;
  sent_request(d, now_ns);
}

// The responder executes READs and atomics in PSN order and answers a request in the order it
// arrives, so a response for `psn` shows every response of an earlier PSN, asked no later than
// `psn` was, already sent: one still missing here was lost (or is reordered: asking again costs a
// duplicate response, never a wrong byte). It is asked again; one asked after `psn` was may
// still be answered, and waits. Bounded by the PSNs in flight (at most kSrWindow).
void RcQp::sr_responses_lost_before(std::uint32_t psn) {
  const std::uint32_t seq = sr_tx_seq_at(psn);
  for (std::uint32_t p = sq_.una; psn_lt(p, psn); p = psn_add(p, 1)) {
    std::uint8_t& f = sr_tx_at(p);
    if ((f & kSrReadAtomic) == 0 || (f & (kSrAnswered | kSrLost)) != 0) continue;
    if (static_cast<std::int32_t>(seq - sr_tx_seq_at(p)) < 0) continue;
    sr_set_lost(f);
    sq_.sr_lost = true;
    ++c_.sr_reasked_responses;
  }
}

// A response placed for PSN `psn` of `w`: its PSN is answered, earlier missing responses are asked
// again, and a READ whose every response is placed (an atomic with its acknowledgement) completes
// in order (retire_through: nothing before it is left unexecuted, §9.7.5.2.2).
void RcQp::sr_answered(SendWqe& w, std::uint32_t psn, std::uint64_t now_ns) {
  std::uint8_t& f = sr_tx_at(psn);
  f = static_cast<std::uint8_t>((f & ~kSrLost) | kSrAnswered);
  ++w.read_pkts_done;
  sr_responses_lost_before(psn);
  if (w.read_pkts_done == w.npkts) retire_through(psn_add(w.first_psn, w.npkts - 1), now_ns);
  on_progress(now_ns);
}

// An SR READ response: it lands at its READ's buffer at the offset its PSN gives (PSN - the READ's
// first PSN, in PMTUs), whatever arrived before it; its length must be the one that offset asks
// (a PMTU, or the rest of the READ). Its position (FIRST/MIDDLE/LAST/ONLY) counts from the request
// it answers, which may ask for part of the READ: the PSN, not the position, places it. A second
// copy, or one for no READ of ours, is dropped, counted. Arriving at all, it shows the responder
// executed every request before its READ (in PSN order): those retire.
void RcQp::on_sr_read_response(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns) {
  if (response_is_stale(pi)) return;
  const std::uint64_t target = response_target(pi.psn);
  if (target == sq_.tail || sq_at(target).wr.opcode != WrOpcode::kRead ||
      (sr_tx_at(pi.psn) & (kSrReadAtomic | kSrAnswered)) != kSrReadAtomic) {
    ++c_.duplicate_responses;
    return;
  }
  SendWqe& w = sq_at(target);
  const std::uint32_t off = static_cast<std::uint32_t>(psn_diff(pi.psn, w.first_psn)) * attr_.pmtu;
  const std::uint32_t len = w.wr.sge.length;
  const std::uint32_t want = len == 0 ? 0 : (len - off < attr_.pmtu ? len - off : attr_.pmtu);
  if (pi.payload_len != want) {
    ++c_.duplicate_responses;  // not what this PSN of the READ asked: dropped, asked again later
    return;
  }
  answered_through(pi.psn, now_ns);  // executed in PSN order: every request through it arrived
  retire_through(psn_add(w.first_psn, -1), now_ns);
  if (state_ != QpState::kRts) return;
  if (want != 0) std::memcpy(w.local + off, payload, want);
  c_.bytes_copied += want;
  sr_answered(w, pi.psn, now_ns);
}

// An SR ATOMIC ACKNOWLEDGE: the target's original value for the atomic at its PSN (host order into
// the local buffer, as go-back-N's on_atomic_ack), once; anything else is dropped, counted.
void RcQp::on_sr_atomic_ack(const wire::PacketInfo& pi, std::uint64_t now_ns) {
  if (response_is_stale(pi)) return;
  const std::uint64_t target = response_target(pi.psn);
  if (target == sq_.tail || !is_atomic(sq_at(target).wr.opcode) ||
      (sr_tx_at(pi.psn) & (kSrReadAtomic | kSrAnswered)) != kSrReadAtomic ||
      (pi.aeth_syndrome & wire::kAethTypeMask) != wire::kAethTypeAck) {
    ++c_.duplicate_responses;
    return;
  }
  SendWqe& w = sq_at(target);
  answered_through(pi.psn, now_ns);
  retire_through(psn_add(w.first_psn, -1), now_ns);
  if (state_ != QpState::kRts) return;
  std::memcpy(w.local, &pi.atomic_ack_orig, kAtomicBytes);
  c_.bytes_copied += kAtomicBytes;
  sr_answered(w, pi.psn, now_ns);
}

}  // namespace droce::rc
