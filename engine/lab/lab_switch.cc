// LabSwitch: forwarding (rte_lpm routes, rte_hash MAC learning), eight RED/ECN egress queues per
// port and their scheduler, shaping, delay and PFC per priority (ECMP re-hash and link failures:
// lab_switch_failover.cc; the configuration's checks: lab_switch_config.cc). One thread polls it;
// nothing is shared.
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
#include "protocols/wire/opcode.h"
#include "protocols/wire/pfc.h"

namespace droce::engine {

namespace {

// Where the L3 header starts, and the frame's VLAN PCP (tagged) or DSCP (untagged IP).
struct Classified {
  std::uint32_t l3 = 0;
  std::uint16_t ether_type = 0;
  bool tagged = false;
  std::uint8_t pcp = 0;
  std::uint8_t dscp = 0;
};

Classified classify(const std::uint8_t* f, std::uint32_t len) {
  Classified c;
  if (len < 14) return c;
  c.ether_type = static_cast<std::uint16_t>((f[12] << 8) | f[13]);
  c.l3 = 14;
  if (c.ether_type == 0x8100 && len >= 18) {
    c.pcp = static_cast<std::uint8_t>(f[14] >> 5);
    c.ether_type = static_cast<std::uint16_t>((f[16] << 8) | f[17]);
    c.l3 = 18;
    c.tagged = true;
  }
  if (c.ether_type == 0x0800 && len >= c.l3 + 20) c.dscp = static_cast<std::uint8_t>(f[c.l3 + 1] >> 2);
  if (c.ether_type == 0x86DD && len >= c.l3 + 40)
    c.dscp = static_cast<std::uint8_t>(((f[c.l3] & 0x0F) << 4 | f[c.l3 + 1] >> 4) >> 2);
  return c;
}

// A RoCEv2 CNP: UDP to 4791 whose BTH opcode is 0x81 (Annex A17.9.3).
bool is_cnp(const std::uint8_t* f, std::uint32_t len, const Classified& c) {
  std::uint32_t udp = 0;
  if (c.ether_type == 0x0800 && len >= c.l3 + 20 && f[c.l3 + 9] == 17) udp = c.l3 + 4u * (f[c.l3] & 0x0F);
  if (c.ether_type == 0x86DD && len >= c.l3 + 40 && f[c.l3 + 6] == 17) udp = c.l3 + 40;
  if (udp == 0 || len < udp + 9) return false;
  const auto dport = static_cast<std::uint16_t>(f[udp + 2] << 8 | f[udp + 3]);
  return dport == wire::kRoceV2UdpPort && f[udp + 8] == static_cast<std::uint8_t>(wire::Opcode::kCnp);
}

std::atomic<unsigned> g_instance{0};

}  // namespace

HostRoute HostRoute::ipv4(std::uint32_t host_order, std::uint16_t out, std::uint16_t ecmp_group) {
  HostRoute r;
  r.ecmp_group = ecmp_group;
  r.addr[10] = r.addr[11] = 0xFF;
  for (int i = 0; i < 4; ++i) r.addr[12 + i] = static_cast<std::uint8_t>(host_order >> (24 - 8 * i));
  r.out = out;
  return r;
}

HostRoute HostRoute::ipv6(const std::uint8_t* addr, std::uint16_t out, std::uint16_t ecmp_group) {
  HostRoute r;
  r.ecmp_group = ecmp_group;
  std::memcpy(r.addr, addr, 16);
  r.out = out;
  return r;
}

std::unique_ptr<LabSwitch> LabSwitch::create(const LabSwitchConfig& cfg, Status& err) {
  if (Status s = cfg.validate(); !s.ok()) {
    err = s.context("lab switch: ");
    return nullptr;
  }
  std::unique_ptr<LabSwitch> s(new LabSwitch());
  s->cfg_ = cfg;
  s->tsc_hz_ = rte_get_tsc_hz();
  s->shaper_credit_tsc_ = static_cast<std::uint64_t>(cfg.shaper_burst_us * 1e-6 * static_cast<double>(s->tsc_hz_));
  s->rng_.seed(cfg.seed);
  s->lossless_ = cfg.lossless_mask();
  s->watchdog_tsc_ = static_cast<std::uint64_t>(cfg.pfc_watchdog_ms * 1e-3 * static_cast<double>(s->tsc_hz_));
  if (cfg.drop_rule.any()) {
    s->drop_rule_ = DropRule::create(cfg.drop_rule, err);
    if (!s->drop_rule_) return nullptr;
  }
  const unsigned id = g_instance.fetch_add(1);
  s->q_.resize(cfg.port_count());
  for (std::size_t i = 0; i < cfg.port_count(); ++i) {
    PortState& p = s->q_[i];
    p.io = cfg.frame_ports.empty() ? FramePort::ethdev(cfg.ports[i]) : cfg.frame_ports[i];
    const double g = i < cfg.egress_gbps.size() ? cfg.egress_gbps[i] : 0;
    p.tsc_per_byte = g > 0 ? 8.0 * static_cast<double>(s->tsc_hz_) / (g * 1e9) : 0;
    const std::uint64_t own = i < cfg.egress_buffer_bytes.size() ? cfg.egress_buffer_bytes[i] : 0;
    p.buffer_bytes = own != 0 ? own : cfg.buffer_bytes;
    // Frames of at least 64 bytes: the queues together can never need more slots than this.
    p.items.resize(std::min<std::size_t>(p.buffer_bytes / 60 + 1, 1u << 20));
    for (std::size_t k = 0; k < p.items.size(); ++k)
      p.items[k].next = k + 1 < p.items.size() ? static_cast<std::uint32_t>(k + 1) : kNil;
    p.free_head = 0;
    const SwitchPortSettings set = cfg.resolved(i);
    p.red = dcqcn::RedProfile{*set.kmin_bytes, *set.kmax_bytes, *set.pmax};
    p.pfc_on = *set.pfc;
    p.honours_pauses = !(i < cfg.port_settings.size() && cfg.port_settings[i].pfc == false);
    p.xoff_bytes = *set.pfc_xoff_bytes;
    p.xon_bytes = *set.pfc_xon_bytes;
    p.delay_tsc = static_cast<std::uint64_t>((cfg.delay_us + set.delay_us) * 1e-6 * static_cast<double>(s->tsc_hz_));
  }
  for (std::uint16_t i : cfg.stuck_ports) s->q_[i].stuck = true;
  for (const SlowReceiverConfig& r : cfg.slow_receivers) {
    PortState& p = s->q_[r.port];
    const double g = r.port < cfg.egress_gbps.size() && cfg.egress_gbps[r.port] > 0 ? cfg.egress_gbps[r.port]
                                                                                    : cfg.link_gbps_for_pfc;
    p.slow = std::make_unique<SlowReceiverNic>();
    p.slow->init(r.fraction, g, cfg.slow_receiver_buffer_bytes, s->tsc_hz_);
  }
  if (!cfg.routes.empty()) {
    rte_lpm_config lc{};
    lc.max_rules = 1024;
    lc.number_tbl8s = 256;
    const std::string name = "droce_sw_lpm" + std::to_string(id);
    s->lpm_ = rte_lpm_create(name.c_str(), SOCKET_ID_ANY, &lc);
    if (s->lpm_ == nullptr) {
      err = Status::error(StatusCode::kNoMemory,
                          "lab switch: rte_lpm_create failed: " + std::string(rte_strerror(rte_errno)));
      return nullptr;
    }
    for (const auto& r : cfg.routes)
      if (rte_lpm_add(s->lpm_, r.prefix, r.depth, r.out) != 0) {
        err = Status::error(StatusCode::kError, "lab switch: cannot add route");
        return nullptr;
      }
  }
  if (!cfg.host_routes.empty()) {
    const std::string name = "droce_sw_host" + std::to_string(id);
    rte_hash_parameters hp{};
    hp.name = name.c_str();
    hp.entries = static_cast<std::uint32_t>(std::max<std::size_t>(2 * cfg.host_routes.size(), 64));
    hp.key_len = sizeof(HostRoute::addr);
    hp.hash_func = rte_jhash;
    hp.socket_id = SOCKET_ID_ANY;
    s->hosts_ = rte_hash_create(&hp);
    if (s->hosts_ == nullptr) {
      err = Status::error(StatusCode::kNoMemory,
                          "lab switch: rte_hash_create failed: " + std::string(rte_strerror(rte_errno)));
      return nullptr;
    }
    for (const auto& r : cfg.host_routes) {
      // rte_jhash reads 32-bit words, and a HostRoute in a vector is only 2-byte aligned (18 bytes
      // each): the key goes in aligned, as route() builds it (UBSan caught the misaligned load).
      alignas(8) std::uint8_t key[sizeof r.addr];
      std::memcpy(key, r.addr, sizeof key);
      // The next hop, and for an ECMP route its group above it.
      const std::uintptr_t data = r.out | (r.out == kEcmpRoute ? std::uintptr_t{r.ecmp_group} << 16 : 0);
      if (rte_hash_add_key_data(s->hosts_, key, reinterpret_cast<void*>(data)) != 0) {
        err = Status::error(StatusCode::kError, "lab switch: cannot add host route");
        return nullptr;
      }
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
                        "lab switch: rte_hash_create failed: " + std::string(rte_strerror(rte_errno)));
    return nullptr;
  }
  s->mac_port_.assign(hp.entries + 64, 0);
  if (!cfg.ecmp_ports.empty()) {
    std::uint16_t groups = 1;
    for (const auto& r : cfg.host_routes)
      if (r.out == kEcmpRoute) groups = std::max<std::uint16_t>(groups, static_cast<std::uint16_t>(r.ecmp_group + 1));
    const std::uint64_t all = cfg.ecmp_ports.size() == 64 ? ~0ull : (1ull << cfg.ecmp_ports.size()) - 1;
    s->ecmp_live_.assign(groups, all);
    if (Status r = s->make_rehash_table(id); !r.ok()) {
      err = r;
      return nullptr;
    }
  }
  err = Status();
  return s;
}

LabSwitch::~LabSwitch() {
  finish();
  if (lpm_ != nullptr) rte_lpm_free(lpm_);
  if (hosts_ != nullptr) rte_hash_free(hosts_);
  if (macs_ != nullptr) rte_hash_free(macs_);
  if (rehashed_ != nullptr) rte_hash_free(rehashed_);
}

void LabSwitch::finish() {
  for (auto& p : q_) {
    for (std::uint32_t q = 0; q < kSwitchClasses; ++q) {
      ClassQueue& c = p.cq[q];
      while (c.head != kNil) {
        Item& it = p.items[c.head];
        rte_pktmbuf_free(it.m);
        const std::uint32_t next = it.next;
        it.next = p.free_head;
        p.free_head = c.head;
        c.head = next;
      }
      c = ClassQueue{};
      p.c.queue_class_bytes[q] = 0;
    }
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

bool LabSwitch::route(const std::uint8_t* f, std::uint32_t len, std::uint16_t ether_type, std::uint32_t l3,
                      std::uint16_t& out, std::uint16_t& dead_pick) {
  std::uint32_t hop = 0;
  bool found = false;
  const bool v4 = ether_type == 0x0800 && len >= l3 + 20;
  const bool v6 = ether_type == 0x86DD && len >= l3 + 40;
  if (hosts_ != nullptr && (v4 || v6)) {
    // The key as HostRoute spells it, in aligned words (rte_jhash reads 32-bit words).
    alignas(8) std::uint8_t key[16] = {};
    if (v4) {
      key[10] = key[11] = 0xFF;
      std::memcpy(key + 12, f + l3 + 16, 4);
    } else {
      std::memcpy(key, f + l3 + 24, 16);
    }
    void* data = nullptr;
    if (rte_hash_lookup_data(hosts_, key, &data) >= 0) {
      hop = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(data));
      found = true;
    }
  }
  if (!found && lpm_ != nullptr && v4) {
    std::uint32_t dst = 0;
    std::memcpy(&dst, f + l3 + 16, 4);
    found = rte_lpm_lookup(lpm_, rte_be_to_cpu_32(dst), &hop) == 0;
  }
  if (!found) return false;
  if ((hop & 0xFFFF) != kEcmpRoute) {
    out = static_cast<std::uint16_t>(hop);
    return true;
  }
  return ecmp_route(f, len, static_cast<std::uint16_t>(hop >> 16), out, dead_pick);
}

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

std::uint8_t LabSwitch::priority_of(const std::uint8_t* f, std::uint32_t len) const {
  const Classified c = classify(f, len);
  if (cfg_.cnp_priority != kCnpByDscp && is_cnp(f, len, c)) return cfg_.cnp_priority;
  if (c.tagged) return c.pcp;
  return cfg_.dscp_priority[c.dscp];
}

void LabSwitch::send_pfc(PortState& p, std::uint32_t prio, std::uint16_t quanta) {
  if (p.down) return;  // no link to carry it
  rte_mbuf* m = rte_pktmbuf_alloc(cfg_.pool);
  if (m == nullptr) return;
  wire::PfcFrame f;
  f.class_enable = static_cast<std::uint16_t>(1u << prio);
  f.quanta[prio] = quanta;
  auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, wire::kPfcFrameBytes));
  if (d == nullptr || wire::build_pfc(switch_mac_, f, d, wire::kPfcFrameBytes) == 0) {
    rte_pktmbuf_free(m);
    return;
  }
  // Control frames bypass the egress queues: a pause stuck behind the data it is meant to stop
  // would come too late.
  if (p.io.tx_burst(&m, 1) != 1) {
    rte_pktmbuf_free(m);
    return;
  }
  if (quanta != 0) {
    ++p.c.pfc_pause_sent;
    ++p.c.prio_pause_sent[prio];
  } else {
    ++p.c.pfc_resume_sent;
  }
}

