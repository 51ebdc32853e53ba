// RcEndpoint: the RC transport on one port queue — RX parse -> QP dispatch, QP output -> frames
// with zero-copy payloads -> TxBatch, ACK timers; the engine side of protocols/rc.
#pragma once

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/capture.h"
#include "engine/core/counters.h"
#include "engine/core/memory_region.h"
#include "engine/core/status.h"
#include "engine/endpoint/cm_qp_control.h"
#include "engine/endpoint/control_frames.h"
#include "engine/endpoint/endpoint_cm.h"
#include "engine/endpoint/endpoint_config.h"
#include "engine/endpoint/endpoint_counters.h"
#include "engine/endpoint/endpoint_neighbours.h"
#include "engine/endpoint/message_view.h"
#include "engine/endpoint/qp_clock.h"
#include "protocols/dcqcn/notification_point.h"
#include "protocols/dcqcn/pacer.h"
#include "protocols/dcqcn/params.h"
#include "protocols/dcqcn/reaction_point.h"
#include "protocols/dcqcn/timing_wheel.h"
#include "protocols/rc/rc_qp.h"
#include "protocols/wire/build.h"
#include "protocols/wire/parse.h"

namespace droce::engine {

// The peer of a QP, given statically (labs, hardware peers) or learned out of band.
struct RemoteQp {
  wire::L2L3Address address;  // MAC and IP of the peer
  std::uint32_t qpn = 0;      // its QP number (24 bits)
  std::uint32_t psn = 0;      // the first PSN it sends (our expected PSN)
};

// The transport on one port queue and the API applications use, verbs-like:
//   create_qp -> connect -> post_send / post_recv -> poll_cq
// and a messaging layer on top: send_message (a registered buffer, a completion when the peer
// acknowledged it) and receive_message / release (zero-copy views over the received frames, for
// QPs created with rc::RecvMode::kMessageViews).
// Single-threaded: everything runs on the thread that calls poll() (the worker lcore); other
// threads go through QpChannel.
class RcEndpoint final : public ViewHome, private CmQpControl {
 public:
  // The endpoint on cfg's port queue, or nullptr and `err` naming the field out of range.
  [[nodiscard]] static std::unique_ptr<RcEndpoint> create(const EndpointConfig& cfg, Status& err);
  ~RcEndpoint();
  RcEndpoint(const RcEndpoint&) = delete;
  RcEndpoint& operator=(const RcEndpoint&) = delete;

  // ---- verbs-like control path ----
  // Creates a QP (RESET -> INIT) from `attr` (PMTU, PSN, timers, depths, access, receive mode,
  // protection domain; attr.qpn is assigned here and returned in `qpn`). attr.pd must exist in
  // the endpoint's MemoryRegistry (create_domain; 0, the default, always does): the QP reaches
  // only that domain's regions (docs/hardening.md, "Protection domains"); kNotFound otherwise.
  [[nodiscard]] Status create_qp(rc::QpAttr attr, std::uint32_t& qpn);
  // Connects it (INIT -> RTR -> RTS) to `remote`. Message-view QPs get their receive credits here.
  [[nodiscard]] Status connect(std::uint32_t qpn, const RemoteQp& remote);
  // The QP's loss recovery (docs/selective-repeat.md), while it is still in INIT (not connected):
  // for an owner that learns it from the peer after create_qp (droce-gen's exchange).
  [[nodiscard]] Status set_recovery(std::uint32_t qpn, rc::Recovery recovery);
  // The UDP source port the QP sends from, while it is still in INIT: RoCEv2's only entropy for
  // ECMP and link aggregation (IBTA Annex A17.3.3 leaves its choice to the sender). 0 (the
  // default) derives it at connect from the QP pair as Linux does (rdma_get_udp_sport without a
  // flow label, wire::roce_udp_src_port); any other port is used as is, as
  // mlx5dv_modify_qp_udp_sport sets one (rxe takes it from the flow label of the QP's address).
  // Set the same port at both ends of a pair when RSS placement should keep its QP on one worker.
  [[nodiscard]] Status set_udp_src_port(std::uint32_t qpn, std::uint16_t port);
  // The port the QP sends from once connected (set or derived); before that the one set, or 0.
  [[nodiscard]] std::uint16_t udp_src_port(std::uint32_t qpn) const;
  // The IP DSCP (0..63) of every frame the QP sends, data and its ACKs/NAKs alike, while it is
  // still in INIT: its header template's, so one endpoint carries flows of several traffic
  // classes (RFC 2474 §3: the class is the sender's per flow). Unset, the endpoint's
  // addresses.dscp. ECN stays the template's ECT(0) (RFC 3168 §6.1.1); CNPs keep
  // dcqcn.params.cnp_dscp, their own class. kInvalidArgument above 63.
  [[nodiscard]] Status set_dscp(std::uint32_t qpn, std::uint8_t dscp);
  // Both at once, with the peer's QPN and first PSN taken from attr.dest_qpn and attr.rq_psn.
  [[nodiscard]] Status create_qp(rc::QpAttr attr, const wire::L2L3Address& remote, rc::RcQp*& out);
  // The QP's state and counters (nullptr for an unknown QPN).
  [[nodiscard]] rc::RcQp* qp(std::uint32_t qpn);
  // Moves the QP to ERROR: outstanding work completes flushed; held views stay valid.
  [[nodiscard]] Status set_error(std::uint32_t qpn);

