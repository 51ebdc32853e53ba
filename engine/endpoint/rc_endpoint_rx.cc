// RcEndpoint's receive path: one received frame from parse to the QP and on to a message view —
// the side protocols' frames (PFC, ARP/ND, QP1) and CNPs on the way, then the header check (rxe's
// hdr_check: state, addresses, P_Key, length) and delivery (rc_endpoint_tx.cc is the transmit path;
// rc_endpoint.cc the API and the poll loop).
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstring>

#include "engine/endpoint/rc_endpoint.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/parse.h"
#include "protocols/wire/parse_fast.h"
#include "protocols/wire/pfc.h"
#include "protocols/wire/psn.h"
#include "protocols/wire/ud.h"

namespace droce::engine {

namespace {

bool same_ipv4(const std::uint8_t* a, const std::uint8_t* b) {
  std::uint32_t x, y;
  std::memcpy(&x, a, 4);
  std::memcpy(&y, b, 4);
  return x == y;
}

// A frame for one of our QPs is checked through that QP's template (CRC linearity, one table
// lookup per byte the frame changes, then the rest of the frame); any other by the full CRC.
// Either way every byte the ICRC covers is checked (A17.4.1).
bool icrc_ok(std::uint8_t* frame, const wire::PacketInfo& pi, wire::IcrcTemplate* tmpl) {
  const std::uint32_t covered = pi.frame_len - wire::kIcrcBytes - pi.l3_offset;
  const std::uint32_t icrc = tmpl != nullptr ? wire::icrc_by_template(*tmpl, frame + pi.l3_offset, covered, pi.ipv6)
                                             : wire::icrc_compute_in_place(frame + pi.l3_offset, covered, pi.ipv6);
  return icrc == wire::icrc_load(frame + pi.frame_len - wire::kIcrcBytes);
}

// Received frames that nothing kept, back to their pool. Frames as an RX burst hands them out
// (direct: no attached or external buffer; one segment; one reference; one pool) need none of
// rte_pktmbuf_free_bulk's per-segment work: rte_pktmbuf_prefree_seg would return each of them
// unchanged. They go back to the pool (its per-lcore cache) as they are, in one put. A burst with
// any other frame (a chain, one a capture or a worker still references, another pool's) takes
// rte_pktmbuf_free_bulk, which handles every case.
void free_received(rte_mbuf** m, std::uint32_t n) {
  rte_mempool* const pool = m[0]->pool;
  for (std::uint32_t i = 0; i < n; ++i) {
    const rte_mbuf* x = m[i];
    if (x->pool != pool || x->next != nullptr || rte_mbuf_refcnt_read(x) != 1 || !RTE_MBUF_DIRECT(x)) [[unlikely]] {
      rte_pktmbuf_free_bulk(m, n);
      return;
    }
  }
  rte_mempool_put_bulk(pool, reinterpret_cast<void* const*>(m), n);
}

}  // namespace

// A connected QP takes packets only from the path it was connected on (IBTA §9.6: the
// responder validates the packet's addresses against the QP context). RoCEv2's path is the GID
// pair, i.e. the IP addresses: without this a frame with the right QPN and PSN from anywhere is
// executed, ACKed to the real peer, and delivered.
//  - Source IP: the connected peer's. Destination IP: ours. A frame of the other IP family than
//    this endpoint's cannot be addressed to us (wrong_dest_ip).
//  - Destination MAC: ours, unless the port runs promiscuous (the apps do, because their peers
//    may address us by the lab rule's MAC rather than the port's; there the IP checks carry it).
//  - Source MAC: not checked. RoCEv2 is routed: an L3 hop rewrites the source MAC to its own,
//    so a frame from the right peer may carry any router's MAC. droce-switch (engine/lab/
//    lab_switch) picks the egress port by IPv4 route but forwards the frame unchanged, so
//    through it the source MAC happens to be the peer's; a real router's would not be, and the
//    peer's identity is its IP either way (rxe and RoCE NICs identify the peer by GID too).
//  - VLAN: not checked. The tag belongs to the link (a router re-tags between VLANs); where a
//    tag must be enforced, that is the port's VLAN filter.
// Inline (as check_response_length): every received packet runs both, and this file alone calls them.
[[gnu::always_inline]] inline wire::DropReason RcEndpoint::check_addresses(const QpSlot& s,
                                                                           const wire::PacketInfo& pi) const {
  if (pi.ipv6 != cfg_.addresses.ipv6) return wire::DropReason::kWrongDestIp;
  // Fixed-size compares (inlined loads), not a memcmp call with a run-time length.
  const bool same_dst = cfg_.addresses.ipv6 ? std::memcmp(pi.dst_ip, cfg_.addresses.local.ip, 16) == 0
                                            : same_ipv4(pi.dst_ip, cfg_.addresses.local.ip);
  if (!same_dst) return wire::DropReason::kWrongDestIp;
  const bool same_src =
      cfg_.addresses.ipv6 ? std::memcmp(pi.src_ip, s.peer.ip, 16) == 0 : same_ipv4(pi.src_ip, s.peer.ip);
  if (!same_src) return wire::DropReason::kWrongSourceIp;
  if (!rx_promiscuous_ && std::memcmp(pi.dst_mac, cfg_.addresses.local.mac, 6) != 0)
    return wire::DropReason::kWrongDestMac;
  return wire::DropReason::kNone;
}

// Requests of any length go to the QP: the responder's length rules (§9.7.5.1.6) answer an
// over-PMTU request with a NAK invalid request at once, so a peer configured with a larger PMTU
// fails at once instead of retrying into a timeout. A response larger than our PMTU answers
// nothing we asked (the completer would discard it too) and is dropped here, counted.
[[gnu::always_inline]] inline wire::DropReason RcEndpoint::check_response_length(const QpSlot& s,
                                                                                 const wire::PacketInfo& pi) const {
  if (!pi.op().is_request && pi.payload_len > s.qp->attr().pmtu) return wire::DropReason::kPayloadOverPmtu;
  return wire::DropReason::kNone;
}

// rxe's hdr_check: a packet for an RC QP reaches it only when the QP exists and may receive (RTR
// or RTS), the packet came on the QP's path and partition, and a response fits our PMTU. Returns
// the QP, or nullptr when a check dropped the packet (counted by reason, in parse_frame's order).
[[gnu::always_inline]] inline RcEndpoint::QpSlot* RcEndpoint::check_header(const wire::PacketInfo& pi, QpSlot* s) {
  if (s == nullptr) {
    drop(wire::DropReason::kUnknownQpn);
    return nullptr;
  }
  const rc::RcQp& q = *s->qp;
  if (q.state() != rc::QpState::kRts && q.state() != rc::QpState::kRtr) {
    drop(wire::DropReason::kQpNotReady);
    return nullptr;
  }
  if (const wire::DropReason r = check_addresses(*s, pi); r != wire::DropReason::kNone) {
    drop(r);
    return nullptr;
  }
  // §10.9.3: the BTH P_Key must match the QP's partition (0xFFFF, the default full member,
  // matches only 0x7FFF/0xFFFF); a packet of another partition is silently dropped (counted).
  if (cfg_.addresses.check_pkey && !wire::pkey_matches(pi.pkey, q.attr().pkey)) {
    drop(wire::DropReason::kWrongPkey);
    return nullptr;
  }
  if (const wire::DropReason r = check_response_length(*s, pi); r != wire::DropReason::kNone) {
    drop(r);
    return nullptr;
  }
  return s;
}

// A CNP addresses the QP that sent the marked data: ours (Annex A17.9.3). Its rate law decides
// whether it cuts (rp_cnp_handled) or falls inside the cut-monitor period (rp_cnp_ignored).
void RcEndpoint::on_cnp(const wire::PacketInfo& pi, std::uint64_t now_ns) {
  QpSlot* s = slot(pi.dest_qpn);
  if (s == nullptr) {
    ++c_.cnp_unknown_qp;
    drop(wire::DropReason::kUnknownQpn);
    return;
  }
  if (!cfg_.dcqcn.reaction_point || !s->connected) {
    ++c_.rp_cnp_ignored;
    return;
  }
  // A CNP cuts the QP's rate: only its peer may send one. (Its P_Key is not checked: a CNP
  // executes nothing on the QP's data.)
  if (const wire::DropReason r = check_addresses(*s, pi); r != wire::DropReason::kNone) {
    drop(r);
    return;
  }
  const std::uint64_t handled = s->rp.state().rp_cnp_handled;
  s->rp.on_cnp(now_ns);
  reschedule(*s);  // a cut starts the rate timers
  if (s->rp.state().rp_cnp_handled != handled)
    ++c_.rp_cnp_handled;
  else
    ++c_.rp_cnp_ignored;
}

void RcEndpoint::send_cnp(QpSlot& s, std::uint64_t now_tsc) {
  rte_mbuf* m = frames_.alloc();
  if (m == nullptr) {
    ++c_.cnp_tx_failures;
    return;
  }
  constexpr std::uint16_t kRoom = wire::kMaxHeaderBytes + sizeof(wire::CnpBody) + wire::kIcrcBytes;
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, kRoom));
  const std::uint32_t n =
      p == nullptr ? 0 : wire::build_cnp(s.tmpl, s.qp->attr().dest_qpn, cfg_.dcqcn.params.cnp_dscp, p, kRoom);
  if (n == 0) {
    rte_pktmbuf_free(m);
    ++c_.cnp_tx_failures;
    return;
  }
  rte_pktmbuf_trim(m, static_cast<std::uint16_t>(kRoom - n));
  if (!frames_.send(m, now_tsc)) {
    ++c_.cnp_tx_failures;
    return;
  }
  ++c_.np_cnp_sent;
  ++c_.tx_frames;
}

