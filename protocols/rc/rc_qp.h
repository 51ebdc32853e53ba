// RcQp: one reliable-connected queue pair — requester, completer and responder state (IBTA ch. 9).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocols/common/status.h"
#include "protocols/rc/mr_table.h"
#include "protocols/rc/qp_attr.h"
#include "protocols/rc/request_run_traits.h"
#include "protocols/rc/rtt_estimator.h"
#include "protocols/rc/srq.h"
#include "protocols/rc/types.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/packet_info.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

// Pure protocol: no clock reads (every entry takes now_ns), no I/O. The owner
//  - posts work (post_send / post_recv),
//  - pulls packets to send with next_packet() (requests, then ACK/NAK/READ responses),
//  - feeds every received packet of this QP to on_packet(),
//  - calls on_timer() at next_timer_ns(),
//  - drains completions with poll_cq().
// The send and receive sides are separate structs named as in the spec (sq.una, sq.nxt,
// rq.epsn, rq.msn). Storage is preallocated at creation; nothing allocates per packet.
class RcQp {
 public:
  // `mrs` is not const: a received SEND with Invalidate invalidates one of its R_Keys.
  RcQp(const QpAttr& attr, MrTable& mrs);

  // Lifecycle (§10.3). Returns an error naming the bad attribute or transition; empty if done.
  [[nodiscard]] Status modify(QpState to, const QpAttr* attr = nullptr);
  [[nodiscard]] QpState state() const { return state_; }
  [[nodiscard]] const QpAttr& attr() const { return attr_; }

  // Work requests. Errors (bad lkey/bounds, queue full, wrong state) are returned at once.
  [[nodiscard]] Status post_send(const SendWr& wr);
  [[nodiscard]] Status post_recv(const RecvWr& wr);
  // Receives come from `srq` instead of this QP's own queue (verbs' ibv_qp_init_attr.srq): only
  // before the QP can receive (RESET or INIT) and only for kPostedBuffers QPs; post_recv is then
  // refused. The SRQ must outlive the QP and belong to the same thread.
  [[nodiscard]] Status attach_srq(SharedRecvQueue* srq);
  [[nodiscard]] const SharedRecvQueue* srq() const { return srq_; }

  // Next packet to transmit, if any may leave now (window, RNR wait, state). Responder output
  // (ACK/NAK/READ responses) goes first so that acknowledgements are never held behind data.
  [[nodiscard]] bool next_packet(std::uint64_t now_ns, TxDescriptor& out);
  // The same, but when `data_allowed` is false (the QP's DCQCN pacer says wait) only an ACK/NAK
  // may leave: congestion control paces data, and holding acknowledgements behind the pacer
  // would slow the peer's traffic for our congestion.
  [[nodiscard]] bool next_packet(std::uint64_t now_ns, TxDescriptor& out, bool data_allowed);
  // A parsed packet addressed to this QP; `payload` points at pi.payload_len bytes. The result
  // says whether a kMessageViews owner must keep the payload (see RecvMode).
  // Inline: every received packet comes through it, on its way to the responder or completer.
  RxDelivery on_packet(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns) {
    if (state_ != QpState::kRtr && state_ != QpState::kRts) return RxDelivery::kNone;  // counted by the caller
    const auto& op = wire::opcode_info(pi.opcode);
    // Selective repeat (docs/selective-repeat.md) has its own receive path; a go-back-N QP meets
    // it only for a manufacturer-specific opcode (0xC0..0xFF), which it drops there, counted. One
    // test for both: an SR QP's mask makes every opcode look manufacturer-specific.
    if (static_cast<std::uint8_t>(pi.opcode | sr_opcode_mask_) >= 0xC0) [[unlikely]]
      return on_packet_sr(pi, op, payload, now_ns);
    if (op.is_request) return on_request(pi, op, payload);
    if (state_ == QpState::kRts && (op.kind == wire::OpKind::kAck || op.kind == wire::OpKind::kReadResponse ||
                                    op.kind == wire::OpKind::kAtomicAck))
      on_response(pi, payload, now_ns);
    return RxDelivery::kNone;
  }
  // Receive by bursts: whether a packet may join a run for on_request_run (a go-back-N SEND packet
  // without an IETH, or a WRITE packet: the kinds the run path executes), and whether this QP takes
  // runs at all.
  [[nodiscard]] static bool joins_request_run(const wire::PacketInfo& pi) {
    return (run_traits(pi.opcode).flags & kRunJoins) != 0;
  }
  [[nodiscard]] bool run_capable() const {
    return (state_ == QpState::kRtr || state_ == QpState::kRts) && !sr_ && !gb0_ &&
           attr_.recv_mode == RecvMode::kPostedBuffers && srq_ == nullptr;
  }
  // A run of SEND and WRITE packets (joins_request_run), each one PSN after the one before, with
  // their payloads: executed as on_packet() would one by one, checked once where a check holds
  // for the whole run, acknowledged by one coalesced ACK (responder.cc). Returns how many of them,
  // from the first, it executed; the caller hands the rest to on_packet() in order.
  std::uint32_t on_request_run(const wire::PacketInfo* pi, const std::uint8_t* const* payload, std::uint32_t n);
  // Fires the requester's timer if it expired: the IBTA local ACK timeout, the adaptive RTO or a
  // tail-loss probe, whichever is due (requester_timers.cc).
  void on_timer(std::uint64_t now_ns);
  // Earliest time on_timer() or next_packet() could do something new (UINT64_MAX: nothing).
  // Owners ask after every packet: a disarmed timer holds kNever, so this is one comparison.
  [[nodiscard]] std::uint64_t next_timer_ns() const {
    return sq_.timer_deadline < sq_.rnr_until ? sq_.timer_deadline : sq_.rnr_until;
  }