void LabSwitch::pfc_check(std::uint16_t in, std::uint64_t now_tsc) {
  PortState& p = q_[in];
  if (!p.pfc_on) return;  // this link runs no PFC: nothing arriving on it pauses the peer
  if (p.down) return;     // nothing to pause across a failed link; checked again once it is back
  for (std::uint32_t prio = 0; prio < kSwitchClasses; ++prio) {
    if (((lossless_ >> prio) & 1u) == 0) continue;
    const std::uint64_t held = p.c.prio_ingress_bytes[prio];
    const auto bit = static_cast<std::uint8_t>(1u << prio);
    if (held > p.xoff_bytes) {
      if ((p.xoff & bit) == 0 || now_tsc >= p.refresh_tsc[prio]) {
        send_pfc(p, prio, cfg_.pfc_pause_quanta);
        p.xoff |= bit;
        // Refresh at half the pause so the upstream never resumes while we are still full.
        const double pause_s = wire::pfc_quanta_to_ns(cfg_.pfc_pause_quanta, cfg_.link_gbps_for_pfc * 1e9) * 1e-9;
        p.refresh_tsc[prio] = now_tsc + static_cast<std::uint64_t>(pause_s * static_cast<double>(tsc_hz_) / 2);
      }
    } else if ((p.xoff & bit) != 0 && held <= p.xon_bytes) {
      send_pfc(p, prio, 0);
      p.xoff = static_cast<std::uint8_t>(p.xoff & ~bit);
    }
  }
}

