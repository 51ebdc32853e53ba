// RcEndpoint: frames <-> RC QPs. Payloads leave from application memory as external buffers
// (header mbuf -> payload extbuf -> pad+ICRC trailer) when the port takes chained mbufs.
#include "engine/endpoint/rc_endpoint.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <cstring>

#include "engine/endpoint/endpoint_telemetry.h"
#include "protocols/rc/descriptor_fields.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/opcode.h"

namespace droce::engine {

std::unique_ptr<RcEndpoint> RcEndpoint::create(const EndpointConfig& cfg, Status& err) {
  err = validate(cfg);
  if (!err.ok()) return nullptr;
  std::unique_ptr<RcEndpoint> ep(new RcEndpoint(cfg));
  ep->telemetry_id_ = EndpointDirectory::instance().add(ep.get());
  return ep;
}

RcEndpoint::RcEndpoint(const EndpointConfig& cfg)
    : cfg_(cfg),
      qps_(cfg.transport.max_qps),
      scratch_(16384),
      wheel_(cfg.transport.max_qps, 1024, rte_get_tsc_hz() / 1'000'000 != 0 ? rte_get_tsc_hz() / 1'000'000 : 1),
      // ~1 µs buckets: 4096 cover 4 ms (ACK timeouts beyond wait in their bucket for their turn);
      // 1024 cover DCQCN's periods (tens of µs).
      timer_wheel_(cfg.transport.max_qps, 4096, 1024),
      rate_wheel_(cfg.transport.max_qps, 1024, 1024) {
  // Zero-copy TX sends chained mbufs, so the port must take them. net_ring advertises no
  // offloads but only moves mbuf pointers, so a chain crosses it untouched.
  rte_eth_dev_info info{};
  if (cfg.queues.tx_ring != nullptr) {
    tx_.sink_to(cfg.queues.tx_ring);  // a lab ring carries mbuf pointers: a chain crosses whole
    multi_seg_ok_ = true;
  } else if (rte_eth_dev_info_get(cfg.queues.port_id, &info) == 0) {
    multi_seg_ok_ = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0 ||
                    (info.driver_name != nullptr && std::strcmp(info.driver_name, "net_ring") == 0);
    // virtio_user's vhost-user peer reads our frames through the memory table we sent it (file
    // descriptors of DPDK's segments); a payload in heap memory is outside it and the peer drops
    // the whole frame, so such payloads are copied into the pool instead (still counted).
    dpdk_memory_tx_only_ = info.driver_name != nullptr && std::strcmp(info.driver_name, "net_virtio_user") == 0;
  }
  for (std::uint32_t op = 0; op < tx_opcode_class_.size(); ++op) {
    rc::TxDescriptor d;
    d.opcode = static_cast<std::uint8_t>(op);
    tx_opcode_class_[op] =
        static_cast<std::uint8_t>((wire::tx_template_covers(wire::opcode_info(d.opcode)) ? kTxFromTemplate : 0) |
                                  (rc::packet_fields(d).ecn_override == wire::kEcnNotEct ? kTxNotEct : 0));
  }
  tsc_hz_ = rte_get_tsc_hz();
  ns_per_tsc_ = 1e9 / static_cast<double>(tsc_hz_);
  // Pause quanta are bit times of the link the PFC frame came over.
  pfc_link_bps_ = cfg.pfc.link_bps;
  if (pfc_link_bps_ <= 0 && cfg.queues.tx_ring != nullptr) pfc_link_bps_ = 10e9;  // no link to ask
  if (pfc_link_bps_ <= 0) {
    rte_eth_link link{};
    pfc_link_bps_ = rte_eth_link_get_nowait(cfg.queues.port_id, &link) == 0 && link.link_speed != 0 &&
                            link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN
                        ? static_cast<double>(link.link_speed) * 1e6
                        : 10e9;
  }
}

RcEndpoint::~RcEndpoint() {
  EndpointDirectory::instance().remove(telemetry_id_);
  finish();
}

std::uint64_t RcEndpoint::now_ns(std::uint64_t tsc) const {
  return static_cast<std::uint64_t>(static_cast<double>(tsc) * ns_per_tsc_);
}

double RcEndpoint::rx_copies_per_byte() const {
  std::uint64_t copied = c_.rx_view_bytes_copied, delivered = 0;
  for (const auto& s : qps_) {
    if (!s) continue;
    copied += s->qp->counters().bytes_copied;
    delivered += s->qp->counters().bytes_delivered;
  }
  return delivered == 0 ? 0.0 : static_cast<double>(copied) / static_cast<double>(delivered);
}

void RcEndpoint::append(SlotList& list, QpSlot& s) {
  s.*list.next = kNoSlot;
  if (list.tail == kNoSlot)
    list.head = s.index;
  else
    qps_[list.tail].get()->*list.next = s.index;
  list.tail = s.index;
}

RcEndpoint::QpSlot& RcEndpoint::pop_front(SlotList& list) {
  QpSlot& s = *qps_[list.head];
  list.head = s.*list.next;
  if (list.head == kNoSlot) list.tail = kNoSlot;
  s.*list.next = kNoSlot;
  return s;
}

void RcEndpoint::make_ready(QpSlot& s) {
  if (s.on_ready) return;
  s.on_ready = true;
  append(ready_, s);
  ++ready_len_;
}

void RcEndpoint::make_ready_first(QpSlot& s) {
  if (s.on_ready) return;
  s.on_ready = true;
  s.ready_next = ready_.head;
  ready_.head = s.index;
  if (ready_.tail == kNoSlot) ready_.tail = s.index;
  ++ready_len_;
}

// Only called with ready_len_ != 0.
RcEndpoint::QpSlot& RcEndpoint::take_ready() {
  QpSlot& s = pop_front(ready_);
  s.on_ready = false;
  --ready_len_;
  return s;
}

void RcEndpoint::note_completions(QpSlot& s) {
  if (s.on_cq || !s.qp->has_completions()) return;
  s.on_cq = true;
  append(cq_, s);
}

void RcEndpoint::on_doorbell(void* ctx, std::uint32_t slot) {
  auto* ep = static_cast<RcEndpoint*>(ctx);
  QpSlot& s = *ep->qps_[slot];
  ep->make_ready(s);
  ep->note_completions(s);  // work posted on a QP in ERROR completes flushed at once
}

// Every event that can complete work (a packet, a timer, a state change, posted work) ends here.
void RcEndpoint::note_activity(QpSlot& s) {
  make_ready(s);
  reschedule(s);
  note_completions(s);
}

// Only an RTS QP acts on its timers (on_timer, the RNR wait in next_packet); a QP in ERROR may
// keep a stale RNR deadline, which must not fire every poll.
std::uint64_t RcEndpoint::qp_deadline_ns(const QpSlot& s) const {
  return s.connected && s.qp->state() == rc::QpState::kRts ? s.qp->next_timer_ns() : kNever;
}

// At line rate (Rc and Rt) the rate timers change nothing a later advance() would not apply
// in closed form (α decay, the stage count): on_cnp and on_bytes_sent advance first. Only a
// QP recovering from a cut needs its timers on time, so only those are on the wheel.
std::uint64_t RcEndpoint::rate_deadline_ns(const QpSlot& s) const {
  if (!cfg_.dcqcn.reaction_point || !s.connected) return kNever;
  const double line = s.rp.params().line_rate_bps;
  if (s.rp.rate_bps() >= line && s.rp.state().target_rate_bps >= line) return kNever;
  return s.rp.next_event_ns();
}

void RcEndpoint::reschedule(QpSlot& s) {
  if (const std::uint64_t t = qp_deadline_ns(s); t != s.timer_at_ns) {
    s.timer_at_ns = t;
    if (t == kNever)
      timer_wheel_.cancel(s.index);
    else
      timer_wheel_.schedule(s.index, t);
  }
  if (const std::uint64_t t = rate_deadline_ns(s); t != s.rate_at_ns) {
    s.rate_at_ns = t;
    if (t == kNever)
      rate_wheel_.cancel(s.index);
    else
      rate_wheel_.schedule(s.index, t);
  }
}

rc::RcQp* RcEndpoint::qp(std::uint32_t qpn) {
  QpSlot* s = slot(qpn);
  return s == nullptr ? nullptr : s->qp.get();
}

Status RcEndpoint::create_qp(rc::QpAttr attr, std::uint32_t& qpn) {
  if (cfg_.queues.memory == nullptr || cfg_.queues.pool == nullptr)
    return Status::error(StatusCode::kInvalidArgument, "endpoint has no memory registry or pool");
  for (std::uint32_t i = first_free_slot_; i < qps_.size(); ++i) {
    if (qps_[i]) continue;
    attr.qpn = cfg_.transport.qpn_base + i;
    if (std::string e = attr.validate(); !e.empty())
      return Status::error(StatusCode::kInvalidArgument, "QP attributes: " + e);
    if (cfg_.dcqcn.reaction_point || cfg_.dcqcn.notification_point)
      if (std::string e = cfg_.dcqcn.params.validate(); !e.empty())
        return Status::error(StatusCode::kInvalidArgument, "DCQCN parameter " + e);
    auto q = std::make_unique<rc::RcQp>(attr, cfg_.queues.memory->table());
    if (Status st = q->modify(rc::QpState::kInit); !st.ok()) return st.context("QP " + std::to_string(attr.qpn) + ": ");
    qps_[i] = std::make_unique<QpSlot>();
    first_free_slot_ = i + 1;
    QpSlot& s = *qps_[i];
    s.qp = std::move(q);
    s.index = i;
    // Work posted on the QP itself (QpChannel, rc::RcQp users) puts it on the ready list too.
    s.qp->set_doorbell(&RcEndpoint::on_doorbell, this, i);
    s.np = dcqcn::DcqcnNotificationPoint(cfg_.dcqcn.params.np_min_time_between_cnps_ns);
    s.pacer = dcqcn::Pacer(static_cast<std::uint64_t>(static_cast<double>(cfg_.dcqcn.pacer_burst_ns) / ns_per_tsc_),
                           static_cast<double>(tsc_hz_));
    if (attr.recv_mode == rc::RecvMode::kMessageViews) s.ready.resize(attr.rq_depth);
    // From the first selective-repeat QP on, the parser takes the SR opcodes (docs/selective-repeat.md);
    // the fast path never takes them, so go-back-N traffic parses as before. A go-back-N QP handed
    // one drops it (RcCounters::recovery_mismatch).
    if (attr.recovery == rc::Recovery::kSelectiveRepeat) parse_opt_.accept_droce_sr = true;
    // Readers on other threads (qp_at) see the slot once it is whole.
    __atomic_store_n(&published_qps_, first_free_slot_, __ATOMIC_RELEASE);
    qpn = attr.qpn;
    return {};
  }
  return Status::error(StatusCode::kNoMemory,
                       "endpoint has no free QP slot (max_qps " + std::to_string(qps_.size()) + ")");
}

Status RcEndpoint::connect(std::uint32_t qpn, const RemoteQp& remote) { return connect_qp(qpn, remote, nullptr); }

Status RcEndpoint::connect_agreed(std::uint32_t qpn, const RemoteQp& remote, const cm::CmQpParams& agreed) {
  return connect_qp(qpn, remote, &agreed);
}

Status RcEndpoint::connect_qp(std::uint32_t qpn, const RemoteQp& remote, const cm::CmQpParams* agreed) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::error(StatusCode::kNotFound, "connect: unknown QPN " + std::to_string(qpn));
  if (s->connected || s->qp->state() != rc::QpState::kInit)
    return Status::error(StatusCode::kBadState, "connect: QP " + std::to_string(qpn) + " is not in INIT");
  rc::QpAttr attr = s->qp->attr();
  attr.dest_qpn = remote.qpn;
  attr.rq_psn = remote.psn;
  if (agreed != nullptr) {
    // What REQ/REP settled (IBTA §12.7.x; rdma_cm modifies the QP the same way): the path MTU,
    // READ credits both ways, transport and RNR retries, the ACK timeout and the partition.
    if (const std::uint32_t mtu = cm::mtu_bytes(agreed->path_mtu); mtu >= 256) attr.pmtu = mtu;
    attr.max_rd_atomic = agreed->max_rd_atomic;
    attr.max_dest_rd_atomic = agreed->max_dest_rd_atomic;
    attr.retry_cnt = static_cast<std::uint8_t>(agreed->retry_count & 7);
    attr.rnr_retry = static_cast<std::uint8_t>(agreed->rnr_retry & 7);
    attr.timeout = static_cast<std::uint8_t>(agreed->local_ack_timeout & 31);
    attr.pkey = agreed->pkey;
    attr.sq_psn = agreed->send_psn;
  }
  if (Status st = s->qp->modify(rc::QpState::kRtr, &attr); !st.ok())
    return st.context("connect: QP " + std::to_string(qpn) + ": ");
  if (Status st = s->qp->modify(rc::QpState::kRts); !st.ok())
    return st.context("connect: QP " + std::to_string(qpn) + ": ");
  wire::TemplateConfig tc;
  tc.local = cfg_.addresses.local;
  tc.remote = remote.address;
  tc.ipv6 = cfg_.addresses.ipv6;
  tc.vlan = cfg_.addresses.vlan_id != 0;
  tc.vlan_id = cfg_.addresses.vlan_id;
  tc.vlan_pcp = cfg_.addresses.vlan_pcp;
  tc.dscp = cfg_.addresses.dscp;
  tc.dest_qpn = remote.qpn;
  tc.pkey = attr.pkey;
  tc.udp_src_port = wire::roce_udp_src_port(attr.qpn, remote.qpn);
  s->tmpl = wire::HeaderTemplate::make(tc);
  s->tx_tmpl = wire::TxTemplate::make(s->tmpl);
  s->peer = remote.address;
  s->connected = true;
  // A new flow starts at line rate (DCQCN has no slow start).
  s->rp.reset(cfg_.dcqcn.params, now_ns(rte_rdtsc()));
  if (attr.recv_mode == rc::RecvMode::kMessageViews) {
    // Credits: one per view the application may hold; each carries the largest message size.
    s->credit_bytes = attr.max_message_bytes;
    for (std::uint32_t k = 0; k < attr.rq_depth; ++k) {
      rc::RecvWr credit;
      credit.sge.length = s->credit_bytes;
      if (Status st = s->qp->post_recv(credit); !st.ok()) return st.context("connect: ");
    }
  }
  note_activity(*s);
  return {};
}

