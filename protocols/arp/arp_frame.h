// ARP for IPv4 over Ethernet (RFC 826): a strict parser and the three frames droce sends —
// request, reply and the gratuitous announcement (RFC 5227 §3, "ARP Announcement").
#pragma once

#include <cstdint>
#include <string_view>

#include "protocols/wire/be.h"
#include "protocols/wire/l2l3_headers.h"

namespace droce::arp {

// The ARP packet for Ethernet hardware and IPv4 protocol addresses (RFC 826, "Packet format"),
// alignment 1 like the wire headers so it can overlay any offset.
struct ArpHdr {
  wire::Be16 htype;   // ar$hrd: 1, Ethernet
  wire::Be16 ptype;   // ar$pro: 0x0800, IPv4
  std::uint8_t hlen;  // ar$hln: 6
  std::uint8_t plen;  // ar$pln: 4
  wire::Be16 op;      // ar$op: 1 request, 2 reply
  std::uint8_t sender_mac[6];
  std::uint8_t sender_ip[4];
  std::uint8_t target_mac[6];
  std::uint8_t target_ip[4];
};
static_assert(sizeof(ArpHdr) == 28);

inline constexpr std::uint16_t kArpHtypeEthernet = 1;
inline constexpr std::uint8_t kArpHlenEthernet = 6;
inline constexpr std::uint8_t kArpPlenIpv4 = 4;
enum class ArpOp : std::uint16_t { kRequest = 1, kReply = 2 };

// Ethernet's shortest frame without its FCS (IEEE 802.3 §3.2.8): ARP frames are padded to it.
inline constexpr std::uint32_t kEthMinFrameBytes = 60;
// Room a builder needs: Ethernet, one 802.1Q tag and the ARP packet fit in the minimum frame.
inline constexpr std::uint32_t kArpFrameBytes = kEthMinFrameBytes;
static_assert(sizeof(wire::EthHdr) + sizeof(wire::VlanHdr) + sizeof(ArpHdr) <= kArpFrameBytes);

// Why a frame was not taken as ARP: one value per rule, named for counters.
#define DROCE_ARP_REFUSALS(X)                  \
  X(kNone, "none")                             \
  X(kTruncatedEthernet, "truncated_ethernet")  \
  X(kStackedVlan, "stacked_vlan")              \
  X(kNotArp, "not_arp")                        \
  X(kTruncatedArp, "truncated_arp")            \
  X(kBadHardwareType, "bad_hardware_type")     \
  X(kBadProtocolType, "bad_protocol_type")     \
  X(kBadHardwareLength, "bad_hardware_length") \
  X(kBadProtocolLength, "bad_protocol_length") \
  X(kBadOp, "bad_op")

enum class ArpRefusal : std::uint8_t {
#define DROCE_ARP_ENUM(name, str) name,
  DROCE_ARP_REFUSALS(DROCE_ARP_ENUM)
#undef DROCE_ARP_ENUM
      kCount
};
inline constexpr std::size_t kArpRefusalCount = static_cast<std::size_t>(ArpRefusal::kCount);

[[nodiscard]] constexpr std::string_view arp_refusal_name(ArpRefusal r) {
  constexpr std::string_view kNames[] = {
#define DROCE_ARP_NAME(name, str) str,
      DROCE_ARP_REFUSALS(DROCE_ARP_NAME)
#undef DROCE_ARP_NAME
  };
  const auto i = static_cast<std::size_t>(r);
  return i < kArpRefusalCount ? kNames[i] : std::string_view{"invalid"};
}

// IPv4 addresses are held in host order: 10.0.0.2 is 0x0A000002.
[[nodiscard]] std::uint32_t load_ipv4(const std::uint8_t* p);
void store_ipv4(std::uint32_t ip, std::uint8_t* p);

// A parsed ARP frame: the Ethernet addresses it travelled with and the ARP packet's fields.
struct ArpFrame {
  std::uint8_t eth_dst[6] = {};
  std::uint8_t eth_src[6] = {};
  bool has_vlan = false;
  std::uint16_t vlan_id = 0;
  ArpOp op = ArpOp::kRequest;
  std::uint8_t sender_mac[6] = {};
  std::uint32_t sender_ip = 0;
  std::uint8_t target_mac[6] = {};
  std::uint32_t target_ip = 0;
};

// `len` bytes from the Ethernet header on, at most one 802.1Q tag (as the RoCE parser takes):
// kNone and `out` filled, or the first rule the frame breaks. Bytes after the ARP packet
// (Ethernet padding) are ignored. Never reads past `len`.
[[nodiscard]] ArpRefusal parse_arp(const std::uint8_t* frame, std::uint32_t len, ArpFrame& out);

// Who sends: our MAC and IPv4 address, and the 802.1Q tag our frames carry (vlan_id 0: none).
struct ArpSender {
  std::uint8_t mac[6] = {};
  std::uint32_t ip = 0;
  std::uint16_t vlan_id = 0;
  std::uint8_t vlan_pcp = 0;
};

// Each builder writes one frame, padded to kEthMinFrameBytes, into `out` of `room` bytes and
// returns its length (0 when room < kArpFrameBytes).
// Request (broadcast): who has target_ip? Target MAC zero, as Linux sends it.
[[nodiscard]] std::uint32_t build_arp_request(const ArpSender& self, std::uint32_t target_ip, std::uint8_t* out,
                                              std::uint32_t room);
// Reply (unicast) to the requester `to_mac` / `to_ip`: self.ip is at self.mac.
[[nodiscard]] std::uint32_t build_arp_reply(const ArpSender& self, const std::uint8_t* to_mac, std::uint32_t to_ip,
                                            std::uint8_t* out, std::uint32_t room);
// Announcement (broadcast): a request whose sender and target IP are both ours and target MAC
// zero (RFC 5227 §3), which updates the caches of hosts that already hold our address.
[[nodiscard]] std::uint32_t build_gratuitous_arp(const ArpSender& self, std::uint8_t* out, std::uint32_t room);

}  // namespace droce::arp
