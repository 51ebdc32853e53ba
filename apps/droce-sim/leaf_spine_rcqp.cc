// The leaf-spine collective on droce's RC transport (--transport rcqp): one QpFlow (a requester
// and a responder RcQp of protocols/rc) per ordered rank pair that exchanges data, kept across
// steps as droce-coll keeps its QPs; each transfer posted on its pair as WRITEs once its `after`
// has been placed; data frames through the leaf-spine's switch ports (leaf_spine_switches.h),
// ECMP hashed on the QP's own UDP source port. A rank's NIC serves its QPs round-robin, one frame
// at a time at line rate, each QP paced by its DCQCN reaction point with --cc dcqcn.
//
// ACKs, NAKs and CNPs travel back unqueued, at high priority, as in run_fabric: one link delay per
// hop of the data's path and a 64-byte frame's serialisation. --loss drops each data frame with
// that probability on every link it crosses (host and fabric links alike).
#include <droce/protocols/dcqcn/notification_point.h>
#include <droce/protocols/dcqcn/pacer.h>
#include <droce/protocols/dcqcn/reaction_point.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <random>
#include <unordered_map>

#include "apps/droce-sim/leaf_spine_switches.h"
#include "apps/droce-sim/qp_flow.h"
#include "apps/droce-sim/serial_clock.h"

