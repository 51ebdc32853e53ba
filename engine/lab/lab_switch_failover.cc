// LabSwitch's ECMP re-hash and link failures: the live next hop a flow takes when the one its
// hash picked has failed (resilient: only that hop's flows move), the table that counts each
// re-hashed flow once, and a port whose link goes down (what it holds dropped, its pauses void).
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>

#include <cstring>
#include <string>

#include "engine/lab/lab_switch.h"

namespace droce::engine {

namespace {

// A re-hashed flow as the switch remembers it: the 5-tuple and the next hop its hash picked, in
// aligned words (rte_jhash reads 32-bit words).
struct RehashKey {
  alignas(8) std::uint8_t src[16];
  std::uint8_t dst[16];
  std::uint16_t src_port, dst_port;
  std::uint8_t proto, ipv6;
  std::uint16_t pick;
};
static_assert(sizeof(RehashKey) == 40);

// Distinct re-hashed flows a switch remembers (beyond: counted in rehash_untracked).
constexpr std::uint32_t kRehashedFlows = 4096;

}  // namespace

// The flows re-hashed (set_ecmp_live), remembered to count each once; sized at creation so the
// datapath allocates nothing.
Status LabSwitch::make_rehash_table(unsigned id) {
  const std::string rname = "droce_sw_rh" + std::to_string(id);
  rte_hash_parameters rp{};
  rp.name = rname.c_str();
  rp.entries = kRehashedFlows;
  rp.key_len = sizeof(RehashKey);
  rp.hash_func = rte_jhash;
  rp.socket_id = SOCKET_ID_ANY;
  rehashed_ = rte_hash_create(&rp);
  if (rehashed_ == nullptr)
    return Status::error(StatusCode::kNoMemory,
                         "lab switch: rte_hash_create failed: " + std::string(rte_strerror(rte_errno)));
  return Status();
}

bool LabSwitch::ecmp_route(const std::uint8_t* f, std::uint32_t len, std::uint16_t group, std::uint16_t& out,
                           std::uint16_t& dead_pick) {
  FlowKey key;
  if (!flow_key_of(f, len, key)) return false;
  const auto n = static_cast<std::uint32_t>(cfg_.ecmp_ports.size());
  const std::uint32_t h = ecmp_hash(key, cfg_.ecmp);
  const std::uint32_t pick = h % n;
  const std::uint64_t live = group < ecmp_live_.size() ? ecmp_live_[group] : 0;
  if ((live >> pick) & 1u) {
    out = cfg_.ecmp_ports[pick];
    return true;
  }
  // Resilient re-hash: the pick is dead, so this flow (and only the dead pick's flows) goes to a
  // live next hop chosen by the rest of the same hash; every flow that did not pick it stays.
  const int alive = __builtin_popcountll(live);
  if (alive == 0) {
    out = kEcmpRoute;
    dead_pick = cfg_.ecmp_ports[pick];
    return true;
  }
  std::uint32_t nth = (h / n) % static_cast<std::uint32_t>(alive);
  std::uint32_t to = 0;
  for (std::uint64_t m = live;; m &= m - 1) {
    if (nth-- == 0) {
      to = static_cast<std::uint32_t>(__builtin_ctzll(m));
      break;
    }
  }
  out = cfg_.ecmp_ports[to];
  SwitchPortCounters& c = q_[cfg_.ecmp_ports[pick]].c;
  ++c.rehashed_frames;
  RehashKey rk{};
  std::memcpy(rk.src, key.src, 16);
  std::memcpy(rk.dst, key.dst, 16);
  rk.src_port = key.src_port;
  rk.dst_port = key.dst_port;
  rk.proto = key.proto;
  rk.ipv6 = key.ipv6 ? 1 : 0;
  rk.pick = static_cast<std::uint16_t>(pick);
  if (rte_hash_lookup(rehashed_, &rk) >= 0) return true;
  if (rte_hash_add_key(rehashed_, &rk) >= 0)
    ++c.rehashed_flows;
  else
    ++c.rehash_untracked;
  return true;
}

void LabSwitch::set_ecmp_live(std::uint16_t group, std::uint64_t live_mask) {
  if (group < ecmp_live_.size()) ecmp_live_[group] = live_mask;
}

void LabSwitch::flush_port(PortState& p) {
  for (std::uint32_t q = 0; q < kSwitchClasses; ++q) {
    ClassQueue& c = p.cq[q];
    while (c.head != kNil) {
      const std::uint32_t slot = c.head;
      Item& it = p.items[slot];
      c.head = it.next;
      ++p.c.link_down_drops;
      released(it);
      rte_pktmbuf_free(it.m);
      it.next = p.free_head;
      p.free_head = slot;
    }
    c = ClassQueue{};
    p.c.queue_class_bytes[q] = 0;
  }
  p.c.queue_bytes = 0;
  p.c.queue_frames = 0;
}

void LabSwitch::set_port_down(std::uint16_t port, bool down, std::uint64_t now_tsc) {
  if (port >= q_.size()) return;
  PortState& p = q_[port];
  if (p.down == down) return;
  p.down = down;
  if (!down) return;
  flush_port(p);
  // A failed link carries no pause: what the peer asked of this egress ends now, and the pauses
  // this ingress sent are void (the peer drops its own state as its side goes down).
  for (std::uint32_t prio = 0; prio < kSwitchClasses; ++prio) end_pause(p, prio, now_tsc);
  p.xoff = 0;
  p.backlogged = false;
}

}  // namespace droce::engine
