// The IPv6 neighbour table: Neighbor Discovery's learning rules (RFC 4861 §7.2.3, §7.2.5),
// resolution's retries and failure (§7.2.2), with the RFC's default timers (§10).
#include "protocols/nd/neighbour_table.h"

#include <cstring>

namespace droce::nd {
namespace {

bool usable_mac(const std::uint8_t* mac) {
  if ((mac[0] & 1u) != 0) return false;  // group bit: multicast or broadcast (IEEE 802 §8.2)
  for (int i = 0; i < 6; ++i)
    if (mac[i] != 0) return true;
  return false;
}

}  // namespace

bool NeighbourTable::resolvable(const Ipv6Address& ip) const {
  static constexpr std::uint8_t kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static constexpr std::uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  if (ip == cfg_.local_ip || is_unspecified(ip.data()) || is_multicast(ip.data())) return false;
  return std::memcmp(ip.data(), kLoopback, 16) != 0 && std::memcmp(ip.data(), kV4Mapped, 12) != 0;
}

Neighbour* NeighbourTable::lookup(const Ipv6Address& ip) {
  for (Neighbour& n : entries_)
    if (n.state != NeighbourState::kNone && n.ip == ip) return &n;
  return nullptr;
}

const Neighbour* NeighbourTable::find(const Ipv6Address& ip, std::uint64_t now_ns) const {
  for (const Neighbour& n : entries_) {
    if (n.state == NeighbourState::kNone || n.ip != ip) continue;
    if (n.state == NeighbourState::kReachable && now_ns >= n.deadline_ns) return nullptr;
    return &n;
  }
  return nullptr;
}

std::uint32_t NeighbourTable::size() const {
  std::uint32_t k = 0;
  for (const Neighbour& n : entries_) k += n.state != NeighbourState::kNone ? 1u : 0u;
  return k;
}

Neighbour* NeighbourTable::claim(std::uint64_t now_ns) {
  Neighbour* oldest = nullptr;
  for (Neighbour& n : entries_) {
    if (n.state == NeighbourState::kNone) return &n;
    const bool reusable =
        n.state == NeighbourState::kFailed || (n.state == NeighbourState::kReachable && now_ns >= n.deadline_ns);
    if (reusable && (oldest == nullptr || n.deadline_ns < oldest->deadline_ns)) oldest = &n;
  }
  return oldest;
}

StartResult NeighbourTable::start_resolve(const Ipv6Address& ip, std::uint64_t now_ns) {
  if (!resolvable(ip)) return StartResult::kBadAddress;
  Neighbour* n = lookup(ip);
  if (n != nullptr) {
    if (n->state == NeighbourState::kIncomplete) return StartResult::kResolving;
    if (n->state == NeighbourState::kReachable && now_ns < n->deadline_ns) return StartResult::kResolved;
  } else {
    n = claim(now_ns);
    if (n == nullptr) return StartResult::kTableFull;
  }
  *n = Neighbour{};
  n->ip = ip;
  n->state = NeighbourState::kIncomplete;
  n->started_ns = now_ns;
  n->deadline_ns = now_ns;  // the first solicitation goes at the next due_solicitations
  if (now_ns < next_due_ns_) next_due_ns_ = now_ns;
  return StartResult::kStarted;
}

unsigned NeighbourTable::due_solicitations(std::uint64_t now_ns, Ipv6Address* ips, unsigned max, unsigned& failed) {
  failed = 0;
  if (now_ns < next_due_ns_) return 0;
  unsigned k = 0;
  std::uint64_t next = kNever;
  for (Neighbour& n : entries_) {
    if (n.state != NeighbourState::kIncomplete) continue;
    if (n.deadline_ns <= now_ns) {
      if (n.solicitations_sent >= cfg_.max_solicitations) {
        // The last solicitation's interval passed without an advertisement (§7.2.2).
        n.state = NeighbourState::kFailed;
        n.deadline_ns = now_ns;
        ++failed;
        continue;
      }
      if (k < max) {
        if (n.solicitations_sent == 0) n.started_ns = now_ns;  // the failure's words count from here
        ips[k++] = n.ip;
        ++n.solicitations_sent;
        n.deadline_ns = now_ns + cfg_.retry_interval_ns;
      }
    }
    if (n.deadline_ns < next) next = n.deadline_ns;  // still due when `ips` was full: next call
  }
  next_due_ns_ = next;
  return k;
}

void NeighbourTable::learn(Neighbour& n, const std::uint8_t* mac, std::uint64_t now_ns) {
  std::memcpy(n.mac, mac, 6);
  n.state = NeighbourState::kReachable;
  n.deadline_ns = now_ns + cfg_.lifetime_ns;
}

NdVerdict NeighbourTable::on_nd(const NdFrame& f, bool any_dst_mac, std::uint64_t now_ns) {
  if (!any_dst_mac && std::memcmp(f.eth_dst, cfg_.local_mac, 6) != 0) {
    // Multicast ND reaches us at our solicited-node group's MAC (solicitations for us) or all
    // nodes' (unsolicited advertisements, answers to DAD probes).
    std::uint8_t groups[kNdGroupCount][6];
    nd_group_macs(cfg_.local_ip.data(), groups);
    if (std::memcmp(f.eth_dst, groups[0], 6) != 0 && std::memcmp(f.eth_dst, groups[1], 6) != 0) {
      NdVerdict v;
      v.ignored = NdIgnore::kNotOurMac;
      return v;
    }
  }
  return f.type == NdType::kSolicitation ? on_solicitation(f, now_ns) : on_advertisement(f, now_ns);
}

NdVerdict NeighbourTable::on_solicitation(const NdFrame& f, std::uint64_t now_ns) {
  NdVerdict v;
  const Ipv6Address target = to_address(f.target);
  // Solicitations for other targets (others' resolutions, others' DAD) teach nothing.
  if (target != cfg_.local_ip) {
    v.ignored = NdIgnore::kNotForUs;
    return v;
  }
  const Ipv6Address src = to_address(f.ip_src);
  if (src == cfg_.local_ip) {
    v.ignored = NdIgnore::kAddressConflict;
    return v;
  }
  if (f.has_link_addr && !usable_mac(f.link_addr)) {
    v.ignored = NdIgnore::kBadLinkAddress;
    return v;
  }
  if (is_unspecified(f.ip_src)) {
    // A DAD probe for our address (RFC 4862 §5.4.3): the answer goes to all nodes with S clear
    // (§7.2.4), so that the prober sees the address is taken; there is no address to learn.
    v.reply = true;
    multicast_mac(kAllNodes, v.reply_mac);
    std::memcpy(v.reply_ip, kAllNodes, 16);
    return v;
  }
  if (!resolvable(src)) {
    v.ignored = NdIgnore::kBadSenderIp;
    return v;
  }
  v.reply = true;
  v.reply_solicited = true;
  std::memcpy(v.reply_ip, f.ip_src, 16);
  // The answer goes to the asker's link-layer address; a solicitation without one (a unicast
  // NUD probe, §7.2.4) is answered to the MAC it came from, which we do not learn (§7.2.3
  // learns from the option only).
  std::memcpy(v.reply_mac, f.has_link_addr ? f.link_addr : f.eth_src, 6);
  if (!f.has_link_addr) return v;
  if (!usable_mac(v.reply_mac)) {
    v.reply = false;
    v.ignored = NdIgnore::kBadLinkAddress;
    return v;
  }
  Neighbour* n = lookup(src);
  if (n == nullptr) {
    n = claim(now_ns);
    if (n == nullptr) {
      v.ignored = NdIgnore::kTableFull;
      return v;
    }
    *n = Neighbour{};
    n->ip = src;
    n->started_ns = now_ns;
  }
  // The asker is about to talk to us: its MAC saves us a solicitation (§7.2.3).
  learn(*n, f.link_addr, now_ns);
  v.learned = true;
  return v;
}

NdVerdict NeighbourTable::on_advertisement(const NdFrame& f, std::uint64_t now_ns) {
  NdVerdict v;
  const Ipv6Address target = to_address(f.target);
  if (target == cfg_.local_ip) {
    v.ignored = NdIgnore::kAddressConflict;  // another node claims our address
    return v;
  }
  Neighbour* n = lookup(target);
  if (n == nullptr) {
    v.ignored = NdIgnore::kUnsolicitedAdvertisement;  // §7.2.5: silently discarded
    return v;
  }
  if (!f.has_link_addr) {
    // Without the option an INCOMPLETE entry has nothing to learn (§7.2.5); a known one keeps
    // its MAC (its reachability would be NUD's, which we do not run).
    v.ignored = NdIgnore::kNoLinkAddress;
    return v;
  }
  if (!usable_mac(f.link_addr)) {
    v.ignored = NdIgnore::kBadLinkAddress;
    return v;
  }
  // §7.2.5: a known entry takes a different MAC only when Override is set.
  if (n->state == NeighbourState::kReachable && !f.override_flag && std::memcmp(n->mac, f.link_addr, 6) != 0) {
    v.ignored = NdIgnore::kNoOverride;
    return v;
  }
  learn(*n, f.link_addr, now_ns);
  v.learned = true;
  return v;
}

}  // namespace droce::nd
