// The leaf-spine's switches, shared by its two transports (the model's open-loop senders in
// leaf_spine.cc, droce's RcQps in leaf_spine_rcqp.cc): where a packet goes at each switch, its
// queueing, marking and PFC (switch_port.h), and the events that carry it to the next hop. What a
// packet stands for (a transfer's bytes, or a QP's frame) is the caller's: it says where each goes.
//
// Switches 0..L-1 are the leaves (ports 0..H-1 to hosts, H..H+S-1 to spines), L..L+S-1 the spines
// (port l to leaf l). Events: kSwitchArrive a = switch, b = ingress | CE << 31, c = the packet's
// psn, d = flow << 32 | bytes; kReceiverArrive a = rank, b = CE, c and d as kSwitchArrive's.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "apps/droce-sim/event_queue.h"
#include "apps/droce-sim/leaf_spine.h"
#include "apps/droce-sim/switch_port.h"

namespace droce::sim {

class LeafSpineSwitches {
 public:
  LeafSpineSwitches(const LeafSpineConfig& cfg, EventQueue& q, LeafSpineResult& res)
      : L(cfg.leaves),
        S(cfg.spines),
        H(cfg.hosts_per_leaf()),
        q_(q),
        res_(res),
        rng_(cfg.fabric.base.seed),
        delay_ns_(static_cast<std::uint64_t>(cfg.fabric.base.link_delay_us * 1e3)),
        rules_{cfg.fabric.base.buffer_bytes,
               cfg.fabric.pfc,
               cfg.fabric.xoff_bytes,
               cfg.fabric.xon_bytes,
               {cfg.fabric.base.kmin_bytes, cfg.fabric.base.kmax_bytes, cfg.fabric.base.pmax}},
        sw_(L + S) {
    const double host_bps = cfg.fabric.base.link_gbps * 1e9, up_bps = cfg.uplink_rate_gbps() * 1e9;
    for (std::uint32_t l = 0; l < L; ++l) {
      sw_[l].resize(H + S);
      for (std::uint32_t p = 0; p < H + S; ++p) sw_[l][p].bps = p < H ? host_bps : up_bps;
    }
    for (std::uint32_t s = 0; s < S; ++s) {
      sw_[L + s].resize(L);
      for (auto& p : sw_[L + s]) p.bps = up_bps;
    }
  }

  // A packet leaving rank r's NIC reaches its leaf at `at`.
  void send_from_host(std::uint32_t r, const Pkt& p, std::uint64_t at) {
    q_.push(at, EventType::kSwitchArrive, r / H, r % H, p.psn, (std::uint64_t{p.flow} << 32) | p.bytes);
  }

  // kSwitchArrive: `route(p)` gives the packet's destination rank and the spine ECMP chose for it.
  template <typename Route>
  void on_arrive(const Event& ev, std::uint64_t now, Route&& route) {
    const auto in = static_cast<std::uint32_t>(ev.b & 0x7FFFFFFF);
    Pkt p{static_cast<std::uint32_t>(ev.d >> 32), (ev.b >> 31) != 0, 0, ev.c,
          static_cast<std::uint32_t>(ev.d & 0xFFFFFFFF)};
    const auto [dst, spine] = route(p);
    const std::uint32_t s = ev.a;
    const std::uint32_t out = s >= L ? dst / H : dst / H == s ? dst % H : H + spine;
    bool marked = false;
    if (!admit(rules_, sw_[s][in], sw_[s][out], static_cast<std::uint16_t>(in), p, rng_, marked)) {
      ++res_.drops;
      return;
    }
    res_.ecn_marks += marked;
    pfc_at(s, in, now);
    start_tx(s, out, now);
  }

  // kPortTxDone: the head of the egress leaves for the next switch or the host.
  void on_tx_done(const Event& ev, std::uint64_t now) {
    SwPort& e = sw_[ev.a][ev.b];
    const Pkt p = depart(e, sw_[ev.a][e.q.front().in]);
    pfc_at(ev.a, p.in, now);
    const std::uint64_t d = (std::uint64_t{p.flow} << 32) | p.bytes;
    const std::uint32_t ce = p.ce ? 1u << 31 : 0;
    if (ev.a >= L)  // spine -> leaf ev.b
      q_.push(now + delay_ns_, EventType::kSwitchArrive, ev.b, (H + (ev.a - L)) | ce, p.psn, d);
    else if (ev.b >= H)  // leaf -> spine
      q_.push(now + delay_ns_, EventType::kSwitchArrive, L + (ev.b - H), ev.a | ce, p.psn, d);
    else
      q_.push(now + delay_ns_, EventType::kReceiverArrive, ev.a * H + ev.b, p.ce ? 1 : 0, p.psn, d);
    start_tx(ev.a, ev.b, now);
  }

  // kPortPause: a = switch, b = port, c = 1 (XOFF) or 0 (XON).
  void on_pause(const Event& ev, std::uint64_t now) {
    SwPort& e = sw_[ev.a][ev.b];
    e.paused = ev.c != 0;
    if (!e.paused) start_tx(ev.a, ev.b, now);
  }

  [[nodiscard]] const SwPort& port(std::uint32_t s, std::uint32_t p) const { return sw_[s][p]; }
  [[nodiscard]] std::uint64_t delay_ns() const { return delay_ns_; }

  const std::uint32_t L, S, H;

 private:
  void start_tx(std::uint32_t s, std::uint32_t p, std::uint64_t now) {
    if (std::uint64_t done = 0; sim::start_tx(sw_[s][p], now, done)) q_.push(done, EventType::kPortTxDone, s, p);
  }
  // PFC from ingress (s, in) to its upstream neighbour, one link delay away: a host's NIC
  // (kHostPause a = rank, b = on) or a switch egress (kPortPause).
  void pfc_at(std::uint32_t s, std::uint32_t in, std::uint64_t now) {
    const PfcSignal sig = pfc_check(rules_, sw_[s][in]);
    if (sig == PfcSignal::kNone) return;
    const std::uint32_t on = sig == PfcSignal::kXoff ? 1 : 0;
    res_.pauses += on;
    if (s < L && in < H)
      q_.push(now + delay_ns_, EventType::kHostPause, s * H + in, on);
    else if (s < L)
      q_.push(now + delay_ns_, EventType::kPortPause, L + (in - H), s, on);
    else
      q_.push(now + delay_ns_, EventType::kPortPause, in, H + (s - L), on);
  }

  EventQueue& q_;
  LeafSpineResult& res_;
  std::mt19937_64 rng_;
  const std::uint64_t delay_ns_;
  const SwitchRules rules_;
  std::vector<std::vector<SwPort>> sw_;
};

// Per rank, what its NIC sent (the host link's up direction).
struct NicCounters {
  std::uint64_t frames = 0, bytes = 0;
};

// The result's per-step finish times, per-link counters and flows per spine, from the run's
// transfer finish times (UINT64_MAX: never finished; reordered in place) and the switches.
void summarise_leaf_spine(const LeafSpineConfig& cfg, const std::vector<SimTransfer>& tr,
                          std::vector<std::uint64_t>& finish, const LeafSpineSwitches& sw,
                          const std::vector<NicCounters>& nics, LeafSpineResult& res);

}  // namespace droce::sim