Status RcEndpoint::set_recovery(std::uint32_t qpn, rc::Recovery recovery) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::error(StatusCode::kNotFound, "set_recovery: unknown QPN " + std::to_string(qpn));
  if (s->connected || s->qp->state() != rc::QpState::kInit)
    return Status::error(StatusCode::kBadState, "set_recovery: QP " + std::to_string(qpn) + " is not in INIT");
  rc::QpAttr attr = s->qp->attr();
  attr.recovery = recovery;
  if (Status st = s->qp->modify(rc::QpState::kInit, &attr); !st.ok())
    return st.context("set_recovery: QP " + std::to_string(qpn) + ": ");
  if (recovery == rc::Recovery::kSelectiveRepeat) parse_opt_.accept_droce_sr = true;  // as create_qp
  return {};
}

Status RcEndpoint::create_qp(rc::QpAttr attr, const wire::L2L3Address& remote, rc::RcQp*& out) {
  std::uint32_t qpn = 0;
  if (Status st = create_qp(attr, qpn); !st.ok()) return st;
  if (Status st = connect(qpn, RemoteQp{remote, attr.dest_qpn, attr.rq_psn}); !st.ok()) return st;
  out = qp(qpn);
  return {};
}

Status RcEndpoint::set_error(std::uint32_t qpn) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::error(StatusCode::kNotFound, "set_error: unknown QPN " + std::to_string(qpn));
  (void)s->qp->modify(rc::QpState::kError);  // always allowed
  note_activity(*s);                         // flushed work, a NAK that may still leave
  return {};
}

