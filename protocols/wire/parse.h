// parse_frame: Ethernet [802.1Q] / IPv4|IPv6 / UDP 4791 / BTH / ext headers -> PacketInfo or a drop reason.
#pragma once

#include <cstdint>

#include "protocols/wire/drop_reason.h"
#include "protocols/wire/packet_info.h"

namespace droce::wire {

struct ParseOptions {
  bool verify_icrc = true;
  bool verify_ip_checksum = true;
  // When set, BTH P_Key must match (IBTA §10.9.3: the low 15 bits must be equal, and at least
  // one side must be a full member). 0xFFFF, the default partition, matches itself.
  bool check_pkey = false;
  std::uint16_t pkey = kDefaultPkey;
  // droce's selective-repeat opcodes (manufacturer-specific, 0xC0..0xFF; docs/selective-repeat.md)
  // are parsed only when set; otherwise they are unknown opcodes, as every other manufacturer's
  // are. Only an owner with a selective-repeat QP sets it; those frames always take the general parser.
  bool accept_droce_sr = false;
};

// Parses one frame of `len` bytes, filling `out` on success (DropReason::kNone). Never reads
// outside [frame, frame + len); bytes after the IP packet (Ethernet minimum-size padding) are
// ignored. Each rejection names the first rule the frame broke.
[[nodiscard]] DropReason parse_frame(const std::uint8_t* frame, std::uint32_t len, PacketInfo& out,
                                     const ParseOptions& opt = {});

// P_Key match rule of §10.9.3 (membership bit 15 and the 15-bit key).
[[nodiscard]] constexpr bool pkey_matches(std::uint16_t a, std::uint16_t b) {
  return (a & 0x7FFF) == (b & 0x7FFF) && ((a | b) & 0x8000) != 0;
}

}  // namespace droce::wire
