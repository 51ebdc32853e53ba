// Responder, atomics (IBTA §9.4.5, §9.7.5.1): CmpSwap and FetchAdd on 8-byte aligned targets,
// executed once and answered with ATOMIC ACKNOWLEDGE; a duplicate is answered from the saved
// result, never executed again (§9.7.5.1.1).
#include <atomic>
#include <cstring>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/ib_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::rc {

using wire::psn_add;

// A new atomic at ePSN: the responder-resource, alignment and R_Key checks in the order rxe's
// responder makes them, then execute, save the result and queue the acknowledgement. An atomic
// counts as a message (its MSN, C9-148) and consumes one PSN.
void RcQp::on_atomic(const wire::PacketInfo& pi) {
  if (!check_atomic_resources(pi) || !check_atomic_alignment(pi)) return;
  std::uint8_t* target = check_atomic_rkey(pi);
  if (target == nullptr) return;
  const std::uint64_t orig = execute_atomic(pi, target);
  save_atomic_result(pi, orig);
  ++rq_.msn;
  queue_atomic_ack(pi.psn, orig, /*replay=*/false);
  rq_.epsn = psn_add(rq_.epsn, 1);
}

// Responder resources (§9.4.4): READs and atomics share max_dest_rd_atomic; one beyond them
// breaks the requester's initiator depth: NAK invalid request, as for READ (execute_read).
bool RcQp::check_atomic_resources(const wire::PacketInfo& pi) {
  if (rd_resource_available()) return true;
  nak_invalid_request(pi.psn);
  return false;
}

// §9.4.5: the target must be naturally aligned (8 bytes). A misaligned atomic is an invalid
// request (rxe: RESPST_ERR_MISALIGNED_ATOMIC answers NAK invalid request too).
bool RcQp::check_atomic_alignment(const wire::PacketInfo& pi) {
  if ((pi.atomic_va & (kAtomicBytes - 1)) == 0) return true;
  nak_invalid_request(pi.psn);
  return false;
}

// R_Key check (§9.7.5.1.3): the AtomicETH's key must name 8 bytes of a region registered with
// remote atomic access; otherwise remote access error. Returns the target, or nullptr when NAKed.
std::uint8_t* RcQp::check_atomic_rkey(const wire::PacketInfo& pi) {
  std::uint8_t* target = nullptr;
  const MrCheck chk =
      mrs_.check_remote(pi.atomic_rkey, pi.atomic_va, kAtomicBytes, kAccessRemoteAtomic, &target, attr_.pd);
  if (chk == MrCheck::kOk) return target;
  nak_remote_access_error(pi.psn, chk);
  return nullptr;
}

// The operation itself, atomic with respect to every other QP and worker touching the same word
// (verbs' IBV_ATOMIC_HCA: atomics through one device are atomic among themselves). The value in
// memory is host order; the wire operands were converted by the parser. Returns the original.
std::uint64_t RcQp::execute_atomic(const wire::PacketInfo& pi, std::uint8_t* target) {
  ++c_.atomics_executed;
  std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(target));
  if (pi.opcode == static_cast<std::uint8_t>(wire::Opcode::kFetchAdd)) return word.fetch_add(pi.atomic_swap_add);
  // CmpSwap: on a mismatch `expected` receives the current value, on a match it already holds
  // it: either way it is the original.
  std::uint64_t expected = pi.atomic_compare;
  word.compare_exchange_strong(expected, pi.atomic_swap_add);
  return expected;
}

// The last max_dest_rd_atomic results are kept, oldest overwritten: a requester within its
// initiator depth can only repeat one of those (it re-issues nothing older than its oldest
// unacknowledged request, and at most that many atomics are outstanding).
void RcQp::save_atomic_result(const wire::PacketInfo& pi, std::uint64_t orig) {
  AtomicResult& r = rq_.atomic_results[rq_.atomic_next];
  rq_.atomic_next = rq_.atomic_next + 1 == rq_.atomic_results.size() ? 0 : rq_.atomic_next + 1;
  r = AtomicResult{pi.atomic_va, orig, pi.atomic_rkey, pi.psn, true};
}

const RcQp::AtomicResult* RcQp::saved_atomic_result(const wire::PacketInfo& pi) const {
  for (const AtomicResult& r : rq_.atomic_results)
    if (r.valid && r.psn == pi.psn && r.va == pi.atomic_va && r.rkey == pi.atomic_rkey) return &r;
  return nullptr;
}

void RcQp::clear_atomic_results() {
  for (AtomicResult& r : rq_.atomic_results) r.valid = false;
  rq_.atomic_next = 0;
}

void RcQp::queue_atomic_ack(std::uint32_t psn, std::uint64_t orig, bool replay) {
  if (rq_.resp_tail - rq_.resp_head >= resp_cap_) return;  // cannot happen (RecvQueue::resp)
  RespItem& it = resp_at(rq_.resp_tail);
  it = RespItem{};
  it.is_atomic = true;
  it.replay = replay;
  it.psn = psn;
  it.msn = rq_.msn;
  it.atomic_orig = orig;
  it.npkts = 1;
  ++rq_.resp_tail;
  ++(replay ? rq_.replays_queued : rq_.reads_queued);
}

// A duplicate atomic (§9.7.5.1.1): its acknowledgement was lost or is still on its way. If it is
// still queued here, that one answers it. Otherwise the saved result is sent again, at most
// max_dest_rd_atomic replays queued at once (as for READ replays); a duplicate with no saved
// result (older than the results kept, or naming another target) is dropped, as rxe drops one
// whose resource it no longer holds: the requester's timer asks again or the QP's retry limit
// ends it — it is never executed a second time.
void RcQp::replay_atomic(const wire::PacketInfo& pi) {
  for (std::uint64_t i = rq_.resp_head; i != rq_.resp_tail; ++i) {
    const RespItem& it = resp_at(i);
    if (it.is_atomic && it.psn == pi.psn) return;
  }
  const AtomicResult* r = saved_atomic_result(pi);
  if (r == nullptr || rq_.replays_queued >= attr_.max_dest_rd_atomic) return;
  ++c_.atomic_replays;
  queue_atomic_ack(pi.psn, r->orig, /*replay=*/true);
}

}  // namespace droce::rc