// IEEE 802.1Qbb: a PFC frame naming our priority holds transmit for quanta x 512 bit times
// (a new frame reloads the timer); zero quanta resume at once. Other MAC Control is counted.
void RcEndpoint::on_mac_control(const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_ns) {
  wire::PfcFrame f;
  const unsigned prio = cfg_.pfc.priority & 7u;
  if (!cfg_.pfc.honour || !wire::parse_pfc(frame, len, f) || (f.class_enable & (1u << prio)) == 0) {
    ++c_.pfc_other_frames;
    return;
  }
  if (f.quanta[prio] == 0) {
    ++c_.pfc_resume_frames;
    if (pfc_paused_) account_pause(now_ns);
    return;
  }
  ++c_.pfc_pause_frames;
  pfc_last_pause_ns_ = now_ns;
  if (pfc_watchdog_tripped_) {  // a storm the watchdog stopped obeying
    ++c_.pfc_watchdog_ignored;
    return;
  }
  if (!pfc_paused_) {
    pfc_paused_ = true;
    pfc_paused_since_ns_ = now_ns;
  }
  pfc_pause_until_ns_ = now_ns + wire::pfc_quanta_to_ns(f.quanta[prio], pfc_link_bps_);
}

// The watchdog NICs keep against a pause storm (a stuck peer pausing for ever, SIGCOMM'16 §4.3):
// transmit held by pauses, renewed or not, for watchdog_ms stops obeying them; once no pause has
// come for watchdog_ms it obeys again. What it sends meanwhile the paused peer may drop, which is
// the point: a storm no longer spreads upstream through this endpoint.
void RcEndpoint::pfc_watchdog(std::uint64_t now_ns) {
  if (pfc_paused_ && now_ns - pfc_paused_since_ns_ >= pfc_watchdog_ns_) {
    account_pause(now_ns);
    pfc_watchdog_tripped_ = true;
    ++c_.pfc_watchdog_trips;
  } else if (pfc_watchdog_tripped_ && now_ns - pfc_last_pause_ns_ >= pfc_watchdog_ns_) {
    pfc_watchdog_tripped_ = false;
    ++c_.pfc_watchdog_restores;
  }
}

