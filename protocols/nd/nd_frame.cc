// Neighbor Solicitation / Advertisement frames (RFC 4861): strict parse and the three builders.
#include "protocols/nd/nd_frame.h"

#include <rte_ip.h>

#include <cstring>

namespace droce::nd {
namespace {

constexpr std::uint8_t kSolicitedNodePrefix[13] = {0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xFF};

template <typename T>
const T* header_at(const std::uint8_t* frame, std::uint32_t len, std::uint32_t off) {
  return off + sizeof(T) <= len ? reinterpret_cast<const T*>(frame + off) : nullptr;
}

// wire::Ipv6Hdr is rte_ipv6_hdr byte for byte (both packed), so DPDK's checksum reads it as is.
const rte_ipv6_hdr* as_rte(const wire::Ipv6Hdr* ip) { return reinterpret_cast<const rte_ipv6_hdr*>(ip); }
static_assert(sizeof(rte_ipv6_hdr) == sizeof(wire::Ipv6Hdr));

bool is_solicited_node(const std::uint8_t ip[16]) { return std::memcmp(ip, kSolicitedNodePrefix, 13) == 0; }

// Ethernet [802.1Q] IPv6 NS/NA with one link-layer option; returns the frame length.
std::uint32_t write_frame(const NdSender& self, const std::uint8_t eth_dst[6], const std::uint8_t ip_dst[16],
                          std::uint8_t type, std::uint32_t flags, const std::uint8_t target[16], std::uint8_t* out,
                          std::uint32_t room) {
  const std::uint32_t l2 = sizeof(wire::EthHdr) + (self.vlan_id != 0 ? sizeof(wire::VlanHdr) : 0u);
  constexpr std::uint32_t kIcmpBytes = sizeof(NdMessageHdr) + sizeof(LinkLayerOption);
  const std::uint32_t total = l2 + sizeof(wire::Ipv6Hdr) + kIcmpBytes;
  if (room < total) return 0;
  std::memset(out, 0, total);
  auto* eth = reinterpret_cast<wire::EthHdr*>(out);
  std::memcpy(eth->dst, eth_dst, 6);
  std::memcpy(eth->src, self.mac, 6);
  if (self.vlan_id != 0) {
    eth->ether_type = wire::Be16(wire::kEtherTypeVlan);
    auto* tag = reinterpret_cast<wire::VlanHdr*>(out + sizeof(wire::EthHdr));
    tag->tci = wire::Be16(static_cast<std::uint16_t>(((self.vlan_pcp & 7u) << 13) | (self.vlan_id & 0x0FFFu)));
    tag->ether_type = wire::Be16(wire::kEtherTypeIpv6);
  } else {
    eth->ether_type = wire::Be16(wire::kEtherTypeIpv6);
  }
  auto* ip = reinterpret_cast<wire::Ipv6Hdr*>(out + l2);
  ip->vtc_flow = wire::Be32(6u << 28);  // traffic class 0, flow label 0
  ip->payload_len = wire::Be16(static_cast<std::uint16_t>(kIcmpBytes));
  ip->next_header = kIpProtoIcmpv6;
  ip->hop_limits = kNdHopLimit;
  std::memcpy(ip->src_addr, self.ip, 16);
  std::memcpy(ip->dst_addr, ip_dst, 16);
  auto* m = reinterpret_cast<NdMessageHdr*>(out + l2 + sizeof(wire::Ipv6Hdr));
  m->type = type;
  m->code = 0;
  m->flags = wire::Be32(flags);
  std::memcpy(m->target, target, 16);
  auto* opt = reinterpret_cast<LinkLayerOption*>(out + l2 + sizeof(wire::Ipv6Hdr) + sizeof(NdMessageHdr));
  opt->type = type == kIcmpv6NeighborSolicitation ? kOptSourceLinkLayer : kOptTargetLinkLayer;
  opt->length = 1;
  std::memcpy(opt->mac, self.mac, 6);
  // The checksum field is zero here; DPDK's sum comes back in network order (rte_be16_t).
  m->checksum = wire::Be16(rte_be_to_cpu_16(rte_ipv6_udptcp_cksum(as_rte(ip), m)));
  return total;
}

}  // namespace

bool is_unspecified(const std::uint8_t ip[16]) {
  for (int i = 0; i < 16; ++i)
    if (ip[i] != 0) return false;
  return true;
}

void solicited_node(const std::uint8_t ip[16], std::uint8_t out[16]) {
  std::memcpy(out, kSolicitedNodePrefix, 13);
  std::memcpy(out + 13, ip + 13, 3);
}

void multicast_mac(const std::uint8_t ip[16], std::uint8_t mac[6]) {
  mac[0] = 0x33;
  mac[1] = 0x33;
  std::memcpy(mac + 2, ip + 12, 4);
}

void nd_group_macs(const std::uint8_t ip[16], std::uint8_t macs[kNdGroupCount][6]) {
  std::uint8_t group[16];
  solicited_node(ip, group);
  multicast_mac(group, macs[0]);
  multicast_mac(kAllNodes, macs[1]);
}

NdRefusal parse_nd(const std::uint8_t* frame, std::uint32_t len, NdFrame& out) {
  out = NdFrame{};
  const auto* eth = header_at<wire::EthHdr>(frame, len, 0);
  if (eth == nullptr) return NdRefusal::kTruncatedEthernet;
  std::uint32_t off = sizeof(wire::EthHdr);
  std::uint16_t type = eth->ether_type.value();
  if (type == wire::kEtherTypeQinQ) return NdRefusal::kStackedVlan;
  if (type == wire::kEtherTypeVlan) {
    const auto* tag = header_at<wire::VlanHdr>(frame, len, off);
    if (tag == nullptr) return NdRefusal::kTruncatedEthernet;
    out.has_vlan = true;
    out.vlan_id = tag->vid();
    type = tag->ether_type.value();
    off += sizeof(wire::VlanHdr);
    if (type == wire::kEtherTypeVlan || type == wire::kEtherTypeQinQ) return NdRefusal::kStackedVlan;
  }
  if (type != wire::kEtherTypeIpv6) return NdRefusal::kNotIpv6;
  const auto* ip = header_at<wire::Ipv6Hdr>(frame, len, off);
  if (ip == nullptr) return NdRefusal::kTruncatedIpv6;
  if (ip->version() != 6) return NdRefusal::kBadIpVersion;
  off += sizeof(wire::Ipv6Hdr);
  // The ICMPv6 length is the IPv6 payload's (no extension headers, §7.1.1 "ICMP length
  // (derived from the IP length)").
  const std::uint32_t icmp_len = ip->payload_len.value();
  if (off + icmp_len > len) return NdRefusal::kBadPayloadLength;
  if (ip->next_header != kIpProtoIcmpv6) return NdRefusal::kNotIcmpv6;
  if (icmp_len < 1) return NdRefusal::kNotNd;
  const std::uint8_t icmp_type = frame[off];
  if (icmp_type != kIcmpv6NeighborSolicitation && icmp_type != kIcmpv6NeighborAdvertisement) return NdRefusal::kNotNd;
  // §7.1.1 / §7.1.2, in their order.
  if (ip->hop_limits != kNdHopLimit) return NdRefusal::kBadHopLimit;
  if (icmp_len < sizeof(NdMessageHdr)) return NdRefusal::kTooShort;
  const auto* m = reinterpret_cast<const NdMessageHdr*>(frame + off);
  if (rte_ipv6_udptcp_cksum_verify(as_rte(ip), m) != 0) return NdRefusal::kBadChecksum;
  if (m->code != 0) return NdRefusal::kBadCode;
  if (is_multicast(m->target)) return NdRefusal::kMulticastTarget;
  // No NS asks for :: (§4.3: the target is an address of the solicited node) and an NA answers an
  // NS (§4.4), so a target of :: names nobody; taking it would enter :: in the neighbour table.
  if (is_unspecified(m->target)) return NdRefusal::kUnspecifiedTarget;
  const bool ns = icmp_type == kIcmpv6NeighborSolicitation;
  const std::uint8_t wanted = ns ? kOptSourceLinkLayer : kOptTargetLinkLayer;
  // Options: every one has a length > 0 and ends within the message (§7.1.1). At most
  // icmp_len / 8 of them, so the walk is bounded.
  std::uint32_t o = sizeof(NdMessageHdr);
  while (o < icmp_len) {
    if (o + 2 > icmp_len) return NdRefusal::kBadOptionLength;
    const std::uint8_t opt_type = frame[off + o];
    const std::uint32_t opt_bytes = 8u * frame[off + o + 1];
    if (opt_bytes == 0 || o + opt_bytes > icmp_len) return NdRefusal::kBadOptionLength;
    if (opt_type == kOptSourceLinkLayer || opt_type == kOptTargetLinkLayer) {
      // RFC 2464 §8: on Ethernet the option is 8 bytes. One that is not names no MAC we can use.
      if (opt_bytes != sizeof(LinkLayerOption)) return NdRefusal::kBadLinkLayerOption;
      // The option of the other message kind is not ours to read (§4.3, §4.4): skipped.
      if (opt_type == wanted && !out.has_link_addr) {
        out.has_link_addr = true;
        std::memcpy(out.link_addr, frame + off + o + 2, 6);
      }
    }
    o += opt_bytes;
  }
  const bool unspecified_src = is_unspecified(ip->src_addr);
  if (ns && unspecified_src) {
    // Duplicate Address Detection's probe (RFC 4862 §5.4.2).
    if (!is_solicited_node(ip->dst_addr)) return NdRefusal::kUnspecifiedSourceNotSolicitedNode;
    if (out.has_link_addr) return NdRefusal::kUnspecifiedSourceWithOption;
  }
  const std::uint32_t flags = m->flags.value();
  if (!ns && is_multicast(ip->dst_addr) && (flags & kNaFlagSolicited) != 0) return NdRefusal::kSolicitedToMulticast;

  std::memcpy(out.eth_dst, eth->dst, 6);
  std::memcpy(out.eth_src, eth->src, 6);
  std::memcpy(out.ip_src, ip->src_addr, 16);
  std::memcpy(out.ip_dst, ip->dst_addr, 16);
  out.type = ns ? NdType::kSolicitation : NdType::kAdvertisement;
  if (!ns) {
    out.router = (flags & kNaFlagRouter) != 0;
    out.solicited = (flags & kNaFlagSolicited) != 0;
    out.override_flag = (flags & kNaFlagOverride) != 0;
  }
  std::memcpy(out.target, m->target, 16);
  return NdRefusal::kNone;
}

std::uint32_t build_ns(const NdSender& self, const std::uint8_t target[16], std::uint8_t* out, std::uint32_t room) {
  std::uint8_t group[16];
  std::uint8_t mac[6];
  solicited_node(target, group);
  multicast_mac(group, mac);
  return write_frame(self, mac, group, kIcmpv6NeighborSolicitation, 0, target, out, room);
}

std::uint32_t build_na(const NdSender& self, const std::uint8_t to_mac[6], const std::uint8_t to_ip[16], bool solicited,
                       std::uint8_t* out, std::uint32_t room) {
  const std::uint32_t flags = kNaFlagOverride | (solicited ? kNaFlagSolicited : 0u);
  return write_frame(self, to_mac, to_ip, kIcmpv6NeighborAdvertisement, flags, self.ip, out, room);
}

std::uint32_t build_unsolicited_na(const NdSender& self, std::uint8_t* out, std::uint32_t room) {
  std::uint8_t mac[6];
  multicast_mac(kAllNodes, mac);
  return build_na(self, mac, kAllNodes, false, out, room);
}

}  // namespace droce::nd
