// Selective repeat, receive side (docs/selective-repeat.md): out-of-order acceptance within the
// window, placement from each packet's own RETH, in-order delivery and completion, SACKs; and the
// dispatch of every packet a selective-repeat QP receives (or a go-back-N QP receives in SR opcodes).
#include <cstring>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/ib_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::OpKind;
using wire::OpPosition;
using wire::psn_add;
using wire::psn_diff;

namespace {

// The length rules of an SR SEND/WRITE packet: those of its RC opcode (§9.7.5.1.6: FIRST and
// MIDDLE exactly one PMTU, LAST 1..PMTU, ONLY at most PMTU) against the message length its RETH
// announces, and for a SEND the offset it carries: a whole number of PMTUs, 0 on the first
// packet, the payload within the message and ending it exactly on the last. A WRITE's offset is
// not on the wire (its RETH has the address): its R_Key check bounds it instead.
bool sr_lengths_valid(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, std::uint32_t pmtu) {
  const std::uint32_t plen = pi.payload_len;
  const std::uint64_t len = pi.reth_dma_len;
  if (len > kMaxMessageBytes || plen > pmtu) return false;
  switch (op.position) {
    case OpPosition::kFirst:
    case OpPosition::kMiddle:
      if (plen != pmtu || plen >= len) return false;
      break;
    case OpPosition::kLast:
      if (plen == 0 || plen > len) return false;
      break;
    case OpPosition::kOnly:
      if (plen != len) return false;
      break;
    default:
      return false;
  }
  if (op.kind != OpKind::kSend) return true;
  const std::uint64_t offset = pi.reth_va;
  const bool starts = op.position == OpPosition::kFirst || op.position == OpPosition::kOnly;
  const bool ends = op.position == OpPosition::kLast || op.position == OpPosition::kOnly;
  if (offset % pmtu != 0 || (starts && offset != 0) || offset + plen > len) return false;
  return ends ? offset + plen == len : offset + plen < len;
}

void store_be64(std::uint8_t* p, std::uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, sizeof(v));
}

}  // namespace

// Every packet of a selective-repeat QP, and every manufacturer-specific opcode a go-back-N QP is
// handed. The two recoveries never mix on one connection: SR opcodes at a go-back-N QP, and RC
// requests, READ responses or atomic acknowledgements at an SR QP, are dropped and counted. An SR
// requester still takes the RC ACKNOWLEDGE (0x11): the SR responder sends its NAKs (RNR and the
// fatal ones) as standard NAKs.
RxDelivery RcQp::on_packet_sr(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload,
                              std::uint64_t now_ns) {
  const bool sr_opcode = wire::is_manufacturer_opcode(pi.opcode);
  if (!sr_ || !op.valid() || (!sr_opcode && (op.is_request || op.kind != OpKind::kAck))) {
    ++c_.recovery_mismatch;
    return RxDelivery::kNone;
  }
  if (op.is_request) {
    on_sr_request(pi, op, payload);
  } else if (state_ == QpState::kRts) {
    if (!sr_opcode)
      on_response(pi, payload, now_ns);  // an RC NAK (RNR or fatal)
    else if (op.kind == OpKind::kAck)
      on_sack(pi, payload, now_ns);
    else if (op.kind == OpKind::kReadResponse)
      on_sr_read_response(pi, payload, now_ns);
    else
      on_sr_atomic_ack(pi, now_ns);
  }
  return RxDelivery::kNone;
}

// An acknowledgement (a SACK when it leaves, next_response): coalesced with one still queued.
void RcQp::queue_sr_ack() {
  if (queue_ack_out_of_line(psn_add(rq_.epsn, -1), wire::kAethAckUnlimited)) ++c_.acks_sent;
}