  [[nodiscard]] bool poll_cq(Completion& out) {
    if (cq_head_ == cq_tail_) return false;
    out = cq_[cq_head_ & cq_mask_];
    ++cq_head_;
    return true;
  }
  [[nodiscard]] bool has_completions() const { return cq_head_ != cq_tail_; }

  // The owner's doorbell, rung after post_send, post_recv and modify succeed (as ibv_post_send
  // rings the NIC's): an owner that services only the QPs with work learns of work posted
  // straight on the QP (a channel, a test) as well as through itself. `tag` is the owner's.
  using Doorbell = void (*)(void* ctx, std::uint32_t tag);
  void set_doorbell(Doorbell ring, void* ctx, std::uint32_t tag) {
    doorbell_ = ring;
    doorbell_ctx_ = ctx;
    doorbell_tag_ = tag;
  }
  // The owner could not keep a message the responder accepted (a kMessageViews owner whose store
  // for the payload failed for good): the message cannot be completed truthfully, so the
  // requester is told with NAK remote operational error — its work request fails with a remote
  // operation error at once, instead of retrying into a timeout — and the QP goes to Error
  // (the AETH's NAK code 3, §9.3.5: an error at the responder that is not the request's fault).
  void fail_accepted_message(std::uint32_t psn);
  [[nodiscard]] const RcCounters& counters() const { return c_; }

  // Telemetry: spec-named sequence state.
  [[nodiscard]] std::uint32_t sq_una() const { return sq_.una; }
  [[nodiscard]] std::uint32_t sq_nxt() const { return sq_.nxt; }
  [[nodiscard]] std::uint32_t rq_epsn() const { return rq_.epsn; }
  [[nodiscard]] std::uint32_t rq_msn() const { return rq_.msn; }
  [[nodiscard]] std::uint32_t outstanding_wrs() const { return static_cast<std::uint32_t>(sq_.tail - sq_.head); }
  // Telemetry: the loss-recovery timer (docs/transport.md). rto_ns is what the next expiry would
  // wait (backoff included; the IBTA timeout when adaptive_rto is off or nothing was measured yet);
  // the round-trip figures are 0 until the first sample.
  [[nodiscard]] std::uint64_t rto_ns() const { return rto_ns_; }
  [[nodiscard]] std::uint64_t pto_ns() const { return pto_ns_; }  // 0: no probe
  [[nodiscard]] std::uint64_t srtt_ns() const { return rtt_.srtt_ns(); }
  [[nodiscard]] std::uint64_t min_rtt_ns() const { return rtt_.min_rtt_ns(); }

 private:
  // A disarmed timer: later than any deadline, so next_timer_ns() is a plain minimum.
  static constexpr std::uint64_t kNever = UINT64_MAX;

