// One RC connection's Communication Manager state machine, active (client) or passive (server)
// side (IBTA vol. 1 §12.9): pure, driven by (message in | timer | call, time now) -> (MADs out,
// events). No clock reads, no allocation, no I/O: the engine sends the MADs over QP1 (wire/ud.h)
// and calls on_timer when deadline() passes.
#pragma once

#include <cstdint>
#include <string_view>

#include "protocols/cm/cm_messages.h"
#include "protocols/cm/cm_timing.h"

namespace droce::cm {

enum class CmRole : std::uint8_t { kActive, kPassive };

// §12.9.6 (active) and §12.9.7 (passive) states, those an RC connection without alternate path
// uses. kClosed is the end: rejected, timed out, or out of TimeWait.
#define DROCE_CM_STATES(X)       \
  X(kIdle, "idle")               \
  X(kReqSent, "req_sent")        \
  X(kMraReqRcvd, "mra_req_rcvd") \
  X(kReqRcvd, "req_rcvd")        \
  X(kMraReqSent, "mra_req_sent") \
  X(kRepSent, "rep_sent")        \
  X(kMraRepRcvd, "mra_rep_rcvd") \
  X(kEstablished, "established") \
  X(kDreqSent, "dreq_sent")      \
  X(kTimeWait, "timewait")       \
  X(kClosed, "closed")

enum class CmState : std::uint8_t {
#define DROCE_CM_STATE_ENUM(name, str) name,
  DROCE_CM_STATES(DROCE_CM_STATE_ENUM)
#undef DROCE_CM_STATE_ENUM
};

[[nodiscard]] constexpr std::string_view cm_state_name(CmState s) {
  constexpr std::string_view kNames[] = {
#define DROCE_CM_STATE_NAME(name, str) str,
      DROCE_CM_STATES(DROCE_CM_STATE_NAME)
#undef DROCE_CM_STATE_NAME
  };
  const auto i = static_cast<std::size_t>(s);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : std::string_view{"invalid"};
}

// This side's QP and CM settings. Defaults follow rdma_cm on Linux (CM response timeout 20,
// 15 CM retries, RoCE packet lifetime 16) so that a Linux peer sees familiar values.
struct CmLocalConfig {
  std::uint32_t qpn = 0;
  std::uint32_t start_psn = 0;  // our Starting PSN in REQ/REP: the PSN we expect first (the peer sends from it)
  std::uint8_t responder_resources = 16;  // RDMA READ / atomics we serve at once (max_dest_rd_atomic)
  std::uint8_t initiator_depth = 16;      // RDMA READ / atomics we keep outstanding (max_rd_atomic)
  std::uint8_t max_path_mtu = 5;          // the largest MTU code we take (5: 4096)
  std::uint8_t retry_count = 7;           // transport retries (active side: offered in REQ)
  std::uint8_t rnr_retry_count = 7;       // RNR retries we ask the peer to use (7: forever)
  std::uint8_t local_ack_timeout = 14;    // 4.096 us * 2^n: about 67 ms
  std::uint16_t pkey = 0xFFFF;
  std::uint64_t ca_guid = 0;
  bool srq = false;                       // our QP takes receives from an SRQ
  std::uint8_t target_ack_delay = 0;      // REP's, 5 bits
  std::uint8_t cm_response_timeout = 20;  // how fast we answer, and (active) ask the peer to
  std::uint8_t max_cm_retries = 15;       // resends of REQ, REP or DREQ before giving up
  std::uint8_t packet_life_time = 16;     // 5-bit exponent, each way
};

// What the active side connects to.
struct CmConnectParams {
  std::uint64_t service_id = 0;
  std::uint8_t path_mtu = 3;  // 1024, what Linux derives from a 1500-byte Ethernet MTU
  CmPath primary;             // GIDs, hop limit, traffic class, flow label, SL
  const std::uint8_t* private_data = nullptr;
  std::uint32_t private_len = 0;  // at most kReqPrivateBytes
};

// The QP parameters the two sides agreed in REQ/REP, from this side's point of view: what its
// QP is modified with on the way to RTR and RTS.
struct CmQpParams {
  std::uint32_t local_qpn = 0;
  std::uint32_t remote_qpn = 0;
  std::uint32_t send_psn = 0;           // ours (sq_psn)
  std::uint32_t expected_psn = 0;       // the peer's starting PSN (rq_psn)
  std::uint8_t max_rd_atomic = 0;       // our initiator depth, capped by the peer's responder resources
  std::uint8_t max_dest_rd_atomic = 0;  // our responder resources, capped by the peer's initiator depth
  std::uint8_t path_mtu = 0;            // IB code (mtu_bytes)
  std::uint8_t retry_count = 0;         // from REQ, both sides
  std::uint8_t rnr_retry = 0;           // what the peer asked of us (REQ for the passive, REP for the active)
  std::uint8_t local_ack_timeout = 0;
  std::uint16_t pkey = 0xFFFF;
  bool peer_srq = false;
};

enum class CmEventKind : std::uint8_t {
  kReqReceived,   // passive: a REQ waits for accept() or reject() (see received_req())
  kEstablished,   // both: qp_params() are final; move the QP to RTS
  kRejected,      // a REJ came (by_peer) or this side refused a REQ (reason)
  kTimedOut,      // REQ or REP went unanswered through every retry; a REJ(Timeout) was sent
  kDisconnected,  // DREQ/DREP done, or DREQ unanswered (timed_out): move the QP to ERROR
  kClosed,        // TimeWait is over: the QPN and communication ID may be reused
};

struct CmEvent {
  CmEventKind kind = CmEventKind::kClosed;
  std::uint16_t reject_reason = 0;
  bool by_peer = false;
  bool timed_out = false;
};

// What one step produced: MADs to send to the peer's QP1 (in order) and events for the consumer.
// `note` says why an input changed nothing (static text), or is null.
struct CmOutput {
  static constexpr std::uint32_t kMaxMads = 2;
  static constexpr std::uint32_t kMaxEvents = 2;
  std::uint8_t mads[kMaxMads][kMadBytes];
  std::uint32_t mad_count = 0;
  CmEvent events[kMaxEvents];
  std::uint32_t event_count = 0;
  const char* note = nullptr;