Status RcEndpoint::post_send(std::uint32_t qpn, const rc::SendWr& wr) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::fail(StatusCode::kNotFound, "post_send: unknown QPN");
  if (Status st = s->qp->post_send(wr); !st.ok()) return st;
  note_activity(*s);
  return {};
}

Status RcEndpoint::post_recv(std::uint32_t qpn, const rc::RecvWr& wr) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::fail(StatusCode::kNotFound, "post_recv: unknown QPN");
  if (s->qp->attr().recv_mode == rc::RecvMode::kMessageViews)
    return Status::fail(StatusCode::kInvalidArgument, "post_recv: the QP receives message views (receive_message)");
  if (Status st = s->qp->post_recv(wr); !st.ok()) return st;
  note_activity(*s);
  return {};
}

const rc::RcQp* RcEndpoint::qp_at(std::uint32_t index) const {
  if (index >= __atomic_load_n(&published_qps_, __ATOMIC_ACQUIRE)) return nullptr;
  const QpSlot* s = qps_[index].get();
  return s == nullptr ? nullptr : s->qp.get();
}

const dcqcn::DcqcnReactionPoint* RcEndpoint::dcqcn_at(std::uint32_t index) const {
  if (qp_at(index) == nullptr) return nullptr;
  return &qps_[index]->rp;
}

