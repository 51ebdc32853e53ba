// Leaf-spine simulation: ranks' NICs send their ready transfers in order at line rate, leaves
// route down to a host or up to the spine ECMP picks, spines route down to the destination's
// leaf; every switch port is switch_port.h's, as in run_fabric. A transfer whose `after` has not
// delivered its last byte waits at its sender (droce-coll's step dependencies).
#include "apps/droce-sim/leaf_spine.h"

#include <droce/protocols/wire/build.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "apps/droce-sim/event_queue.h"
#include "apps/droce-sim/leaf_spine_switches.h"
#include "apps/droce-sim/serial_clock.h"

namespace droce::sim {

namespace {

constexpr std::uint32_t kNone = UINT32_MAX;
constexpr std::uint16_t kRoceUdpPort = 4791;

struct Nic {
  std::deque<std::uint32_t> ready;  // transfers whose dependency has delivered, in that order
  std::uint32_t cur = kNone;        // the transfer being sent
  std::uint32_t spine = 0;          // ECMP's pick for it
  std::uint64_t left = 0;           // its bytes not yet sent
  bool sending = false;             // a kSenderSend is pending
  bool paused = false, blocked = false;
  SerialClock link;
  std::uint64_t frames = 0, bytes = 0;
};

}  // namespace

Status LeafSpineConfig::validate() const {
  // run_fabric's topologies refuse --loss (they have no recovery there); here droce's transport
  // recovers it, so the fabric's checks run without it and the transport's below.
  FabricConfig lossless = fabric;
  lossless.base.loss = 0;
  if (Status s = lossless.validate(); !s.ok()) return s;
  const RecoveryConfig& rc = fabric.base.recovery;
  if (!rc.rcqp && rc.mode != Recovery::kNone)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--recovery: needs --transport rcqp with --topology leafspine (the model has no PSNs)");
  if (!rc.rcqp && fabric.base.loss > 0)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--loss: needs --transport rcqp with --topology leafspine (the model does not recover)");
  if (!rc.rcqp && fabric.base.cc)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--cc dcqcn: needs --transport rcqp with --topology leafspine (the model sends at line rate)");
  if (rc.flow_bytes != 0)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--flow-bytes: not with --topology leafspine (the pattern and --size set each transfer)");
  if (Status s = coll.validate(); !s.ok()) return s;
  if (leaves < 1 || leaves > 4096) return Status::fail(StatusCode::kInvalidArgument, "--leaves: must be 1..4096");
  if (spines < 1 || spines > 1024) return Status::fail(StatusCode::kInvalidArgument, "--spines: must be 1..1024");
  if (coll.ranks % leaves != 0)
    return Status::error(
        StatusCode::kInvalidArgument,
        "--ranks: " + std::to_string(coll.ranks) + " ranks do not divide over " + std::to_string(leaves) + " leaves");
  if (hosts_per_leaf() + spines > 65'535)
    return Status::fail(StatusCode::kInvalidArgument, "--ranks: more than 65535 ports on a leaf");
  if (!(uplink_gbps >= 0 && uplink_gbps <= 1e4))
    return Status::fail(StatusCode::kInvalidArgument, "--uplink-gbps: must be > 0");
  if (fabric.base.packet_bytes <= kRoceOverheadBytes)
    return Status::fail(StatusCode::kInvalidArgument, "--packet-bytes: must exceed the 62 header bytes");
  return {};
}

std::uint32_t spine_of(const LeafSpineConfig& cfg, std::uint32_t src, std::uint32_t dst) {
  // Rank r's QP towards a peer sends from the UDP port droce derives from the QPN pair
  // (roce_udp_src_port, as RcEndpoint does) to 4791.
  return spine_for_port(cfg, src, dst, wire::roce_udp_src_port(qpn_towards(src, dst), qpn_towards(dst, src)));
}

std::uint32_t spine_for_port(const LeafSpineConfig& cfg, std::uint32_t src, std::uint32_t dst,
                             std::uint16_t udp_src_port) {
  // Rank r is 10.0.0.1 + r.
  auto ip = [](std::uint8_t* a, std::uint32_t rank) {
    const std::uint32_t v = (10u << 24) + 1 + rank;
    a[0] = static_cast<std::uint8_t>(v >> 24);
    a[1] = static_cast<std::uint8_t>(v >> 16);
    a[2] = static_cast<std::uint8_t>(v >> 8);
    a[3] = static_cast<std::uint8_t>(v);
  };
  engine::FlowKey k;
  ip(k.src, src);
  ip(k.dst, dst);
  k.proto = 17;
  k.src_port = udp_src_port;
  k.dst_port = kRoceUdpPort;
  return engine::ecmp_pick(k, cfg.ecmp, cfg.spines);
}

LeafSpineResult run_leaf_spine(const LeafSpineConfig& cfg) {
  if (cfg.fabric.base.recovery.rcqp) return run_leaf_spine_rcqp(cfg);
  const SimConfig& b = cfg.fabric.base;
  const std::uint32_t n = cfg.coll.ranks;
  const double host_bps = b.link_gbps * 1e9;
  const auto end_ns = static_cast<std::uint64_t>(b.duration_ms * 1e6);
  const auto delay_ns = static_cast<std::uint64_t>(b.link_delay_us * 1e3);
  const std::uint32_t payload = b.packet_bytes - kRoceOverheadBytes;

  LeafSpineResult res;
  CollectivePlan plan = plan_collective(cfg.coll);
  res.plan = plan.plan;
  const std::vector<SimTransfer>& tr = plan.transfers;
  res.transfers = tr.size();
  for (const SimTransfer& t : tr) res.expected_bytes += t.bytes;

  // Dependents of each transfer as a list through next_dep (ascending: the schedule's order).
  std::vector<std::int32_t> first_dep(tr.size(), -1), next_dep(tr.size(), -1);
  for (std::size_t i = tr.size(); i-- > 0;)
    if (tr[i].after >= 0) {
      next_dep[i] = first_dep[static_cast<std::size_t>(tr[i].after)];
      first_dep[static_cast<std::size_t>(tr[i].after)] = static_cast<std::int32_t>(i);
    }
  std::vector<std::uint64_t> delivered(tr.size(), 0), finish(tr.size(), UINT64_MAX);

  std::vector<Nic> nic(n);
  EventQueue q;
  LeafSpineSwitches sw(cfg, q, res);

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
  for (std::uint32_t i = 0; i < tr.size(); ++i)
    if (tr[i].after < 0) nic[tr[i].src].ready.push_back(i);
  for (std::uint32_t r = 0; r < n; ++r)
    // Not in lockstep to the nanosecond (as run_fabric's senders), but within a third of a
    // microsecond of each other however many ranks: r x 7 ns would start rank 4095 28 us late.
    if (!nic[r].ready.empty()) wake(r, (r % 47) * 7);

  // The model's packet: flow = its transfer, psn = the spine ECMP chose for it.
  auto route = [&tr](const Pkt& p) {
    return std::pair<std::uint32_t, std::uint32_t>{tr[p.flow].dst, static_cast<std::uint32_t>(p.psn)};
  };

  std::uint64_t last_finish = 0;
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
        if (h.cur == kNone) {
          if (h.ready.empty()) {
            h.sending = false;
            break;
          }
          h.cur = h.ready.front();
          h.ready.pop_front();
          h.left = tr[h.cur].bytes;
          // The step dependency, checked where it must hold: its `after` delivered before it leaves.
          const std::int32_t after = tr[h.cur].after;
          res.dependency_violations += after >= 0 && finish[static_cast<std::size_t>(after)] > now;
          h.spine = spine_of(cfg, ev.a, tr[h.cur].dst);
        }
        const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(h.left, payload));
        const std::uint32_t wire_bytes = chunk + kRoceOverheadBytes;
        const std::uint64_t on_link = h.link.ns(wire_bytes, host_bps);
        ++h.frames;
        h.bytes += wire_bytes;
        ++res.packets;
        sw.send_from_host(ev.a, Pkt{h.cur, false, 0, h.spine, wire_bytes}, now + on_link + delay_ns);
        h.left -= chunk;
        if (h.left == 0) h.cur = kNone;
        q.push(now + on_link, EventType::kSenderSend, ev.a);
        break;
      }
      case EventType::kSwitchArrive:
        sw.on_arrive(ev, now, route);
        break;
      case EventType::kPortTxDone:
        sw.on_tx_done(ev, now);
        break;
      case EventType::kReceiverArrive: {
        const auto t = static_cast<std::uint32_t>(ev.d >> 32);
        const std::uint64_t got = (ev.d & 0xFFFFFFFF) - kRoceOverheadBytes;
        delivered[t] += got;
        res.delivered_bytes += got;
        if (delivered[t] != tr[t].bytes) break;
        finish[t] = now;
        last_finish = now;
        for (std::int32_t j = first_dep[t]; j >= 0; j = next_dep[static_cast<std::size_t>(j)]) {
          nic[tr[static_cast<std::size_t>(j)].src].ready.push_back(static_cast<std::uint32_t>(j));
          wake(tr[static_cast<std::size_t>(j)].src, now);
        }
        break;
      }
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
      case EventType::kCnpArrive:
      case EventType::kSample:
      case EventType::kAckArrive:
      case EventType::kAckTimer:
        break;  // no congestion control, no acknowledgements, no series in this model
    }
  }
  res.events = q.processed();
  res.complete = res.delivered_bytes == res.expected_bytes;
  res.time_us = static_cast<double>(res.complete ? last_finish : end_ns) / 1e3;
  if (res.complete && res.time_us > 0) {
    res.algbw_gbytes = coll::algbw_gbytes(res.plan, res.time_us);
    res.busbw_gbytes = res.algbw_gbytes * res.plan.busbw_factor;
  }

  std::vector<NicCounters> nics(n);
  for (std::uint32_t r = 0; r < n; ++r) nics[r] = NicCounters{nic[r].frames, nic[r].bytes};
  summarise_leaf_spine(cfg, tr, finish, sw, nics, res);
  return res;
}

}  // namespace droce::sim