void LabSwitch::end_pause(PortState& p, std::uint32_t prio, std::uint64_t at_tsc) {
  const auto bit = static_cast<std::uint8_t>(1u << prio);
  if ((p.paused & bit) == 0) return;
  if (at_tsc > p.paused_since_tsc[prio]) {
    const auto ns = static_cast<std::uint64_t>(static_cast<double>(at_tsc - p.paused_since_tsc[prio]) * 1e9 /
                                               static_cast<double>(tsc_hz_));
    p.c.pfc_paused_ns += ns;
    p.c.prio_paused_ns[prio] += ns;
  }
  p.paused = static_cast<std::uint8_t>(p.paused & ~bit);
}

void LabSwitch::on_pfc(PortState& p, const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_tsc) {
  // A port whose link was set to run no PFC ignores pauses, as for a priority PFC is not enabled
  // for (a port without its own setting keeps the switch's way: pauses for its lossless
  // priorities are honoured, whether or not the switch sends any).
  if (!p.honours_pauses) return;
  wire::PfcFrame f;
  if (!wire::parse_pfc(frame, len, f)) return;
  // Only the lossless priorities honour pauses; a pause for a lossy one is ignored, as a port
  // without PFC enabled for that priority does (802.1Qbb 36.1.3.2).
  for (std::uint32_t prio = 0; prio < kSwitchClasses; ++prio) {
    if ((f.class_enable & (1u << prio)) == 0 || ((lossless_ >> prio) & 1u) == 0) continue;
    const std::uint16_t quanta = f.quanta[prio];
    if (quanta == 0) {
      end_pause(p, prio, std::min(now_tsc, p.paused_until_tsc[prio]));
      continue;
    }
    const double ns = static_cast<double>(wire::pfc_quanta_to_ns(quanta, cfg_.link_gbps_for_pfc * 1e9));
    pause(p, prio, now_tsc + static_cast<std::uint64_t>(ns * 1e-9 * static_cast<double>(tsc_hz_)), now_tsc);
  }
}