// An SR request: within the window and not held yet, it is checked and placed at once; ePSN then
// moves over everything held in order. A PSN before ePSN, or one already held, is a duplicate:
// never placed or delivered again (C9-105's rule, per PSN), answered with a SACK as go-back-N
// re-ACKs a duplicate. Beyond the window it is dropped: the requester's BDP cap keeps it inside.
void RcQp::on_sr_request(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload) {
  const std::int32_t d = psn_diff(pi.psn, rq_.epsn);
  if (d >= static_cast<std::int32_t>(wire::kSrWindow)) {
    ++c_.sr_beyond_window;
    return;
  }
  const bool read_or_atomic = op.kind == OpKind::kReadRequest || op.kind == OpKind::kAtomic;
  if (d < 0 && read_or_atomic) {
    sr_replay(pi, op);  // executed already: answered again (responder_sr_read.cc)
    return;
  }
  if (d < 0 || sr_rx_at(pi.psn).held) {
    ++c_.duplicate_request;
    queue_sr_ack();
    return;
  }
  const bool gap_open = rq_.sr_held != 0;
  // NAKed, RNR-NAKed or dropped: not held.
  if (!(read_or_atomic ? sr_hold_read_or_atomic(pi, op, d) : sr_place(pi, op, payload, d == 0))) return;
  if (d == 0) {
    sr_deliver_in_order();
    if (state_ != QpState::kRts && state_ != QpState::kRtr) return;  // a fatal NAK at delivery
  } else {
    ++c_.out_of_sequence;
  }
  // An in-order packet is acknowledged when it asks (coalescing, as go-back-N); an out-of-order
  // one always, and so is everything while a gap is open or as it closes: the SACK is the
  // requester's only news of what it may retire and resend.
  if (pi.ack_req || d != 0 || gap_open || rq_.sr_held != 0) queue_sr_ack();
}

// Checks and places one SR packet (§9.7.5.1.3-6 as they apply to a packet that carries its own
// placement); true when it is held. A SEND goes into the receive its RSN names, at its offset;
// that receive not posted yet drops the packet (resent later), with an RNR NAK if it is at ePSN
// (§9.7.5.1.5). Length, offset or buffer violations are invalid requests, a WRITE outside what its
// R_Key allows a remote access error: fatal, as with go-back-N.
bool RcQp::sr_place(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload, bool at_epsn) {
  if (!sr_lengths_valid(pi, op, attr_.pmtu)) {
    nak_invalid_request(pi.psn);
    return false;
  }
  const std::uint32_t plen = pi.payload_len;
  const bool ends = op.position == OpPosition::kLast || op.position == OpPosition::kOnly;
  if (op.kind == OpKind::kWrite) {
    std::uint8_t* dst = nullptr;
    if (const MrCheck chk = mrs_.check_remote(pi.reth_rkey, pi.reth_va, plen, kAccessRemoteWrite, &dst, attr_.pd);
        chk != MrCheck::kOk) {
      nak_remote_access_error(pi.psn, chk);
      return false;
    }
    if (plen != 0) std::memcpy(dst, payload, plen);
  } else {
    // The receive of RSN r is WQE rsn_base + r; the unsigned distance from the next one to
    // complete (rq.head) wraps for an RSN already completed, which then reads as not posted.
    const std::uint32_t ahead = pi.reth_rkey - static_cast<std::uint32_t>(rq_.head - rq_.rsn_base);
    if (ahead >= rq_.tail - rq_.head) {
      if (at_epsn && queue_ack_out_of_line(pi.psn, wire::rnr_nak_syndrome(attr_.min_rnr_timer))) ++c_.rnr_naks_sent;
      return false;
    }
    RecvWqe& r = rq_at(rq_.head + ahead);
    const auto offset = static_cast<std::uint32_t>(pi.reth_va);
    if (offset + static_cast<std::uint64_t>(plen) > r.wr.sge.length) {
      nak_invalid_request(pi.psn);
      return false;
    }
    if (plen != 0) std::memcpy(r.local + offset, payload, plen);
  }
  c_.bytes_copied += plen;
  c_.bytes_delivered += plen;
  SrRxSlot& s = sr_rx_at(pi.psn);
  s = SrRxSlot{};
  s.held = true;
  s.last = ends;
  s.is_send = op.kind == OpKind::kSend;
  s.has_imm = (op.headers & wire::kHdrImmDt) != 0;
  s.has_inv = (op.headers & wire::kHdrIeth) != 0;
  s.needs_recv = s.is_send || (ends && s.has_imm);
  s.imm = pi.imm_data;
  s.ieth_rkey = pi.ieth_rkey;
  s.len = pi.reth_dma_len;
  s.rsn = pi.reth_rkey;
  ++rq_.sr_held;
  return true;
}