  struct SendWqe {
    SendWr wr;
    std::uint8_t* local = nullptr;  // resolved SGE address
    std::uint32_t first_psn = 0;
    std::uint32_t npkts = 1;           // PSNs the request consumes
    std::uint32_t read_pkts_done = 0;  // READ responses placed (an atomic's: its one acknowledgement)
    std::uint32_t read_req_start = 0;  // packet index the last READ request for it asked from
    bool read_reissued = false;        // that request was a retransmission (implied NAK or timeout)
    bool holds_rd_credit = false;      // a READ or atomic issued and not yet complete: one of max_rd_atomic
    bool reissue_wanted = false;       // implied NAK: ask it again from read_pkts_done (requester.cc)
    std::uint32_t rsn = 0;             // selective repeat: receive sequence number of a receive-consuming message
  };
  // Rings are sized to a power of two at creation and indexed with a mask; the queue's capacity
  // is still the depth asked for (sq_cap_, rq_cap_).
  struct SendQueue {
    std::vector<SendWqe> ring;
    std::uint64_t head = 0;      // oldest WQE not retired
    std::uint64_t cur = 0;       // WQE holding sq.nxt
    std::uint64_t tail = 0;      // next free slot
    std::uint32_t una = 0;       // oldest unacknowledged PSN
    std::uint32_t nxt = 0;       // next PSN to (re)transmit
    std::uint32_t high = 0;      // one past the highest PSN ever sent
    std::uint32_t post_psn = 0;  // first PSN of the next posted WQE
    std::uint32_t since_ack_req = 0;
    std::uint8_t retry_left = 0;
    std::uint8_t rnr_left = 0;
    std::uint64_t timer_deadline = kNever;  // the earliest of the three below; kNever = disarmed
    std::uint64_t ibta_deadline = kNever;   // local ACK timeout (§9.7.6.1.3): spends a retry
    std::uint64_t rto_deadline = kNever;    // adaptive RTO: resends, spends no retry
    std::uint64_t probe_deadline = kNever;  // tail-loss probe: one packet, spends no retry
    std::uint8_t rto_backoff = 0;           // doublings since the last round-trip sample
    std::uint8_t probes = 0;                // probes sent since the last progress
    std::uint8_t pto_backoff = 0;           // PTO doublings: probes answered with nothing lost
    std::uint8_t needless_probes = 0;       // needless probes in a row since the last doubling or loss found
    bool probe_pending = false;             // a probe is due: next_packet sends it first
    bool probing = false;                   // probes allowed: adaptive, and no expiry since the last progress
    std::uint64_t probe_base_ns = 0;        // the next probe is due PTO << probes after this
    // The newest request sent new that the responder answers at once (AckReq, READ, atomic): an
    // answer is due while it is unacknowledged, and only then is silence a reason to probe.
    bool ackreq_valid = false;
    std::uint32_t ackreq_psn = 0;
    // Round-trip timing, one packet at a time (RFC 6298 §3's rule): an AckReq packet sent new, until
    // a response covers it; any resend meanwhile cancels it (Karn's rule, and more: a sample
    // spanning a recovery would measure the recovery).
    bool rtt_timing = false;
    std::uint32_t rtt_psn = 0;
    std::uint64_t rtt_sent_ns = 0;
    // The last probe, until its answer (go-back-N: on_probe_answer says which ACK that is).
    bool probe_open = false;
    std::uint32_t probe_high = 0;  // sq.high when it left: what was sent before it
    std::uint64_t probe_sent_ns = 0;
    // The last timer or probe resend, until a response covers its PSN (spurious_retransmits).
    bool resend_open = false;
    bool resend_probe = false;  // ... and it was a probe (a spurious one backs the PTO off)
    std::uint32_t resend_psn = 0;
    std::uint64_t resend_ns = 0;
    std::uint64_t rnr_until = kNever;   // RNR NAK wait; kNever = none
    std::uint32_t reissues_wanted = 0;  // WQEs with reissue_wanted set
    std::uint32_t acked_psn = 0;        // the responder executed everything through this PSN
    std::uint32_t rd_outstanding = 0;   // READs and atomics holding a credit (max_rd_atomic)
    std::uint32_t seq_nak_psn = 0;      // PSN of the sequence NAK last acted on ...
    bool seq_nak_acted = false;         // ... valid until the next forward progress
    std::uint32_t next_rsn = 0;         // selective repeat: receive-consuming messages posted (the next RSN)
    bool sr_lost = false;               // selective repeat: a PSN may be marked for resending (sr_tx_)
    std::uint32_t sr_sends = 0;         // selective repeat: SR packets sent (new and resent), numbering sr_tx_seq_
  };
  using RecvWqe = PostedRecv;
  // What the responder owes the requester, in PSN order: one ACK/NAK, a READ response run, or an
  // ATOMIC ACKNOWLEDGE.
  struct RespItem {
    const std::uint8_t* data = nullptr;  // READ: responder memory (zero copy)
    std::uint64_t atomic_orig = 0;       // atomic: the target's value before the operation
    std::uint32_t psn = 0;
    std::uint32_t msn = 0;
    std::uint32_t len = 0;
    std::uint32_t npkts = 0;
    std::uint32_t sent = 0;
    bool is_read = false;
    bool is_atomic = false;
    bool replay = false;  // READ/atomic: answers a duplicate request (holds no responder resource)
    std::uint8_t syndrome = 0;
    // A READ response run or atomic acknowledgement: never merged with an ACK/NAK (queue_ack).
    [[nodiscard]] bool holds_resource_kind() const { return is_read || is_atomic; }
  };
  // The result of an executed atomic, kept for its duplicates (§9.7.5.1.1: a duplicate atomic is
  // answered with the saved original value and never executed again). The target's key and
  // address are kept too: a duplicate naming another target is not the same request.
  struct AtomicResult {
    std::uint64_t va = 0;
    std::uint64_t orig = 0;
    std::uint32_t rkey = 0;
    std::uint32_t psn = 0;
    bool valid = false;
  };
  struct RecvQueue {
    std::vector<RecvWqe> ring;
    std::uint64_t head = 0, tail = 0;
    std::uint32_t epsn = 0;
    std::uint32_t msn = 0;
    bool nak_sent = false;  // one NAK per PSN gap (§9.7.5.1.1)
    // Message in progress (SEND or WRITE spanning packets).
    std::uint8_t in_progress = 0;  // 0 none, else wire::OpKind as int
    std::uint32_t offset = 0;
    std::uint8_t* write_ptr = nullptr;
    std::uint32_t write_left = 0;
    std::uint32_t write_len = 0;      // the WRITE's RETH DMA length: a WRITE with immediate's byte_len
    std::uint32_t msg_first_psn = 0;  // go-back-0: the first PSN of the message in progress
    // Owed responses in PSN order. Never two ACK/NAK items side by side (a newer one supersedes
    // the older), new READs <= max_dest_rd_atomic, replays <= max_dest_rd_atomic: at most
    // 4 * max_dest_rd_atomic + 1 items (resp_ring_size), so nothing owed is ever dropped for room.
    std::vector<RespItem> resp;
    std::uint64_t resp_head = 0, resp_tail = 0;
    std::uint32_t reads_queued = 0;    // new READs/atomics whose responses are not all sent (resources in use)
    std::uint32_t replays_queued = 0;  // replays of duplicate READs/atomics not all sent
    // The last max_dest_rd_atomic atomics' results (at least one), oldest overwritten first.
    std::vector<AtomicResult> atomic_results;
    std::uint32_t atomic_next = 0;
    // Selective repeat: the receive WQE index of RSN 0 (rq.head at RTR), and the PSNs held
    // beyond ePSN (sr_rx_).
    std::uint64_t rsn_base = 0;
    std::uint32_t sr_held = 0;
  };
  // Selective repeat, responder: one slot per PSN of the window (ePSN .. ePSN + kSrWindow - 1,
  // indexed by PSN modulo kSrWindow). A held PSN's payload is placed; what its message's
  // completion needs is kept on the message's last packet, for delivery in order.
  struct SrRxSlot {
    bool held = false;
    bool last = false;
    bool is_send = false;
    bool needs_recv = false;
    bool has_imm = false;
    bool has_inv = false;
    std::uint32_t imm = 0;
    std::uint32_t ieth_rkey = 0;
    std::uint32_t len = 0;  // the message's length (a READ's: the bytes this request asks for)
    std::uint32_t rsn = 0;  // a SEND's receive sequence number
    // A READ or atomic request, executed when ePSN reaches it (never out of order): its opcode
    // (0: none; a READ's other PSNs are held with none) and operands, as the request carried them.
    std::uint8_t exec_opcode = 0;
    std::uint32_t rkey = 0;
    std::uint64_t va = 0;
    std::uint64_t swap_add = 0;
    std::uint64_t compare = 0;
  };
  // Selective repeat, requester: flags per PSN in flight (sq.una .. sq.high, at most kSrWindow).
  static constexpr std::uint8_t kSrSacked = 1;      // the responder holds it (SACK bitmap)
  static constexpr std::uint8_t kSrLost = 2;        // to be resent
  static constexpr std::uint8_t kSrResent = 4;      // resent: asked again only if a later send overtakes it
  static constexpr std::uint8_t kSrReadAtomic = 8;  // a READ's or atomic's PSN: a response answers it
  static constexpr std::uint8_t kSrAnswered = 16;   // ... and its response is placed
  // Marks `f` lost (to be sent again); what a READ's or atomic's PSN knows of its response stays.
  static void sr_set_lost(std::uint8_t& f) {
    f = static_cast<std::uint8_t>((f & (kSrReadAtomic | kSrAnswered)) | kSrLost);
  }

