// Ethernet, IEEE 802.1Q, IPv4, IPv6 and UDP headers as carried under RoCEv2 (IBTA Annex A17.4).
#pragma once

#include <cstdint>

#include "protocols/wire/be.h"

namespace droce::wire {

// These mirror DPDK's rte_ether_hdr / rte_vlan_hdr / rte_ipv4_hdr / rte_ipv6_hdr / rte_udp_hdr
// byte for byte, but with strong big-endian fields so that a missing byte swap is a compile
// error, and alignment 1 so they can overlay any offset. DPDK's constants (ether types,
// protocol numbers) and checksum routines are used by the code that needs them.
struct EthHdr {
  std::uint8_t dst[6];
  std::uint8_t src[6];
  Be16 ether_type;
};
static_assert(sizeof(EthHdr) == 14);

struct VlanHdr {  // IEEE 802.1Q tag: PCP(15:13) DEI(12) VID(11:0), then the inner ether type
  Be16 tci;
  Be16 ether_type;
  [[nodiscard]] constexpr std::uint8_t pcp() const { return static_cast<std::uint8_t>(tci.value() >> 13); }
  [[nodiscard]] constexpr std::uint16_t vid() const { return tci.value() & 0x0FFF; }
};
static_assert(sizeof(VlanHdr) == 4);

inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr std::uint16_t kEtherTypeVlan = 0x8100;
inline constexpr std::uint16_t kEtherTypeQinQ = 0x88A8;
inline constexpr std::uint16_t kEtherTypeArp = 0x0806;
inline constexpr std::uint16_t kEtherTypeMacControl = 0x8808;  // PAUSE / PFC (802.1Qbb)
inline constexpr std::uint8_t kIpProtoUdp = 17;
inline constexpr std::uint16_t kRoceV2UdpPort = 4791;  // IANA, Annex A17.4.2

struct Ipv4Hdr {
  std::uint8_t version_ihl;  // version(7:4) IHL(3:0) in 32-bit words
  std::uint8_t tos;          // DSCP(7:2) ECN(1:0)
  Be16 total_length;
  Be16 packet_id;
  Be16 fragment_offset;  // flags(15:13: reserved, DF, MF) offset(12:0)
  std::uint8_t ttl;
  std::uint8_t protocol;
  Be16 hdr_checksum;
  std::uint8_t src_addr[4];
  std::uint8_t dst_addr[4];

  [[nodiscard]] constexpr std::uint8_t version() const { return version_ihl >> 4; }
  [[nodiscard]] constexpr std::uint32_t header_bytes() const { return (version_ihl & 0x0Fu) * 4u; }
  [[nodiscard]] constexpr std::uint8_t ecn() const { return tos & 0x03; }
  [[nodiscard]] constexpr std::uint8_t dscp() const { return tos >> 2; }
  [[nodiscard]] constexpr bool more_fragments() const { return (fragment_offset.value() & 0x2000) != 0; }
  [[nodiscard]] constexpr std::uint16_t frag_offset_units() const { return fragment_offset.value() & 0x1FFF; }
};
static_assert(sizeof(Ipv4Hdr) == 20);
inline constexpr std::uint16_t kIpv4DontFragment = 0x4000;

struct Ipv6Hdr {
  Be32 vtc_flow;  // version(31:28) traffic class(27:20) flow label(19:0)
  Be16 payload_len;
  std::uint8_t next_header;
  std::uint8_t hop_limits;
  std::uint8_t src_addr[16];
  std::uint8_t dst_addr[16];

  [[nodiscard]] constexpr std::uint8_t version() const { return static_cast<std::uint8_t>(vtc_flow.value() >> 28); }
  [[nodiscard]] constexpr std::uint8_t traffic_class() const {
    return static_cast<std::uint8_t>(vtc_flow.value() >> 20);
  }
  [[nodiscard]] constexpr std::uint8_t ecn() const { return traffic_class() & 0x03; }
};
static_assert(sizeof(Ipv6Hdr) == 40);

struct UdpHdr {
  Be16 src_port;
  Be16 dst_port;
  Be16 dgram_len;
  Be16 dgram_cksum;  // RoCEv2 senders put 0 here (A17.4.2); receivers must not require it
};
static_assert(sizeof(UdpHdr) == 8);

// ECN codepoints (RFC 3168 §5) in the low two bits of TOS / traffic class.
inline constexpr std::uint8_t kEcnNotEct = 0b00;
inline constexpr std::uint8_t kEcnEct1 = 0b01;
inline constexpr std::uint8_t kEcnEct0 = 0b10;
inline constexpr std::uint8_t kEcnCe = 0b11;

}  // namespace droce::wire