// Moves ePSN over the held PSNs, in order (bounded by the window), delivering each message at its
// last packet as go-back-N's complete_send_write does: MSN, the invalidation of a SEND with
// Invalidate, the receive completion. A WRITE with immediate that finds no receive posted is not
// delivered: its last PSN is released and RNR-NAKed (§9.7.5.1.5), and the resend places it again.
void RcQp::sr_deliver_in_order() {
  for (std::uint32_t n = 0; n < wire::kSrWindow; ++n) {
    SrRxSlot& s = sr_rx_at(rq_.epsn);
    if (!s.held) return;
    // A READ or atomic executes here, in order (its response queued); NAKed, the QP is in Error.
    if (s.exec_opcode != 0 && !sr_execute(s)) return;
    if (s.last) {
      if (s.needs_recv && rq_.head == rq_.tail) {
        s.held = false;
        --rq_.sr_held;
        if (queue_ack_out_of_line(rq_.epsn, wire::rnr_nak_syndrome(attr_.min_rnr_timer))) ++c_.rnr_naks_sent;
        return;
      }
      // A SEND placed by its RSN must be the message the next receive belongs to.
      if (s.is_send && s.rsn != static_cast<std::uint32_t>(rq_.head - rq_.rsn_base)) {
        nak_invalid_request(rq_.epsn);
        return;
      }
      if (s.has_inv && mrs_.invalidate_remote(s.ieth_rkey, attr_.pd) != MrCheck::kOk) {
        refuse_invalidate(rq_.epsn);
        return;
      }
      ++rq_.msn;
      if (s.needs_recv) {
        // byte_len: the message length from the RETH, a SEND's or a WRITE with immediate's (verbs).
        const WcOpcode wc = s.has_imm ? WcOpcode::kRecvWithImm : s.has_inv ? WcOpcode::kRecvWithInv : WcOpcode::kRecv;
        push_completion(rq_at(rq_.head).wr.wr_id, WcStatus::kSuccess, wc, s.len, /*is_recv=*/true, s.has_imm, s.imm,
                        s.has_inv, s.has_inv ? s.ieth_rkey : 0);
        ++rq_.head;
      }
    }
    s.held = false;
    --rq_.sr_held;
    rq_.epsn = psn_add(rq_.epsn, 1);
  }
}

// The SACK as it stands when it leaves (docs/selective-repeat.md): PSN ePSN - 1, AETH ACK with the
// MSN, and the 16-byte bitmap of the PSNs held from ePSN on (bit b of big-endian word w: PSN
// ePSN + 64w + b). The bitmap is the descriptor's payload, in one of kSackBuffers rotating buffers.
void RcQp::fill_sack(TxDescriptor& d) {
  d.opcode = static_cast<std::uint8_t>(wire::Opcode::kSrAck);
  d.psn = psn_add(rq_.epsn, -1);
  d.aeth_syndrome = wire::kAethAckUnlimited;
  d.aeth_msn = rq_.msn;
  std::uint64_t words[2] = {0, 0};
  if (rq_.sr_held != 0) {
    for (std::uint32_t i = 1; i < wire::kSrWindow; ++i)
      if (sr_rx_at(psn_add(rq_.epsn, i)).held) words[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  std::uint8_t* b = sack_buf_[sack_next_++ % kSackBuffers];
  store_be64(b, words[0]);
  store_be64(b + 8, words[1]);
  d.payload = b;
  d.payload_len = wire::kSackBytes;
}

}  // namespace droce::rc