  // ---- neighbours (ARP on an IPv4 endpoint, IPv6 Neighbor Discovery on an IPv6 one) ----
  // The endpoint answers the queries for its address by itself (ARP requests, Neighbor
  // Solicitations). These resolve a peer's MAC: `ip` is an address of the endpoint's family as
  // RemoteQp::address.ip holds it (4 bytes for IPv4, 16 for IPv6, network order). start_resolve,
  // then poll until resolution(ip).state is kResolved (the MAC) or kFailed (status says why).
  [[nodiscard]] Status start_resolve(const std::uint8_t* ip) { return start_resolve(ip, rte_rdtsc()); }
  [[nodiscard]] Status start_resolve(const std::uint8_t* ip, std::uint64_t now_tsc) {
    return neighbours_.start_resolve(ip, now_ns(now_tsc));
  }
  [[nodiscard]] NeighbourResolution resolution(const std::uint8_t* ip) const { return neighbours_.resolution(ip); }
  // Queues an announcement of our address, at start, so that neighbours' caches learn us: a
  // gratuitous ARP, or an unsolicited Neighbor Advertisement (RFC 4861 §7.2.6).
  [[nodiscard]] Status announce() { return neighbours_.announce(rte_rdtsc()); }
  [[nodiscard]] const EndpointNeighbours& neighbours() const { return neighbours_; }

  // ---- RDMA-CM over QP1 (docs/cm.md; engine/endpoint/endpoint_cm.h) ----
  // Connections as rdma_cm makes them, with Linux peers (rping, perftest -R, ...) or droce ones.
  // Everything happens in poll(); cm_next_event says what happened, in order.
  // Passive: cm_listen(port), then for each kConnectRequest create a QP (create_qp) and
  // cm_accept(conn, qpn) — the QP goes to RTS at once with the REQ's parameters and the REP
  // leaves; kEstablished follows the RTU (or the peer's first packet) — or cm_reject(conn).
  // Active: create a QP, cm_connect(qpn, to, conn): REQ; at the REP the QP goes to RTS with the
  // agreed parameters, the RTU leaves and kEstablished comes. Either side: cm_disconnect(conn)
  // (DREQ; the QP goes to ERROR, flushing its work) -> kDisconnected -> later kClosed.
  // The agreed parameters override the QP's own: remote QPN and PSN, path MTU (the smaller of
  // both), READ credits, retry and RNR retry counts, ACK timeout, P_Key.
  [[nodiscard]] Status cm_listen(std::uint16_t port) { return cm_.listen(port); }
  [[nodiscard]] Status cm_connect(std::uint32_t qpn, const CmConnectTo& to, std::uint32_t& conn) {
    return cm_.connect(qpn, to, conn);
  }
  [[nodiscard]] Status cm_accept(std::uint32_t conn, std::uint32_t qpn, const std::uint8_t* private_data = nullptr,
                                 std::uint32_t private_len = 0) {
    return cm_.accept(conn, qpn, private_data, private_len);
  }
  [[nodiscard]] Status cm_reject(std::uint32_t conn) { return cm_.reject(conn); }
  [[nodiscard]] Status cm_disconnect(std::uint32_t conn) { return cm_.disconnect(conn); }
  [[nodiscard]] bool cm_next_event(CmEndpointEvent& out) { return cm_.next_event(out); }
  [[nodiscard]] cm::CmState cm_state(std::uint32_t conn) const { return cm_.state(conn); }
  [[nodiscard]] const CmCounters& cm_counters() const { return cm_.counters(); }
  // Several workers (engine/workers/group_cm_qps.h, docs/cm.md "One CM per port"): the QP moves
  // this endpoint's CM would make (the worker runs the port owner's commands through them); the
  // port owner's CM routed through `qps`; another worker's QP traffic told to `notice`; a QP
  // traffic notice from another worker given to this endpoint's CM. Control path only.
  [[nodiscard]] CmQpControl& cm_qps() { return *this; }
  [[nodiscard]] const CmQpControl& cm_qps() const { return *this; }
  void cm_route_qps(CmQpControl& qps) { cm_.route_qps(qps); }
  void cm_forward_traffic(CmTrafficNotice* notice) { cm_.forward_traffic(notice); }
  void cm_qp_traffic(std::uint32_t qpn, std::uint64_t now_tsc) { cm_.on_qp_traffic(qpn, now_tsc); }