  [[nodiscard]] bool has_event(CmEventKind k) const {
    for (std::uint32_t i = 0; i < event_count; ++i)
      if (events[i].kind == k) return true;
    return false;
  }
};

class CmConnection {
 public:
  CmConnection(CmRole role, const CmLocalConfig& cfg, std::uint32_t local_comm_id);

  // Active: sends the REQ (kIdle -> kReqSent).
  CmOutput connect(const CmConnectParams& p, std::uint64_t now);
  // Passive: the REQ a listener gave this connection, or any later CM message.
  CmOutput on_message(const CmMessage& m, std::uint64_t now);
  // Passive, in kReqRcvd: MRA (we need `service_timeout` longer), REP, or REJ.
  CmOutput send_mra(std::uint8_t service_timeout, std::uint64_t now);
  // Passive, before accept (kReqRcvd or kMraReqSent): the QP the consumer binds to the REQ and
  // its settings, which the REP offers. False (nothing changed) in any other state.
  bool set_local(const CmLocalConfig& cfg);
  CmOutput accept(const std::uint8_t* private_data, std::uint32_t private_len, std::uint64_t now);
  CmOutput reject(RejReason reason, std::uint64_t now);
  // Passive, in kRepSent: a packet arrived on the QP, which stands for the RTU (§12.9.7).
  CmOutput on_qp_traffic(std::uint64_t now);
  // Both, in kEstablished: sends the DREQ.
  CmOutput disconnect(std::uint64_t now);
  // Call when now >= deadline(): resends, gives up (a REQ its consumer never answered too), or
  // leaves TimeWait.
  CmOutput on_timer(std::uint64_t now);
  // Passive and not yet established (REQ received, MRA or REP sent): a forged REQ looks like this.
  [[nodiscard]] bool half_open() const;
  // A half-open passive connection the engine drops to make room (its table is full): REJ
  // (Timeout) and kTimedOut, as the timer's give-up. Nothing happens (a note) in any other state.
  CmOutput abandon(std::uint64_t now);

  [[nodiscard]] CmRole role() const { return role_; }
  [[nodiscard]] CmState state() const { return state_; }
  [[nodiscard]] std::uint64_t deadline() const { return deadline_; }  // 0: no timer
  [[nodiscard]] std::uint32_t local_comm_id() const { return local_comm_id_; }
  [[nodiscard]] std::uint32_t remote_comm_id() const { return remote_comm_id_; }
  [[nodiscard]] std::uint32_t retries() const { return retries_; }
  [[nodiscard]] const CmQpParams& qp_params() const { return qp_; }
  [[nodiscard]] const CmReq& req() const { return req_; }  // sent (active) or received (passive)

 private:
  void send(CmOutput& o, const CmBody& body, std::uint64_t tid, std::uint8_t* keep = nullptr);
  static void resend(CmOutput& o, const std::uint8_t* mad);
  static void event(CmOutput& o, CmEventKind k, std::uint16_t reason = 0, bool by_peer = false, bool timed_out = false);
  void send_timeout_rej(CmOutput& o);
  void enter_timewait(std::uint64_t now);
  [[nodiscard]] std::uint64_t wait_ns() const;  // for an answer from the peer
  [[nodiscard]] bool from_peer(std::uint32_t receiver, std::uint32_t sender) const;

  CmOutput on_req(const CmMessage& m, std::uint64_t now);
  CmOutput on_rep(const CmMessage& m, std::uint64_t now);
  CmOutput on_rtu(const CmMessage& m, std::uint64_t now);
  CmOutput on_mra(const CmMessage& m, std::uint64_t now);
  CmOutput on_rej(const CmMessage& m);
  CmOutput on_dreq(const CmMessage& m, std::uint64_t now);
  CmOutput on_drep(const CmMessage& m, std::uint64_t now);

  CmRole role_;
  CmLocalConfig cfg_;
  CmState state_ = CmState::kIdle;
  std::uint32_t local_comm_id_;
  std::uint32_t remote_comm_id_ = 0;
  std::uint64_t tid_ = 0;       // of the REQ: REP, MRA, RTU and REJ carry it too
  std::uint64_t dreq_tid_ = 0;  // of the DREQ in flight (ours) or answered (theirs)
  std::uint64_t deadline_ = 0;
  std::uint32_t retries_ = 0;
  std::uint32_t max_retries_ = 0;
  std::uint8_t peer_response_timeout_ = 0;
  CmReq req_;
  CmQpParams qp_;
  std::uint8_t retransmit_[kMadBytes] = {};  // what the running timer resends: REQ, REP or DREQ
  std::uint8_t reply_[kMadBytes] = {};       // what a duplicate gets again: MRA, REP, RTU or DREP
  bool have_reply_ = false;
};

}  // namespace droce::cm