void LabSwitch::pause(PortState& p, std::uint32_t prio, std::uint64_t until_tsc, std::uint64_t now_tsc) {
  const auto bit = static_cast<std::uint8_t>(1u << prio);
  p.last_pause_tsc[prio] = now_tsc;
  if ((p.watchdog & bit) != 0) return;  // the watchdog no longer honours this priority's pauses
  if ((p.paused & bit) == 0) {
    ++p.c.pfc_pause_received;
    ++p.c.prio_pause_received[prio];
    p.paused |= bit;
    p.paused_since_tsc[prio] = now_tsc;
  } else if (!p.stuck) {
    ++p.c.pfc_pause_received;  // a refresh: a stuck NIC's endless pause counts once
    ++p.c.prio_pause_received[prio];
  }
  p.paused_until_tsc[prio] = until_tsc;
}

void LabSwitch::flush_priority(PortState& p, std::uint32_t prio) {
  for (ClassQueue& c : p.cq) {
    std::uint32_t prev = kNil;
    for (std::uint32_t slot = c.head; slot != kNil;) {
      Item& it = p.items[slot];
      const std::uint32_t next = it.next;
      if (it.prio != prio) {
        prev = slot;
        slot = next;
        continue;
      }
      (prev == kNil ? c.head : p.items[prev].next) = next;
      if (c.tail == slot) c.tail = prev;
      --c.count;
      c.bytes -= it.bytes;
      p.c.queue_bytes -= it.bytes;
      --p.c.queue_frames;
      ++p.c.pfc_watchdog_drops;
      released(it);
      rte_pktmbuf_free(it.m);
      it.next = p.free_head;
      p.free_head = slot;
      slot = next;
    }
  }
  for (std::uint32_t q = 0; q < kSwitchClasses; ++q) p.c.queue_class_bytes[q] = p.cq[q].bytes;
}

