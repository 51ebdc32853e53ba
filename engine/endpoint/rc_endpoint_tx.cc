// RcEndpoint's transmit path: the ready QPs' turns, one descriptor from the QP to a frame (headers
// from the QP's template, the payload attached from application memory or copied, pad and ICRC)
// into the TX batch, DCQCN's pacer and byte counter on the way, and the pass's mbuf cache
// (rc_endpoint_rx.cc is the receive path; rc_endpoint.cc the API and the poll loop).
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstring>

#include "engine/endpoint/rc_endpoint.h"
#include "protocols/rc/descriptor_fields.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/opcode.h"

namespace droce::engine {

namespace {

// The opcodes TxTemplate does not cover (atomics) take the general builder; out of line, so
// that its PacketFields stays off the common path.
[[gnu::noinline]] std::uint32_t write_general_headers(const wire::HeaderTemplate& t, const rc::TxDescriptor& d,
                                                      std::uint16_t ip_id, std::uint8_t* out) {
  wire::PacketFields f = rc::packet_fields(d);
  f.ip_id = ip_id;
  return wire::write_headers(t, f, out);
}

}  // namespace

// The cache holds raw mbufs (rte_mempool_get_bulk): each is reset as it is handed out, as
// rte_pktmbuf_alloc does, so the ones tx_reserve_frame held back and the pass did not use go back
// to the pool without having cost a reset.
inline rte_mbuf* RcEndpoint::tx_alloc() {
  if (tx_mbufs_n_ == 0 && !refill_tx_mbufs(1)) return nullptr;
  ++tx_pass_frames_;
  rte_mbuf* m = tx_mbufs_[--tx_mbufs_n_];
  rte_pktmbuf_reset(m);
  return m;
}

inline bool RcEndpoint::tx_reserve_frame() {
  return tx_mbufs_n_ >= tx_frame_mbufs_ || refill_tx_mbufs(tx_frame_mbufs_);
}

// The cache holds fewer than `need`: one bulk get into its free part of tx_refill_ mbufs (the
// first refill of a pass: what the previous pass used, and the reserve of a frame's mbufs beyond
// the first; later ones: as many as fit), at least what is missing. A pool too low for that still
// gives exactly what is missing if it has it.
bool RcEndpoint::refill_tx_mbufs(std::uint32_t need) {
  const std::uint32_t missing = need - tx_mbufs_n_;
  const std::uint32_t n = std::min(std::max(tx_refill_, missing), kTxMbufCache - tx_mbufs_n_);
  tx_refill_ = kTxMbufCache;
  for (const std::uint32_t k : {n, missing}) {
    if (rte_mempool_get_bulk(cfg_.queues.pool, reinterpret_cast<void**>(tx_mbufs_ + tx_mbufs_n_), k) == 0) {
      tx_mbufs_n_ += k;
      return true;
    }
    if (k == missing) break;
  }
  return false;
}

// End of a transmit pass: the unused raw mbufs go back untouched (refcount 1, one segment, as the
// pool holds them).
void RcEndpoint::give_back_tx_mbufs() {
  if (tx_mbufs_n_ != 0) rte_mempool_put_bulk(cfg_.queues.pool, reinterpret_cast<void**>(tx_mbufs_), tx_mbufs_n_);
  tx_mbufs_n_ = 0;
  // tx_reserve_frame holds a whole frame's mbufs before each packet, so a pass that sends as many
  // frames as this one ends with tx_frame_mbufs_ - 1 unused: the next first refill gets them too,
  // or the pass's last frames would each cost a refill of their own.
  tx_refill_ = std::clamp<std::uint32_t>(tx_pass_frames_ + tx_frame_mbufs_ - 1, 1, kTxMbufCache);
  tx_pass_frames_ = 0;
}

std::uint32_t RcEndpoint::transmit(QpSlot& s, const rc::TxDescriptor& d, std::uint64_t now_tsc) {
  rte_mbuf* m = tx_alloc();
  if (m == nullptr) return 0;
  const wire::OpcodeInfo& op = wire::opcode_info(d.opcode);
  const std::uint32_t pad = op.has_payload ? wire::pad_for(d.payload_len) : 0;
  const std::uint32_t tail = d.payload_len + pad + wire::kIcrcBytes;
  // A fresh mbuf: the header writers need kMaxHeaderBytes of room, a copied frame all of it.
  const std::uint32_t room = static_cast<std::uint32_t>(m->buf_len - m->data_off);
  if (room < wire::kMaxHeaderBytes) {
    rte_pktmbuf_free(m);
    return 0;
  }
  auto* hdr = rte_pktmbuf_mtod(m, std::uint8_t*);
  // The QP's precomputed headers (TxTemplate) for every opcode but the atomics; data leaves
  // ECT(0), acknowledgements Not-ECT (descriptor_fields.h's rule, tabled per opcode).
  const std::uint8_t op_class = tx_opcode_class_[d.opcode];
  const bool from_template = (op_class & kTxFromTemplate) != 0;
  const bool not_ect = (op_class & kTxNotEct) != 0;
  const std::uint32_t hlen = from_template ? wire::write_tx_headers(s.tx_tmpl, op, d, s.ip_id++, not_ect, hdr)
                                           : write_general_headers(s.tmpl, d, s.ip_id++, hdr);
  std::uint8_t* l3 = hdr + s.tmpl.l3_offset;
  const std::uint32_t l3_hdr_len = hlen - s.tmpl.l3_offset;
  const bool inlined = d.payload_len != 0 && d.payload_len <= cfg_.transport.tx_inline_bytes;
  bool zero_copy = cfg_.transport.zero_copy_tx && multi_seg_ok_ && d.payload_len != 0 && !inlined;
  if (zero_copy) {
    rte_mbuf* pm = tx_alloc();
    rte_mbuf* tm = pm != nullptr ? tx_alloc() : nullptr;
    if (tm == nullptr ||
        !cfg_.queues.memory->attach_payload_ptr(pm, d.payload, d.payload_len, dpdk_memory_tx_only_, &mr_hint_)) {
      if (pm != nullptr) rte_pktmbuf_free(pm);
      if (tm != nullptr) rte_pktmbuf_free(tm);
      zero_copy = false;  // fall back to a copy (counted) rather than fail the packet
    } else {
      const std::uint32_t icrc =
          from_template ? wire::icrc_from_template_split(s.tx_tmpl.icrc, l3, l3_hdr_len, d.payload, d.payload_len, pad)
                        : wire::icrc_compute_split(l3, l3_hdr_len, s.tmpl.ipv6, d.payload, d.payload_len, pad);
      m->data_len = static_cast<std::uint16_t>(hlen);
      m->pkt_len = hlen;
      auto* trailer = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(tm, static_cast<std::uint16_t>(pad + 4)));
      std::memset(trailer, 0, pad);
      wire::icrc_store(trailer + pad, icrc);
      if (rte_pktmbuf_chain(m, pm) != 0 || rte_pktmbuf_chain(m, tm) != 0) {
        rte_pktmbuf_free(m);
        return 0;
      }
      ++c_.tx_zero_copy_frames;
    }
  }
  if (!zero_copy) {
    if (hlen + tail > room) {
      rte_pktmbuf_free(m);
      return 0;
    }
    std::uint8_t* p = hdr + hlen;
    if (d.payload_len != 0) std::memcpy(p, d.payload, d.payload_len);
    // The pad (0..3 zero bytes) as one 4-byte store: the ICRC after it overwrites the rest.
    static constexpr std::uint32_t kZero = 0;
    std::memcpy(p + d.payload_len, &kZero, sizeof(kZero));
    if (inlined) {
      ++c_.tx_inline_frames;
      c_.tx_payload_bytes_inlined += d.payload_len;
    } else {
      c_.tx_payload_bytes_copied += d.payload_len;
    }
    std::uint32_t len = hlen + d.payload_len + pad;
    if (from_template) {
      len = wire::seal_tx_frame(s.tx_tmpl, hdr, len);
    } else {
      wire::icrc_store(hdr + len, wire::icrc_compute_in_place(l3, len - s.tmpl.l3_offset, s.tmpl.ipv6));
      len += wire::kIcrcBytes;
    }
    m->data_len = static_cast<std::uint16_t>(len);
    m->pkt_len = len;
  }
  c_.tx_payload_bytes += d.payload_len;
  const std::uint32_t frame_bytes = m->pkt_len;
  if (cfg_.recording.capture != nullptr)
    cfg_.recording.capture->capture(cfg_.queues.port_id, cfg_.queues.queue, &m, 1, CaptureDirection::kTx, now_tsc);
  if (!tx_.push(m)) {
    rte_pktmbuf_free(m);
    ++c_.tx_backlog_drops;  // the QP's go-back-N recovers it
  }
  ++c_.tx_frames;
  return frame_bytes;
}

