// QP attributes and lifecycle RESET -> INIT -> RTR -> RTS -> ERROR (IBTA §10.3, §11.2.4 modify QP).
#pragma once

#include <cstdint>

#include "protocols/common/status.h"
#include "protocols/rc/rtt_estimator.h"

namespace droce::rc {

enum class QpState : std::uint8_t { kReset, kInit, kRtr, kRts, kError };

// Where received SEND payloads go.
//  - kPostedBuffers: verbs semantics — copied into the buffer of the oldest posted receive, as a
//    NIC would DMA it; a receive completion reports it.
//  - kMessageViews: zero copy — the responder copies nothing and tells its owner which packet
//    payloads belong to the message (RxDelivery); the owner keeps those frames and hands the
//    application a view over them. A posted receive is then a credit (no buffer; sge.length is
//    the largest message it accepts), so RNR NAKs still pace a receiver that holds views too long.
enum class RecvMode : std::uint8_t { kPostedBuffers, kMessageViews };

// Loss recovery of the send side and acceptance of the receive side.
//  - kGoBackN: IBTA's (§9.7.4.1.2, §9.7.5.1.1): the responder executes in PSN order only, and a
//    loss resends everything after it. What every standard peer speaks; the default.
//  - kSelectiveRepeat: droce's extension between droce peers (docs/selective-repeat.md): SEND and
//    WRITE packets carry their own placement (manufacturer-specific opcodes), the responder
//    accepts them out of order within kSrWindow PSNs and acknowledges with a SACK bitmap, and the
//    requester resends only what is missing, with at most sr_bdp_pkts PSNs in flight. Both ends
//    must agree (the owner negotiates it); READs and atomics are not carried yet.
//  - kGoBack0: a lab reproduction of the NICs that restart a whole message on any loss (the
//    SIGCOMM'16 "RDMA over Commodity Ethernet at Scale" livelock: a switch dropping every frame
//    whose IPv4 ID ends in 0xff kept 4 MB messages from ever completing). Its responder keeps no
//    part of a SEND or WRITE whose packets it has not all received: a gap, or a resent packet of
//    the message in progress, discards what it placed, rewinds ePSN to the message's first PSN
//    and NAKs (PSN sequence error) from there, below what it may have acknowledged of the
//    message. Its requester takes such a NAK back to that PSN, and a timeout back to the first
//    PSN of its oldest message: every resend starts at a message's first packet. Mid-message
//    ACKs are progress as ever (they refill the retries), so a message that never gets through
//    whole makes no progress without failing: the livelock, as the paper saw it.
//    READ responses and atomics recover as go-back-N. The IBTA timer alone runs (adaptive_rto is
//    ignored: see set_ack_timeout_from_attr). Lab only: no peer negotiates it, and it needs
//    posted receive buffers (a message view's frames are handed over as they arrive).
enum class Recovery : std::uint8_t { kGoBackN, kSelectiveRepeat, kGoBack0 };

// The SR window (wire::kSrWindow): the most PSNs a selective-repeat requester keeps in flight.
inline constexpr std::uint32_t kSrMaxBdpPkts = 128;

// The largest READ credit count either way: the width of the verbs attributes (uint8_t) and of
// the CM's initiator depth / responder resources fields. rxe allows 128, ConnectX parts 16.
inline constexpr std::uint32_t kMaxRdAtomic = 255;

struct QpAttr {
  std::uint32_t qpn = 0;
  std::uint32_t dest_qpn = 0;
  std::uint32_t pmtu = 1024;        // 256, 512, 1024, 2048 or 4096
  std::uint32_t sq_psn = 0;         // first PSN we send
  std::uint32_t rq_psn = 0;         // first PSN we expect
  std::uint8_t timeout = 14;        // local ACK timeout 4.096 us * 2^timeout; 0 = infinite
  std::uint8_t retry_cnt = 7;       // 0..7
  std::uint8_t rnr_retry = 7;       // 0..7, 7 = infinite
  std::uint8_t min_rnr_timer = 12;  // RNR NAK timer code we send (0..31)
  // RDMA READ credits (IBTA §9.4.4 and the verbs attributes of the same names): the initiator
  // depth limits the READs this requester keeps outstanding; the responder resources limit the
  // READs this responder answers at once (and size its response queue). 0..kMaxRdAtomic; the
  // requester's depth must not exceed the peer's resources. 0 = no READs that way.
  std::uint32_t max_rd_atomic = 16;
  std::uint32_t max_dest_rd_atomic = 16;
  std::uint32_t access = 0;  // rc::Access flags remote peers get
  // The QP's protection domain (rc::MrTable): the only regions its peer's R_Keys and its own work
  // requests' L_Keys reach. The owner checks that the domain exists (RcEndpoint::create_qp).
  std::uint32_t pd = 0;
  std::uint16_t pkey = 0xFFFF;
  std::uint32_t sq_depth = 256;
  std::uint32_t rq_depth = 256;
  std::uint32_t window_psns = 128;   // unacknowledged PSNs in flight
  std::uint32_t ack_req_every = 64;  // AckReq at least every N packets
  RecvMode recv_mode = RecvMode::kPostedBuffers;
  std::uint32_t max_message_bytes = 1u << 20;  // kMessageViews: the largest SEND accepted
  Recovery recovery = Recovery::kGoBackN;
  std::uint32_t sr_bdp_pkts = kSrMaxBdpPkts;  // kSelectiveRepeat: PSNs in flight, 1..kSrMaxBdpPkts
  // Loss recovery in round trips (docs/transport.md): the requester's own timers, invisible to the
  // peer. On: an RTT-based retransmission timeout (at least rto_floor_us, backed off, never beyond
  // the IBTA timeout above) and tail-loss probes after a probe timeout of silence (at least pto_floor_us), neither of
  // which spends retry_cnt. Off: the plain IBTA local ACK timer alone. timeout 0 has no timer.
  bool adaptive_rto = true;
  std::uint32_t rto_floor_us = kDefaultRtoFloorUs;  // 1..2^31 us
  // Added to the probe timeout's round-trip term (rtt_estimator.h): 0..2^31 us.
  std::uint32_t pto_floor_us = kDefaultPtoFloorUs;