void RcEndpoint::account_pause(std::uint64_t now_ns) {
  const std::uint64_t end = now_ns < pfc_pause_until_ns_ ? now_ns : pfc_pause_until_ns_;
  if (end > pfc_paused_since_ns_) c_.pfc_paused_ns += end - pfc_paused_since_ns_;
  pfc_paused_ = false;
}

// Whether the QP may keep this packet's payload in a message view (what on_packet() decides is a
// subset: a duplicate SEND is never kept).
bool RcEndpoint::may_keep(const QpSlot& s, const wire::PacketInfo& pi) {
  return s.qp->attr().recv_mode == rc::RecvMode::kMessageViews && pi.payload_len != 0 &&
         wire::opcode_info(pi.opcode).kind == wire::OpKind::kSend;
}

// A frame that arrived in several segments (small RX mbufs, or a peer's zero-copy chain over an
// in-process PMD) cannot become a view piece in place: its payload is copied into fresh mbufs of
// the endpoint's pool (at most PMTU bytes), counted. Done before the QP sees the packet, so that
// a pool with nothing to give drops the frame (counted, no_rx_buffer) with the QP's state
// untouched — the requester resends it (go-back-N), and the message completes once the
// application has released views — instead of accepting bytes it cannot keep.
rte_mbuf* RcEndpoint::copy_payload(const wire::PacketInfo& pi, const std::uint8_t* payload) {
  rte_mbuf* piece = nullptr;
  std::uint32_t done = 0;
  while (done < pi.payload_len) {
    rte_mbuf* c = rte_pktmbuf_alloc(cfg_.queues.pool);
    if (c == nullptr || (piece != nullptr && rte_pktmbuf_chain(piece, c) != 0)) {
      if (c != nullptr) rte_pktmbuf_free(c);
      if (piece != nullptr) rte_pktmbuf_free(piece);
      return nullptr;
    }
    if (piece == nullptr) piece = c;
    const std::uint32_t room = rte_pktmbuf_tailroom(c);
    const std::uint32_t k = pi.payload_len - done < room ? pi.payload_len - done : room;
    std::memcpy(rte_pktmbuf_append(c, static_cast<std::uint16_t>(k)), payload + done, k);
    // rte_pktmbuf_chain() counted c's length when it was still empty: the head's total grows here.
    if (piece != c) piece->pkt_len += k;
    done += k;
  }
  return piece;
}