  // ---- verbs-like data path ----
  [[nodiscard]] Status post_send(std::uint32_t qpn, const rc::SendWr& wr);
  [[nodiscard]] Status post_recv(std::uint32_t qpn, const rc::RecvWr& wr);
  // Up to `max` completions of the QP; returns how many were written.
  [[nodiscard]] unsigned poll_cq(std::uint32_t qpn, rc::Completion* out, unsigned max);
  // The endpoint's completion queue: up to `max` completions of any of its QPs (each names its
  // QP in qp_num), QPs in the order their first pending completion arrived, each QP's in order.
  // Costs O(completions returned), not O(QPs): only QPs with completions are visited. Both
  // forms may be mixed; a completion is returned once, by whichever polls first.
  [[nodiscard]] unsigned poll_cq(rc::Completion* out, unsigned max);

  // ---- shared receive queues (rc_endpoint_srq.cc) ----
  // An SRQ of `depth` WQEs (1..65536), id returned in `srq_id` (1, 2, ...; at most kMaxSrqs per
  // endpoint, alive as long as the endpoint). QPs of this endpoint attach to it after create_qp
  // and before connect; their SENDs then take receives from it, and their receive completions
  // come through poll_cq as usual. Posted-buffer QPs only.
  static constexpr std::uint32_t kMaxSrqs = 64;
  // The SRQ belongs to protection domain `pd` (0, the default, without it): its receives' buffers
  // must be of that domain, and only QPs of that domain attach to it (kInvalidArgument otherwise,
  // as verbs' SRQ and QP share one ibv_pd).
  [[nodiscard]] Status create_srq(std::uint32_t depth, std::uint32_t& srq_id);
  [[nodiscard]] Status create_srq(std::uint32_t depth, std::uint32_t pd, std::uint32_t& srq_id);
  [[nodiscard]] Status attach_srq(std::uint32_t qpn, std::uint32_t srq_id);
  [[nodiscard]] Status post_srq_recv(std::uint32_t srq_id, const rc::RecvWr& wr);
  // The limit event (verbs' IBV_EVENT_SRQ_LIMIT_REACHED): armed with a limit, it fires once when
  // fewer WQEs than that are left; srq_limit_reached() says so once (and clears it).
  [[nodiscard]] Status arm_srq_limit(std::uint32_t srq_id, std::uint32_t limit);
  [[nodiscard]] bool srq_limit_reached(std::uint32_t srq_id);
  [[nodiscard]] const rc::SharedRecvQueue* srq(std::uint32_t srq_id) const;

  // ---- messaging ----
  // Sends [buf, buf+len) — which must lie inside registered memory; it is not copied and must
  // stay untouched until the completion with `wr_id` arrives from poll_cq.
  [[nodiscard]] Status send_message(std::uint32_t qpn, const void* buf, std::uint32_t len, std::uint64_t wr_id,
                                    const std::uint32_t* imm = nullptr);
  // The next complete message of a message-view QP, in order; false when none is ready. The view
  // owns it: when the view goes out of scope the frames go back and the QP gets its receive
  // credit again (so the peer may send again). A view held in `out` before is given back first.
  [[nodiscard]] bool receive_message(std::uint32_t qpn, MessageView& out);
  // Gives a view's message back now (the same as view.reset()).
  void release(MessageView& view) { view.reset(); }
  // ViewHome: a message handed out by receive_message comes back (frames freed, credit returned).
  void give_back(MessageParts& parts) override;
  // Views handed out and not yet released (all QPs).
  [[nodiscard]] std::uint64_t views_held() const { return views_held_; }

