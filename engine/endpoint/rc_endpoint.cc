// RcEndpoint's API and poll loop: QPs created, connected and posted to, the ready and completion
// lists, the QPs' timers and clock, the messaging calls, and the poll's stages in order (the
// receive and transmit paths are rc_endpoint_rx.cc and rc_endpoint_tx.cc; create() and the
// constructor rc_endpoint_setup.cc).
#include "engine/endpoint/rc_endpoint.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <string>

namespace droce::engine {

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
    if (Status s = attr.validate(); !s.ok()) return s.context("QP attributes: ");
    if (!cfg_.queues.memory->domain_exists(attr.pd))
      return Status::error(StatusCode::kNotFound, "QP attributes: no protection domain " + std::to_string(attr.pd) +
                                                      " in the endpoint's memory registry");
    if (cfg_.dcqcn.reaction_point || cfg_.dcqcn.notification_point)
      if (Status s = cfg_.dcqcn.params.validate(); !s.ok()) return s.context("DCQCN parameter ");
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

Status RcEndpoint::connect_agreed(std::uint32_t qpn, const wire::L2L3Address& peer, const cm::CmQpParams& agreed) {
  return connect_qp(qpn, RemoteQp{peer, agreed.remote_qpn, agreed.expected_psn}, &agreed);
}

Status RcEndpoint::attr_in_init(std::uint32_t qpn, rc::QpAttr& out) const {
  const QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::fail(StatusCode::kNotFound, "unknown QPN");
  if (s->connected || s->qp->state() != rc::QpState::kInit) return Status::fail(StatusCode::kBadState, "not in INIT");
  out = s->qp->attr();
  return {};
}

void RcEndpoint::set_waits_for_traffic(std::uint32_t qpn, bool waiting) {
  if (QpSlot* s = slot(qpn)) s->cm_wait_traffic = waiting;
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
  tc.dscp = s->dscp == kEndpointDscp ? cfg_.addresses.dscp : s->dscp;
  tc.dest_qpn = remote.qpn;
  tc.pkey = attr.pkey;
  if (s->udp_src_port == 0) s->udp_src_port = wire::roce_udp_src_port(attr.qpn, remote.qpn);
  tc.udp_src_port = s->udp_src_port;
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

Status RcEndpoint::set_udp_src_port(std::uint32_t qpn, std::uint16_t port) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::error(StatusCode::kNotFound, "set_udp_src_port: unknown QPN " + std::to_string(qpn));
  // The port goes into the header template built at connect: a connected QP keeps its flow.
  if (s->connected || s->qp->state() != rc::QpState::kInit)
    return Status::error(StatusCode::kBadState, "set_udp_src_port: QP " + std::to_string(qpn) + " is not in INIT");
  s->udp_src_port = port;
  return {};
}

Status RcEndpoint::set_dscp(std::uint32_t qpn, std::uint8_t dscp) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::error(StatusCode::kNotFound, "set_dscp: unknown QPN " + std::to_string(qpn));
  if (dscp > 63)
    return Status::error(StatusCode::kInvalidArgument, "set_dscp: DSCP " + std::to_string(dscp) + " is not 0..63");
  // The DSCP goes into the header template built at connect, as the UDP source port does.
  if (s->connected || s->qp->state() != rc::QpState::kInit)
    return Status::error(StatusCode::kBadState, "set_dscp: QP " + std::to_string(qpn) + " is not in INIT");
  s->dscp = dscp;
  return {};
}

std::uint16_t RcEndpoint::udp_src_port(std::uint32_t qpn) const {
  const QpSlot* s = slot(qpn);
  return s == nullptr ? 0 : s->udp_src_port;
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
  const std::uint64_t qp_now = qp_clock_.advance(now);
  if (n != 0)
    rx_promiscuous_ = cfg_.addresses.promiscuous ||
                      (cfg_.queues.tx_ring == nullptr && rte_eth_promiscuous_get(cfg_.queues.port_id) == 1);
  if (n != 0) receive_burst(rx, n, now);
  const bool qp_timers = qp_clock_.timers_may_run(n, kRxBurst);
  if (app_stage_ != nullptr) app_stage_(app_stage_ctx_);
  if (cfg_.recording.counters != nullptr) cfg_.recording.counters->rx_packets += n;
  if (pfc_paused_ && now >= pfc_pause_until_ns_) account_pause(now);
  if (pfc_watchdog_ns_ != 0) pfc_watchdog(now);
  release_paced(now_tsc);
  run_timers(now, qp_now, qp_timers);
  neighbours_.poll(now, now_tsc);
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
// More than kTimerBurst due at once: the rest fire in the next poll (the wheel keeps them), as
// do the QP timers of a poll that qp_timers holds (QpClock::timers_may_run: after a stall of
// this process, the answers that piled up meanwhile are read first).
void RcEndpoint::run_timers(std::uint64_t now, std::uint64_t qp_now, bool qp_timers) {
  constexpr std::uint32_t kTimerBurst = 256;
  std::uint32_t due[kTimerBurst];
  if (qp_timers && timer_wheel_.size() != 0) {
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
    c.udp_src_port = s->udp_src_port;
    out.push_back(c);
  }
}

}  // namespace droce::engine