  // Ok if valid; else kInvalidArgument naming the bad attribute and why (static text).
  [[nodiscard]] Status validate() const {
    if (pmtu != 256 && pmtu != 512 && pmtu != 1024 && pmtu != 2048 && pmtu != 4096)
      return Status::fail(StatusCode::kInvalidArgument, "pmtu: must be 256, 512, 1024, 2048 or 4096");
    if (qpn == 0 || qpn > 0xFFFFFF) return Status::fail(StatusCode::kInvalidArgument, "qpn: must be 1..0xFFFFFF");
    if (dest_qpn > 0xFFFFFF) return Status::fail(StatusCode::kInvalidArgument, "dest_qpn: must fit 24 bits");
    if (sq_psn > 0xFFFFFF) return Status::fail(StatusCode::kInvalidArgument, "sq_psn: must fit 24 bits");
    if (rq_psn > 0xFFFFFF) return Status::fail(StatusCode::kInvalidArgument, "rq_psn: must fit 24 bits");
    if (timeout > 31) return Status::fail(StatusCode::kInvalidArgument, "timeout: must be 0..31");
    if (retry_cnt > 7) return Status::fail(StatusCode::kInvalidArgument, "retry_cnt: must be 0..7");
    if (rnr_retry > 7) return Status::fail(StatusCode::kInvalidArgument, "rnr_retry: must be 0..7");
    if (min_rnr_timer > 31) return Status::fail(StatusCode::kInvalidArgument, "min_rnr_timer: must be 0..31");
    if (sq_depth == 0 || sq_depth > 65536 || (sq_depth & (sq_depth - 1)) != 0)
      return Status::fail(StatusCode::kInvalidArgument, "sq_depth: must be a power of two up to 65536");
    if (rq_depth == 0 || rq_depth > 65536 || (rq_depth & (rq_depth - 1)) != 0)
      return Status::fail(StatusCode::kInvalidArgument, "rq_depth: must be a power of two up to 65536");
    if (window_psns == 0 || window_psns > (1u << 22))
      return Status::fail(StatusCode::kInvalidArgument, "window_psns: must be 1..2^22");
    if (ack_req_every == 0) return Status::fail(StatusCode::kInvalidArgument, "ack_req_every: must be >= 1");
    if (max_rd_atomic > kMaxRdAtomic)
      return Status::fail(StatusCode::kInvalidArgument, "max_rd_atomic: must be 0..255");
    if (max_dest_rd_atomic > kMaxRdAtomic)
      return Status::fail(StatusCode::kInvalidArgument, "max_dest_rd_atomic: must be 0..255");
    if (max_message_bytes > (1u << 30))
      return Status::fail(StatusCode::kInvalidArgument, "max_message_bytes: must be at most 1 GiB");
    if (rto_floor_us == 0 || rto_floor_us > (1u << 31))
      return Status::fail(StatusCode::kInvalidArgument, "rto_floor_us: must be 1..2^31");
    if (pto_floor_us > (1u << 31)) return Status::fail(StatusCode::kInvalidArgument, "pto_floor_us: must be 0..2^31");
    if (recovery != Recovery::kGoBackN && recovery != Recovery::kSelectiveRepeat && recovery != Recovery::kGoBack0)
      return Status::fail(StatusCode::kInvalidArgument, "recovery: must be go-back-N, selective repeat or go-back-0");
    if (recovery == Recovery::kGoBack0 && recv_mode != RecvMode::kPostedBuffers)
      return Status::fail(StatusCode::kInvalidArgument, "recovery: go-back-0 needs posted receive buffers");
    if (recovery == Recovery::kSelectiveRepeat) {
      if (sr_bdp_pkts == 0 || sr_bdp_pkts > kSrMaxBdpPkts)
        return Status::fail(StatusCode::kInvalidArgument, "sr_bdp_pkts: must be 1..128");
      // Out-of-order SEND packets are placed in the receive they name; a message view is handed
      // to its owner frame by frame in order, which SR cannot promise.
      if (recv_mode != RecvMode::kPostedBuffers)
        return Status::fail(StatusCode::kInvalidArgument, "recovery: selective repeat needs posted receive buffers");
    }
    return {};
  }
  // Local ACK timeout in ns (§9.7.6.1.3), 0 = never.
  [[nodiscard]] std::uint64_t ack_timeout_ns() const {
    return timeout == 0 ? 0 : static_cast<std::uint64_t>(4096) << timeout;
  }
};

// Legal modify-QP transitions for RC (§10.3.1): RESET->INIT->RTR->RTS, any->ERROR, any->RESET.
[[nodiscard]] constexpr bool transition_allowed(QpState from, QpState to) {
  if (to == QpState::kError || to == QpState::kReset) return true;
  return (from == QpState::kReset && to == QpState::kInit) || (from == QpState::kInit && to == QpState::kInit) ||
         (from == QpState::kInit && to == QpState::kRtr) || (from == QpState::kRtr && to == QpState::kRts) ||
         (from == QpState::kRts && to == QpState::kRts);
}

}  // namespace droce::rc