  // One iteration, in stages: RX burst, the application's stage (below), timers, TX (as many
  // packets as the backlog takes), flush.
  void poll() { poll(rte_rdtsc()); }
  // The same at a given TSC reading: labs and the simulator run the endpoint on their own clock.
  void poll(std::uint64_t now_tsc);
  // The same iteration over frames someone else read from the port (a worker that steers frames
  // to the QPs' owners): they are this endpoint's from now on (kept or freed). The caller has
  // already captured them. `n` may be 0: timers and TX still run.
  void poll_received(std::uint64_t now_tsc, rte_mbuf* const* rx, std::uint16_t n);
  static constexpr std::uint16_t kRxBurst = 32;
  // The application's stage of the iteration (rx -> app -> timers -> tx -> flush): every poll
  // calls fn(ctx) once the received burst is processed, before timers and transmit. Work the
  // application posts there in answer to what just arrived (the reply to a request) leaves in
  // this iteration's TX burst, beside the request's ACK, instead of one iteration later. fn may
  // call everything on this endpoint except poll/poll_received/finish. nullptr removes it; the
  // owner of ctx removes it before ctx goes away.
  using AppStage = void (*)(void* ctx);
  void set_app_stage(AppStage fn, void* ctx) {
    app_stage_ = fn;
    app_stage_ctx_ = ctx;
  }
  // A lab's impairment of what this endpoint sends (LinkImpairment::attach_send): every frame
  // passes fn once, before its first tx_burst. nullptr removes it; the owner of ctx removes it
  // before ctx goes away.
  void set_tx_filter(TxFilter fn, void* ctx) { tx_.set_filter(fn, ctx); }
  // Frees everything pending (shutdown). Views the application still holds stay valid until it
  // releases them (they are plain mbuf chains from the RX pool).
  void finish();

  [[nodiscard]] const EndpointCounters& counters() const { return c_; }
  [[nodiscard]] const EndpointConfig& config() const { return cfg_; }
  // QPs created so far.
  [[nodiscard]] std::uint32_t qp_count() const { return first_free_slot_; }
  // The QP in slot `index` (QPN qpn_base + index; nullptr past qp_count()) and its DCQCN reaction
  // point, for readers of their state and counters (telemetry, reports), which may run on
  // another thread once the QP exists.
  [[nodiscard]] const rc::RcQp* qp_at(std::uint32_t index) const;
  [[nodiscard]] const dcqcn::DcqcnReactionPoint* dcqcn_at(std::uint32_t index) const;
  // A connected QP's addressing as its peer's frames carry it (the peer's UDP source port for the
  // pair is taken to be the one this end sends from: wire::roce_udp_src_port is symmetric in the
  // QPNs, and a port set with set_udp_src_port is meant to be set at both ends; a wrong guess
  // costs the software hand-over, never a frame). For
  // placing inbound frames on a port's RSS table (engine/workers/rss_placement.h); not for the
  // datapath: it appends to `out`.
  struct ConnectedQp {
    std::uint32_t qpn = 0, remote_qpn = 0;
    bool ipv6 = false;
    wire::L2L3Address local, remote;
    std::uint16_t udp_src_port = 0;
  };
  void connected_qps(std::vector<ConnectedQp>& out) const;
  // Its number in EndpointDirectory (DPDK telemetry: /droce/endpoint_stats,<id>).
  [[nodiscard]] std::uint32_t telemetry_id() const { return telemetry_id_; }
  // A QP's DCQCN reaction point (rate, target, α, stages; nullptr for an unknown QPN). Its rate
  // is what the pacer enforces when dcqcn.reaction_point is on.
  [[nodiscard]] const dcqcn::DcqcnReactionPoint* dcqcn_state(std::uint32_t qpn);
  // True while PFC holds our priority.
  [[nodiscard]] bool pfc_paused() const { return pfc_paused_; }
  // True while the PFC watchdog has stopped honouring pauses (EndpointPfc::watchdog_ms).
  [[nodiscard]] bool pfc_watchdog_tripped() const { return pfc_watchdog_tripped_; }
  [[nodiscard]] std::uint64_t now_ns(std::uint64_t tsc) const;
  // Payload bytes copied per payload byte delivered, over all QPs (RX side): 0 for pure views,
  // 1 for verbs receives and WRITEs (the one placement a NIC's DMA would also do).
  [[nodiscard]] double rx_copies_per_byte() const;

