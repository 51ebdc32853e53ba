// The simulated switch port, one model for every topology (run_fabric's dumbbell and two-hop,
// run_leaf_spine): an egress FIFO with the DCQCN paper's RED/ECN marking, a tail-drop buffer per
// egress (lossy) or shared and accounted per ingress (lossless), and IEEE 802.1Qbb XOFF/XON from
// an ingress towards its upstream neighbour. The topology decides where a packet goes next and
// who the upstream neighbour is; this file decides whether it is queued, marked or paused.
#pragma once

#include <droce/protocols/dcqcn/red_marking.h>

#include <cstdint>
#include <deque>
#include <random>

#include "apps/droce-sim/serial_clock.h"

namespace droce::sim {

struct Pkt {
  std::uint32_t flow;
  bool ce;
  std::uint16_t in;     // ingress port at the switch holding it
  std::uint64_t psn;    // the model's PSN, the real transport's frame id, or a collective's transfer
  std::uint32_t bytes;  // on the wire: --packet-bytes, or the real frame's size
};

struct SwPort {
  std::deque<Pkt> q;
  std::uint64_t bytes = 0;  // egress queue
  double bps = 0;           // egress link rate
  bool busy = false, paused = false;
  std::uint64_t ingress_bytes = 0;  // buffered bytes that arrived on this port
  bool xoff_sent = false;
  SerialClock clock;
  // Counters (the leaf-spine reports them per link): as an egress, the deepest queue, tail drops,
  // packets it marked CE and frames and bytes it sent; as an ingress, the XOFFs it sent upstream.
  std::uint64_t max_bytes = 0, drops = 0, marks = 0, tx_frames = 0, tx_bytes = 0, pauses = 0;
};

struct SwitchRules {
  std::uint64_t buffer_bytes = 1'000'000;
  bool pfc = false;
  std::uint64_t xoff_bytes = 300'000, xon_bytes = 250'000;
  dcqcn::RedProfile red;
};

enum class PfcSignal : std::uint8_t { kNone, kXoff, kXon };

// Queues `p` (arrived on `in`) on egress `e`, or drops it: false when dropped (counted on `e`).
// Lossy: each egress queue has the buffer. Lossless: the buffer is shared and accounted per ingress
// port, which pauses its upstream at XOFF and keeps buffer - XOFF as headroom for what is still in
// flight; a drop then means the headroom was too small. `newly_marked`: the packet was marked CE
// here and was not before.
inline bool admit(const SwitchRules& r, SwPort& in, SwPort& e, std::uint16_t in_index, Pkt p, std::mt19937_64& rng,
                  bool& newly_marked) {
  if (r.pfc ? in.ingress_bytes + p.bytes > r.buffer_bytes : e.bytes + p.bytes > r.buffer_bytes) {
    ++e.drops;
    return false;
  }
  const bool ce = r.red.mark(e.bytes, rng);
  newly_marked = ce && !p.ce;
  e.marks += newly_marked;
  p.ce = p.ce || ce;
  p.in = in_index;
  e.q.push_back(p);
  e.bytes += p.bytes;
  if (e.bytes > e.max_bytes) e.max_bytes = e.bytes;
  in.ingress_bytes += p.bytes;
  return true;
}

// Starts sending the head of egress `e` when it is idle, not paused and not empty: true, and
// `done_at` the time its last bit leaves (the caller's kPortTxDone event, then depart()).
inline bool start_tx(SwPort& e, std::uint64_t now, std::uint64_t& done_at) {
  if (e.busy || e.paused || e.q.empty()) return false;
  e.busy = true;
  done_at = now + e.clock.ns(e.q.front().bytes, e.bps);
  return true;
}

// The head of egress `e` has left; `in` is the ingress it arrived on. Returns it.
inline Pkt depart(SwPort& e, SwPort& in) {
  const Pkt p = e.q.front();
  e.q.pop_front();
  e.bytes -= p.bytes;
  e.busy = false;
  ++e.tx_frames;
  e.tx_bytes += p.bytes;
  in.ingress_bytes -= p.bytes;
  return p;
}

// PFC at an ingress: XOFF upstream above xoff, XON at or below xon (once each way); what to send.
inline PfcSignal pfc_check(const SwitchRules& r, SwPort& in) {
  if (!r.pfc) return PfcSignal::kNone;
  if (!in.xoff_sent && in.ingress_bytes > r.xoff_bytes) {
    in.xoff_sent = true;
    ++in.pauses;
    return PfcSignal::kXoff;
  }
  if (in.xoff_sent && in.ingress_bytes <= r.xon_bytes) {
    in.xoff_sent = false;
    return PfcSignal::kXon;
  }
  return PfcSignal::kNone;
}

}  // namespace droce::sim