const dcqcn::DcqcnReactionPoint* RcEndpoint::dcqcn_state(std::uint32_t qpn) {
  QpSlot* s = slot(qpn);
  return s == nullptr ? nullptr : &s->rp;
}

Status RcEndpoint::send_message(std::uint32_t qpn, const void* buf, std::uint32_t len, std::uint64_t wr_id,
                                const std::uint32_t* imm) {
  rc::SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = imm != nullptr ? rc::WrOpcode::kSendWithImm : rc::WrOpcode::kSend;
  if (imm != nullptr) wr.imm = *imm;
  if (len != 0) {
    std::uint32_t lkey = 0;
    if (buf == nullptr || !cfg_.queues.memory->find_lkey(buf, len, lkey, &mr_hint_))
      return Status::fail(StatusCode::kBadKey, "send_message: buffer is not inside registered memory");
    wr.sge = {reinterpret_cast<std::uint64_t>(buf), len, lkey};
  }
  return post_send(qpn, wr);
}

bool RcEndpoint::receive_message(std::uint32_t qpn, MessageView& out) {
  QpSlot* s = slot(qpn);
  if (s == nullptr || s->ready_head == s->ready_tail) return false;
  out = MessageView(s->ready[s->ready_head % s->ready.size()], this);
  ++s->ready_head;
  ++views_held_;
  return true;
}

