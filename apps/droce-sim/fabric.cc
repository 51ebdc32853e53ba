// Fabric simulation: the dumbbell's senders, marking and receivers (real DcqcnReactionPoint,
// Pacer and DcqcnNotificationPoint), plus switch-to-switch links and PFC between neighbours.
#include "apps/droce-sim/fabric.h"

#include <droce/protocols/dcqcn/notification_point.h>
#include <droce/protocols/dcqcn/pacer.h>
#include <droce/protocols/dcqcn/reaction_point.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "apps/droce-sim/event_queue.h"
#include "apps/droce-sim/rc_flow.h"
#include "apps/droce-sim/serial_clock.h"
#include "apps/droce-sim/switch_port.h"

namespace droce::sim {

Status FabricConfig::validate() const {
  if (Status s = base.validate(); !s.ok()) return s;
  if (pfc && xon_bytes >= xoff_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--pfc-xon-bytes: must be below --pfc-xoff-bytes");
  if (pfc && xoff_bytes + 64 * base.packet_bytes > base.buffer_bytes)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--pfc-xoff-bytes: leave headroom below --buffer-bytes (64 packets)");
  if (base.loss > 0)
    return Status::fail(StatusCode::kInvalidArgument, "--loss: not modelled with --pfc or --topology two-hop");
  return {};
}

namespace {

std::uint32_t hops_of(Topology t) { return t == Topology::kTwoHop ? 3 : 2; }

struct Host {
  dcqcn::DcqcnReactionPoint rp;
  dcqcn::DcqcnNotificationPoint np;
  dcqcn::Pacer pacer;
  RcFlow rc;
  bool paused = false, blocked = false;
  std::uint64_t paused_since = 0, paused_ns = 0;
  FlowResult r;
  std::uint64_t last_half_bytes = 0, sample_bytes = 0;
  SerialClock link;  // the sender's link
};

}  // namespace

FabricResult run_fabric(const FabricConfig& fc) {
  const SimConfig& cfg = fc.base;
  const bool two_hop = fc.topology == Topology::kTwoHop;
  const std::uint32_t incast = cfg.flows;
  const std::uint32_t nflows = incast + (two_hop ? 1 : 0);  // the innocent flow is the last
  const std::uint32_t innocent = two_hop ? incast : UINT32_MAX;
  const double bps = cfg.link_gbps * 1e9;
  auto dcq = cfg.dcqcn;
  dcq.line_rate_bps = bps;
  const auto end_ns = static_cast<std::uint64_t>(cfg.duration_ms * 1e6), half_ns = end_ns / 2;
  const auto delay_ns = static_cast<std::uint64_t>(cfg.link_delay_us * 1e3);
  const std::uint32_t pkt = cfg.packet_bytes;
  const auto ser_of = [](std::uint32_t bytes, double rate) {
    return static_cast<std::uint64_t>(std::llround(bytes * 8e9 / rate));
  };
  const auto ser = [&](double rate) { return ser_of(pkt, rate); };
  const auto sample_ns = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(cfg.sample_us * 1e3));
  std::mt19937_64 rng(cfg.seed);
  const dcqcn::RedProfile red{cfg.kmin_bytes, cfg.kmax_bytes, cfg.pmax};

  // Switch 0 (S1): ports 0..nflows-1 face the senders, port nflows the uplink (to R, or to S2
  // at twice the edge rate, as fabric uplinks are). Switch 1 (S2): port 0 from S1, 1 to R, 2 to R2.
  std::vector<std::vector<SwPort>> sw(two_hop ? 2 : 1);
  sw[0].resize(nflows + 1);
  for (auto& p : sw[0]) p.bps = bps;
  const std::uint32_t up = nflows;
  if (two_hop) {
    sw[0][up].bps = 2 * bps;
    sw[1].resize(3);
    for (auto& p : sw[1]) p.bps = bps;
    sw[1][0].bps = 2 * bps;
  }
  // The bottleneck the incast shares: S1's uplink (dumbbell) or S2's port to R (two-hop).
  SwPort& bottleneck = two_hop ? sw[1][1] : sw[0][up];

  FabricResult fr;
  SimResult& res = fr.sim;
  std::vector<Host> hosts(nflows);
  EventQueue q;
  // Base RTT: every data hop's serialisation and propagation, and the ACK's way back at high
  // priority, unqueued (as the CNP's): one link delay per hop and a 64-byte frame.
  const std::uint64_t ack_delay_ns =
      hops_of(fc.topology) * delay_ns + static_cast<std::uint64_t>(std::llround(64 * 8e9 / bps));
  const double rtt_ns = static_cast<double>(ser(bps) + delay_ns) * 2 +
                        (two_hop ? static_cast<double>(ser(2 * bps) + delay_ns) : 0) +
                        static_cast<double>(ack_delay_ns);
  const bool rc = cfg.recovery.mode != Recovery::kNone;
  const std::uint32_t payload = pkt > kRoceOverheadBytes ? pkt - kRoceOverheadBytes : 0;
  res.base_rtt_us = rtt_ns / 1e3;
  res.bdp_packets =
      cfg.recovery.bdp_packets != 0 ? cfg.recovery.bdp_packets : bdp_packets(rtt_ns, bps, data_frame_bytes(cfg));
  for (std::uint32_t i = 0; i < nflows; ++i) {
    if (rc) hosts[i].rc.reset(cfg.recovery, res.bdp_packets, pkt, cfg.seed, i);
    const std::uint64_t start = i == innocent ? 0 : flow_start_ns(cfg, i);
    hosts[i].rp.reset(dcq, start);
    hosts[i].np = dcqcn::DcqcnNotificationPoint(dcq.np_min_time_between_cnps_ns);
    q.push(start + i * 7, EventType::kSenderSend, i);
  }
  q.push(0, EventType::kSample);

  std::vector<double> queue_samples;

  const SwitchRules rules{cfg.buffer_bytes, fc.pfc, fc.xoff_bytes, fc.xon_bytes, red};

  auto start_tx = [&](std::uint32_t s, std::uint32_t p, std::uint64_t now) {
    if (std::uint64_t done = 0; sim::start_tx(sw[s][p], now, done)) q.push(done, EventType::kPortTxDone, s, p);
  };
  // PFC at ingress (s, in): the upstream neighbour is a sender's NIC at S1, S1's uplink at S2;
  // the pause travels one link delay.
  auto pfc_check_at = [&](std::uint32_t s, std::uint32_t in, std::uint64_t now) {
    const PfcSignal sig = pfc_check(rules, sw[s][in]);
    if (sig == PfcSignal::kNone) return;
    const bool on = sig == PfcSignal::kXoff;
    if (on) {
      ++fr.pauses_sent;
      ++(s == 0 ? fr.pauses_s1 : fr.pauses_s2);
    }
    if (s == 0)
      q.push(now + delay_ns, EventType::kHostPause, in, on ? 1u : 0u);
    else
      q.push(now + delay_ns, EventType::kPortPause, 0 * 256 + up, on ? 1u : 0u);
  };
  auto enqueue = [&](std::uint32_t s, std::uint32_t in, std::uint32_t out, Pkt p, std::uint64_t now) {
    SwPort& e = sw[s][out];
    bool marked = false;
    if (!admit(rules, sw[s][in], e, static_cast<std::uint16_t>(in), p, rng, marked)) {
      ++res.drops;
      return;
    }
    res.ecn_marked += marked;
    if (&e == &bottleneck) res.queue_max_bytes = std::max(res.queue_max_bytes, e.bytes);
    pfc_check_at(s, in, now);
    start_tx(s, out, now);
  };

  const std::uint32_t hops = hops_of(fc.topology);
  while (!q.empty()) {
    const Event ev = q.pop();
    const std::uint64_t now = ev.time_ns;
    if (now > end_ns) break;
    switch (ev.type) {
      case EventType::kSenderSend: {
        Host& h = hosts[ev.a];
        if (ev.a != innocent && now >= flow_stop_ns(cfg, ev.a)) break;  // stopped: nothing more on its link
        if (h.paused) {
          h.blocked = true;  // XON reschedules
          break;
        }
        std::uint64_t psn = 0;
        std::uint32_t bytes = pkt;
        if (rc) {
          const auto next = h.rc.next_packet(now, pkt);
          if (!next) {
            h.rc.waiting = true;  // window full or all sent: an ACK or the timer wakes it
            break;
          }
          psn = next->id;
          bytes = next->wire_bytes;
          h.rc.arm_timer(q, ev.a);
        }
        const double rate = cfg.cc ? h.rp.rate_bps() : bps;
        h.pacer.on_send(bytes, rate, now);
        if (cfg.cc) h.rp.on_bytes_sent(bytes, now);
        ++h.r.packets_sent;
        const std::uint64_t on_link = h.link.ns(bytes, bps);
        q.push(now + on_link + delay_ns, EventType::kSwitchArrive, ev.a, 0, psn, bytes);
        q.push(std::max(h.pacer.next_send_ticks(), now + on_link), EventType::kSenderSend, ev.a);
        break;
      }
      case EventType::kSwitchArrive: {
        // b: 0 = at S1 from the sender's port; 1 = at S2 from S1 (flow in a), ce in bit 1.
        const bool at_s2 = (ev.b & 1) != 0;
        const Pkt p{ev.a, (ev.b & 2) != 0, 0, ev.c, static_cast<std::uint32_t>(ev.d)};
        if (!at_s2)
          enqueue(0, ev.a, up, p, now);
        else
          enqueue(1, 0, ev.a == innocent ? 2 : 1, p, now);
        break;
      }
      case EventType::kPortTxDone: {
        SwPort& e = sw[ev.a][ev.b];
        const Pkt p = depart(e, sw[ev.a][e.q.front().in]);
        pfc_check_at(ev.a, p.in, now);
        if (ev.a == 0 && two_hop)
          q.push(now + delay_ns, EventType::kSwitchArrive, p.flow, 1u | (p.ce ? 2u : 0u), p.psn, p.bytes);
        else
          q.push(now + delay_ns, EventType::kReceiverArrive, p.flow, p.ce ? 1u : 0u, p.psn, p.bytes);
        start_tx(ev.a, ev.b, now);
        break;
      }
      case EventType::kReceiverArrive: {
        Host& h = hosts[ev.a];
        h.r.bytes_received += ev.d;
        h.sample_bytes += ev.d;
        if (now >= half_ns) h.last_half_bytes += ev.d;
        if (rc) {
          h.rc.on_packet(q, ev.a, ev.c, now, ack_delay_ns, now >= half_ns, payload);
        } else {
          h.rc.delivered_payload += payload;
          if (now >= half_ns) h.rc.last_half_payload += payload;
        }
        if (h.np.on_packet(ev.b != 0, now) && cfg.cc) {
          ++res.cnps;
          q.push(now + hops * delay_ns + ser(bps), EventType::kCnpArrive, ev.a);  // high priority, unqueued
        }
        break;
      }
      case EventType::kCnpArrive: {
        hosts[ev.a].rp.on_cnp(now);
        ++hosts[ev.a].r.cnps_received;
        break;
      }
      case EventType::kAckArrive:
      case EventType::kAckTimer: {
        Host& h = hosts[ev.a];
        const bool wake =
            ev.type == EventType::kAckArrive ? h.rc.on_ack(q, ev.a, ev, now) : h.rc.on_timer(q, ev.a, now);
        if (wake) q.push(std::max(h.pacer.next_send_ticks(), now), EventType::kSenderSend, ev.a);
        break;
      }
      case EventType::kHostPause: {
        Host& h = hosts[ev.a];
        if (ev.b != 0 && !h.paused) {
          h.paused = true;
          h.paused_since = now;
        } else if (ev.b == 0 && h.paused) {
          h.paused = false;
          h.paused_ns += now - h.paused_since;
          if (h.blocked) {
            h.blocked = false;
            q.push(now, EventType::kSenderSend, ev.a);
          }
        }
        break;
      }
      case EventType::kPortPause: {
        SwPort& e = sw[ev.a / 256][ev.a % 256];
        e.paused = ev.b != 0;
        if (!e.paused) start_tx(ev.a / 256, ev.a % 256, now);
        break;
      }
      case EventType::kSample: {
        res.series_time_us.push_back(static_cast<double>(now) / 1e3);
        std::vector<double> rates(nflows);
        for (std::uint32_t i = 0; i < nflows; ++i) {
          if (cfg.cc) hosts[i].rp.advance(now);
          rates[i] = (cfg.cc ? hosts[i].rp.rate_bps() : bps) / 1e9;
        }
        res.series_rate_gbps.push_back(std::move(rates));
        res.series_queue_bytes.push_back(static_cast<double>(bottleneck.bytes));
        if (now >= half_ns) queue_samples.push_back(static_cast<double>(bottleneck.bytes));
        if (two_hop) {
          fr.series_innocent_gbps.push_back(static_cast<double>(hosts[innocent].sample_bytes) * 8 /
                                            static_cast<double>(sample_ns));
          fr.series_uplink_queue_bytes.push_back(static_cast<double>(sw[0][up].bytes));
        }
        for (auto& h : hosts) h.sample_bytes = 0;
        fr.series_pauses.push_back(fr.pauses_sent);
        q.push(now + sample_ns, EventType::kSample);
        break;
      }
    }
  }
  res.events = q.processed();
  std::vector<double> tput;
  double total = 0;
  for (std::uint32_t i = 0; i < nflows; ++i) {
    Host& h = hosts[i];
    if (h.paused) h.paused_ns += end_ns - h.paused_since;
    h.r.throughput_gbps = static_cast<double>(h.last_half_bytes) * 8 / static_cast<double>(end_ns - half_ns);
    h.r.rate_cuts = h.rp.state().rate_cuts;
    fill_recovery(h.r, h.rc, static_cast<double>(end_ns - half_ns));
    res.flows.push_back(h.r);
    fr.host_paused_fraction.push_back(static_cast<double>(h.paused_ns) / static_cast<double>(end_ns));
    if (i == innocent) {
      fr.innocent_gbps = h.r.throughput_gbps;
      continue;
    }
    tput.push_back(h.r.throughput_gbps);
    total += h.r.throughput_gbps;
    res.goodput_gbps += h.r.goodput_gbps;
  }
  res.jain_index = jain_index(tput);
  res.utilization = total / cfg.link_gbps;
  res.queue_p50_bytes = percentile(queue_samples, 0.50);
  res.queue_p99_bytes = percentile(queue_samples, 0.99);
  return fr;
}

}  // namespace droce::sim
