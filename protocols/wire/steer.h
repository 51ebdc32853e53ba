// steer_peek: the few header bytes a steering stage reads to hand a frame to the worker owning its
// destination QP (RoCEv2, IBTA Annex A17.4: Ethernet [802.1Q] / IPv4|IPv6 / UDP 4791 / BTH), to
// every worker (MAC Control: PFC, IEEE 802.1Qbb), or to the port's one owner of what has no QP
// (ARP, RFC 826; ICMPv6, which carries Neighbor Discovery, RFC 4861). Not a parser: nothing is validated beyond what
// the classification needs; the owner's endpoint runs the full parse and counts the drops.
#pragma once

#include <cstdint>

namespace droce::wire {

enum class SteerClass : std::uint8_t {
  kOther,       // not RoCEv2 nor MAC Control, or headers cut short: stays where it arrived
  kRoceV2,      // UDP 4791 with a BTH: belongs to the owner of dest_qpn
  kMacControl,  // EtherType 0x8808 (PAUSE / PFC): every worker's transmit must see it
  kNeighbour,   // ARP (EtherType 0x0806) or ICMPv6 (IPv6 next header 58: ND): the port's neighbour owner
};

struct SteerPeek {
  SteerClass cls = SteerClass::kOther;
  std::uint32_t dest_qpn = 0;  // BTH DestQP (24 bits), valid for kRoceV2
};

// Classifies the `len` bytes at `frame` (from the Ethernet header); never reads past `len`.
// IPv4 fragments and IPv6 extension headers are kOther: their UDP header is not where the peek
// looks (RoCEv2 frames are never fragmented, Annex A17.4.3: DF is set).
[[nodiscard]] SteerPeek steer_peek(const std::uint8_t* frame, std::uint32_t len);

}  // namespace droce::wire