void RcEndpoint::give_back(MessageParts& v) {
  if (v.segments != nullptr) rte_pktmbuf_free(v.segments);
  v.segments = nullptr;
  if (views_held_ != 0) --views_held_;
  QpSlot* s = slot(v.qpn);
  v.qpn = 0;
  if (s == nullptr || s->qp->state() == rc::QpState::kError) return;
  rc::RecvWr credit;
  credit.sge.length = s->credit_bytes;
  (void)s->qp->post_recv(credit);  // cannot be full: credits out never exceed rq_depth
  note_activity(*s);
}

void RcEndpoint::drop_views(QpSlot& s) {
  if (s.asm_head != nullptr) rte_pktmbuf_free(s.asm_head);
  s.asm_head = s.asm_tail = nullptr;
  for (; s.ready_head != s.ready_tail; ++s.ready_head) {
    MessageParts& v = s.ready[s.ready_head % s.ready.size()];
    if (v.segments != nullptr) rte_pktmbuf_free(v.segments);
    v.segments = nullptr;
  }
}

void RcEndpoint::drop(wire::DropReason r) {
  ++c_.rx_drops[static_cast<std::size_t>(r)];
  if (cfg_.recording.counters != nullptr) ++cfg_.recording.counters->rx_drops[static_cast<std::size_t>(r)];
}

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

inline rte_mbuf* RcEndpoint::tx_alloc() {
  ++tx_pass_frames_;
  return tx_mbufs_n_ != 0 ? tx_mbufs_[--tx_mbufs_n_] : refill_tx_mbufs();
}