// One turn for each QP on the ready list, in order. A QP that still has packets after its turn
// goes to the back; one whose turn the full TX backlog ended goes first next poll (and the
// ones after it keep their places); one with nothing to send leaves the list until an event
// (a post, a packet, a timer, the pacer) brings it back.
void RcEndpoint::transmit_ready(std::uint64_t now, std::uint64_t now_tsc) {
  for (std::uint32_t turns = ready_len_; turns != 0; --turns) {
    if (tx_.room() == 0) break;  // the QP at the front keeps its place
    QpSlot& s = take_ready();
    ++c_.tx_qp_turns;
    const Turn t = transmit_turn(s, now, now_tsc);
    reschedule(s);  // a request sent arms the ACK timer; bytes sent move DCQCN's byte counter
    if (t == Turn::kBacklogFull) {
      make_ready_first(s);
      break;
    }
    if (t == Turn::kMore) make_ready(s);
  }
  give_back_tx_mbufs();
}

namespace {

// What the DCQCN pacer spaces and the byte counter counts: everything a QP sends but its
// acknowledgements (ACK 0x11, ATOMIC Acknowledge 0x12 and selective repeat's 0xD1 and 0xD2).
bool carries_paced_data(std::uint8_t opcode) {
  const wire::OpKind k = wire::opcode_info(opcode).kind;
  return k != wire::OpKind::kAck && k != wire::OpKind::kAtomicAck;
}

}  // namespace

