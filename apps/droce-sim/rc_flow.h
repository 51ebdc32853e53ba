// One simulated flow's reliability state and the steps the dumbbell and fabric simulations share:
// the ACK timer as one pending event per flow, the receiver's acknowledgements put on the return
// path, and waking a sender whose window had closed. Either the model (RcSender, RcReceiver) or,
// with --transport rcqp, droce's own RC transport (QpFlow) carries the flow; the simulations move
// what each hands them (a PSN, or a frame's id) and never look inside.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/event_queue.h"
#include "apps/droce-sim/qp_flow.h"
#include "apps/droce-sim/reliability.h"

namespace droce::sim {

struct RcFlow {
  RcSender tx;
  RcReceiver rx;
  std::unique_ptr<QpFlow> qp;       // --transport rcqp: the real QPs instead of tx and rx
  std::uint64_t flow_bytes = 0;     // payload to deliver (0: an infinite backlog)
  std::uint64_t total_packets = 0;  // 0: an infinite backlog
  bool waiting = false;             // the sender found nothing to send; an ACK or the timer wakes it
  // When the earliest kAckTimer event pending for this flow fires (UINT64_MAX: none). A deadline
  // that moves earlier (the QP's adaptive RTO or tail-loss probe armed after its IBTA timeout) gets
  // its own event; the later ones still pending find nothing due and only re-arm.
  std::uint64_t timer_at = UINT64_MAX;
  std::uint64_t completed_ns = 0;  // when the receiver handed on the last packet (finite flows)
  std::uint64_t delivered_payload = 0, last_half_payload = 0;

  void reset(const RecoveryConfig& rc, std::uint32_t window, std::uint32_t packet_bytes, std::uint64_t seed = 1,
             std::uint32_t index = 0) {
    const std::uint32_t payload = packet_bytes - kRoceOverheadBytes;
    flow_bytes = rc.flow_bytes;
    if (rc.rcqp) {
      QpFlowConfig c;
      c.mode = rc.mode;
      c.pmtu = pmtu_for(packet_bytes, kRoceOverheadBytes);
      c.sr_window = window;
      c.rto_us = rc.rto_us;
      c.flow_bytes = rc.flow_bytes;
      c.seed = seed;
      c.index = index;
      qp = std::make_unique<QpFlow>(c);
      return;
    }
    total_packets = rc.flow_bytes == 0 ? 0 : (rc.flow_bytes + payload - 1) / payload;
    tx.reset(rc.mode, window, total_packets, static_cast<std::uint64_t>(std::llround(rc.rto_us * 1e3)));
    rx.reset(rc.mode, window);
  }

  // What the sender transmits at `now`: a PSN (the model) or a frame's id (the real transport),
  // with its bytes on the wire; none when its window is closed or nothing is left.
  struct Sent {
    std::uint64_t id;
    std::uint32_t wire_bytes;
  };
  std::optional<Sent> next_packet(std::uint64_t now, std::uint32_t packet_bytes) {
    if (qp) {
      const auto o = qp->next_data(now);
      if (!o) return std::nullopt;
      return Sent{o->id, o->wire_bytes};
    }
    const auto p = tx.next_psn(now);
    if (!p) return std::nullopt;
    return Sent{*p, packet_bytes};
  }

  // One pending timer event at most: when it fires early (progress moved the deadline) it is
  // pushed again for the new deadline, so progress costs no event.
  void arm_timer(EventQueue& q, std::uint32_t flow) {
    const std::uint64_t d = qp ? qp->next_timer_ns() : tx.deadline();
    if (d >= timer_at) return;  // an event at or before d is pending (or nothing is due: UINT64_MAX)
    timer_at = d;
    q.push(d, EventType::kAckTimer, flow);
  }

  // The timer event; true when the sender now has something to send and should be woken.
  bool on_timer(EventQueue& q, std::uint32_t flow, std::uint64_t now) {
    if (now >= timer_at) timer_at = UINT64_MAX;  // the earliest pending event is this one
    if (qp)
      qp->on_timer(now);
    else if (const std::uint64_t d = tx.deadline(); d != UINT64_MAX && now >= d)
      tx.on_timeout(now);
    arm_timer(q, flow);
    return wake();
  }

  // An acknowledgement reached the sender; true when it should be woken.
  bool on_ack(EventQueue& q, std::uint32_t flow, const Event& e, std::uint64_t now) {
    if (qp)
      qp->on_answer(e.c, now);
    else
      tx.on_ack(Ack{static_cast<AckKind>(e.b), e.c, e.d}, now);
    arm_timer(q, flow);
    return wake();
  }

  // A data packet reached the receiver: deliver, count goodput, send the acknowledgement back.
  void on_packet(EventQueue& q, std::uint32_t flow, std::uint64_t psn, std::uint64_t now, std::uint64_t ack_delay_ns,
                 bool last_half, std::uint32_t payload) {
    if (qp) {
      answers_.clear();
      const std::uint64_t bytes = qp->on_data(psn, now, answers_);
      delivered_payload += bytes;
      if (last_half) last_half_payload += bytes;
      if (flow_bytes != 0 && completed_ns == 0 && delivered_payload >= flow_bytes) completed_ns = now;
      for (const std::uint64_t id : answers_) q.push(now + ack_delay_ns, EventType::kAckArrive, flow, 0, id);
      return;
    }
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
  // The real requester cannot be asked whether it could send without taking the packet: it is
  // woken, and finds out.
  bool wake() {
    if (!waiting || (!qp && !tx.can_send())) return false;
    waiting = false;
    return true;
  }
  std::vector<std::uint64_t> answers_;  // on_packet's scratch: the responder's answers to one frame
};

// Copies a flow's goodput (over the last `half_ns`), recovery counters and completion into `r`.
void fill_recovery(FlowResult& r, const RcFlow& rc, double half_ns);

}  // namespace droce::sim
