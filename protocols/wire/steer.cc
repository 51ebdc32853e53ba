// steer_peek: bounds-checked walk over Ethernet, 802.1Q, IPv4/IPv6, UDP to the BTH's DestQP; ARP
// and ICMPv6 (Neighbor Discovery) recognised on the way.
#include "protocols/wire/steer.h"

#include "protocols/wire/l2l3_headers.h"

namespace droce::wire {
namespace {

constexpr std::uint32_t kEthBytes = 14;
constexpr std::uint32_t kVlanBytes = 4;
constexpr std::uint32_t kIpv6Bytes = 40;
constexpr std::uint32_t kUdpBytes = 8;
constexpr std::uint32_t kBthBytes = 12;
constexpr std::uint32_t kBthDestQpOffset = 5;  // BTH bytes 5..7: DestQP (IBTA §9.2, figure 42)
constexpr std::uint8_t kIpProtoIcmpv6 = 58;    // IPv6 next header of ICMPv6 (RFC 4443), ND's carrier

std::uint16_t be16_at(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }

// Offset of the UDP header after an IPv4 header at `off`, or 0 when the frame is not UDP, is a
// fragment, or is cut short.
std::uint32_t udp_after_ipv4(const std::uint8_t* f, std::uint32_t len, std::uint32_t off) {
  if (len < off + 20) return 0;
  const std::uint8_t version = f[off] >> 4;
  const std::uint32_t ihl_bytes = (f[off] & 0x0Fu) * 4u;
  if (version != 4 || ihl_bytes < 20) return 0;
  if (f[off + 9] != kIpProtoUdp) return 0;
  // Any fragment (MF set or a non-zero offset): only the first carries the UDP header, and the
  // endpoint drops fragments anyway; steering by a partial header would be a guess.
  if ((be16_at(f + off + 6) & 0x3FFF) != 0) return 0;
  return off + ihl_bytes;
}

std::uint32_t udp_after_ipv6(const std::uint8_t* f, std::uint32_t len, std::uint32_t off) {
  if (len < off + kIpv6Bytes) return 0;
  if ((f[off] >> 4) != 6 || f[off + 6] != kIpProtoUdp) return 0;
  return off + kIpv6Bytes;
}

}  // namespace

SteerPeek steer_peek(const std::uint8_t* frame, std::uint32_t len) {
  SteerPeek out;
  if (frame == nullptr || len < kEthBytes) return out;
  std::uint32_t off = 12;
  std::uint16_t type = be16_at(frame + off);
  if (type == kEtherTypeMacControl) {
    out.cls = SteerClass::kMacControl;
    return out;
  }
  off = kEthBytes;
  if (type == kEtherTypeVlan) {
    if (len < off + kVlanBytes) return out;
    type = be16_at(frame + off + 2);
    off += kVlanBytes;
  }
  // ARP and ND go to the one endpoint that keeps the port's neighbour table. ND is taken as an
  // ICMPv6 message straight after the fixed IPv6 header, as Linux and droce send it; one behind an
  // extension header stays where it arrived (the endpoint's ND ignores those too).
  if (type == kEtherTypeArp) {
    out.cls = SteerClass::kNeighbour;
    return out;
  }
  if (type == kEtherTypeIpv6 && len >= off + kIpv6Bytes && (frame[off] >> 4) == 6 && frame[off + 6] == kIpProtoIcmpv6) {
    out.cls = SteerClass::kNeighbour;
    return out;
  }
  std::uint32_t udp = 0;
  if (type == kEtherTypeIpv4)
    udp = udp_after_ipv4(frame, len, off);
  else if (type == kEtherTypeIpv6)
    udp = udp_after_ipv6(frame, len, off);
  if (udp == 0 || len < udp + kUdpBytes + kBthBytes) return out;
  if (be16_at(frame + udp + 2) != kRoceV2UdpPort) return out;
  const std::uint8_t* q = frame + udp + kUdpBytes + kBthDestQpOffset;
  out.cls = SteerClass::kRoceV2;
  out.dest_qpn = (static_cast<std::uint32_t>(q[0]) << 16) | (static_cast<std::uint32_t>(q[1]) << 8) | q[2];
  return out;
}

}  // namespace droce::wire