RcEndpoint::Turn RcEndpoint::transmit_turn(QpSlot& s, std::uint64_t now, std::uint64_t now_tsc) {
  if (!s.connected) return Turn::kDone;
  const bool paced = cfg_.dcqcn.reaction_point;
  rc::TxDescriptor d;
  // Bounded per QP per poll so one QP cannot starve the others or RX.
  for (int k = 0; k < 32; ++k) {
    if (tx_.room() == 0) return Turn::kBacklogFull;
    if (!tx_reserve_frame()) {
      ++c_.tx_alloc_failures;  // the pool is empty: the packet stays in its QP until mbufs return
      return Turn::kBacklogFull;
    }
    if (!s.qp->next_packet(qp_clock_.now_ns(), d, !s.paced_wait)) return Turn::kDone;
    const std::uint32_t bytes = transmit(s, d, now_tsc);
    if (bytes == 0) {
      ++c_.tx_build_failures;  // a frame its mbufs cannot hold: lost here; go-back-N resends it
      return Turn::kMore;
    }
    // Acknowledgements are not data (RcQp::next_packet lets them leave while paced): the RC ACK,
    // selective repeat's SACK and both atomic acknowledges leave the pacer and the byte counter alone.
    if (!paced || !carries_paced_data(d.opcode)) continue;
    // The pacer spaces data at the DCQCN rate in TSC cycles; the byte counter drives increases.
    s.pacer.on_send(bytes, s.rp.rate_bps(), now_tsc);
    s.rp.on_bytes_sent(bytes, now);
    if (!s.pacer.may_send(now_tsc)) {
      // Off the ready list once only ACKs may leave; the wheel brings it back at its send time.
      s.paced_wait = true;
      wheel_.schedule(s.index, s.pacer.next_send_ticks());
      ++c_.pacer_waits;
    }
  }
  return Turn::kMore;
}

}  // namespace droce::engine