 private:
  explicit RcEndpoint(const EndpointConfig& cfg);
  // CmQpControl: the QP moves EndpointCm may ask for (cm_qp_control.h).
  [[nodiscard]] Status attr_in_init(std::uint32_t qpn, rc::QpAttr& out) const override;
  [[nodiscard]] Status set_qp_recovery(std::uint32_t qpn, rc::Recovery recovery) override {
    return set_recovery(qpn, recovery);
  }
  [[nodiscard]] Status connect_agreed(std::uint32_t qpn, const wire::L2L3Address& peer,
                                      const cm::CmQpParams& agreed) override;
  [[nodiscard]] Status set_qp_error(std::uint32_t qpn) override { return set_error(qpn); }
  void set_waits_for_traffic(std::uint32_t qpn, bool waiting) override;
  [[nodiscard]] std::uint64_t clock_ns(std::uint64_t tsc) const override { return now_ns(tsc); }
  [[nodiscard]] Status connect_qp(std::uint32_t qpn, const RemoteQp& remote, const cm::CmQpParams* agreed);
  static constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
  static constexpr std::uint64_t kNever = UINT64_MAX;
  static constexpr std::uint8_t kEndpointDscp = 0xFF;  // QpSlot::dscp not set
  // A QP's transport state, allocated when the QP is created: a slot without a QP is one null
  // pointer, so max_qps can be large.
  struct QpSlot {
    std::unique_ptr<rc::RcQp> qp;
    std::uint32_t index = 0;  // its slot: QPN - qpn_base
    // Ready list (QPs that may have something to send), linked through the slots.
    std::uint32_t ready_next = kNoSlot;
    bool on_ready = false;
    // Completion list (QPs that may have completions for poll_cq(out, max)), linked the same way.
    std::uint32_t cq_next = kNoSlot;
    bool on_cq = false;
    // The deadlines this QP is on the timer wheels for (kNever: not on them), so that
    // rescheduling after an event is one compare when nothing changed.
    std::uint64_t timer_at_ns = kNever;  // RcQp::next_timer_ns(), on the QPs' clock
    std::uint64_t rate_at_ns = kNever;   // DcqcnReactionPoint::next_event_ns(), on the poll's clock
    wire::HeaderTemplate tmpl;
    wire::TxTemplate tx_tmpl;  // tmpl prepared for the transmit path (build.h)
    // The headers of the frames this QP receives, as the ICRC sees them: learned from the first
    // frame and again whenever a frame's invariant bytes differ (icrc_template.h).
    wire::IcrcTemplate rx_icrc;
    std::uint16_t ip_id = 0;
    bool connected = false;
    wire::L2L3Address peer;  // the connected peer's address: frames for this QP must come from it
    // Message views: the message being assembled (payload-only chain) and finished ones, FIFO.
    rte_mbuf* asm_head = nullptr;
    rte_mbuf* asm_tail = nullptr;
    std::vector<MessageParts> ready;  // ring of rq_depth entries (credits bound it)
    std::uint64_t ready_head = 0, ready_tail = 0;
    std::uint32_t credit_bytes = 0;
    // DCQCN: the sender's rate law and pacer, the receiver's CNP generator.
    dcqcn::DcqcnReactionPoint rp{};
    dcqcn::DcqcnNotificationPoint np{};
    dcqcn::Pacer pacer{};
    bool paced_wait = false;            // on the timing wheel until its next send time
    bool rx_touched = false;            // in rx_touched_: its note_activity() is due at the burst's end
    bool cm_wait_traffic = false;       // accepted by the CM, RTU not seen: its first packet stands for it
    std::uint16_t udp_src_port = 0;     // set_udp_src_port's (0: derived at connect), then the one in use
    std::uint8_t dscp = kEndpointDscp;  // set_dscp's, else the endpoint's addresses.dscp
  };
  QpSlot* slot(std::uint32_t qpn) {
    const std::uint32_t i = qpn - cfg_.transport.qpn_base;  // wraps to a huge index below the base
    return i < qps_.size() ? qps_[i].get() : nullptr;
  }
  const QpSlot* slot(std::uint32_t qpn) const {
    const std::uint32_t i = qpn - cfg_.transport.qpn_base;
    return i < qps_.size() ? qps_[i].get() : nullptr;
  }
  // The QP may have something to send: it goes on the ready list (at the back; once).
  void make_ready(QpSlot& s);
  // A QP whose turn the full TX backlog cut: first in the next poll.
  void make_ready_first(QpSlot& s);
  [[nodiscard]] QpSlot& take_ready();
  // A FIFO of slots linked through one of QpSlot's link fields (the ready list, the CQ list).
  struct SlotList {
    std::uint32_t QpSlot::*next;
    std::uint32_t head = kNoSlot, tail = kNoSlot;
  };
  void append(SlotList& list, QpSlot& s);
  // Only called on a non-empty list.
  [[nodiscard]] QpSlot& pop_front(SlotList& list);
  // The QP has completions the application has not polled: it goes on the completion list (once).
  void note_completions(QpSlot& s);
  // Up to `max` completions of one QP, skipping the receive credits of a message-view QP.
  unsigned drain_completions(QpSlot& s, rc::Completion* out, unsigned max);
  // Something happened to the QP (work posted, a packet received, a state change): it gets a
  // transmit turn and its timers are rescheduled.
  void note_activity(QpSlot& s);
  // RcQp's doorbell: work was posted on the QP or its state changed, by whatever path.
  static void on_doorbell(void* ctx, std::uint32_t slot);
  // Puts the QP on the timer wheels at its current deadlines (O(1); no-op when unchanged).
  void reschedule(QpSlot& s);
  [[nodiscard]] std::uint64_t qp_deadline_ns(const QpSlot& s) const;
  [[nodiscard]] std::uint64_t rate_deadline_ns(const QpSlot& s) const;
  void release_paced(std::uint64_t now_tsc);
  // Every frame of a burst through receive(); the frames no view kept go back to their pool.
  void receive_burst(rte_mbuf* const* rx, std::uint16_t n, std::uint64_t now_ns);
  void touch_received(QpSlot& s);
  void settle_received();
  // One frame: parse, the side protocols' frames (PFC, ARP/ND, QP1), ICRC, CNPs, then the header
  // check and delivery, or a place in the run being gathered (rx_run_). True when the frame is no
  // longer the caller's (a view kept it, or the run holds it). Out of line on purpose:
  // bench/callgrind/run.py counts received frames by its calls.
  [[gnu::noinline]] bool receive(rte_mbuf* m, std::uint64_t now_ns);
  // Receive by bursts: whether a parsed, ICRC-checked frame may join a run of QP `s` (a SEND the
  // responder's run path executes, on a QP that takes runs, passing the header check, with no CE
  // mark or CM wait to act on); the run executed, its frames freed, what it left packet by packet.
  [[nodiscard]] bool joins_run(const wire::PacketInfo& pi, const QpSlot* s) const;
  void flush_run(std::uint64_t now_ns);
  // rxe's hdr_check for a parsed RC packet: its QP, the QP's state, the addresses, the P_Key and a
  // response's length. `addressed` is slot(pi.dest_qpn), looked up once for the ICRC. The QP, or
  // nullptr when the packet was dropped (counted).
  [[nodiscard]] QpSlot* check_header(const wire::PacketInfo& pi, QpSlot* addressed);
  // A checked packet to its QP and on to a message view; true when a view kept the frame.
  bool deliver(QpSlot& s, rte_mbuf* m, const wire::PacketInfo& pi, std::uint8_t* data, bool linear,
               std::uint64_t now_ns);
  static bool may_keep(const QpSlot& s, const wire::PacketInfo& pi);
  rte_mbuf* copy_payload(const wire::PacketInfo& pi, const std::uint8_t* payload);
  bool append_payload(QpSlot& s, rte_mbuf* piece);
  void end_message(QpSlot& s, const wire::PacketInfo& pi);
  void drop_views(QpSlot& s);
  // Frame bytes handed to the TX batch; 0 when the frame could not be built.
  std::uint32_t transmit(QpSlot& s, const rc::TxDescriptor& d, std::uint64_t now_tsc);
  // One fresh mbuf of the pool for a frame being sent (nullptr: the pool is empty), from the
  // bulk-allocated TX cache; give_back_tx_mbufs() returns what a transmit pass did not use.
  [[nodiscard]] rte_mbuf* tx_alloc();
  // Whether the cache holds the mbufs of one frame (tx_frame_mbufs_), refilled if it does not.
  // Asked before a QP gives up its next packet: next_packet takes the packet's PSN, so a frame
  // that found the pool empty afterwards would be lost and cost a go-back-N window.
  [[nodiscard]] bool tx_reserve_frame();
  [[nodiscard]] bool refill_tx_mbufs(std::uint32_t need);
  void give_back_tx_mbufs();
  void drop(wire::DropReason r);
  [[nodiscard]] wire::DropReason check_addresses(const QpSlot& s, const wire::PacketInfo& pi) const;
  [[nodiscard]] wire::DropReason check_response_length(const QpSlot& s, const wire::PacketInfo& pi) const;
  void run_timers(std::uint64_t now, std::uint64_t qp_now, bool qp_timers);
  void transmit_ready(std::uint64_t now, std::uint64_t now_tsc);
  enum class Turn : std::uint8_t {
    kDone,         // nothing more to send now (or paced): off the ready list
    kMore,         // the per-turn bound (or a frame that could not be built) ended it: back of the list
    kBacklogFull,  // the TX backlog filled, or the pool is empty: front of the list
  };
  // Sends up to one turn of the QP's packets.
  Turn transmit_turn(QpSlot& s, std::uint64_t now, std::uint64_t now_tsc);
  void on_cnp(const wire::PacketInfo& pi, std::uint64_t now_ns);
  void send_cnp(QpSlot& s, std::uint64_t now_tsc);
  void on_mac_control(const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_ns);
  void account_pause(std::uint64_t now_ns);
  // The PFC watchdog's two edges: a pause held past watchdog_ms trips it, a quiet watchdog_ms restores.
  void pfc_watchdog(std::uint64_t now_ns);