// The cache is empty: one bulk get of tx_refill_ mbufs (the first refill of a pass: what the
// previous pass sent; later ones in the same pass: the whole cache). A pool too low for the bulk
// get still gives what it has, one at a time, as rte_pktmbuf_alloc did.
rte_mbuf* RcEndpoint::refill_tx_mbufs() {
  const std::uint32_t n = tx_refill_;
  tx_refill_ = kTxMbufCache;
  if (n > 1 && rte_pktmbuf_alloc_bulk(cfg_.queues.pool, tx_mbufs_, n) == 0) {
    tx_mbufs_n_ = n - 1;
    return tx_mbufs_[n - 1];
  }
  return rte_pktmbuf_alloc(cfg_.queues.pool);
}

// End of a transmit pass: the unused fresh mbufs go back untouched (refcount 1, one segment, as
// rte_pktmbuf_alloc_bulk left them: what a raw put into the pool expects).
void RcEndpoint::give_back_tx_mbufs() {
  if (tx_mbufs_n_ != 0) rte_mempool_put_bulk(cfg_.queues.pool, reinterpret_cast<void**>(tx_mbufs_), tx_mbufs_n_);
  tx_mbufs_n_ = 0;
  tx_refill_ = tx_pass_frames_ < 1 ? 1 : tx_pass_frames_ > kTxMbufCache ? kTxMbufCache : tx_pass_frames_;
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
  const std::uint32_t hlen = from_template ? wire::write_tx_headers(s.tx_tmpl, op, d, s.ip_id++, hdr)
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
      if (from_template) wire::unmask_tx_headers(s.tx_tmpl, hdr, not_ect);
      m->data_len = static_cast<std::uint16_t>(hlen);
      m->pkt_len = hlen;
      auto* trailer = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(tm, static_cast<std::uint16_t>(pad + 4)));
      std::memset(trailer, 0, pad);
      wire::icrc_store(trailer + pad,
                       wire::icrc_compute_split(l3, l3_hdr_len, s.tmpl.ipv6, d.payload, d.payload_len, pad));
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
      len = wire::seal_tx_frame(s.tx_tmpl, hdr, len, not_ect);
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

void RcEndpoint::poll(std::uint64_t now_tsc) {
  rte_mbuf* rx[kRxBurst];
  const std::uint16_t n = rte_eth_rx_burst(cfg_.queues.port_id, cfg_.queues.queue, rx, kRxBurst);
  if (cfg_.recording.capture != nullptr && n != 0)
    cfg_.recording.capture->capture(cfg_.queues.port_id, cfg_.queues.queue, rx, n, CaptureDirection::kRx, now_tsc);
  poll_received(now_tsc, rx, n);
}

void RcEndpoint::poll_received(std::uint64_t now_tsc, rte_mbuf* const* rx, std::uint16_t n) {
  const std::uint64_t now = now_ns(now_tsc);
  rx_now_tsc_ = now_tsc;
  const std::uint64_t qp_now = advance_qp_clock(now);
  if (n != 0)
    rx_promiscuous_ = cfg_.addresses.promiscuous ||
                      (cfg_.queues.tx_ring == nullptr && rte_eth_promiscuous_get(cfg_.queues.port_id) == 1);
  if (n != 0) receive_burst(rx, n, now);
  if (app_stage_ != nullptr) app_stage_(app_stage_ctx_);
  if (cfg_.recording.counters != nullptr) cfg_.recording.counters->rx_packets += n;
  if (pfc_paused_ && now >= pfc_pause_until_ns_) account_pause(now);
  release_paced(now_tsc);
  run_timers(now, qp_now);
  arp_.poll(now, now_tsc);
  nd_.poll(now, now_tsc);
  cm_.poll(now, now_tsc);
  if (!pfc_paused_) transmit_ready(now, now_tsc);
  if (pfc_paused_) return;  // frames already batched wait for the pause to end
  std::uint64_t bytes = 0;
  const std::uint16_t sent = tx_.flush(cfg_.queues.port_id, cfg_.queues.queue, bytes);
  if (cfg_.recording.counters != nullptr) {
    cfg_.recording.counters->tx_packets += sent;
    cfg_.recording.counters->tx_bytes += bytes;
  }
}