  // requester.cc
  bool next_request(std::uint64_t now_ns, TxDescriptor& out);
  bool next_reissue(std::uint64_t now_ns, TxDescriptor& out);
  void skip_answered_requests();
  void fill_read_or_atomic(SendWqe& w, std::uint32_t idx, TxDescriptor& d);
  // Every request packet leaves through here, timed from its transmission: the owner asks
  // next_packet only when the packet may leave (after the pacer). Inline: every packet sent; out of
  // line it cost ~11 instructions a frame (bench/callgrind).
  [[gnu::always_inline]] void sent_request(const TxDescriptor& d, std::uint64_t now_ns) {
    ++c_.packets_sent;
    if (d.retransmission) ++c_.retransmitted_packets;
    if (sq_.timer_deadline == kNever) arm_loss_timers(now_ns);
    note_request_sent(d, now_ns);
  }
  // Initiator depth (IBTA §9.4.4, max_rd_atomic): a READ or atomic not yet issued waits for a
  // credit, and so does everything posted behind it — the send queue is processed in order, as
  // hardware does. One re-issued after a loss already holds its credit.
  bool rd_credit_available(const SendWqe& w) const {
    return !is_read_or_atomic(w.wr.opcode) || w.holds_rd_credit || sq_.rd_outstanding < attr_.max_rd_atomic;
  }
  // A READ or atomic still waiting for (part of) its response: an ACK cannot retire it.
  static bool awaits_response(const SendWqe& w) { return is_read_or_atomic(w.wr.opcode) && w.read_pkts_done < w.npkts; }
  void take_rd_credit(SendWqe& w) {
    if (w.holds_rd_credit) return;
    w.holds_rd_credit = true;
    ++sq_.rd_outstanding;
  }
  // A READ's or atomic's credit returns when it completes (its responses placed) or the QP flushes.
  void release_rd_credit(SendWqe& w) {
    if (!w.holds_rd_credit) return;
    w.holds_rd_credit = false;
    --sq_.rd_outstanding;
  }
  SendWqe& sq_at(std::uint64_t i) { return sq_.ring[i & sq_mask_]; }
  RecvWqe& rq_at(std::uint64_t i) { return rq_.ring[i & rq_mask_]; }
  RespItem& resp_at(std::uint64_t i) { return rq_.resp[i & resp_mask_]; }
  void size_resp_ring(std::uint32_t max_dest_rd_atomic);  // and the saved atomic results
  void set_ack_timeout_from_attr() {
    ack_timeout_ns_ = attr_.ack_timeout_ns();
    // Go-back-0 models a NIC with the IBTA timer alone: an adaptive RTO or a probe would restart
    // the message in progress (its packets are acknowledged only at its end) on silence alone.
    adaptive_ = attr_.adaptive_rto && ack_timeout_ns_ != 0 && attr_.recovery != Recovery::kGoBack0;
    update_rto();
  }
  void set_recovery_from_attr() {
    sr_ = attr_.recovery == Recovery::kSelectiveRepeat;
    sr_opcode_mask_ = sr_ ? 0xC0 : 0;
    gb0_ = attr_.recovery == Recovery::kGoBack0;
  }
  bool gb0_restarts(const wire::PacketInfo& pi);
  void gb0_discard_message();
  void rewind_to(std::uint32_t psn);
  // Whether a WQE still outstanding (head .. tail) holds `psn`.
  [[nodiscard]] bool outstanding_contains(std::uint32_t psn) const;
  // Go-back-0: what the responder acknowledged from `psn` on is gone (it discarded the message).
  void gb0_forget_from(std::uint32_t psn) {
    sq_.una = psn;
    sq_.acked_psn = wire::psn_add(psn, -1);
  }
  void fill_send_write(const SendWqe& w, std::uint32_t idx, TxDescriptor& d) const;
  // requester_timers.cc: the local ACK timer, the adaptive RTO and the tail-loss probes.
  void arm_loss_timers(std::uint64_t from_ns);
  void disarm_loss_timers();
  void update_timer_deadline() {
    std::uint64_t t = sq_.ibta_deadline < sq_.rto_deadline ? sq_.ibta_deadline : sq_.rto_deadline;
    sq_.timer_deadline = t < sq_.probe_deadline ? t : sq_.probe_deadline;
  }
  void update_rto() {
    const std::uint64_t floor = static_cast<std::uint64_t>(attr_.rto_floor_us) * 1000;
    rto_ns_ = adaptive_ ? rtt_.rto_ns(floor, ack_timeout_ns_, sq_.rto_backoff) : ack_timeout_ns_;
    if (!adaptive_) {
      pto_ns_ = 0;
      return;
    }
    const std::uint64_t pto = rtt_.pto_ns(static_cast<std::uint64_t>(attr_.pto_floor_us) * 1000, sq_.pto_backoff);
    pto_ns_ = pto < rto_ns_ ? pto : rto_ns_;  // RFC 8985 §7.2: never later than the RTO
  }
  void expire_and_resend(std::uint64_t now_ns, bool ibta);
  void rearm_probe();
  void start_probe(std::uint64_t now_ns);
  bool send_probe(std::uint64_t now_ns, TxDescriptor& out);
  void sr_mark_probe(std::uint64_t now_ns);
  // A request packet is leaving (requester_timers.cc): any resend cancels the round-trip timing;
  // one the responder answers at once (AckReq; go-back-N sets it on READ and atomic requests,
  // selective repeat's are answered without) goes to note_answer_due. Inline: every packet sent.
  void note_request_sent(const TxDescriptor& d, std::uint64_t now_ns) {
    if (d.retransmission) sq_.rtt_timing = false;
    if (adaptive_ && (d.ack_req || sr_)) note_answer_due(d, now_ns);
  }
  void note_answer_due(const TxDescriptor& d, std::uint64_t now_ns);
  // A response shows the responder received every request through `psn`.
  void answered_through(std::uint32_t psn, std::uint64_t now_ns) {
    if (sq_.rtt_timing && !wire::psn_lt(psn, sq_.rtt_psn)) take_rtt_sample(now_ns);
    if (sq_.resend_open && !wire::psn_lt(psn, sq_.resend_psn)) judge_resend(now_ns);
  }
  void take_rtt_sample(std::uint64_t now_ns);
  // Selective repeat: a SACK showed PSNs held beyond its cumulative PSN; the timed or resent one
  // among them is answered too (requester_sr.cc).
  void sr_answered_held(std::uint64_t now_ns) {
    if (sq_.rtt_timing && psn_in_flight(sq_.rtt_psn) && (sr_tx_at(sq_.rtt_psn) & kSrSacked) != 0)
      take_rtt_sample(now_ns);
    if (sq_.resend_open && psn_in_flight(sq_.resend_psn) && (sr_tx_at(sq_.resend_psn) & kSrSacked) != 0)
      judge_resend(now_ns);
  }
  [[nodiscard]] bool psn_in_flight(std::uint32_t psn) const {
    return !wire::psn_lt(psn, sq_.una) && wire::psn_lt(psn, sq_.high);
  }
  void judge_resend(std::uint64_t now_ns);
  [[nodiscard]] bool answers_a_resend(std::uint32_t acked_psn) const;
  void on_probe_answer(std::uint32_t acked_psn, bool answers_probe, std::uint64_t now_ns);
  void back_off_pto(bool found_loss);
  // requester_sr.cc: the selective-repeat send side (docs/selective-repeat.md).
  bool next_request_sr(std::uint64_t now_ns, TxDescriptor& out);
  void fill_sr_packet(const SendWqe& w, std::uint32_t idx, TxDescriptor& d);  // requester.cc
  bool sr_resend_lost(std::uint64_t now_ns, TxDescriptor& out);
  void on_sack(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns);
  void sr_mark_lost(std::uint32_t psn);  // and every unheld PSN after it
  void sr_mark_unsacked_lost();
  // requester_sr_read.cc: READ and atomics over selective repeat.
  bool next_read_or_atomic_sr(SendWqe& w, std::uint64_t now_ns, TxDescriptor& out);
  void fill_sr_read_or_atomic(const SendWqe& w, std::uint32_t idx, std::uint32_t npkts, TxDescriptor& d) const;
  void sr_resend_read_or_atomic(const SendWqe& w, std::uint32_t p, std::uint64_t now_ns, TxDescriptor& d);
  void on_sr_read_response(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns);
  void on_sr_atomic_ack(const wire::PacketInfo& pi, std::uint64_t now_ns);
  void sr_answered(SendWqe& w, std::uint32_t psn, std::uint64_t now_ns);
  void sr_responses_lost_before(std::uint32_t psn);
  std::uint8_t& sr_tx_at(std::uint32_t psn) { return sr_tx_[psn & (wire::kSrWindow - 1)]; }
  std::uint32_t& sr_tx_seq_at(std::uint32_t psn) { return sr_tx_seq_[psn & (wire::kSrWindow - 1)]; }
  // responder_sr.cc: the selective-repeat receive side and the dispatch of both.
  RxDelivery on_packet_sr(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload,
                          std::uint64_t now_ns);
  void on_sr_request(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload);
  bool sr_place(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload, bool at_epsn);
  void sr_deliver_in_order();
  // responder_sr_read.cc: READ and atomic requests over selective repeat.
  bool sr_hold_read_or_atomic(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, std::int32_t d);
  bool sr_execute(const SrRxSlot& s);
  void sr_replay(const wire::PacketInfo& pi, const wire::OpcodeInfo& op);
  void queue_sr_ack();
  void fill_sack(TxDescriptor& d);
  SrRxSlot& sr_rx_at(std::uint32_t psn) { return sr_rx_[psn & (wire::kSrWindow - 1)]; }
  bool queue_ack_out_of_line(std::uint32_t psn, std::uint8_t syndrome);  // queue_ack, for responder_sr.cc
  // completer.cc
  void on_response(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns);
  void retire_through(std::uint32_t psn, std::uint64_t now_ns);
  void on_progress(std::uint64_t now_ns);
  void complete_send(const SendWqe& w, WcStatus st);
  void complete_send_ok(const SendWqe& w);  // completer.cc only
  void fail_send(WcStatus st);
  bool retry_or_fail(bool rnr);
  [[nodiscard]] bool reissue_needed(const SendWqe& w) const;
  void want_reissue(SendWqe& w);
  void implied_nak_through(std::uint32_t psn);
  bool response_is_stale(const wire::PacketInfo& pi);
  void on_ack_or_nak(const wire::PacketInfo& pi, std::uint64_t now_ns);
  void on_sequence_nak(std::uint32_t psn, std::uint64_t now_ns);
  void restart_timer_after_nak(std::uint64_t from_ns);
  void on_read_response(const wire::PacketInfo& pi, const std::uint8_t* payload, std::uint64_t now_ns);
  void on_atomic_ack(const wire::PacketInfo& pi, std::uint64_t now_ns);
  std::uint64_t response_target(std::uint32_t psn) const;
  void restart_ack_timer(std::uint64_t now_ns);
  // Moves to Error and flushes both work queues (§10.3.1); a responder NAK that caused it
  // stays queued when `keep_responses`.
  void enter_error(bool keep_responses = false);
  // responder.cc. on_request runs the request checks in order (PSN, opcode sequence, length,
  // then for SEND/WRITE R_Key and receive resources), then executes and completes; each check
  // either lets the packet go on (true) or has answered it (NAK, RNR NAK, re-ACK, drop).
  RxDelivery on_request(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload);
  bool check_psn(const wire::PacketInfo& pi, const wire::OpcodeInfo& op);
  void on_out_of_sequence();
  void on_duplicate_request(const wire::PacketInfo& pi, const wire::OpcodeInfo& op);
  bool check_op_sequence(const wire::PacketInfo& pi, const wire::OpcodeInfo& op);
  bool check_length(const wire::PacketInfo& pi, const wire::OpcodeInfo& op);
  RxDelivery on_send_write(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, const std::uint8_t* payload);
  bool check_rkey(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, bool starts);
  bool write_run_packet(const wire::PacketInfo& p, const std::uint8_t* payload, bool starts, bool ends);
  bool check_recv_resources(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, bool starts, bool needs_recv);
  bool take_from_srq();
  bool execute_send(const wire::PacketInfo& pi, const std::uint8_t* payload, bool starts, bool views);
  bool execute_write(const wire::PacketInfo& pi, const std::uint8_t* payload, bool ends);
  bool execute_invalidate(const wire::PacketInfo& pi, const wire::OpcodeInfo& op);
  void refuse_invalidate(std::uint32_t psn);  // counted in resp_invalidate_errors
  RxDelivery complete_send_write(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, bool ends, bool needs_recv,
                                 bool views);
  void execute_read(const wire::PacketInfo& pi);
  // responder_atomic.cc: the atomic request's checks (resources, alignment, R_Key), execution
  // with the result saved, and duplicates answered from the saved results.
  void on_atomic(const wire::PacketInfo& pi);
  bool check_atomic_resources(const wire::PacketInfo& pi);
  bool check_atomic_alignment(const wire::PacketInfo& pi);
  std::uint8_t* check_atomic_rkey(const wire::PacketInfo& pi);
  std::uint64_t execute_atomic(const wire::PacketInfo& pi, std::uint8_t* target);
  void save_atomic_result(const wire::PacketInfo& pi, std::uint64_t orig);
  const AtomicResult* saved_atomic_result(const wire::PacketInfo& pi) const;
  void queue_atomic_ack(std::uint32_t psn, std::uint64_t orig, bool replay);
  void replay_atomic(const wire::PacketInfo& pi);
  void clear_atomic_results();
  bool next_response(TxDescriptor& out);
  bool queue_ack(std::uint32_t psn, std::uint8_t syndrome);
  bool queue_ack(std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn);
  [[nodiscard]] static std::size_t resp_ring_size(std::uint32_t max_dest_rd_atomic) {
    return 4 * static_cast<std::size_t>(max_dest_rd_atomic) + 1;
  }
  bool rd_resource_available() const;
  void queue_read(const wire::PacketInfo& pi, const std::uint8_t* src, bool replay);
  RespItem* queued_read(std::uint32_t psn);
  void replay_read(const wire::PacketInfo& pi);
  void pop_response();
  void drop_responses();
  void responder_nak(std::uint32_t psn, std::uint8_t syndrome);
  void nak_invalid_request(std::uint32_t psn);  // counted in resp_invalid_request
  // Counted in resp_remote_access_errors, and in resp_wrong_domain when `why` says so.
  void nak_remote_access_error(std::uint32_t psn, MrCheck why);
  // Writes the next CQ entry in place (every field: slots are reused). The CQ holds one entry
  // per WQE at most, so it cannot be full.
  void push_completion(std::uint64_t wr_id, WcStatus status, WcOpcode opcode, std::uint32_t byte_len, bool is_recv,
                       bool has_imm = false, std::uint32_t imm = 0, bool has_invalidate = false,
                       std::uint32_t invalidated_rkey = 0) {
    if (cq_tail_ - cq_head_ > cq_mask_) return;  // cannot happen: one entry per WQE at most
    Completion& c = cq_[cq_tail_ & cq_mask_];
    c.wr_id = wr_id;
    c.qp_num = attr_.qpn;
    c.status = status;
    c.opcode = opcode;
    c.byte_len = byte_len;
    c.imm = imm;
    c.has_imm = has_imm;
    c.invalidated_rkey = invalidated_rkey;
    c.has_invalidate = has_invalidate;
    c.is_recv = is_recv;
    ++cq_tail_;
  }

