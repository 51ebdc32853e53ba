// Selective repeat, receive side of RDMA READ and the atomics (docs/selective-repeat.md): a request
// is held out of order like any SR packet, but executed only when ePSN reaches it, in PSN order
// with everything before it, as go-back-N executes it (§9.7.5.1.1). A duplicate of one already
// executed is answered again: a READ re-read from memory for the PSNs it asks, an atomic from its
// saved result, never executed a second time (§9.7.5.1.1, §9.4.5).
#include "protocols/rc/rc_qp.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::OpKind;
using wire::psn_add;

// Holds a new READ or atomic request at PSN pi.psn (`d` past ePSN, within the window, its own PSN
// not held yet). A READ request asks for the responses of its PSN and the ones after it, one per
// PMTU of its DMA length (§9.7.4.1.4): all of them are held with it, so that ePSN passes them
// when it executes; those already held by another request stay as they are. A READ whose PSNs
// reach past the window is dropped, as any packet beyond it (the requester's BDP cap keeps a READ
// inside). The operands are checked at execution, where go-back-N checks them.
bool RcQp::sr_hold_read_or_atomic(const wire::PacketInfo& pi, const wire::OpcodeInfo& op, std::int32_t d) {
  std::uint32_t npkts = 1;
  if (op.kind == OpKind::kReadRequest) {
    if (pi.payload_len != 0 || pi.reth_dma_len > kMaxMessageBytes) {
      nak_invalid_request(pi.psn);
      return false;
    }
    npkts = pi.reth_dma_len == 0 ? 1 : (pi.reth_dma_len + attr_.pmtu - 1) / attr_.pmtu;
    if (static_cast<std::uint64_t>(d) + npkts > wire::kSrWindow) {
      ++c_.sr_beyond_window;
      return false;
    }
  }
  SrRxSlot& s = sr_rx_at(pi.psn);
  s = SrRxSlot{};
  s.held = true;
  s.exec_opcode = pi.opcode;
  if (op.kind == OpKind::kReadRequest) {
    s.va = pi.reth_va;
    s.rkey = pi.reth_rkey;
    s.len = pi.reth_dma_len;
  } else {
    s.va = pi.atomic_va;
    s.rkey = pi.atomic_rkey;
    s.swap_add = pi.atomic_swap_add;
    s.compare = pi.atomic_compare;
  }
  ++rq_.sr_held;
  for (std::uint32_t i = 1; i < npkts; ++i) {
    SrRxSlot& r = sr_rx_at(psn_add(pi.psn, i));
    if (r.held) continue;
    r = SrRxSlot{};
    r.held = true;
    ++rq_.sr_held;
  }
  return true;
}

// Executes the READ or atomic held at ePSN, through go-back-N's own steps (responder resources,
// length, alignment and R_Key checks with their NAKs; the MSN; the response queued; an atomic's
// result saved for its duplicates). False when it was NAKed (the QP is in Error).
bool RcQp::sr_execute(const SrRxSlot& s) {
  wire::PacketInfo pi{};
  pi.psn = rq_.epsn;
  pi.opcode = wire::rc_opcode_of(s.exec_opcode);
  if (wire::opcode_info(pi.opcode).kind == OpKind::kReadRequest) {
    pi.reth_va = s.va;
    pi.reth_rkey = s.rkey;
    pi.reth_dma_len = s.len;
    if (!rd_resource_available()) {
      nak_invalid_request(pi.psn);
      return false;
    }
    std::uint8_t* src = nullptr;
    if (const MrCheck chk =
            mrs_.check_remote(pi.reth_rkey, pi.reth_va, pi.reth_dma_len, kAccessRemoteRead, &src, attr_.pd);
        chk != MrCheck::kOk) {
      nak_remote_access_error(pi.psn, chk);
      return false;
    }
    queue_read(pi, src, /*replay=*/false);
    return true;
  }
  pi.atomic_va = s.va;
  pi.atomic_rkey = s.rkey;
  pi.atomic_swap_add = s.swap_add;
  pi.atomic_compare = s.compare;
  if (!check_atomic_resources(pi) || !check_atomic_alignment(pi)) return false;
  std::uint8_t* target = check_atomic_rkey(pi);
  if (target == nullptr) return false;
  const std::uint64_t orig = execute_atomic(pi, target);
  save_atomic_result(pi, orig);
  ++rq_.msn;
  queue_atomic_ack(pi.psn, orig, /*replay=*/false);
  return true;
}

// A READ or atomic request before ePSN: executed already. A READ is answered again for the PSNs it
// asks (the requester asks only those whose responses it misses), an atomic from its saved result
// (go-back-N's replay_read and replay_atomic, with their bounds: beyond them the requester's
// timer asks again). The saved result is looked up as the execution saved it, by the RC opcode's
// operands.
void RcQp::sr_replay(const wire::PacketInfo& pi, const wire::OpcodeInfo& op) {
  ++c_.duplicate_request;
  if (op.kind == OpKind::kReadRequest) {
    if (pi.payload_len == 0 && pi.reth_dma_len <= kMaxMessageBytes) replay_read(pi);
    return;
  }
  replay_atomic(pi);
}

}  // namespace droce::rc
