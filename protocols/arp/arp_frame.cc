// ARP frames (RFC 826): strict parse, and request / reply / announcement builders.
#include "protocols/arp/arp_frame.h"

#include <cstring>

namespace droce::arp {
namespace {

constexpr std::uint8_t kBroadcastMac[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

template <typename T>
const T* header_at(const std::uint8_t* frame, std::uint32_t len, std::uint32_t off) {
  return off + sizeof(T) <= len ? reinterpret_cast<const T*>(frame + off) : nullptr;
}

// Ethernet [802.1Q] ARP, zero padding to the minimum frame; returns the frame length.
std::uint32_t write_frame(const ArpSender& self, const std::uint8_t* eth_dst, ArpOp op, const std::uint8_t* target_mac,
                          std::uint32_t target_ip, std::uint8_t* out, std::uint32_t room) {
  if (room < kArpFrameBytes) return 0;
  std::memset(out, 0, kArpFrameBytes);
  auto* eth = reinterpret_cast<wire::EthHdr*>(out);
  std::memcpy(eth->dst, eth_dst, 6);
  std::memcpy(eth->src, self.mac, 6);
  std::uint32_t off = sizeof(wire::EthHdr);
  if (self.vlan_id != 0) {
    eth->ether_type = wire::Be16(wire::kEtherTypeVlan);
    auto* tag = reinterpret_cast<wire::VlanHdr*>(out + off);
    tag->tci = wire::Be16(static_cast<std::uint16_t>(((self.vlan_pcp & 7u) << 13) | (self.vlan_id & 0x0FFFu)));
    tag->ether_type = wire::Be16(wire::kEtherTypeArp);
    off += sizeof(wire::VlanHdr);
  } else {
    eth->ether_type = wire::Be16(wire::kEtherTypeArp);
  }
  auto* a = reinterpret_cast<ArpHdr*>(out + off);
  a->htype = wire::Be16(kArpHtypeEthernet);
  a->ptype = wire::Be16(wire::kEtherTypeIpv4);
  a->hlen = kArpHlenEthernet;
  a->plen = kArpPlenIpv4;
  a->op = wire::Be16(static_cast<std::uint16_t>(op));
  std::memcpy(a->sender_mac, self.mac, 6);
  store_ipv4(self.ip, a->sender_ip);
  std::memcpy(a->target_mac, target_mac, 6);
  store_ipv4(target_ip, a->target_ip);
  return kArpFrameBytes;
}

}  // namespace

std::uint32_t load_ipv4(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

void store_ipv4(std::uint32_t ip, std::uint8_t* p) {
  p[0] = static_cast<std::uint8_t>(ip >> 24);
  p[1] = static_cast<std::uint8_t>(ip >> 16);
  p[2] = static_cast<std::uint8_t>(ip >> 8);
  p[3] = static_cast<std::uint8_t>(ip);
}

ArpRefusal parse_arp(const std::uint8_t* frame, std::uint32_t len, ArpFrame& out) {
  out = ArpFrame{};
  const auto* eth = header_at<wire::EthHdr>(frame, len, 0);
  if (eth == nullptr) return ArpRefusal::kTruncatedEthernet;
  std::uint32_t off = sizeof(wire::EthHdr);
  std::uint16_t type = eth->ether_type.value();
  if (type == wire::kEtherTypeQinQ) return ArpRefusal::kStackedVlan;
  if (type == wire::kEtherTypeVlan) {
    const auto* tag = header_at<wire::VlanHdr>(frame, len, off);
    if (tag == nullptr) return ArpRefusal::kTruncatedEthernet;
    out.has_vlan = true;
    out.vlan_id = tag->vid();
    type = tag->ether_type.value();
    off += sizeof(wire::VlanHdr);
    if (type == wire::kEtherTypeVlan || type == wire::kEtherTypeQinQ) return ArpRefusal::kStackedVlan;
  }
  if (type != wire::kEtherTypeArp) return ArpRefusal::kNotArp;
  const auto* a = header_at<ArpHdr>(frame, len, off);
  if (a == nullptr) return ArpRefusal::kTruncatedArp;
  // RFC 826 lets ar$hln / ar$pln vary with the hardware and protocol; for Ethernet and IPv4 they
  // are 6 and 4, and a frame saying otherwise does not describe addresses we could use.
  if (a->htype.value() != kArpHtypeEthernet) return ArpRefusal::kBadHardwareType;
  if (a->ptype.value() != wire::kEtherTypeIpv4) return ArpRefusal::kBadProtocolType;
  if (a->hlen != kArpHlenEthernet) return ArpRefusal::kBadHardwareLength;
  if (a->plen != kArpPlenIpv4) return ArpRefusal::kBadProtocolLength;
  const std::uint16_t op = a->op.value();
  if (op != static_cast<std::uint16_t>(ArpOp::kRequest) && op != static_cast<std::uint16_t>(ArpOp::kReply))
    return ArpRefusal::kBadOp;  // RARP (3, 4), InARP (8, 9) and the rest are not ours to answer
  std::memcpy(out.eth_dst, eth->dst, 6);
  std::memcpy(out.eth_src, eth->src, 6);
  out.op = static_cast<ArpOp>(op);
  std::memcpy(out.sender_mac, a->sender_mac, 6);
  out.sender_ip = load_ipv4(a->sender_ip);
  std::memcpy(out.target_mac, a->target_mac, 6);
  out.target_ip = load_ipv4(a->target_ip);
  return ArpRefusal::kNone;
}

std::uint32_t build_arp_request(const ArpSender& self, std::uint32_t target_ip, std::uint8_t* out, std::uint32_t room) {
  constexpr std::uint8_t kUnknownMac[6] = {};
  return write_frame(self, kBroadcastMac, ArpOp::kRequest, kUnknownMac, target_ip, out, room);
}

std::uint32_t build_arp_reply(const ArpSender& self, const std::uint8_t* to_mac, std::uint32_t to_ip, std::uint8_t* out,
                              std::uint32_t room) {
  return write_frame(self, to_mac, ArpOp::kReply, to_mac, to_ip, out, room);
}

std::uint32_t build_gratuitous_arp(const ArpSender& self, std::uint8_t* out, std::uint32_t room) {
  constexpr std::uint8_t kUnknownMac[6] = {};
  return write_frame(self, kBroadcastMac, ArpOp::kRequest, kUnknownMac, self.ip, out, room);
}

}  // namespace droce::arp