void LabSwitch::watchdog_check(PortState& p, std::uint64_t now_tsc) {
  for (std::uint32_t prio = 0; prio < kSwitchClasses; ++prio) {
    const auto bit = static_cast<std::uint8_t>(1u << prio);
    if ((p.watchdog & bit) != 0) {
      // Restored once pauses stopped coming for a watchdog period.
      if (now_tsc - p.last_pause_tsc[prio] >= watchdog_tsc_) {
        p.watchdog = static_cast<std::uint8_t>(p.watchdog & ~bit);
        ++p.c.pfc_watchdog_restores;
      }
      continue;
    }
    if ((p.paused & bit) != 0 && now_tsc - p.paused_since_tsc[prio] >= watchdog_tsc_) {
      end_pause(p, prio, now_tsc);
      p.watchdog |= bit;
      p.last_pause_tsc[prio] = now_tsc;  // the restore period starts at the trip
      ++p.c.pfc_watchdog_trips;
      flush_priority(p, prio);
    }
  }
}

void LabSwitch::released(const Item& it) {
  if (!lossless_from(it.ingress, it.prio)) return;
  PortState& in = q_[it.ingress];
  in.c.ingress_bytes -= it.bytes;
  in.c.prio_ingress_bytes[it.prio] -= it.bytes;
}

