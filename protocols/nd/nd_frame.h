// IPv6 Neighbor Discovery over Ethernet (RFC 4861): a strict parser for Neighbor Solicitation
// and Neighbor Advertisement (ICMPv6 types 135 and 136, §4.3 and §4.4) and the frames droce
// sends — the solicitation that resolves a neighbour, the advertisement that answers one, and the
// unsolicited advertisement that announces us (§7.2.6). The ICMPv6 checksum (RFC 4443 §2.3) is
// DPDK's (rte_ipv6_udptcp_cksum: its pseudo-header takes the next header from the IPv6 header).
#pragma once

#include <cstdint>
#include <string_view>

#include "protocols/wire/be.h"
#include "protocols/wire/l2l3_headers.h"

namespace droce::nd {

inline constexpr std::uint8_t kIpProtoIcmpv6 = 58;
inline constexpr std::uint8_t kIcmpv6NeighborSolicitation = 135;
inline constexpr std::uint8_t kIcmpv6NeighborAdvertisement = 136;
// Every ND message leaves with hop limit 255, and one that arrives with less was forwarded by a
// router: not from a neighbour on our link (§7.1.1, §7.1.2).
inline constexpr std::uint8_t kNdHopLimit = 255;

// NS (§4.3) and NA (§4.4) share their fixed part: the ICMPv6 header, 32 bits of flags
// (NA: R, S, O; NS: reserved, zero) and the target address. Options follow, in units of 8 bytes.
struct NdMessageHdr {
  std::uint8_t type;
  std::uint8_t code;
  wire::Be16 checksum;
  wire::Be32 flags;  // NS: reserved
  std::uint8_t target[16];
};
static_assert(sizeof(NdMessageHdr) == 24);
inline constexpr std::uint32_t kNaFlagRouter = 0x80000000u;
inline constexpr std::uint32_t kNaFlagSolicited = 0x40000000u;
inline constexpr std::uint32_t kNaFlagOverride = 0x20000000u;

// Source / Target Link-layer Address option (§4.6.1); on Ethernet its length is 1 (8 bytes:
// type, length and the 6-byte MAC, RFC 2464 §8).
struct LinkLayerOption {
  std::uint8_t type;
  std::uint8_t length;  // in units of 8 bytes
  std::uint8_t mac[6];
};
static_assert(sizeof(LinkLayerOption) == 8);
inline constexpr std::uint8_t kOptSourceLinkLayer = 1;
inline constexpr std::uint8_t kOptTargetLinkLayer = 2;

// Room a builder needs: Ethernet, one 802.1Q tag, IPv6, the NS/NA and one link-layer option.
inline constexpr std::uint32_t kNdFrameBytes = sizeof(wire::EthHdr) + sizeof(wire::VlanHdr) + sizeof(wire::Ipv6Hdr) +
                                               sizeof(NdMessageHdr) + sizeof(LinkLayerOption);
static_assert(kNdFrameBytes == 90);

// Why a frame was not taken as NS or NA: one value per rule, named for counters. kNotIpv6,
// kNotIcmpv6 and kNotNd say the frame is something else (not ND at all); the rest are ND that
// RFC 4861 §7.1 tells receivers to discard silently.
#define DROCE_ND_REFUSALS(X)                                                     \
  X(kNone, "none")                                                               \
  X(kTruncatedEthernet, "truncated_ethernet")                                    \
  X(kStackedVlan, "stacked_vlan")                                                \
  X(kNotIpv6, "not_ipv6")                                                        \
  X(kTruncatedIpv6, "truncated_ipv6")                                            \
  X(kBadIpVersion, "bad_ip_version")                                             \
  X(kBadPayloadLength, "bad_payload_length")                                     \
  X(kNotIcmpv6, "not_icmpv6")                                                    \
  X(kNotNd, "not_nd")                                                            \
  X(kBadHopLimit, "bad_hop_limit")                                               \
  X(kBadCode, "bad_code")                                                        \
  X(kTooShort, "too_short")                                                      \
  X(kBadChecksum, "bad_checksum")                                                \
  X(kMulticastTarget, "multicast_target")                                        \
  X(kUnspecifiedTarget, "unspecified_target")                                    \
  X(kBadOptionLength, "bad_option_length")                                       \
  X(kBadLinkLayerOption, "bad_link_layer_option")                                \
  X(kUnspecifiedSourceNotSolicitedNode, "unspecified_source_not_solicited_node") \
  X(kUnspecifiedSourceWithOption, "unspecified_source_with_option")              \
  X(kSolicitedToMulticast, "solicited_to_multicast")

enum class NdRefusal : std::uint8_t {
#define DROCE_ND_ENUM(name, str) name,
  DROCE_ND_REFUSALS(DROCE_ND_ENUM)
#undef DROCE_ND_ENUM
      kCount
};
inline constexpr std::size_t kNdRefusalCount = static_cast<std::size_t>(NdRefusal::kCount);

[[nodiscard]] constexpr std::string_view nd_refusal_name(NdRefusal r) {
  constexpr std::string_view kNames[] = {
#define DROCE_ND_NAME(name, str) str,
      DROCE_ND_REFUSALS(DROCE_ND_NAME)
#undef DROCE_ND_NAME
  };
  const auto i = static_cast<std::size_t>(r);
  return i < kNdRefusalCount ? kNames[i] : std::string_view{"invalid"};
}

// True when the frame is not ND at all (the caller's other rules apply to it).
[[nodiscard]] constexpr bool not_nd(NdRefusal r) {
  return r == NdRefusal::kNotIpv6 || r == NdRefusal::kNotIcmpv6 || r == NdRefusal::kNotNd;
}

// Address kinds (RFC 4291 §2.5.2, §2.7).
[[nodiscard]] bool is_unspecified(const std::uint8_t ip[16]);
[[nodiscard]] constexpr bool is_multicast(const std::uint8_t ip[16]) { return ip[0] == 0xFF; }
// ff02::1, all nodes on the link (RFC 4291 §2.7.1).
inline constexpr std::uint8_t kAllNodes[16] = {0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
// The solicited-node multicast address of `ip`: ff02::1:ff00:0/104 and its low 24 bits
// (RFC 4291 §2.7.1), where the solicitation for `ip` goes (RFC 4861 §7.2.2).
void solicited_node(const std::uint8_t ip[16], std::uint8_t out[16]);
// The Ethernet address of an IPv6 multicast address: 33:33 and its last four bytes (RFC 2464 §7).
void multicast_mac(const std::uint8_t ip[16], std::uint8_t mac[6]);

// The Ethernet groups an endpoint at `ip` must receive for ND: its solicited-node group's MAC
// (solicitations for it) and all nodes' (unsolicited advertisements, answers to DAD probes).
inline constexpr std::size_t kNdGroupCount = 2;
void nd_group_macs(const std::uint8_t ip[16], std::uint8_t macs[kNdGroupCount][6]);

enum class NdType : std::uint8_t { kSolicitation, kAdvertisement };

// A parsed NS or NA: the Ethernet and IPv6 addresses it travelled with and the message's fields.
struct NdFrame {
  std::uint8_t eth_dst[6] = {};
  std::uint8_t eth_src[6] = {};
  bool has_vlan = false;
  std::uint16_t vlan_id = 0;
  std::uint8_t ip_src[16] = {};
  std::uint8_t ip_dst[16] = {};
  NdType type = NdType::kSolicitation;
  bool router = false, solicited = false, override_flag = false;  // NA's flags
  std::uint8_t target[16] = {};
  // NS: the Source Link-layer Address option; NA: the Target Link-layer Address option.
  bool has_link_addr = false;
  std::uint8_t link_addr[6] = {};
};

// `len` bytes from the Ethernet header on, at most one 802.1Q tag, the ICMPv6 message right
// after the IPv6 header (RoCE links carry no extension headers; an ND message behind one is
// refused as kNotIcmpv6): kNone and `out` filled, or the first rule the frame breaks (the
// validity checks of RFC 4861 §7.1.1 and §7.1.2). Unknown options are skipped (§4.6); bytes
// after the IPv6 payload (Ethernet padding) are ignored. Never reads past `len`.
[[nodiscard]] NdRefusal parse_nd(const std::uint8_t* frame, std::uint32_t len, NdFrame& out);

// Who sends: our MAC and IPv6 address, and the 802.1Q tag our frames carry (vlan_id 0: none).
struct NdSender {
  std::uint8_t mac[6] = {};
  std::uint8_t ip[16] = {};
  std::uint16_t vlan_id = 0;
  std::uint8_t vlan_pcp = 0;
};

// Each builder writes one frame into `out` of `room` bytes and returns its length (0 when room
// is less than the frame). The frames are longer than Ethernet's minimum: no padding.
// Solicitation (§7.2.2) for `target`, to its solicited-node address, with our link-layer address.
[[nodiscard]] std::uint32_t build_ns(const NdSender& self, const std::uint8_t target[16], std::uint8_t* out,
                                     std::uint32_t room);
// Advertisement of our address (§7.2.4) to `to_ip` at `to_mac`, Override set, with our
// link-layer address; `solicited` sets S (an answer to a unicast-sourced solicitation).
[[nodiscard]] std::uint32_t build_na(const NdSender& self, const std::uint8_t to_mac[6], const std::uint8_t to_ip[16],
                                     bool solicited, std::uint8_t* out, std::uint32_t room);
// Unsolicited advertisement (§7.2.6): to all nodes, S clear, O set — updates the caches of
// neighbours that already hold our address.
[[nodiscard]] std::uint32_t build_unsolicited_na(const NdSender& self, std::uint8_t* out, std::uint32_t room);

}  // namespace droce::nd