// Appends a payload piece (the frame itself, trimmed to its payload, or copy_payload()'s chain) to
// the message being assembled. False when the chain would exceed the segments an mbuf chain can
// count: the piece is not appended.
bool RcEndpoint::append_payload(QpSlot& s, rte_mbuf* piece) {
  if (s.asm_head == nullptr) {
    s.asm_head = piece;
  } else {
    if (s.asm_head->nb_segs + piece->nb_segs > RTE_MBUF_MAX_NB_SEGS) return false;
    // Appended by hand at the remembered tail: rte_pktmbuf_chain() walks the whole chain.
    s.asm_tail->next = piece;
    s.asm_head->nb_segs = static_cast<std::uint16_t>(s.asm_head->nb_segs + piece->nb_segs);
    s.asm_head->pkt_len += piece->pkt_len;
  }
  s.asm_tail = rte_pktmbuf_lastseg(piece);
  return true;
}

void RcEndpoint::end_message(QpSlot& s, const wire::PacketInfo& pi) {
  const auto& op = wire::opcode_info(pi.opcode);
  MessageParts v;
  v.qpn = s.qp->attr().qpn;
  v.segments = s.asm_head;
  v.length = s.asm_head != nullptr ? s.asm_head->pkt_len : 0;
  v.has_imm = (op.headers & wire::kHdrImmDt) != 0;
  v.imm = v.has_imm ? pi.imm_data : 0;  // ImmDt's field only where the opcode carries it
  v.has_invalidate = (op.headers & wire::kHdrIeth) != 0;
  v.invalidated_rkey = v.has_invalidate ? pi.ieth_rkey : 0;
  v.write_with_imm = op.kind == wire::OpKind::kWrite;
  s.asm_head = s.asm_tail = nullptr;
  // Credits bound finished-but-unclaimed views to rq_depth, so the ring cannot overflow.
  s.ready[s.ready_tail % s.ready.size()] = v;
  ++s.ready_tail;
  ++c_.rx_view_messages;
  c_.rx_view_bytes += v.length;
}

// One RX burst (the port's, or a worker's steered share): every frame through receive(), then
// the frames that no message view took go back to their pool. Everything the receive path costs
// per frame is in here (bench/callgrind measures this function).
void RcEndpoint::receive_burst(rte_mbuf* const* rx, std::uint16_t n, std::uint64_t now_ns) {
  // Frames a message view took stay alive; every other one is done with (the RC layer placed
  // what it needed, as a NIC's DMA would) and goes back to its pool in one bulk free per
  // kRxBurst frames (free_received).
  rte_mbuf* done[kRxBurst];
  std::uint32_t n_done = 0;
  c_.rx_frames += n;
  for (std::uint16_t i = 0; i < n; ++i) {
    if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(rx[i + 1], void*));
    if (receive(rx[i], now_ns)) continue;
    done[n_done++] = rx[i];
    if (n_done == kRxBurst) {
      free_received(done, n_done);
      n_done = 0;
    }
  }
  flush_run(now_ns);
  if (n_done != 0) free_received(done, n_done);
  settle_received();
}

// A run's requests are a contract between frames already checked one by one (parse, ICRC, header
// check: every frame's own bytes) and the responder's run path (what holds for the whole run).
// Anything with more to do than the run path does (a CE mark to answer, the CM's first packet, a
// QP on selective repeat, message views or an SRQ) takes the per-frame path.
bool RcEndpoint::joins_run(const wire::PacketInfo& pi, const QpSlot* s) const {
  return s != nullptr && rc::RcQp::joins_request_run(pi) && pi.ecn != wire::kEcnCe && !s->cm_wait_traffic &&
         s->qp->run_capable() && check_addresses(*s, pi) == wire::DropReason::kNone &&
         (!cfg_.addresses.check_pkey || wire::pkey_matches(pi.pkey, s->qp->attr().pkey));
}