void LabSwitch::enqueue(std::uint16_t in, std::uint16_t out, rte_mbuf* m, std::uint64_t now_tsc) {
  PortState& q = q_[out];
  if (q.down) {
    ++q.c.link_down_drops;
    rte_pktmbuf_free(m);
    return;
  }
  const std::uint32_t bytes = m->pkt_len;
  auto* f = rte_pktmbuf_mtod(m, std::uint8_t*);
  const Classified c = classify(f, m->data_len);
  const std::uint8_t prio = priority_of(f, m->data_len);
  const std::uint8_t queue = cfg_.priority_queue[prio];
  if (((q.watchdog >> prio) & 1u) != 0) {
    ++q.c.pfc_watchdog_drops;
    rte_pktmbuf_free(m);
    return;
  }
  // One buffer per port shared by its queues: tail drop when the frame does not fit.
  if (q.free_head == kNil || q.c.queue_bytes + bytes > q.buffer_bytes) {
    ++q.c.tail_drops;
    ++q.c.queue_tail_drops[queue];
    rte_pktmbuf_free(m);
    return;
  }
  // RED/ECN on the instantaneous queue (DCQCN paper §4). Only ECN-capable frames are marked;
  // the ICRC leaves the TOS byte out, the IPv4 header checksum does not.
  if (q.red.mark(q.c.queue_bytes, rng_)) {
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
  const std::uint32_t slot = q.free_head;
  q.free_head = q.items[slot].next;
  q.items[slot] = Item{m, now_tsc + q.delay_tsc, bytes, kNil, in, prio};
  ClassQueue& cq = q.cq[queue];
  if (cq.tail == kNil)
    cq.head = slot;
  else
    q.items[cq.tail].next = slot;
  cq.tail = slot;
  ++cq.count;
  cq.bytes += bytes;
  ++q.c.queue_frames;
  q.c.queue_bytes += bytes;
  q.c.queue_class_bytes[queue] = cq.bytes;
  q.c.queue_max_bytes = std::max(q.c.queue_max_bytes, q.c.queue_bytes);
  if (lossless_from(in, prio)) {
    q_[in].c.ingress_bytes += bytes;
    q_[in].c.prio_ingress_bytes[prio] += bytes;
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
  if (p.down) {
    // On the wire as the link failed: lost with it.
    ++p.c.link_down_lost;
    rte_pktmbuf_free(m);
    return;
  }
  if (wire::is_mac_control(f, m->data_len)) {
    // PAUSE/PFC is link-local: it acts on this port and is never forwarded (802.1Qbb 36.1.3).
    on_pfc(p, f, m->data_len, now_tsc);
    rte_pktmbuf_free(m);
    return;
  }
  if (drop_rule_ != nullptr && drop_rule_->drops(f, m->data_len)) {
    ++p.c.rule_drops;
    rte_pktmbuf_free(m);
    return;
  }
  learn(f + 6, in);
  const Classified c = classify(f, m->data_len);
  std::uint16_t out = 0, dead_pick = 0;
  if (route(f, m->data_len, c.ether_type, c.l3, out, dead_pick) && out != in) {
    if (out == kEcmpRoute) {
      // Every next hop of its ECMP group is down: lost on the link its hash picked.
      ++q_[dead_pick].c.link_down_drops;
      rte_pktmbuf_free(m);
      return;
    }
    enqueue(in, out, m, now_tsc);
    return;
  }
  if (!(f[0] & 1) && learn_lookup(f, out)) {
    if (out == in) {
      rte_pktmbuf_free(m);  // the destination is behind the port it came from
      return;
    }
    enqueue(in, out, m, now_tsc);
    return;
  }
  if (!cfg_.flood) {
    ++p.c.unrouted;
    rte_pktmbuf_free(m);
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

bool LabSwitch::eligible(const PortState& p, std::uint32_t q, std::uint64_t now_tsc) const {
  const ClassQueue& c = p.cq[q];
  if (c.head == kNil) return false;
  const Item& it = p.items[c.head];
  // A received pause holds its priority's frames; a queue whose head is held waits (head-of-line
  // blocking only inside a queue shared by a paused and an unpaused priority).
  return it.ready_tsc <= now_tsc && ((p.paused >> it.prio) & 1u) == 0;
}

int LabSwitch::pick(PortState& p, std::uint64_t now_tsc) {
  if (cfg_.scheduler == SwitchScheduler::kWeighted) return pick_weighted(p, now_tsc);
  for (int q = kSwitchClasses - 1; q >= 0; --q)
    if (eligible(p, static_cast<std::uint32_t>(q), now_tsc)) return q;
  return -1;
}

int LabSwitch::pick_weighted(PortState& p, std::uint64_t now_tsc) {
  // Deficit round robin (Shreedhar and Varghese): a queue earns its quantum once per visit and
  // sends while its deficit covers its head; an emptied queue forfeits what it saved. Frames of
  // up to 64 quanta are reached within the bound; a larger one waits for the next transmit,
  // which resumes the round where this one stopped.
  for (std::uint32_t visit = 0; visit < 64 * kSwitchClasses; ++visit) {
    const std::uint32_t q = p.rr;
    ClassQueue& c = p.cq[q];
    if (eligible(p, q, now_tsc)) {
      if (!p.credited) {
        c.deficit += static_cast<std::int64_t>(cfg_.queue_weights[q]) * 1024;
        p.credited = true;
      }
      if (c.deficit >= static_cast<std::int64_t>(p.items[c.head].bytes)) return static_cast<int>(q);
    } else if (c.head == kNil) {
      c.deficit = 0;
    }
    p.rr = static_cast<std::uint8_t>((q + 1) % kSwitchClasses);
    p.credited = false;
  }
  return -1;
}

void LabSwitch::push_front(PortState& p, std::uint32_t q, std::uint32_t slot) {
  ClassQueue& c = p.cq[q];
  Item& it = p.items[slot];
  it.next = c.head;
  c.head = slot;
  if (c.tail == kNil) c.tail = slot;
  ++c.count;
  c.bytes += it.bytes;
  if (cfg_.scheduler == SwitchScheduler::kWeighted) c.deficit += it.bytes;
}

void LabSwitch::slow_receiver_step(PortState& p, std::uint64_t now_tsc) {
  p.slow->drain(now_tsc, p.io);
  const bool hold = p.slow->wants_pause();
  if (hold != p.slow_holding)
    for (std::uint32_t prio = 0; prio < kSwitchClasses; ++prio) {
      if (!lossless(static_cast<std::uint8_t>(prio))) continue;
      if (hold)
        pause(p, prio, UINT64_MAX, now_tsc);  // until the NIC's XON
      else
        end_pause(p, prio, now_tsc);
    }
  p.slow_holding = hold;
  const SlowReceiverCounters& n = p.slow->counters();
  p.c.slow_receiver_pauses = n.pauses;
  p.c.slow_receiver_resumes = n.resumes;
  p.c.slow_receiver_max_bytes = n.held_max_bytes;
}

void LabSwitch::transmit(PortState& p, std::uint64_t now_tsc) {
  if (p.slow) slow_receiver_step(p, now_tsc);
  // A stuck NIC pauses every lossless priority, always (what the watchdog does not ignore).
  if (p.stuck)
    for (std::uint32_t prio = 0; prio < kSwitchClasses; ++prio)
      if (lossless(static_cast<std::uint8_t>(prio))) pause(p, prio, UINT64_MAX, now_tsc);
  if (watchdog_tsc_ != 0) watchdog_check(p, now_tsc);
  for (std::uint32_t prio = 0; prio < kSwitchClasses; ++prio)
    if (((p.paused >> prio) & 1u) != 0 && now_tsc >= p.paused_until_tsc[prio])
      end_pause(p, prio, p.paused_until_tsc[prio]);
  rte_mbuf* burst[32];
  std::uint32_t slots[32];
  std::uint8_t queues[32];
  std::uint64_t next_after[32];
  std::uint16_t n = 0;
  // An idle port may bank 2 µs so that a late poll does not lose rate; a backlogged one catches
  // up to shaper_burst_us (the frames a late poll would have sent, sent now). A port whose
  // frames were all held by pauses earns no catch-up for the pause.
  const std::uint64_t credit = p.backlogged ? std::max(shaper_credit_tsc_, tsc_hz_ / 500'000) : tsc_hz_ / 500'000;
  std::uint64_t next = std::max(p.next_tx_tsc, now_tsc > credit ? now_tsc - credit : 0);
  while (n < 32) {
    if (p.tsc_per_byte > 0 && next > now_tsc) break;
    const int q = pick(p, now_tsc);
    if (q < 0) break;
    // Dequeued now; whatever the PMD refuses goes back to the front of its queue below.
    ClassQueue& c = p.cq[static_cast<std::uint32_t>(q)];
    const std::uint32_t slot = c.head;
    const Item& it = p.items[slot];
    c.head = it.next;
    if (c.head == kNil) c.tail = kNil;
    --c.count;
    c.bytes -= it.bytes;
    if (cfg_.scheduler == SwitchScheduler::kWeighted) c.deficit -= it.bytes;
    // Ethernet's 24 bytes of preamble, FCS and inter-frame gap count against the rate.
    if (p.tsc_per_byte > 0) next += static_cast<std::uint64_t>(static_cast<double>(it.bytes + 24) * p.tsc_per_byte);
    next_after[n] = next;
    slots[n] = slot;
    queues[n] = static_cast<std::uint8_t>(q);
    burst[n++] = it.m;
  }
  const std::uint16_t sent = n == 0 ? 0 : p.slow ? p.slow->accept(burst, n) : p.io.tx_burst(burst, n);
  if (p.slow && sent != 0) slow_receiver_step(p, now_tsc);  // a NIC pauses as frames arrive past XOFF
  for (std::uint16_t i = 0; i < sent; ++i) {
    Item& it = p.items[slots[i]];
    ++p.c.tx_frames;
    p.c.tx_bytes += it.bytes;
    ++p.c.queue_tx_frames[queues[i]];
    p.c.queue_bytes -= it.bytes;
    --p.c.queue_frames;
    released(it);
    it.next = p.free_head;
    p.free_head = slots[i];
  }
  for (std::uint16_t i = n; i > sent; --i) push_front(p, queues[i - 1], slots[i - 1]);
  for (std::uint32_t q = 0; q < kSwitchClasses; ++q) p.c.queue_class_bytes[q] = p.cq[q].bytes;
  // Backlogged: frames were left that a pause does not hold (the shaper, the PMD or the delay did).
  bool held_only = true;
  for (const ClassQueue& c : p.cq)
    if (c.head != kNil && ((p.paused >> p.items[c.head].prio) & 1u) == 0) held_only = false;
  p.backlogged = p.c.queue_frames != 0 && !held_only;
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
