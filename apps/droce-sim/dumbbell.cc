// Dumbbell simulation: senders run the real DcqcnReactionPoint + Pacer, the receiver the real
// DcqcnNotificationPoint; the switch is the DCQCN paper's RED/ECN egress queue (§4).
#include "apps/droce-sim/dumbbell.h"

#include <droce/protocols/dcqcn/notification_point.h>
#include <droce/protocols/dcqcn/pacer.h>
#include <droce/protocols/dcqcn/reaction_point.h>
#include <droce/protocols/dcqcn/red_marking.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>

#include "apps/droce-sim/event_queue.h"
#include "apps/droce-sim/rc_flow.h"
#include "apps/droce-sim/serial_clock.h"

namespace droce::sim {

Status SimConfig::validate() const {
  if (flows == 0 || flows > 4096) return Status::fail(StatusCode::kInvalidArgument, "--flows: must be 1..4096");
  if (!(link_gbps > 0 && link_gbps <= 1e4))
    return Status::fail(StatusCode::kInvalidArgument, "--link-gbps: must be > 0");
  if (!(duration_ms > 0 && duration_ms <= 60'000))
    return Status::fail(StatusCode::kInvalidArgument, "--duration-ms: must be in (0, 60000]");
  if (!(start_stagger_ms >= 0) || start_stagger_ms * (flows - 1) >= duration_ms)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--start-stagger-ms: must be >= 0 and every flow must start before the run ends");
  if (flow_start_ms.size() > flows || flow_stop_ms.size() > flows)
    return Status::fail(StatusCode::kInvalidArgument, "--flow-start-ms, --flow-stop-ms: more times than --flows");
  if (incast && !flow_start_ms.empty())
    return Status::fail(StatusCode::kInvalidArgument, "--flow-start-ms: not with --incast (all flows start at 0)");
  for (std::uint32_t i = 0; i < flows; ++i) {
    const double start = static_cast<double>(flow_start_ns(*this, i)) / 1e6;
    if (i < flow_start_ms.size() && !(flow_start_ms[i] >= 0 && flow_start_ms[i] < duration_ms))
      return Status::error(StatusCode::kInvalidArgument,
                           "--flow-start-ms: flow " + std::to_string(i) + " must start in [0, --duration-ms)");
    if (i < flow_stop_ms.size() && !(flow_stop_ms[i] > start))
      return Status::error(StatusCode::kInvalidArgument,
                           "--flow-stop-ms: flow " + std::to_string(i) + " must stop after it starts");
  }
  if (packet_bytes < 64 || packet_bytes > 9000)
    return Status::fail(StatusCode::kInvalidArgument, "--packet-bytes: must be 64..9000");
  if (!(link_delay_us >= 0)) return Status::fail(StatusCode::kInvalidArgument, "--delay-us: must be >= 0");
  if (kmin_bytes > kmax_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--kmin-bytes: must not exceed --kmax-bytes");
  if (!(pmax >= 0 && pmax <= 1)) return Status::fail(StatusCode::kInvalidArgument, "--pmax: must be in [0, 1]");
  if (buffer_bytes < packet_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--buffer-bytes: must hold at least one packet");
  if (!(loss >= 0 && loss < 1)) return Status::fail(StatusCode::kInvalidArgument, "--loss: must be in [0, 1)");
  if (!(sample_us > 0)) return Status::fail(StatusCode::kInvalidArgument, "--sample-us: must be > 0");
  if (Status s = dcqcn.validate(); !s.ok()) return s.context("--");
  if (packet_bytes <= kRoceOverheadBytes && recovery.mode != Recovery::kNone)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--packet-bytes: must exceed the 62 header bytes to carry payload");
  if (recovery.rcqp && pmtu_for(packet_bytes, kRoceOverheadBytes) == 0)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--packet-bytes: --transport rcqp needs room for a 256-byte PMTU and 62 header bytes (318)");
  return recovery.validate();
}

std::uint64_t flow_start_ns(const SimConfig& cfg, std::uint32_t i) {
  if (i < cfg.flow_start_ms.size()) return static_cast<std::uint64_t>(cfg.flow_start_ms[i] * 1e6);
  return cfg.incast ? 0 : static_cast<std::uint64_t>(cfg.start_stagger_ms * 1e6 * static_cast<double>(i));
}

std::uint64_t flow_stop_ns(const SimConfig& cfg, std::uint32_t i) {
  return i < cfg.flow_stop_ms.size() ? static_cast<std::uint64_t>(cfg.flow_stop_ms[i] * 1e6) : UINT64_MAX;
}

std::uint32_t data_frame_bytes(const SimConfig& cfg) {
  if (!cfg.recovery.rcqp) return cfg.packet_bytes;
  return pmtu_for(cfg.packet_bytes, kRoceOverheadBytes) + kRoceOverheadBytes;
}

double jain_index(const std::vector<double>& x) {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  return s2 > 0 ? s * s / (static_cast<double>(x.size()) * s2) : 0.0;
}

namespace {

struct Flow {
  dcqcn::DcqcnReactionPoint rp;
  dcqcn::DcqcnNotificationPoint np;
  dcqcn::Pacer pacer;
  RcFlow rc;
  FlowResult r;
  std::uint64_t last_half_bytes = 0;
  SerialClock link;  // the sender's link
};

struct Queued {
  std::uint32_t flow;
  std::uint32_t bytes;
  bool ce;
  std::uint64_t psn;
};

}  // namespace

void fill_recovery(FlowResult& r, const RcFlow& rc, double half_ns) {
  r.goodput_gbps = static_cast<double>(rc.last_half_payload) * 8 / half_ns;
  r.delivered_bytes = rc.delivered_payload;
  r.completion_us = rc.completed_ns != 0 ? static_cast<double>(rc.completed_ns) / 1e3 : -1;
  if (rc.qp) {
    // The real QPs' own counters (docs/counters.md): a requester resend, an expiry of its timer
    // (the adaptive ones included), a NAK it received; the responder's duplicates and PSNs ahead.
    const rc::RcCounters& t = rc.qp->requester();
    const rc::RcCounters& x = rc.qp->responder();
    r.retransmitted = t.retransmitted_packets;
    r.timeouts = t.local_ack_timeout_err;
    r.naks = t.naks_received;
    r.tail_probes = t.tail_probes;
    r.duplicates = x.duplicate_request;
    r.out_of_sequence = x.out_of_sequence;
    r.messages = rc.qp->stats().messages;
    r.transport_drops = rc.qp->stats().ring_overruns + rc.qp->stats().parse_drops;
    r.qp_failed = rc.qp->failed();
    return;
  }
  const auto& t = rc.tx.stats();
  const auto& x = rc.rx.stats();
  r.retransmitted = t.retransmitted;
  r.timeouts = t.timeouts;
  r.naks = t.naks;
  r.sacks = t.sacks;
  r.duplicates = x.duplicates;
  r.out_of_sequence = x.out_of_sequence;
  r.order_errors = x.order_errors;
}

std::uint64_t percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return static_cast<std::uint64_t>(v[std::min(i, v.size() - 1)]);
}

SimResult run_dumbbell(const SimConfig& cfg) {
  SimResult res;
  const double bps = cfg.link_gbps * 1e9;
  auto dcq = cfg.dcqcn;
  dcq.line_rate_bps = bps;
  const auto end_ns = static_cast<std::uint64_t>(cfg.duration_ms * 1e6);
  const std::uint64_t half_ns = end_ns / 2;
  const auto delay_ns = static_cast<std::uint64_t>(cfg.link_delay_us * 1e3);
  const auto ser_ns = [&](std::uint32_t bytes) { return static_cast<std::uint64_t>(std::llround(bytes * 8e9 / bps)); };
  const auto sample_ns = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(cfg.sample_us * 1e3));

  std::mt19937_64 rng(cfg.seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  const dcqcn::RedProfile red{cfg.kmin_bytes, cfg.kmax_bytes, cfg.pmax};
  std::vector<Flow> flows(cfg.flows);
  EventQueue q;
  // Base RTT: two data hops (serialisation and propagation each) and the ACK's way back, which
  // like the CNP's travels at high priority, unqueued: two link delays and a 64-byte frame.
  const double rtt_ns = 2.0 * static_cast<double>(ser_ns(cfg.packet_bytes) + delay_ns) +
                        2.0 * static_cast<double>(delay_ns) + static_cast<double>(ser_ns(64));
  const std::uint64_t ack_delay_ns = 2 * delay_ns + ser_ns(64);
  const bool rc = cfg.recovery.mode != Recovery::kNone;
  const std::uint32_t payload = cfg.packet_bytes > kRoceOverheadBytes ? cfg.packet_bytes - kRoceOverheadBytes : 0;
  res.base_rtt_us = rtt_ns / 1e3;
  res.bdp_packets =
      cfg.recovery.bdp_packets != 0 ? cfg.recovery.bdp_packets : bdp_packets(rtt_ns, bps, data_frame_bytes(cfg));
  for (std::uint32_t i = 0; i < cfg.flows; ++i) {
    if (rc) flows[i].rc.reset(cfg.recovery, res.bdp_packets, cfg.packet_bytes, cfg.seed, i);
    const std::uint64_t start = flow_start_ns(cfg, i);
    flows[i].rp.reset(dcq, start);
    flows[i].np = dcqcn::DcqcnNotificationPoint(dcq.np_min_time_between_cnps_ns);
    // Flows in the same instant get a deterministic sub-packet offset so that they do not
    // arrive in lockstep (real NICs are never synchronised to the nanosecond).
    const bool together = cfg.incast || cfg.start_stagger_ms == 0 || !cfg.flow_start_ms.empty();
    q.push(start + (together ? i * 7 : 0), EventType::kSenderSend, i);
  }
  q.push(0, EventType::kSample);

  std::deque<Queued> egress;
  std::uint64_t queue_bytes = 0;
  bool port_busy = false;
  SerialClock port_clock;
  std::vector<double> queue_samples;

  auto start_tx = [&](std::uint64_t now) {
    if (port_busy || egress.empty()) return;
    port_busy = true;
    q.push(now + port_clock.ns(egress.front().bytes, bps), EventType::kPortTxDone);
  };

  while (!q.empty()) {
    const Event e = q.pop();
    const std::uint64_t now = e.time_ns;
    if (now > end_ns) break;
    switch (e.type) {
      case EventType::kSenderSend: {
        Flow& f = flows[e.a];
        if (now >= flow_stop_ns(cfg, e.a)) break;  // stopped: nothing more on its link
        std::uint64_t psn = 0;
        std::uint32_t bytes = cfg.packet_bytes;
        if (rc) {
          const auto p = f.rc.next_packet(now, cfg.packet_bytes);
          if (!p) {
            f.rc.waiting = true;  // window full or all sent: an ACK or the timer wakes it
            break;
          }
          psn = p->id;
          bytes = p->wire_bytes;
          f.rc.arm_timer(q, e.a);
        }
        const double rate = cfg.cc ? f.rp.rate_bps() : bps;
        f.pacer.on_send(bytes, rate, now);
        if (cfg.cc) f.rp.on_bytes_sent(bytes, now);
        ++f.r.packets_sent;
        const std::uint64_t on_link = f.link.ns(bytes, bps);
        q.push(now + on_link + delay_ns, EventType::kSwitchArrive, e.a, bytes, psn);
        q.push(std::max(f.pacer.next_send_ticks(), now + on_link), EventType::kSenderSend, e.a);
        break;
      }
      case EventType::kSwitchArrive: {
        if (queue_bytes + e.b > cfg.buffer_bytes) {
          ++res.drops;  // tail drop: lossy Ethernet without PFC
          break;
        }
        const bool ce = red.mark(queue_bytes, rng);
        res.ecn_marked += ce;
        egress.push_back(Queued{e.a, e.b, ce, e.c});
        queue_bytes += e.b;
        res.queue_max_bytes = std::max(res.queue_max_bytes, queue_bytes);
        start_tx(now);
        break;
      }
      case EventType::kPortTxDone: {
        const Queued p = egress.front();
        egress.pop_front();
        queue_bytes -= p.bytes;
        port_busy = false;
        if (cfg.loss > 0 && uni(rng) < cfg.loss)
          ++res.drops;
        else
          q.push(now + delay_ns, EventType::kReceiverArrive, p.flow, p.ce ? 1u : 0u, p.psn, p.bytes);
        start_tx(now);
        break;
      }
      case EventType::kReceiverArrive: {
        Flow& f = flows[e.a];
        f.r.bytes_received += e.d;
        if (now >= half_ns) f.last_half_bytes += e.d;
        if (rc) {
          f.rc.on_packet(q, e.a, e.c, now, ack_delay_ns, now >= half_ns, payload);
        } else {
          f.rc.delivered_payload += payload;
          if (now >= half_ns) f.rc.last_half_payload += payload;
        }
        if (f.np.on_packet(e.b != 0, now) && cfg.cc) {
          ++res.cnps;
          // CNPs travel back at high priority (DSCP 48): two link delays, no queueing.
          q.push(now + 2 * delay_ns + ser_ns(64), EventType::kCnpArrive, e.a);
        }
        break;
      }
      case EventType::kCnpArrive: {
        Flow& f = flows[e.a];
        f.rp.on_cnp(now);
        ++f.r.cnps_received;
        break;
      }
      case EventType::kSample: {
        res.series_time_us.push_back(static_cast<double>(now) / 1e3);
        std::vector<double> rates(cfg.flows);
        for (std::uint32_t i = 0; i < cfg.flows; ++i) {
          if (cfg.cc) flows[i].rp.advance(now);
          rates[i] = (cfg.cc ? flows[i].rp.rate_bps() : bps) / 1e9;
        }
        res.series_rate_gbps.push_back(std::move(rates));
        res.series_queue_bytes.push_back(static_cast<double>(queue_bytes));
        if (now >= half_ns) queue_samples.push_back(static_cast<double>(queue_bytes));
        q.push(now + sample_ns, EventType::kSample);
        break;
      }
      case EventType::kAckArrive:
      case EventType::kAckTimer: {
        Flow& f = flows[e.a];
        const bool wake = e.type == EventType::kAckArrive ? f.rc.on_ack(q, e.a, e, now) : f.rc.on_timer(q, e.a, now);
        if (wake) q.push(std::max(f.pacer.next_send_ticks(), now), EventType::kSenderSend, e.a);
        break;
      }
      case EventType::kHostPause:
      case EventType::kPortPause:
        break;  // the lossy dumbbell has no PFC (run_fabric models it)
    }
  }

  res.events = q.processed();
  std::vector<double> tput;
  double total = 0;
  for (auto& f : flows) {
    f.r.throughput_gbps = static_cast<double>(f.last_half_bytes) * 8 / (static_cast<double>(end_ns - half_ns));
    f.r.rate_cuts = f.rp.state().rate_cuts;
    fill_recovery(f.r, f.rc, static_cast<double>(end_ns - half_ns));
    tput.push_back(f.r.throughput_gbps);
    total += f.r.throughput_gbps;
    res.goodput_gbps += f.r.goodput_gbps;
    res.flows.push_back(f.r);
  }
  res.jain_index = jain_index(tput);
  res.utilization = total / cfg.link_gbps;
  res.queue_p50_bytes = percentile(queue_samples, 0.50);
  res.queue_p99_bytes = percentile(queue_samples, 0.99);
  return res;
}

}  // namespace droce::sim
