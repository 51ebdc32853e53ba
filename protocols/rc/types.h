// RC transport records: work requests in, packet descriptors and completions out (IBTA §10.8, §11.4).
#pragma once

#include <cstdint>

namespace droce::rc {

// The longest message of any operation: the 32-bit DMA length of IBTA §9.4, capped at 2^31
// bytes as verbs devices and rxe's check_length cap it.
inline constexpr std::uint32_t kMaxMessageBytes = 1u << 31;

// kSendWithInv: a SEND whose last packet carries an IETH naming an R_Key of the responder's for
// it to invalidate (verbs' IBV_WR_SEND_WITH_INV, IBTA §9.3.7). kCmpSwap / kFetchAdd: the 64-bit
// atomics of §9.4.5 (verbs' IBV_WR_ATOMIC_CMP_AND_SWP / IBV_WR_ATOMIC_FETCH_AND_ADD).
enum class WrOpcode : std::uint8_t {
  kSend,
  kSendWithImm,
  kWrite,
  kWriteWithImm,
  kRead,
  kSendWithInv,
  kCmpSwap,
  kFetchAdd
};

// Operations that take one of the requester's READ/atomic credits (max_rd_atomic, §9.4.4) and
// complete only when their response arrives.
[[nodiscard]] constexpr bool is_read_or_atomic(WrOpcode o) {
  return o == WrOpcode::kRead || o == WrOpcode::kCmpSwap || o == WrOpcode::kFetchAdd;
}
[[nodiscard]] constexpr bool is_atomic(WrOpcode o) { return o == WrOpcode::kCmpSwap || o == WrOpcode::kFetchAdd; }

// An atomic's operand and result are 8 bytes, at an 8-byte aligned remote address (§9.4.5); the
// original value lands in the local buffer (sge, exactly 8 bytes) in host byte order, as verbs
// devices write it.
inline constexpr std::uint32_t kAtomicBytes = 8;

// One scatter/gather entry: application memory registered in the MrTable.
struct Sge {
  std::uint64_t addr = 0;  // virtual address inside the region
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
};

struct SendWr {
  std::uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::kSend;
  Sge sge;
  std::uint64_t remote_addr = 0;  // WRITE / READ
  std::uint32_t rkey = 0;
  std::uint32_t imm = 0;
  std::uint32_t invalidate_rkey = 0;  // kSendWithInv: the responder's R_Key to invalidate
  // Atomics (verbs' wr.atomic): kFetchAdd adds compare_add; kCmpSwap stores swap where the
  // target equals compare_add. remote_addr and rkey name the 8-byte target.
  std::uint64_t compare_add = 0;
  std::uint64_t swap = 0;
  bool signaled = true;
  bool solicited = false;
};

struct RecvWr {
  std::uint64_t wr_id = 0;
  Sge sge;
};

// Completion status, named as verbs' ibv_wc_status.
enum class WcStatus : std::uint8_t {
  kSuccess,
  kLocLenErr,
  kLocQpOpErr,
  kLocProtErr,
  kWrFlushErr,
  kRemInvReqErr,
  kRemAccessErr,
  kRemOpErr,
  kRetryExcErr,
  kRnrRetryExcErr,
};

// The verbs name (ibv_wc_status_str) of a completion status, for error lines.
[[nodiscard]] constexpr const char* wc_status_name(WcStatus s) {
  switch (s) {
    case WcStatus::kSuccess:
      return "success";
    case WcStatus::kLocLenErr:
      return "local length error";
    case WcStatus::kLocQpOpErr:
      return "local QP operation error";
    case WcStatus::kLocProtErr:
      return "local protection error";
    case WcStatus::kWrFlushErr:
      return "Work Request Flushed Error";
    case WcStatus::kRemInvReqErr:
      return "remote invalid request error";
    case WcStatus::kRemAccessErr:
      return "remote access error";
    case WcStatus::kRemOpErr:
      return "remote operation error";
    case WcStatus::kRetryExcErr:
      return "transport retry counter exceeded";
    case WcStatus::kRnrRetryExcErr:
      return "RNR retry counter exceeded";
  }
  return "unknown";
}

// kRecvWithInv: a SEND with Invalidate was received and its R_Key invalidated (verbs: IBV_WC_RECV
// with IBV_WC_WITH_INV); the key is in Completion::invalidated_rkey.
enum class WcOpcode : std::uint8_t { kSend, kWrite, kRead, kRecv, kRecvWithImm, kRecvWithInv, kCompSwap, kFetchAdd };

struct Completion {
  std::uint64_t wr_id = 0;
  std::uint32_t qp_num = 0;  // the QP it belongs to (ibv_wc.qp_num): one CQ may drain many QPs
  WcStatus status = WcStatus::kSuccess;
  WcOpcode opcode = WcOpcode::kSend;
  std::uint32_t byte_len = 0;
  std::uint32_t imm = 0;
  std::uint32_t invalidated_rkey = 0;  // valid when has_invalidate (verbs: wc.invalidated_rkey)
  bool has_imm = false;
  bool has_invalidate = false;  // the message was a SEND with Invalidate (opcode kRecvWithInv)
  bool is_recv = false;         // receive-queue completion (else send-queue)
};

// One packet to put on the wire. The payload points into registered memory (the sender's
// buffer for requests, the responder's MR for READ responses): nothing is copied here.
// One packet for the owner to send (RcQp::next_packet). Its rule, which lets the hot path skip a
// reset per packet (requester.cc, next_request): opcode, psn, ack_req, se, payload, payload_len and
// retransmission are set for every packet; each extension header's fields only when
// opcode_info(opcode).headers carries that header (§9.3), and may otherwise hold a previous
// packet's values. Readers read them only under that test (wire::write_ext_headers,
// descriptor_fields.h's packet_fields).
struct TxDescriptor {
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  bool ack_req = false;
  bool se = false;
  const std::uint8_t* payload = nullptr;
  std::uint32_t payload_len = 0;
  std::uint64_t reth_va = 0;
  std::uint32_t reth_rkey = 0;
  std::uint32_t reth_len = 0;
  std::uint8_t aeth_syndrome = 0;
  std::uint32_t aeth_msn = 0;
  std::uint32_t imm = 0;
  std::uint32_t ieth_rkey = 0;  // SEND LAST/ONLY with Invalidate
  std::uint64_t atomic_va = 0;  // CmpSwap / FetchAdd request (AtomicETH, §9.3.4)
  std::uint32_t atomic_rkey = 0;
  std::uint64_t atomic_swap_add = 0;
  std::uint64_t atomic_compare = 0;
  std::uint64_t atomic_ack_orig = 0;  // ATOMIC ACKNOWLEDGE (AtomicAckETH, §9.3.5.3)
  bool retransmission = false;
};

// What on_packet() did with an accepted request's payload (only kMessageViews QPs keep payloads;
// every other packet answers kNone). Duplicates, out-of-sequence and NAKed packets are never kept.
enum class RxDelivery : std::uint8_t {
  kNone,     // nothing for the owner to keep
  kKeep,     // keep this payload: it continues a message
  kKeepEnd,  // keep this payload: it ends a message (the view is complete)
  kEnd,      // a message ended with nothing (more) to keep: zero-length SEND, WRITE with immediate
};

// Counters named as the Linux RDMA / mlx5 hw_counters users already graph. Not every name means
// what the driver's does: rnr_nak_retry_err here counts exhausted RNR retries (rxe's
// retry_rnr_exceeded_err), mlx5's counts RNR NAKs received. engine/endpoint/linux_counter_names.h
// maps these fields to the drivers' names, and docs/counters.md says what each counts.
struct RcCounters {
  std::uint64_t out_of_sequence = 0;        // responder: request PSN ahead of ePSN
  std::uint64_t duplicate_request = 0;      // responder: request PSN behind ePSN
  std::uint64_t packet_seq_err = 0;         // requester: NAK sequence errors received
  std::uint64_t local_ack_timeout_err = 0;  // requester: ACK timer expirations
  std::uint64_t rnr_nak_retry_err = 0;      // requester: RNR retries exhausted
  std::uint64_t implied_nak_seq_err = 0;    // requester: READ responses skipping ahead
  std::uint64_t req_remote_access_errors = 0;
  std::uint64_t req_remote_invalid_request = 0;
  std::uint64_t resp_remote_access_errors = 0;
  std::uint64_t resp_wrong_domain = 0;  // responder: of those, a live R_Key of another protection domain's region
  std::uint64_t resp_invalid_request = 0;
  std::uint64_t resp_invalidate_errors = 0;  // responder: SEND with Invalidate naming a key it may not invalidate
  std::uint64_t resp_remote_operational_errors = 0;  // responder: a message accepted that its owner could not keep
  std::uint64_t atomics_executed = 0;                // responder: atomics performed on its memory (once each)
  std::uint64_t atomic_replays = 0;                  // responder: duplicate atomics answered from the saved result
  std::uint64_t rnr_naks_sent = 0;
  std::uint64_t rnr_naks_received = 0;
  std::uint64_t naks_sent = 0;
  std::uint64_t naks_received = 0;
  std::uint64_t acks_sent = 0;       // acknowledgements generated (coalesced ones included)
  std::uint64_t acks_coalesced = 0;  // of those, merged into an ACK still queued (one frame fewer)
  std::uint64_t acks_received = 0;
  std::uint64_t ghost_acks = 0;  // ACKs for PSNs never sent
  std::uint64_t duplicate_responses = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t packets_sent = 0;
  std::uint64_t bytes_copied = 0;  // receive/WRITE/READ placement (a NIC's DMA)
  std::uint64_t bytes_delivered = 0;
  // Go-back-N responder: request messages arrived in sequence, by kind, counted before the R_Key and
  // receive checks (what the peer asks of this QP, refused or not): a perftest server names a
  // client running another test from them (its exchange carries no test).
  std::uint64_t send_requests = 0;
  std::uint64_t write_requests = 0;
  std::uint64_t read_requests = 0;
  std::uint64_t atomic_requests = 0;
  // Selective repeat (docs/selective-repeat.md).
  std::uint64_t recovery_mismatch =
      0;                               // a packet of the other recovery (SR opcode to a go-back-N QP, or back): dropped
  std::uint64_t sr_beyond_window = 0;  // SR responder: PSN at or past ePSN + kSrWindow: dropped
  std::uint64_t sr_resent_on_sack = 0;     // SR requester: PSNs a SACK showed missing (each resent once)
  std::uint64_t sr_reasked_responses = 0;  // SR requester: READ/atomic PSNs whose response a later one showed lost
  // Loss recovery in round trips (docs/transport.md). local_ack_timeout_err above counts every
  // expiry of the requester's timer, these early ones included.
  std::uint64_t adaptive_timeouts = 0;  // requester: expiries of the adaptive RTO before the IBTA timeout (no retry)
  std::uint64_t tail_probes = 0;        // requester: tail-loss probes sent (a probe timeout without an acknowledgement)
  std::uint64_t spurious_retransmits = 0;  // requester: timer or probe resends acknowledged sooner than min RTT after
  // Go-back-0 (Recovery::kGoBack0, lab only): messages whose placed part the responder discarded.
  std::uint64_t gb0_messages_discarded = 0;
};

}  // namespace droce::rc