// The run gathered so far, executed: the prefix the responder's run path took is done with (a
// posted-buffer QP keeps no frame); a packet it left (a NAK or RNR NAK due, the QP's state moved)
// and every one after it go through the header check and delivery one by one, as they would have
// without the run, in order.
void RcEndpoint::flush_run(std::uint64_t now_ns) {
  const std::uint32_t n = rx_run_.n;
  if (n == 0) return;
  rx_run_.n = 0;
  QpSlot& s = *rx_run_.slot;
  const std::uint32_t done = s.qp->on_request_run(rx_run_.pi, rx_run_.payload, n);
  if (done != 0) {
    touch_received(s);
    free_received(rx_run_.frames, done);
  }
  for (std::uint32_t i = done; i < n; ++i) {
    rte_mbuf* m = rx_run_.frames[i];
    const wire::PacketInfo& pi = rx_run_.pi[i];
    QpSlot* const c = check_header(pi, &s);
    if (c == nullptr || !deliver(*c, m, pi, rte_pktmbuf_mtod(m, std::uint8_t*), /*linear=*/true, now_ns))
      rte_pktmbuf_free(m);
  }
}

// A QP that received a packet: an ACK, NAK, response or request may have made something due to
// send, moved a timer or completed work. Noted once per burst (the order of first packets is the
// order the per-packet notes gave the ready and CQ lists): the lists and timers are read only
// after the burst (timers, transmit, the application's poll_cq).
inline void RcEndpoint::touch_received(QpSlot& s) {
  if (s.rx_touched) return;
  if (rx_touched_n_ == kRxBurst) settle_received();  // a burst longer than kRxBurst (a worker's)
  s.rx_touched = true;
  rx_touched_[rx_touched_n_++] = s.index;
}

void RcEndpoint::settle_received() {
  for (std::uint32_t i = 0; i < rx_touched_n_; ++i) {
    QpSlot& s = *qps_[rx_touched_[i]];
    s.rx_touched = false;
    note_activity(s);
  }
  rx_touched_n_ = 0;
}

// Everything after the header check, for a packet of QP `s`: the notification point, the payload
// copy a chained frame needs before the QP sees it, the QP itself, and the message view it
// completes. True when the frame was kept (a view took it).
[[gnu::always_inline]] inline bool RcEndpoint::deliver(QpSlot& s, rte_mbuf* m, const wire::PacketInfo& pi,
                                                       std::uint8_t* data, bool linear, std::uint64_t now_ns) {
  rc::RcQp& q = *s.qp;
  // Notification point: a CE mark means a queue built up on the way here; tell the sender's QP,
  // at most once per interval (Annex A17.9.2).
  if (pi.ecn == wire::kEcnCe) {
    ++c_.np_ecn_marked_roce_packets;
    if (cfg_.dcqcn.notification_point && s.connected && s.np.on_packet(true, now_ns)) send_cnp(s, rx_now_tsc_);
  }
  rte_mbuf* copy = nullptr;
  if (!linear && may_keep(s, pi)) {
    copy = copy_payload(pi, data + pi.payload_offset);
    if (copy == nullptr) {
      drop(wire::DropReason::kNoRxBuffer);
      return false;
    }
  }
  // §12.9.7: on a QP the CM accepted, the peer's first packet stands for the RTU it may have lost.
  if (s.cm_wait_traffic) [[unlikely]]
    cm_.on_qp_traffic(pi.dest_qpn, rx_now_tsc_);
  const rc::RxDelivery d = q.on_packet(pi, data + pi.payload_offset, qp_clock_.now_ns());
  // An ACK, NAK, response or request: something may be due to send, a timer may have moved.
  touch_received(s);
  const bool keep = d == rc::RxDelivery::kKeep || d == rc::RxDelivery::kKeepEnd;
  if (copy != nullptr && !keep) rte_pktmbuf_free(copy);  // a duplicate, or refused: nothing kept
  if (d == rc::RxDelivery::kNone) {
    // A message in progress dies with the QP (the responder NAKed it into ERROR).
    if (q.state() == rc::QpState::kError && s.asm_head != nullptr) drop_views(s);
    return false;
  }
  if (keep) {
    rte_mbuf* piece = copy;
    if (copy != nullptr) c_.rx_view_bytes_copied += pi.payload_len;  // delivered copies only
    if (linear) {
      rte_pktmbuf_adj(m, pi.payload_offset);  // cannot fail: the parser saw the whole frame in this segment
      rte_pktmbuf_trim(m, static_cast<std::uint16_t>(m->data_len - pi.payload_len));
      piece = m;
    }
    if (!append_payload(s, piece)) {
      // The QP has accepted bytes the message cannot hold (more segments than a chain counts):
      // it cannot be completed truthfully. The requester is told (NAK remote operational error)
      // and the connection ends, instead of delivering a hole or timing out.
      if (copy != nullptr) rte_pktmbuf_free(copy);
      ++c_.rx_view_drops;
      drop_views(s);
      q.fail_accepted_message(pi.psn);
      reschedule(s);
      return false;
    }
  }
  const bool kept = keep && linear;  // a copied payload leaves the frame to the caller
  if (d == rc::RxDelivery::kKeepEnd || d == rc::RxDelivery::kEnd) end_message(s, pi);
  return kept;
}

