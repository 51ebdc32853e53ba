// The IPv6 neighbour table: Neighbor Discovery's learning rules (RFC 4861 §7.2.3, §7.2.5),
// resolution's retries and failure (§7.2.2), with the RFC's default timers (§10).
#include "protocols/nd/neighbour_table.h"

#include <cstring>

namespace droce::nd {

bool NeighbourTable::resolvable(const Ipv6Address& ip) const {
  static constexpr std::uint8_t kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static constexpr std::uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  if (ip == cfg_.local_ip || is_unspecified(ip.data()) || is_multicast(ip.data())) return false;
  return std::memcmp(ip.data(), kLoopback, 16) != 0 && std::memcmp(ip.data(), kV4Mapped, 12) != 0;
}

NdVerdict NeighbourTable::on_frame(const NdFrame& f, bool any_dst_mac, std::uint64_t now_ns) {
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
  if (f.has_link_addr && !neighbour::usable_mac(f.link_addr)) {
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
  if (!neighbour::usable_mac(v.reply_mac)) {
    v.reply = false;
    v.ignored = NdIgnore::kBadLinkAddress;
    return v;
  }
  Neighbour* n = cache_.lookup(src);
  if (n == nullptr) {
    n = cache_.claim(src, now_ns);
    if (n == nullptr) {
      v.ignored = NdIgnore::kTableFull;
      return v;
    }
  }
  // The asker is about to talk to us: its MAC saves us a solicitation (§7.2.3).
  cache_.learn(*n, f.link_addr, now_ns);
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
  Neighbour* n = cache_.lookup(target);
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
  if (!neighbour::usable_mac(f.link_addr)) {
    v.ignored = NdIgnore::kBadLinkAddress;
    return v;
  }
  // §7.2.5: a known entry takes a different MAC only when Override is set.
  if (n->state == NeighbourState::kReachable && !f.override_flag && std::memcmp(n->mac, f.link_addr, 6) != 0) {
    v.ignored = NdIgnore::kNoOverride;
    return v;
  }
  cache_.learn(*n, f.link_addr, now_ns);
  v.learned = true;
  return v;
}

}  // namespace droce::nd