  QpAttr attr_;
  MrTable& mrs_;
  SharedRecvQueue* srq_ = nullptr;  // receives come from here when set (attach_srq)
  QpState state_ = QpState::kReset;
  SendQueue sq_;
  RecvQueue rq_;
  std::vector<Completion> cq_;
  std::uint64_t cq_head_ = 0, cq_tail_ = 0;
  // Ring masks (ring size - 1) and queue capacities, fixed at creation (the response ring's at
  // modify() too); attr_.ack_timeout_ns() cached for every packet sent.
  std::uint64_t sq_mask_ = 0, rq_mask_ = 0, cq_mask_ = 0, resp_mask_ = 0;
  std::uint32_t sq_cap_ = 1, rq_cap_ = 1, resp_cap_ = 1;
  std::uint64_t ack_timeout_ns_ = 0;
  // The loss-recovery timer (requester_timers.cc): attr_.adaptive_rto with a timeout, the round
  // trip measured, and the RTO and PTO it gives, recomputed on each sample and backoff.
  bool adaptive_ = false;
  RttEstimator rtt_;
  std::uint64_t rto_ns_ = 0;
  std::uint64_t pto_ns_ = 0;
  RcCounters c_;
  // Selective repeat (attr_.recovery, cached): per-PSN state of both sides, sized at RTR/RTS
  // (control path), and the SACK bitmaps handed out by next_packet (a descriptor's payload stays
  // valid until kSackBuffers more SACKs have been generated).
  bool sr_ = false;
  bool gb0_ = false;                 // Recovery::kGoBack0 (lab only): partial messages are discarded, not resumed
  std::uint8_t sr_opcode_mask_ = 0;  // 0xC0 when sr_ (on_packet's one test), else 0
  std::vector<SrRxSlot> sr_rx_;
  std::vector<std::uint8_t> sr_tx_;
  std::vector<std::uint32_t> sr_tx_seq_;  // per PSN in flight: the sq.sr_sends number of its last send
  static constexpr std::uint32_t kSackBuffers = 8;
  std::uint8_t sack_buf_[kSackBuffers][wire::kSackBytes] = {};
  std::uint32_t sack_next_ = 0;
  Doorbell doorbell_ = nullptr;
  void* doorbell_ctx_ = nullptr;
  std::uint32_t doorbell_tag_ = 0;
  void ring_doorbell() const {
    if (doorbell_ != nullptr) doorbell_(doorbell_ctx_, doorbell_tag_);
  }
};

}  // namespace droce::rc