  EndpointConfig cfg_;
  bool multi_seg_ok_ = false;
  bool dpdk_memory_tx_only_ = false;  // zero-copy only from DPDK memory (virtio_user)
  std::vector<std::unique_ptr<QpSlot>> qps_;
  std::vector<std::unique_ptr<rc::SharedRecvQueue>> srqs_;  // id i + 1 at index i
  rc::SharedRecvQueue* srq_by_id(std::uint32_t srq_id);
  std::uint32_t first_free_slot_ = 0;  // slots are never freed: create_qp fills them in order
  // QPs that may have something to send, FIFO, each at most once. Transmit gives each a turn in
  // order; a QP whose turn the full TX backlog cut goes first in the next poll, so every QP gets
  // its turn however busy the others are (with 64 busy QPs the later ones never sent).
  SlotList ready_{&QpSlot::ready_next};
  std::uint32_t ready_len_ = 0;
  // QPs that may have completions, FIFO, each at most once (the endpoint's CQ).
  SlotList cq_{&QpSlot::cq_next};
  bool rx_promiscuous_ = false;  // this poll's view of the port's mode (cfg or PMD)
  // The parser checks every header rule, inline on the fast path (parse_headers); receive() checks
  // the ICRC in place right after (the parser's own check would copy the frame) and the P_Key
  // against the QP's. The drop reasons and their order stay parse_frame's. accept_droce_sr turns
  // on with the first selective-repeat QP (create_qp).
  wire::ParseOptions parse_opt_{.verify_icrc = false};
  // QPs that received packets in this burst, in the order of their first packet: each gets one
  // note_activity() when the burst is done (settle_received) instead of one per packet.
  std::uint32_t rx_touched_[kRxBurst] = {};
  std::uint32_t rx_touched_n_ = 0;
  // Receive by bursts (issue 37): consecutive SEND and WRITE frames of one QP, each one PSN after the one
  // before, gathered as receive() meets them and executed as one run (RcQp::on_request_run) when a
  // frame that cannot join arrives (before that frame is looked at) or the burst ends. pi[n] is
  // where receive() parses the next frame, so a frame that joins is not copied.
  struct RxRun {
    QpSlot* slot = nullptr;
    std::uint32_t n = 0;
    // Zeroed once: the parser leaves the fields of ext headers an opcode lacks as they were.
    wire::PacketInfo pi[kRxBurst + 1] = {};
    const std::uint8_t* payload[kRxBurst] = {};
    rte_mbuf* frames[kRxBurst] = {};
  };
  RxRun rx_run_;
  // The clock the QPs see (max_poll_gap_ns), and whether their timers may run after a stall.
  QpClock qp_clock_{cfg_.transport.max_poll_gap_ns};
  EndpointTxBatch tx_;
  // Fresh TX mbufs taken in one rte_pktmbuf_alloc_bulk, handed out from the top. Refilled with
  // as many as the previous transmit pass sent (one bulk get instead of one get per frame), and
  // emptied back into the pool at the end of every pass: no mbuf stays held between polls.
  // Per opcode, what transmit decides beyond OpcodeInfo, worked out once in the constructor:
  // whether the QP's TxTemplate builds its headers (wire::tx_template_covers) and whether it
  // leaves Not-ECT (rc::packet_fields' ECN rule, which depends on the opcode alone).
  static constexpr std::uint8_t kTxFromTemplate = 1, kTxNotEct = 2;
  std::array<std::uint8_t, 256> tx_opcode_class_{};
  static constexpr std::uint32_t kTxMbufCache = 32;
  rte_mbuf* tx_mbufs_[kTxMbufCache] = {};
  std::uint32_t tx_mbufs_n_ = 0;
  std::uint32_t tx_refill_ = 1;       // the next refill's size
  std::uint32_t tx_pass_frames_ = 0;  // mbufs handed out in this transmit pass
  // The mbufs a frame is sure to find before its packet is taken: 3 with zero-copy TX (headers,
  // the payload attached, the pad and ICRC) when one of the pool's mbufs cannot hold the largest
  // frame, else 1 (a frame short of the other two is copied). Set with multi_seg_ok_.
  std::uint32_t tx_frame_mbufs_ = 1;
  EndpointCounters c_;
  // The side protocols, after cfg_, tx_ and c_, which they refer to: they send through frames_
  // and reach the QPs only through this endpoint's CmQpControl.
  ControlFrames frames_{cfg_, tx_};
  EndpointNeighbours neighbours_{cfg_, frames_, c_};  // ARP or ND
  EndpointCm cm_{cfg_, frames_, *this};               // QP1
  std::vector<std::uint8_t> scratch_;                 // linearised multi-segment RX frames
  double ns_per_tsc_ = 1.0;
  std::uint64_t tsc_hz_ = 1;
  // Paced QPs waiting for their send time, by slot index, in TSC cycles (1 µs buckets).
  dcqcn::TimingWheel wheel_;
  // QPs with an armed timer (ACK timeout, RNR wait), by slot index, on the QPs' clock (ns).
  dcqcn::TimingWheel timer_wheel_;
  // QPs whose DCQCN rate timers have work (rate below line rate), by slot index, poll time (ns).
  dcqcn::TimingWheel rate_wheel_;
  AppStage app_stage_ = nullptr;
  void* app_stage_ctx_ = nullptr;
  std::uint64_t rx_now_tsc_ = 0;  // the poll's TSC reading, for CNPs built on the RX path
  double pfc_link_bps_ = 10e9;
  bool pfc_paused_ = false;
  std::uint64_t pfc_paused_since_ns_ = 0;
  std::uint64_t pfc_pause_until_ns_ = 0;
  std::uint64_t pfc_watchdog_ns_ = 0;    // EndpointPfc::watchdog_ms; 0: off
  bool pfc_watchdog_tripped_ = false;    // pauses are not obeyed
  std::uint64_t pfc_last_pause_ns_ = 0;  // the last pause frame for our priority
  std::uint64_t views_held_ = 0;
  std::uint32_t telemetry_id_ = 0;
  std::uint32_t published_qps_ = 0;  // slots below it are whole (qp_at); first_free_slot_ once create_qp is done
  // This endpoint's own last-hit region: the registry may be shared with other threads'
  // endpoints, and its lookups write nothing.
  MemoryRegistry::LookupHint mr_hint_;
};

}  // namespace droce::engine
