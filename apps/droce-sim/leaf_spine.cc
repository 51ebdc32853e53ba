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
#include "apps/droce-sim/serial_clock.h"
#include "apps/droce-sim/switch_port.h"

namespace droce::sim {

namespace {

constexpr std::uint32_t kNone = UINT32_MAX;
constexpr std::uint16_t kRoceUdpPort = 4791;
// The QPN of rank r's QP towards peer p: each rank is its own endpoint with one QP per peer, so
// the pair (0x100 + dst, 0x100 + src) differs for every ordered pair of ranks.
constexpr std::uint32_t kQpnBase = 0x100;

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

std::uint32_t percentile_index(std::size_t n, double p) {
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
  return static_cast<std::uint32_t>(i == 0 ? 0 : i - 1);
}

}  // namespace

Status LeafSpineConfig::validate() const {
  if (Status s = fabric.validate(); !s.ok()) return s;
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
  // Rank r is 10.0.0.1 + r; its QP towards a peer sends from the UDP port droce derives from the
  // QPN pair (roce_udp_src_port, as RcEndpoint does) to 4791.
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
  k.src_port = wire::roce_udp_src_port(kQpnBase + dst, kQpnBase + src);
  k.dst_port = kRoceUdpPort;
  return engine::ecmp_pick(k, cfg.ecmp, cfg.spines);
}

LeafSpineResult run_leaf_spine(const LeafSpineConfig& cfg) {
  const SimConfig& b = cfg.fabric.base;
  const FabricConfig& fc = cfg.fabric;
  const std::uint32_t L = cfg.leaves, S = cfg.spines, H = cfg.hosts_per_leaf(), n = cfg.coll.ranks;
  const double host_bps = b.link_gbps * 1e9, up_bps = cfg.uplink_rate_gbps() * 1e9;
  const auto end_ns = static_cast<std::uint64_t>(b.duration_ms * 1e6);
  const auto delay_ns = static_cast<std::uint64_t>(b.link_delay_us * 1e3);
  const std::uint32_t payload = b.packet_bytes - kRoceOverheadBytes;
  std::mt19937_64 rng(b.seed);
  const SwitchRules rules{b.buffer_bytes, fc.pfc, fc.xoff_bytes, fc.xon_bytes, {b.kmin_bytes, b.kmax_bytes, b.pmax}};

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

  // Switches 0..L-1 are the leaves (ports 0..H-1 to hosts, H..H+S-1 to spines), L..L+S-1 the
  // spines (port l to leaf l).
  std::vector<std::vector<SwPort>> sw(L + S);
  for (std::uint32_t l = 0; l < L; ++l) {
    sw[l].resize(H + S);
    for (std::uint32_t p = 0; p < H + S; ++p) sw[l][p].bps = p < H ? host_bps : up_bps;
  }
  for (std::uint32_t s = 0; s < S; ++s) {
    sw[L + s].resize(L);
    for (auto& p : sw[L + s]) p.bps = up_bps;
  }
  std::vector<Nic> nic(n);
  EventQueue q;

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

  auto start_tx = [&](std::uint32_t s, std::uint32_t p, std::uint64_t now) {
    if (std::uint64_t done = 0; sim::start_tx(sw[s][p], now, done)) q.push(done, EventType::kPortTxDone, s, p);
  };
  // PFC from ingress (s, in) to its upstream neighbour, one link delay away.
  auto pfc_at = [&](std::uint32_t s, std::uint32_t in, std::uint64_t now) {
    const PfcSignal sig = pfc_check(rules, sw[s][in]);
    if (sig == PfcSignal::kNone) return;
    const std::uint32_t on = sig == PfcSignal::kXoff ? 1 : 0;
    res.pauses += on;
    if (s < L && in < H)
      q.push(now + delay_ns, EventType::kHostPause, s * H + in, on);
    else if (s < L)
      q.push(now + delay_ns, EventType::kPortPause, L + (in - H), s, on);
    else
      q.push(now + delay_ns, EventType::kPortPause, in, H + (s - L), on);
  };
  // A packet of transfer t arriving at switch s on port in; psn carries the spine ECMP chose.
  auto arrive = [&](std::uint32_t s, std::uint32_t in, Pkt p, std::uint64_t now) {
    const std::uint32_t dst = tr[p.flow].dst;
    std::uint32_t out;
    if (s >= L)
      out = dst / H;
    else
      out = dst / H == s ? dst % H : H + static_cast<std::uint32_t>(p.psn);
    bool marked = false;
    if (!admit(rules, sw[s][in], sw[s][out], static_cast<std::uint16_t>(in), p, rng, marked)) {
      ++res.drops;
      return;
    }
    res.ecn_marks += marked;
    pfc_at(s, in, now);
    start_tx(s, out, now);
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
        q.push(now + on_link + delay_ns, EventType::kSwitchArrive, ev.a / H, ev.a % H, h.spine,
               (std::uint64_t{h.cur} << 32) | wire_bytes);
        h.left -= chunk;
        if (h.left == 0) h.cur = kNone;
        q.push(now + on_link, EventType::kSenderSend, ev.a);
        break;
      }
      case EventType::kSwitchArrive: {
        // a: switch, b: ingress port, c: the spine chosen | CE in bit 32, d: transfer << 32 | bytes.
        const Pkt p{static_cast<std::uint32_t>(ev.d >> 32), (ev.c >> 32) != 0, 0, ev.c & 0xFFFFFFFF,
                    static_cast<std::uint32_t>(ev.d & 0xFFFFFFFF)};
        arrive(ev.a, ev.b, p, now);
        break;
      }
      case EventType::kPortTxDone: {
        SwPort& e = sw[ev.a][ev.b];
        const Pkt p = depart(e, sw[ev.a][e.q.front().in]);
        pfc_at(ev.a, p.in, now);
        const std::uint64_t c = p.psn | (p.ce ? std::uint64_t{1} << 32 : 0);
        const std::uint64_t d = (std::uint64_t{p.flow} << 32) | p.bytes;
        if (ev.a >= L)  // spine -> leaf ev.b
          q.push(now + delay_ns, EventType::kSwitchArrive, ev.b, H + (ev.a - L), c, d);
        else if (ev.b >= H)  // leaf -> spine
          q.push(now + delay_ns, EventType::kSwitchArrive, L + (ev.b - H), ev.a, c, d);
        else
          q.push(now + delay_ns, EventType::kReceiverArrive, ev.a * H + ev.b, 0, p.flow, p.bytes);
        start_tx(ev.a, ev.b, now);
        break;
      }
      case EventType::kReceiverArrive: {
        const auto t = static_cast<std::uint32_t>(ev.c);
        const std::uint64_t got = ev.d - kRoceOverheadBytes;
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
      case EventType::kPortPause: {
        SwPort& e = sw[ev.a][ev.b];
        e.paused = ev.c != 0;
        if (!e.paused) start_tx(ev.a, ev.b, now);
        break;
      }
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

  // Per step (the schedule lists steps in order): finish times across its transfers.
  double prev_max = 0, worst = -1;
  for (std::size_t lo = 0; lo < tr.size();) {
    std::size_t hi = lo;
    while (hi < tr.size() && tr[hi].step == tr[lo].step) ++hi;
    auto first = finish.begin() + static_cast<std::ptrdiff_t>(lo);
    auto last = std::partition(first, finish.begin() + static_cast<std::ptrdiff_t>(hi),
                               [](std::uint64_t f) { return f != UINT64_MAX; });
    StepStats st;
    st.step = tr[lo].step;
    st.transfers = static_cast<std::uint32_t>(last - first);
    if (st.transfers != 0) {
      auto at = [&](double p) {
        auto it = first + percentile_index(st.transfers, p);
        std::nth_element(first, it, last);
        return static_cast<double>(*it) / 1e3;
      };
      st.p50_us = at(0.50);
      st.p99_us = at(0.99);
      st.max_us = at(1.0);
      st.span_us = st.max_us - prev_max;
      prev_max = st.max_us;
    }
    if (st.span_us > worst) {
      worst = st.span_us;
      res.slowest_step = st.step;
    }
    res.steps.push_back(st);
    lo = hi;
  }

  // Links, named as engine/lab names them.
  for (std::uint32_t r = 0; r < n; ++r) {
    LinkStats ls;
    ls.name = "ep" + std::to_string(r) + "-leaf" + std::to_string(r / H);
    const SwPort& down = sw[r / H][r % H];
    ls.up = LinkDir{nic[r].frames, nic[r].bytes, 0, 0, 0, down.pauses};
    ls.down = LinkDir{down.tx_frames, down.tx_bytes, down.max_bytes, down.drops, down.marks, 0};
    res.links.push_back(ls);
  }
  for (std::uint32_t l = 0; l < L; ++l)
    for (std::uint32_t s = 0; s < S; ++s) {
      const SwPort& up = sw[l][H + s];
      const SwPort& down = sw[L + s][l];
      LinkStats ls;
      ls.name = "leaf" + std::to_string(l) + "-spine" + std::to_string(s);
      ls.up = LinkDir{up.tx_frames, up.tx_bytes, up.max_bytes, up.drops, up.marks, down.pauses};
      ls.down = LinkDir{down.tx_frames, down.tx_bytes, down.max_bytes, down.drops, down.marks, up.pauses};
      res.links.push_back(ls);
    }

  // Distinct flows between leaves, by the spine ECMP gives them.
  res.flows_per_spine.assign(S, 0);
  std::vector<std::vector<std::uint32_t>> peers(n);
  for (const SimTransfer& t : tr)
    if (t.src / H != t.dst / H && (peers[t.src].empty() || peers[t.src].back() != t.dst)) peers[t.src].push_back(t.dst);
  for (std::uint32_t r = 0; r < n; ++r) {
    std::sort(peers[r].begin(), peers[r].end());
    peers[r].erase(std::unique(peers[r].begin(), peers[r].end()), peers[r].end());
    for (std::uint32_t d : peers[r]) ++res.flows_per_spine[spine_of(cfg, r, d)];
  }
  return res;
}

}  // namespace droce::sim