namespace droce::sim {

namespace {

// One ordered rank pair's QPs and what its transfers wait for.
struct Pair {
  std::unique_ptr<QpFlow> qp;
  std::uint32_t src = 0, dst = 0, spine = 0;
  std::uint64_t ack_delay_ns = 0;  // the answers' way back (2 hops within a leaf, 4 across)
  // Transfers posted and not yet placed, in order, each with the in-order packet count that
  // places its last byte (QpFlow::post_message).
  std::deque<std::pair<std::uint32_t, std::uint64_t>> posted;
  // When the earliest kAckTimer event pending for the pair fires (UINT64_MAX: none): a deadline
  // that moves earlier (the adaptive RTO or a tail-loss probe armed after the IBTA timeout) gets its
  // own event; later ones still pending find nothing due and only re-arm.
  std::uint64_t timer_at = UINT64_MAX;
  bool in_active = false;  // listed in its source NIC's round-robin
};

struct Nic {
  std::deque<std::uint32_t> active;  // pairs with work posted, in round-robin order
  bool sending = false;              // a kSenderSend is pending
  bool paused = false, blocked = false;
  SerialClock link;
};

struct Dcqcn {
  dcqcn::DcqcnReactionPoint rp;
  dcqcn::DcqcnNotificationPoint np;
  dcqcn::Pacer pacer;
};

}  // namespace

LeafSpineResult run_leaf_spine_rcqp(const LeafSpineConfig& cfg) {
  const SimConfig& b = cfg.fabric.base;
  const std::uint32_t H = cfg.hosts_per_leaf(), n = cfg.coll.ranks;
  const double host_bps = b.link_gbps * 1e9, up_bps = cfg.uplink_rate_gbps() * 1e9;
  const auto end_ns = static_cast<std::uint64_t>(b.duration_ms * 1e6);
  const auto delay_ns = static_cast<std::uint64_t>(b.link_delay_us * 1e3);
  const std::uint32_t pmtu = pmtu_for(b.packet_bytes, kRoceOverheadBytes);
  const std::uint32_t frame = pmtu + kRoceOverheadBytes;
  auto ser = [](std::uint32_t bytes, double bps) { return static_cast<double>(bytes) * 8e9 / bps; };
  // Selective repeat's window: the longest path's RTT (4 data hops, 2 of them uplinks, and the
  // answer's way back) at the host rate, unless --bdp-packets sets it.
  const double rtt_ns =
      2 * (ser(frame, host_bps) + ser(frame, up_bps)) + 8.0 * static_cast<double>(delay_ns) + ser(64, host_bps);
  const std::uint32_t window =
      b.recovery.bdp_packets != 0 ? b.recovery.bdp_packets : bdp_packets(rtt_ns, host_bps, frame);
  auto dcq = b.dcqcn;
  dcq.line_rate_bps = host_bps;

  LeafSpineResult res;
  CollectivePlan plan = plan_collective(cfg.coll);
  res.plan = plan.plan;
  const std::vector<SimTransfer>& tr = plan.transfers;
  res.transfers = tr.size();
  for (const SimTransfer& t : tr) res.expected_bytes += t.bytes;

  std::vector<std::int32_t> first_dep(tr.size(), -1), next_dep(tr.size(), -1);
  for (std::size_t i = tr.size(); i-- > 0;)
    if (tr[i].after >= 0) {
      next_dep[i] = first_dep[static_cast<std::size_t>(tr[i].after)];
      first_dep[static_cast<std::size_t>(tr[i].after)] = static_cast<std::int32_t>(i);
    }
  std::vector<std::uint64_t> finish(tr.size(), UINT64_MAX);

  // The pairs, numbered in order of their first transfer; each transfer's pair.
  std::vector<Pair> pairs;
  std::vector<std::uint32_t> pair_of(tr.size());
  {
    std::unordered_map<std::uint64_t, std::uint32_t> index;
    for (std::size_t i = 0; i < tr.size(); ++i) {
      const std::uint64_t key = (std::uint64_t{tr[i].src} << 32) | tr[i].dst;
      const auto [it, added] = index.emplace(key, static_cast<std::uint32_t>(pairs.size()));
      if (added) {
        Pair p;
        p.src = tr[i].src;
        p.dst = tr[i].dst;
        QpFlowConfig qc;
        qc.mode = b.recovery.mode;
        qc.pmtu = pmtu;
        qc.sr_window = window;
        qc.rto_us = b.recovery.rto_us;
        qc.seed = b.seed;
        qc.index = it->second;
        qc.req_qpn = qpn_towards(p.src, p.dst);
        qc.resp_qpn = qpn_towards(p.dst, p.src);
        qc.posted_by_caller = true;
        p.qp = std::make_unique<QpFlow>(qc);
        p.spine = spine_for_port(cfg, p.src, p.dst, p.qp->udp_src_port());
        const std::uint64_t hops = p.src / H == p.dst / H ? 2 : 4;
        p.ack_delay_ns = hops * delay_ns + static_cast<std::uint64_t>(std::llround(ser(64, host_bps)));
        pairs.push_back(std::move(p));
      }
      pair_of[i] = it->second;
    }
  }
  res.transport.qp_pairs = pairs.size();
  std::vector<Dcqcn> cc(b.cc ? pairs.size() : 0);
  for (Dcqcn& d : cc) {
    d.rp.reset(dcq, 0);
    d.np = dcqcn::DcqcnNotificationPoint(dcq.np_min_time_between_cnps_ns);
  }

  std::vector<Nic> nic(n);
  std::vector<NicCounters> nics(n);
  EventQueue q;
  LeafSpineSwitches sw(cfg, q, res);
  std::mt19937_64 loss_rng(b.seed ^ 0x6C6F7373ull);  // apart from the switches' marking draws
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  auto lost = [&] {
    if (b.loss <= 0 || uni(loss_rng) >= b.loss) return false;
    ++res.transport.losses;
    return true;
  };
  // The frame's psn is its id in its pair's QpFlow; the pair names the destination and the spine.
  auto route = [&pairs](const Pkt& p) { return std::pair{pairs[p.flow].dst, pairs[p.flow].spine}; };

  auto wake = [&](std::uint32_t r, std::uint64_t now) {
    Nic& h = nic[r];
    if (h.sending) return;
    if (h.paused) {
      h.blocked = true;  // XON sends
      return;
    }
    h.sending = true;
    q.push(now, EventType::kSenderSend, r);
  };
  // An event at the pair's next deadline unless one at or before it is pending; a deadline already
  // past fires now, never back in time.
  auto arm_timer = [&](std::uint32_t pi, std::uint64_t now) {
    Pair& p = pairs[pi];
    const std::uint64_t d = std::max(p.qp->next_timer_ns(), now);
    if (d >= p.timer_at) return;  // UINT64_MAX: nothing due
    p.timer_at = d;
    q.push(d, EventType::kAckTimer, pi);
  };
  // Transfer t's bytes posted on its pair, once its `after` has been placed.
  auto post = [&](std::uint32_t t, std::uint64_t now) {
    const std::int32_t after = tr[t].after;
    res.dependency_violations += after >= 0 && finish[static_cast<std::size_t>(after)] > now;
    Pair& p = pairs[pair_of[t]];
    p.posted.emplace_back(t, p.qp->post_message(tr[t].bytes));
    if (!p.in_active) {
      p.in_active = true;
      nic[p.src].active.push_back(pair_of[t]);
    }
    wake(p.src, now);
  };
  // The responder's in-order progress on pair `pi`: transfers whose last byte it has placed
  // finish, and their dependents are posted (droce-coll's next step at this rank).
  std::uint64_t last_finish = 0;
  auto placed = [&](std::uint32_t pi, std::uint64_t now) {
    Pair& p = pairs[pi];
    while (!p.posted.empty() && p.qp->in_order_packets() >= p.posted.front().second) {
      const std::uint32_t t = p.posted.front().first;
      p.posted.pop_front();
      finish[t] = now;
      last_finish = now;
      res.delivered_bytes += tr[t].bytes;
      for (std::int32_t j = first_dep[t]; j >= 0; j = next_dep[static_cast<std::size_t>(j)])
        post(static_cast<std::uint32_t>(j), now);
    }
  };

  for (std::uint32_t i = 0; i < tr.size(); ++i)
    if (tr[i].after < 0) post(i, (tr[i].src % 47) * 7);  // as the model's start, within a third of a us

  std::vector<std::uint64_t> answers;
  while (!q.empty()) {
    const Event ev = q.pop();
    const std::uint64_t now = ev.time_ns;
    if (now > end_ns) break;
    switch (ev.type) {
      case EventType::kSenderSend: {
        Nic& h = nic[ev.a];
        if (h.paused) {
          h.sending = false;
          h.blocked = true;  // XON sends again
          break;
        }
        // Round-robin over the QPs with work: the first whose pacer allows it and whose window is
        // open sends one frame; a pair with nothing left leaves the list.
        std::uint64_t paced_until = UINT64_MAX;
        bool sent = false;
        for (std::size_t k = h.active.size(); k-- > 0 && !sent;) {
          const std::uint32_t pi = h.active.front();
          h.active.pop_front();
          Pair& p = pairs[pi];
          if (p.qp->idle() || p.qp->failed()) {
            p.in_active = false;
            continue;
          }
          h.active.push_back(pi);
          if (b.cc && cc[pi].pacer.next_send_ticks() > now) {
            paced_until = std::min(paced_until, cc[pi].pacer.next_send_ticks());
            continue;
          }
          const auto o = p.qp->next_data(now);
          if (!o) continue;  // window closed: an answer or its timer reopens it
          sent = true;
          arm_timer(pi, now);
          if (b.cc) {
            cc[pi].pacer.on_send(o->wire_bytes, cc[pi].rp.rate_bps(), now);
            cc[pi].rp.on_bytes_sent(o->wire_bytes, now);
          }
          const std::uint64_t on_link = h.link.ns(o->wire_bytes, host_bps);
          ++nics[ev.a].frames;
          nics[ev.a].bytes += o->wire_bytes;
          ++res.packets;
          sw.send_from_host(ev.a, Pkt{pi, false, 0, o->id, o->wire_bytes}, now + on_link + delay_ns);
          q.push(now + on_link, EventType::kSenderSend, ev.a);
        }
        if (sent) break;
        if (paced_until != UINT64_MAX)
          q.push(paced_until, EventType::kSenderSend, ev.a);
        else
          h.sending = false;  // an answer, a timer or a new transfer wakes it
        break;
      }
      case EventType::kSwitchArrive:  // at the end of a host-leaf, leaf-spine or spine-leaf link
        if (!lost()) sw.on_arrive(ev, now, route);
        break;
      case EventType::kPortTxDone:
        sw.on_tx_done(ev, now);
        break;
      case EventType::kReceiverArrive: {
        if (lost()) break;  // the leaf-host link
        const auto pi = static_cast<std::uint32_t>(ev.d >> 32);
        Pair& p = pairs[pi];
        answers.clear();
        (void)p.qp->on_data(ev.c, now, answers);
        for (const std::uint64_t id : answers) q.push(now + p.ack_delay_ns, EventType::kAckArrive, pi, 0, id);
        if (b.cc && cc[pi].np.on_packet(ev.b != 0, now)) {
          ++res.transport.cnps;
          q.push(now + p.ack_delay_ns, EventType::kCnpArrive, pi);
        }
        placed(pi, now);
        break;
      }
      case EventType::kAckArrive:
      case EventType::kAckTimer: {
        Pair& p = pairs[ev.a];
        if (ev.type == EventType::kAckArrive) {
          p.qp->on_answer(ev.c, now);
        } else {
          if (now >= p.timer_at) p.timer_at = UINT64_MAX;  // the earliest pending event is this one
          p.qp->on_timer(now);
        }
        arm_timer(ev.a, now);
        wake(p.src, now);
        break;
      }
      case EventType::kCnpArrive:
        cc[ev.a].rp.on_cnp(now);
        break;
      case EventType::kHostPause: {
        Nic& h = nic[ev.a];
        h.paused = ev.b != 0;
        if (!h.paused && h.blocked) {
          h.blocked = false;
          wake(ev.a, now);
        }
        break;
      }
      case EventType::kPortPause:
        sw.on_pause(ev, now);
        break;
      case EventType::kSample:
        break;  // no series in this model
    }
  }
  res.events = q.processed();
  res.complete = res.delivered_bytes == res.expected_bytes;
  res.time_us = static_cast<double>(res.complete ? last_finish : end_ns) / 1e3;
  if (res.complete && res.time_us > 0) {
    res.algbw_gbytes = coll::algbw_gbytes(res.plan, res.time_us);
    res.busbw_gbytes = res.algbw_gbytes * res.plan.busbw_factor;
  }
  for (const Pair& p : pairs) {
    const rc::RcCounters& t = p.qp->requester();
    const rc::RcCounters& x = p.qp->responder();
    LeafSpineResult::Transport& o = res.transport;
    o.failed_qps += p.qp->failed();
    o.retransmitted += t.retransmitted_packets;
    o.timeouts += t.local_ack_timeout_err;
    o.naks += t.naks_received;
    o.tail_probes += t.tail_probes;
    o.duplicates += x.duplicate_request;
    o.out_of_sequence += x.out_of_sequence;
    o.placed_bytes += p.qp->stats().delivered;
    o.transport_drops += p.qp->stats().ring_overruns + p.qp->stats().parse_drops;
  }
  summarise_leaf_spine(cfg, tr, finish, sw, nics, res);
  return res;
}

}  // namespace droce::sim