bool RcEndpoint::receive(rte_mbuf* m, std::uint64_t now_ns) {
  // Writable: the ICRC check masks the frame's variant fields in place (and restores them).
  std::uint8_t* data = rte_pktmbuf_mtod(m, std::uint8_t*);
  std::uint32_t len = m->data_len;
  const bool linear = m->nb_segs == 1;
  if (!linear) {
    // PMTU 4096 over small mbufs arrives chained: parse a linear copy (counted).
    if (m->pkt_len > scratch_.size()) {
      // More than any PMTU (4096) plus headers: larger than the buffer we linearise into.
      drop(wire::DropReason::kFrameTooLong);
      return false;
    }
    // A copy in scratch_, or the first segment itself when it holds every byte: ours either way.
    data = const_cast<std::uint8_t*>(
        static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, scratch_.data())));
    len = m->pkt_len;
    ++c_.rx_linearized;
  }
  if (wire::is_mac_control(data, len)) {
    flush_run(now_ns);
    on_mac_control(data, len, now_ns);
    return false;
  }
  // Parsed where the run keeps its packets: a frame that joins the run is not copied. Every other
  // outcome that acts on something first lets the run gathered so far act (flush_run), so that
  // each frame meets the state every frame before it left.
  wire::PacketInfo& pi = rx_run_.pi[rx_run_.n];
  const wire::DropReason r = wire::parse_headers(data, len, pi, parse_opt_);
  if (r != wire::DropReason::kNone) {
    flush_run(now_ns);
    // ARP (refused as not IP) and Neighbor Discovery (ICMPv6: IP but not UDP, refused as not_udp)
    // are looked at only here, among the frames already refused: RoCE frames pay nothing.
    if (neighbours_.on_frame(r, data, len, rx_promiscuous_, now_ns, rx_now_tsc_)) return false;
    // Unreliable Datagram SENDs are QP1's (RDMA-CM MADs): the RC parser knows no UD opcode.
    if (r == wire::DropReason::kUnknownOpcode && wire::is_ud_opcode(pi.opcode)) {
      cm_.on_frame(data, len, now_ns, rx_now_tsc_);
      return false;
    }
    drop(r);
    return false;
  }
  QpSlot* const addressed = slot(pi.dest_qpn);
  if (!icrc_ok(data, pi, addressed != nullptr ? &addressed->rx_icrc : nullptr)) {
    drop(wire::DropReason::kBadIcrc);
    return false;
  }
  if (linear && joins_run(pi, addressed)) {
    RxRun& run = rx_run_;
    if (run.n != 0 && (run.slot != addressed || run.n == kRxBurst || pi.psn != wire::psn_next(run.pi[run.n - 1].psn))) {
      // Another QP's frame, or not the next PSN: the run so far goes first, this frame starts the next.
      const std::uint32_t at = run.n;
      flush_run(now_ns);
      run.pi[0] = run.pi[at];
    }
    run.slot = addressed;
    run.payload[run.n] = data + pi.payload_offset;
    run.frames[run.n] = m;
    ++run.n;
    return true;
  }
  flush_run(now_ns);
  if (pi.opcode == static_cast<std::uint8_t>(wire::Opcode::kCnp)) {
    on_cnp(pi, now_ns);
    return false;
  }
  QpSlot* const s = check_header(pi, addressed);
  if (s == nullptr) return false;
  return deliver(*s, m, pi, data, linear, now_ns);
}

}  // namespace droce::engine