// The QPs' clock follows the poll's, except that a gap between two polls longer than
// max_poll_gap_ns counts as max_poll_gap_ns: while we were not running, the peer's ACKs and
// READ responses piled up unread in the RX ring, and this poll reads only one burst of them
// before the timers run. The network's silence is what an ACK timeout measures (§9.7.6.1.3),
// not ours. DCQCN, pacing and PFC keep the poll's own time.
std::uint64_t RcEndpoint::advance_qp_clock(std::uint64_t now) {
  if (!qp_clock_started_ || cfg_.transport.max_poll_gap_ns == 0) {
    qp_clock_started_ = true;
    qp_now_ns_ = now;
  } else if (now > last_poll_ns_) {
    const std::uint64_t gap = now - last_poll_ns_;
    qp_now_ns_ += gap < cfg_.transport.max_poll_gap_ns ? gap : cfg_.transport.max_poll_gap_ns;
  }
  last_poll_ns_ = now;
  return qp_now_ns_;
}

// Paced QPs whose send time came: their data may leave again.
void RcEndpoint::release_paced(std::uint64_t now_tsc) {
  if (wheel_.size() == 0) return;
  std::uint32_t due[64];
  for (int round = 0; round < 4; ++round) {
    const std::uint32_t k = wheel_.poll(now_tsc, due, 64);
    for (std::uint32_t i = 0; i < k; ++i) {
      QpSlot& s = *qps_[due[i]];
      s.paced_wait = false;
      make_ready(s);
    }
    if (k < 64) break;
  }
}

// Every connected QP's timers run when due, whatever transmit does (a full backlog, PFC): the
// wheels hand over only the QPs whose deadline came, so an idle QP costs nothing here. DCQCN's
// rate timers are held with transmit while PFC pauses it (they run late, in one advance()).
// A QP whose timer fired gets a transmit turn (a retransmission, the end of an RNR wait).
// More than kTimerBurst due at once: the rest fire in the next poll (the wheel keeps them).
void RcEndpoint::run_timers(std::uint64_t now, std::uint64_t qp_now) {
  constexpr std::uint32_t kTimerBurst = 256;
  std::uint32_t due[kTimerBurst];
  if (timer_wheel_.size() != 0) {
    const std::uint32_t k = timer_wheel_.poll(qp_now, due, kTimerBurst);
    c_.timer_fires += k;
    for (std::uint32_t i = 0; i < k; ++i) {
      QpSlot& s = *qps_[due[i]];
      s.timer_at_ns = kNever;  // off the wheel: reschedule() puts it back at its next deadline
      s.qp->on_timer(qp_now);
      note_activity(s);
    }
  }
  if (cfg_.dcqcn.reaction_point && !pfc_paused_ && rate_wheel_.size() != 0) {
    const std::uint32_t k = rate_wheel_.poll(now, due, kTimerBurst);
    c_.timer_fires += k;
    for (std::uint32_t i = 0; i < k; ++i) {
      QpSlot& s = *qps_[due[i]];
      s.rate_at_ns = kNever;
      s.rp.advance(now);
      note_activity(s);
    }
  }
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
    if (!s.qp->next_packet(qp_now_ns_, d, !s.paced_wait)) return Turn::kDone;
    const std::uint32_t bytes = transmit(s, d, now_tsc);
    if (bytes == 0) {
      ++c_.tx_alloc_failures;  // the packet is lost locally; go-back-N resends it
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

void RcEndpoint::finish() {
  c_.tx_backlog_drops += tx_.drop_all();
  for (auto& s : qps_)
    if (s) drop_views(*s);
}

void RcEndpoint::connected_qps(std::vector<ConnectedQp>& out) const {
  for (std::uint32_t i = 0; i < first_free_slot_; ++i) {
    const QpSlot* s = qps_[i].get();
    if (s == nullptr || !s->connected) continue;
    ConnectedQp c;
    c.qpn = s->qp->attr().qpn;
    c.remote_qpn = s->qp->attr().dest_qpn;
    c.ipv6 = cfg_.addresses.ipv6;
    c.local = cfg_.addresses.local;
    c.remote = s->peer;
    c.udp_src_port = wire::roce_udp_src_port(c.qpn, c.remote_qpn);
    out.push_back(c);
  }
}

}  // namespace droce::engine
