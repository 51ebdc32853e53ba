// LabSwitch: forwarding (rte_lpm routes, rte_hash MAC learning), RED/ECN egress queues, shaping,
// delay and PFC. One thread polls it; nothing is shared.
#include "engine/lab/lab_switch.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_jhash.h>
#include <rte_lpm.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "protocols/wire/l2l3_headers.h"
#include "protocols/wire/pfc.h"

namespace droce::engine {

namespace {

// Where the L3 header starts and the frame's priority: the VLAN PCP when tagged, else DSCP / 8
// (DSCP 26, the usual RoCE class, is priority 3).
struct Classified {
  std::uint32_t l3 = 0;
  std::uint16_t ether_type = 0;
  std::uint8_t prio = 0;
};

Classified classify(const std::uint8_t* f, std::uint32_t len) {
  Classified c;
  if (len < 14) return c;
  c.ether_type = static_cast<std::uint16_t>((f[12] << 8) | f[13]);
  c.l3 = 14;
  bool tagged = false;
  if (c.ether_type == 0x8100 && len >= 18) {
    c.prio = static_cast<std::uint8_t>(f[14] >> 5);
    c.ether_type = static_cast<std::uint16_t>((f[16] << 8) | f[17]);
    c.l3 = 18;
    tagged = true;
  }
  if (!tagged && c.ether_type == 0x0800 && len >= c.l3 + 20) c.prio = static_cast<std::uint8_t>(f[c.l3 + 1] >> 5);
  if (!tagged && c.ether_type == 0x86DD && len >= c.l3 + 40)
    c.prio = static_cast<std::uint8_t>(((f[c.l3] & 0x0F) << 4 | f[c.l3 + 1] >> 4) >> 5);
  return c;
}

std::atomic<unsigned> g_instance{0};

}  // namespace

Status LabSwitchConfig::validate() const {
  if (port_count() < 2) return Status::fail(StatusCode::kInvalidArgument, "at least two ports are needed");
  if (port_count() > 64) return Status::fail(StatusCode::kInvalidArgument, "at most 64 ports");
  for (double g : egress_gbps)
    if (!(g >= 0 && g <= 1000))
      return Status::fail(StatusCode::kInvalidArgument, "--egress-gbps: must be in [0, 1000]");
  for (const auto& r : routes) {
    if (r.out >= port_count())
      return Status::error(StatusCode::kInvalidArgument,
                           "--route: port index " + std::to_string(r.out) + " does not exist");
    if (r.depth == 0 || r.depth > 32)
      return Status::fail(StatusCode::kInvalidArgument, "--route: prefix length must be 1..32");
  }
  if (kmin_bytes > kmax_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--kmin-bytes: must not exceed --kmax-bytes");
  if (!(pmax >= 0 && pmax <= 1)) return Status::fail(StatusCode::kInvalidArgument, "--pmax: must be in [0, 1]");
  if (buffer_bytes < 2048)
    return Status::fail(StatusCode::kInvalidArgument, "--buffer-bytes: must hold at least one jumbo RoCE frame (2048)");
  if (!(delay_us >= 0 && delay_us <= 1e6))
    return Status::fail(StatusCode::kInvalidArgument, "--delay-us: must be in [0, 1e6]");
  if (!(shaper_burst_us >= 0 && shaper_burst_us <= 1e6))
    return Status::fail(StatusCode::kInvalidArgument, "--shaper-burst-us: must be in [0, 1e6]");
  if (pfc_priority > 7) return Status::fail(StatusCode::kInvalidArgument, "--pfc-priority: must be 0..7");
  if (pfc && pfc_xon_bytes >= pfc_xoff_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--pfc-xon-bytes: must be below --pfc-xoff-bytes");
  if (pfc && pfc_xoff_bytes >= buffer_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--pfc-xoff-bytes: must be below --buffer-bytes (headroom)");
  if (pfc && pfc_pause_quanta == 0) return Status::fail(StatusCode::kInvalidArgument, "--pfc-quanta: must be > 0");
  if (!(link_gbps_for_pfc > 0)) return Status::fail(StatusCode::kInvalidArgument, "--link-gbps: must be > 0");
  if (pool == nullptr) return Status::fail(StatusCode::kInvalidArgument, "no mbuf pool");
  return {};
}

std::unique_ptr<LabSwitch> LabSwitch::create(const LabSwitchConfig& cfg, Status& err) {
  if (Status s = cfg.validate(); !s.ok()) {
    err = s.context("droce-switch: ");
    return nullptr;
  }
  std::unique_ptr<LabSwitch> s(new LabSwitch());
  s->cfg_ = cfg;
  s->tsc_hz_ = rte_get_tsc_hz();
  s->delay_tsc_ = static_cast<std::uint64_t>(cfg.delay_us * 1e-6 * static_cast<double>(s->tsc_hz_));
  s->shaper_credit_tsc_ = static_cast<std::uint64_t>(cfg.shaper_burst_us * 1e-6 * static_cast<double>(s->tsc_hz_));
  s->rng_.seed(cfg.seed);
  s->red_ = dcqcn::RedProfile{cfg.kmin_bytes, cfg.kmax_bytes, cfg.pmax};
  const unsigned id = g_instance.fetch_add(1);
  s->q_.resize(cfg.port_count());
  // Frames of at least 64 bytes: the queue can never need more slots than this.
  const std::size_t slots = std::min<std::size_t>(cfg.buffer_bytes / 60 + 1, 1u << 20);
  for (std::size_t i = 0; i < cfg.port_count(); ++i) {
    PortState& p = s->q_[i];
    p.io = cfg.frame_ports.empty() ? FramePort::ethdev(cfg.ports[i]) : cfg.frame_ports[i];
    const double g = i < cfg.egress_gbps.size() ? cfg.egress_gbps[i] : 0;
    p.tsc_per_byte = g > 0 ? 8.0 * static_cast<double>(s->tsc_hz_) / (g * 1e9) : 0;
    p.ring.resize(slots);
  }
  if (!cfg.routes.empty()) {
    rte_lpm_config lc{};
    lc.max_rules = 1024;
    lc.number_tbl8s = 256;
    const std::string name = "droce_sw_lpm" + std::to_string(id);
    s->lpm_ = rte_lpm_create(name.c_str(), SOCKET_ID_ANY, &lc);
    if (s->lpm_ == nullptr) {
      err = Status::error(StatusCode::kNoMemory,
                          "droce-switch: rte_lpm_create failed: " + std::string(rte_strerror(rte_errno)));
      return nullptr;
    }
    for (const auto& r : cfg.routes)
      if (rte_lpm_add(s->lpm_, r.prefix, r.depth, r.out) != 0) {
        err = Status::error(StatusCode::kError, "droce-switch: cannot add route");
        return nullptr;
      }
  }
  const std::string hname = "droce_sw_mac" + std::to_string(id);
  rte_hash_parameters hp{};
  hp.name = hname.c_str();
  hp.entries = 4096;
  hp.key_len = 6;
  hp.hash_func = rte_jhash;
  hp.socket_id = SOCKET_ID_ANY;
  s->macs_ = rte_hash_create(&hp);
  if (s->macs_ == nullptr) {
    err = Status::error(StatusCode::kNoMemory,
                        "droce-switch: rte_hash_create failed: " + std::string(rte_strerror(rte_errno)));
    return nullptr;
  }
  s->mac_port_.assign(hp.entries + 64, 0);
  err = Status();
  return s;
}

LabSwitch::~LabSwitch() {
  finish();
  if (lpm_ != nullptr) rte_lpm_free(lpm_);
  if (macs_ != nullptr) rte_hash_free(macs_);
}

void LabSwitch::finish() {
  for (auto& p : q_) {
    for (; p.count != 0; --p.count, p.head = static_cast<std::uint32_t>((p.head + 1) % p.ring.size()))
      rte_pktmbuf_free(p.ring[p.head].m);
    p.c.queue_bytes = 0;
    p.c.queue_frames = 0;
  }
}

// rte_jhash reads the key in 32-bit words: a MAC inside a frame (offset 0 or 6) is copied to an
// aligned key first.
struct MacKey {
  alignas(8) std::uint8_t b[8] = {};
  explicit MacKey(const std::uint8_t* mac) { std::memcpy(b, mac, 6); }
};

bool LabSwitch::learn_lookup(const std::uint8_t* dst, std::uint16_t& out) const {
  const MacKey key(dst);
  const int pos = rte_hash_lookup(macs_, key.b);
  if (pos < 0 || static_cast<std::size_t>(pos) >= mac_port_.size()) return false;
  out = mac_port_[static_cast<std::size_t>(pos)];
  return true;
}

void LabSwitch::learn(const std::uint8_t* src, std::uint16_t in) {
  if (src[0] & 1) return;  // a multicast source is malformed: never learned
  const MacKey key(src);
  const int pos = rte_hash_add_key(macs_, key.b);
  if (pos >= 0 && static_cast<std::size_t>(pos) < mac_port_.size()) mac_port_[static_cast<std::size_t>(pos)] = in;
}

void LabSwitch::send_pfc(PortState& p, std::uint16_t quanta) {
  rte_mbuf* m = rte_pktmbuf_alloc(cfg_.pool);
  if (m == nullptr) return;
  wire::PfcFrame f;
  f.class_enable = static_cast<std::uint16_t>(1u << cfg_.pfc_priority);
  f.quanta[cfg_.pfc_priority] = quanta;
  auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, wire::kPfcFrameBytes));
  if (d == nullptr || wire::build_pfc(switch_mac_, f, d, wire::kPfcFrameBytes) == 0) {
    rte_pktmbuf_free(m);
    return;
  }
  // Control frames bypass the egress queue: a pause stuck behind the data it is meant to stop
  // would come too late.
  if (p.io.tx_burst(&m, 1) != 1) {
    rte_pktmbuf_free(m);
    return;
  }
  ++(quanta != 0 ? p.c.pfc_pause_sent : p.c.pfc_resume_sent);
}

void LabSwitch::pfc_check(std::uint16_t in, std::uint64_t now_tsc) {
  if (!cfg_.pfc) return;
  PortState& p = q_[in];
  if (p.c.ingress_bytes > cfg_.pfc_xoff_bytes) {
    if (!p.xoff || now_tsc >= p.refresh_tsc) {
      send_pfc(p, cfg_.pfc_pause_quanta);
      p.xoff = true;
      // Refresh at half the pause so the upstream never resumes while we are still full.
      const double pause_s = wire::pfc_quanta_to_ns(cfg_.pfc_pause_quanta, cfg_.link_gbps_for_pfc * 1e9) * 1e-9;
      p.refresh_tsc = now_tsc + static_cast<std::uint64_t>(pause_s * static_cast<double>(tsc_hz_) / 2);
    }
  } else if (p.xoff && p.c.ingress_bytes <= cfg_.pfc_xon_bytes) {
    send_pfc(p, 0);
    p.xoff = false;
  }
}

void LabSwitch::on_pfc(PortState& p, const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_tsc) {
  wire::PfcFrame f;
  if (!wire::parse_pfc(frame, len, f) || (f.class_enable & (1u << cfg_.pfc_priority)) == 0) return;
  const std::uint16_t quanta = f.quanta[cfg_.pfc_priority];
  auto end_pause = [&](std::uint64_t at) {
    if (p.paused && at > p.paused_since_tsc)
      p.c.pfc_paused_ns +=
          static_cast<std::uint64_t>(static_cast<double>(at - p.paused_since_tsc) * 1e9 / static_cast<double>(tsc_hz_));
    p.paused = false;
  };
  if (quanta == 0) {
    end_pause(std::min(now_tsc, p.paused_until_tsc));
    return;
  }
  ++p.c.pfc_pause_received;
  if (!p.paused) {
    p.paused = true;
    p.paused_since_tsc = now_tsc;
  }
  const double ns = static_cast<double>(wire::pfc_quanta_to_ns(quanta, cfg_.link_gbps_for_pfc * 1e9));
  p.paused_until_tsc = now_tsc + static_cast<std::uint64_t>(ns * 1e-9 * static_cast<double>(tsc_hz_));
}

void LabSwitch::released(const Item& it) {
  PortState& in = q_[it.ingress];
  if (cfg_.pfc && it.prio == cfg_.pfc_priority) in.c.ingress_bytes -= it.bytes;
}

void LabSwitch::enqueue(std::uint16_t in, std::uint16_t out, rte_mbuf* m, std::uint64_t now_tsc) {
  PortState& q = q_[out];
  const std::uint32_t bytes = m->pkt_len;
  if (q.count == q.ring.size() || q.c.queue_bytes + bytes > cfg_.buffer_bytes) {
    ++q.c.tail_drops;
    rte_pktmbuf_free(m);
    return;
  }
  auto* f = rte_pktmbuf_mtod(m, std::uint8_t*);
  const Classified c = classify(f, m->data_len);
  // RED/ECN on the instantaneous queue (DCQCN paper §4). Only ECN-capable frames are marked;
  // the ICRC leaves the TOS byte out, the IPv4 header checksum does not.
  if (red_.mark(q.c.queue_bytes, rng_)) {
    if (c.ether_type == 0x0800 && m->data_len >= c.l3 + 20) {
      std::uint8_t& tos = f[c.l3 + 1];
      if ((tos & 3) != wire::kEcnNotEct && (tos & 3) != wire::kEcnCe) {
        tos |= wire::kEcnCe;
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(f + c.l3);
        ip->hdr_checksum = 0;
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        ++q.c.ecn_marked;
      }
    } else if (c.ether_type == 0x86DD && m->data_len >= c.l3 + 40) {
      const std::uint8_t ecn = (f[c.l3 + 1] >> 4) & 3;
      if (ecn != wire::kEcnNotEct && ecn != wire::kEcnCe) {
        f[c.l3 + 1] |= 0x30;
        ++q.c.ecn_marked;
      }
    }
  }
  const auto tail = static_cast<std::uint32_t>((q.head + q.count) % q.ring.size());
  q.ring[tail] = Item{m, now_tsc + delay_tsc_, bytes, in, c.prio};
  ++q.count;
  q.c.queue_frames = q.count;
  q.c.queue_bytes += bytes;
  q.c.queue_max_bytes = std::max(q.c.queue_max_bytes, q.c.queue_bytes);
  if (cfg_.pfc && c.prio == cfg_.pfc_priority) {
    q_[in].c.ingress_bytes += bytes;
    pfc_check(in, now_tsc);
  }
}

void LabSwitch::receive(std::uint16_t in, rte_mbuf* m, std::uint64_t now_tsc) {
  PortState& p = q_[in];
  ++p.c.rx_frames;
  p.c.rx_bytes += m->pkt_len;
  const auto* f = rte_pktmbuf_mtod(m, const std::uint8_t*);
  if (m->data_len < 14) {
    rte_pktmbuf_free(m);
    return;
  }
  if (wire::is_mac_control(f, m->data_len)) {
    // PAUSE/PFC is link-local: it acts on this port and is never forwarded (802.1Qbb 36.1.3).
    on_pfc(p, f, m->data_len, now_tsc);
    rte_pktmbuf_free(m);
    return;
  }
  learn(f + 6, in);
  const Classified c = classify(f, m->data_len);
  std::uint32_t hop = 0;
  if (lpm_ != nullptr && c.ether_type == 0x0800 && m->data_len >= c.l3 + 20) {
    std::uint32_t dst = 0;
    std::memcpy(&dst, f + c.l3 + 16, 4);
    if (rte_lpm_lookup(lpm_, rte_be_to_cpu_32(dst), &hop) == 0 && hop != in) {
      enqueue(in, static_cast<std::uint16_t>(hop), m, now_tsc);
      return;
    }
  }
  std::uint16_t out = 0;
  if (!(f[0] & 1) && learn_lookup(f, out)) {
    if (out == in) {
      rte_pktmbuf_free(m);  // the destination is behind the port it came from
      return;
    }
    enqueue(in, out, m, now_tsc);
    return;
  }
  // Unknown or multicast destination: flood to every other port (copies; the original last).
  ++p.c.flooded;
  std::uint16_t last = UINT16_MAX;
  for (std::uint16_t o = 0; o < q_.size(); ++o) {
    if (o == in) continue;
    if (last != UINT16_MAX) {
      rte_mbuf* copy = rte_pktmbuf_copy(m, cfg_.pool, 0, UINT32_MAX);
      if (copy != nullptr) enqueue(in, last, copy, now_tsc);
    }
    last = o;
  }
  if (last != UINT16_MAX)
    enqueue(in, last, m, now_tsc);
  else
    rte_pktmbuf_free(m);
}

void LabSwitch::transmit(PortState& p, std::uint64_t now_tsc) {
  if (p.paused && now_tsc >= p.paused_until_tsc) {
    p.c.pfc_paused_ns += static_cast<std::uint64_t>(static_cast<double>(p.paused_until_tsc - p.paused_since_tsc) * 1e9 /
                                                    static_cast<double>(tsc_hz_));
    p.paused = false;
  }
  if (p.paused) p.backlogged = false;  // a paused port earns no catch-up for the pause
  rte_mbuf* burst[32];
  std::uint64_t next_after[32];
  std::uint16_t n = 0;
  // An idle port may bank 2 µs so that a late poll does not lose rate; a backlogged one catches
  // up to shaper_burst_us (the frames a late poll would have sent, sent now).
  const std::uint64_t credit = p.backlogged ? std::max(shaper_credit_tsc_, tsc_hz_ / 500'000) : tsc_hz_ / 500'000;
  std::uint64_t next = std::max(p.next_tx_tsc, now_tsc > credit ? now_tsc - credit : 0);
  for (std::uint32_t k = 0; k < p.count && n < 32; ++k) {
    const Item& it = p.ring[(p.head + k) % p.ring.size()];
    if (it.ready_tsc > now_tsc) break;
    // A received pause holds the lossless priority; with one FIFO per port that is head-of-line
    // blocking for everything behind it, as on a switch without per-priority queues.
    if (p.paused && it.prio == cfg_.pfc_priority) break;
    if (p.tsc_per_byte > 0) {
      if (next > now_tsc) break;
      // Ethernet's 24 bytes of preamble, FCS and inter-frame gap count against the rate.
      next += static_cast<std::uint64_t>(static_cast<double>(it.bytes + 24) * p.tsc_per_byte);
    }
    next_after[n] = next;
    burst[n++] = it.m;
  }
  if (n == 0) return;
  const std::uint16_t sent = p.io.tx_burst(burst, n);
  for (std::uint16_t i = 0; i < sent; ++i) {
    const Item& it = p.ring[p.head];
    ++p.c.tx_frames;
    p.c.tx_bytes += it.bytes;
    p.c.queue_bytes -= it.bytes;
    released(it);
    p.head = static_cast<std::uint32_t>((p.head + 1) % p.ring.size());
    --p.count;
  }
  p.c.queue_frames = p.count;
  p.backlogged = p.count != 0;
  if (sent != 0 && p.tsc_per_byte > 0) p.next_tx_tsc = next_after[sent - 1];
}

void LabSwitch::poll(std::uint64_t now_tsc) {
  for (std::uint16_t i = 0; i < q_.size(); ++i) {
    rte_mbuf* rx[32];
    const std::uint16_t n = q_[i].io.rx_burst(rx, 32);
    for (std::uint16_t k = 0; k < n; ++k) receive(i, rx[k], now_tsc);
  }
  for (std::uint16_t i = 0; i < q_.size(); ++i) {
    transmit(q_[i], now_tsc);
    pfc_check(i, now_tsc);
  }
}

}  // namespace droce::engine
