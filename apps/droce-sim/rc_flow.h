// One simulated flow's reliability state and the steps the dumbbell and fabric simulations share:
// the ACK timer as one pending event per flow, the receiver's acknowledgement put on the return
// path, and waking a sender whose window had closed.
#pragma once

#include <cmath>
#include <cstdint>

#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/event_queue.h"
#include "apps/droce-sim/reliability.h"

namespace droce::sim {

struct RcFlow {
  RcSender tx;
  RcReceiver rx;
  std::uint64_t total_packets = 0;  // 0: an infinite backlog
  bool waiting = false;             // the sender found nothing to send; an ACK or the timer wakes it
  bool timer_armed = false;         // a kAckTimer event is pending for this flow
  std::uint64_t completed_ns = 0;   // when the receiver handed on the last packet (finite flows)
  std::uint64_t delivered_payload = 0, last_half_payload = 0;

  void reset(const RecoveryConfig& rc, std::uint32_t window, std::uint32_t packet_bytes) {
    const std::uint32_t payload = packet_bytes - kRoceOverheadBytes;
    total_packets = rc.flow_bytes == 0 ? 0 : (rc.flow_bytes + payload - 1) / payload;
    tx.reset(rc.mode, window, total_packets, static_cast<std::uint64_t>(std::llround(rc.rto_us * 1e3)));
    rx.reset(rc.mode, window);
  }

  // One pending timer event at most: when it fires early (progress moved the deadline) it is
  // pushed again for the new deadline, so progress costs no event.
  void arm_timer(EventQueue& q, std::uint32_t flow) {
    const std::uint64_t d = tx.deadline();
    if (timer_armed || d == UINT64_MAX) return;
    timer_armed = true;
    q.push(d, EventType::kAckTimer, flow);
  }

  // The timer event; true when the sender now has something to send and should be woken.
  bool on_timer(EventQueue& q, std::uint32_t flow, std::uint64_t now) {
    timer_armed = false;
    if (const std::uint64_t d = tx.deadline(); d != UINT64_MAX && now >= d) tx.on_timeout(now);
    arm_timer(q, flow);
    return wake();
  }

  // An acknowledgement reached the sender; true when it should be woken.
  bool on_ack(EventQueue& q, std::uint32_t flow, const Event& e, std::uint64_t now) {
    tx.on_ack(Ack{static_cast<AckKind>(e.b), e.c, e.d}, now);
    arm_timer(q, flow);
    return wake();
  }

  // A data packet reached the receiver: deliver, count goodput, send the acknowledgement back.
  void on_packet(EventQueue& q, std::uint32_t flow, std::uint64_t psn, std::uint64_t now, std::uint64_t ack_delay_ns,
                 bool last_half, std::uint32_t payload) {
    const std::uint64_t before = rx.stats().delivered;
    const auto ack = rx.on_packet(psn);
    const std::uint64_t bytes = (rx.stats().delivered - before) * payload;
    delivered_payload += bytes;
    if (last_half) last_half_payload += bytes;
    if (total_packets != 0 && completed_ns == 0 && rx.stats().delivered >= total_packets) completed_ns = now;
    if (ack)
      q.push(now + ack_delay_ns, EventType::kAckArrive, flow, static_cast<std::uint32_t>(ack->kind), ack->psn,
             ack->arrived);
  }

 private:
  bool wake() {
    if (!waiting || !tx.can_send()) return false;
    waiting = false;
    return true;
  }
};

// Copies a flow's goodput (over the last `half_ns`), recovery counters and completion into `r`.
void fill_recovery(FlowResult& r, const RcFlow& rc, double half_ns);

}  // namespace droce::sim
