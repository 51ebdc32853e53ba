// IEEE 802.1Qbb priority-based flow control (PFC) frames: parse and build, no allocation.
#pragma once

#include <cstdint>
#include <cstring>

#include "protocols/wire/l2l3_headers.h"

namespace droce::wire {

// A PFC frame is a MAC Control frame (EtherType 0x8808, IEEE 802.3 Annex 31B) with opcode
// 0x0101 (802.1Qbb clause 36.1.3.1): a class-enable vector (bit i = priority i) and eight pause
// times in quanta of 512 bit times. A time of 0 for an enabled priority means XON (resume now).
// It goes to the reserved multicast 01:80:C2:00:00:01, untagged, padded to the 60-byte minimum.
inline constexpr std::uint16_t kMacControlOpcodePfc = 0x0101;
inline constexpr std::uint8_t kPfcDestMac[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
inline constexpr std::uint32_t kPfcFrameBytes = 60;  // without FCS, as DPDK PMDs carry frames
inline constexpr std::uint32_t kPfcQuantumBits = 512;

struct PfcFrame {
  std::uint16_t class_enable = 0;  // bit i: the quanta for priority i are valid
  std::uint16_t quanta[8] = {};
};

// The pause a PFC frame asks for, in ns, at `link_bps` (quanta x 512 bit times).
[[nodiscard]] constexpr std::uint64_t pfc_quanta_to_ns(std::uint16_t quanta, double link_bps) {
  return link_bps > 0 ? static_cast<std::uint64_t>(static_cast<double>(quanta) * kPfcQuantumBits * 1e9 / link_bps) : 0;
}

// True when `frame` (from the Ethernet header, `len` bytes) is a well-formed PFC frame; fills
// `out`. Anything else — another EtherType, a PAUSE (0x0001) or a truncated frame — is false.
[[nodiscard]] inline bool parse_pfc(const std::uint8_t* frame, std::uint32_t len, PfcFrame& out) {
  if (len < 14 + 2 + 2 + 16) return false;
  if (frame[12] != (kEtherTypeMacControl >> 8) || frame[13] != (kEtherTypeMacControl & 0xFF)) return false;
  if (frame[14] != (kMacControlOpcodePfc >> 8) || frame[15] != (kMacControlOpcodePfc & 0xFF)) return false;
  // The upper byte of the class-enable vector is reserved (clause 36.1.3.1): ignored on receipt.
  out.class_enable = frame[17];
  for (int i = 0; i < 8; ++i) out.quanta[i] = static_cast<std::uint16_t>((frame[18 + 2 * i] << 8) | frame[19 + 2 * i]);
  return true;
}

// True when the frame's EtherType is MAC Control (PFC or 802.3x PAUSE): never RoCE.
[[nodiscard]] inline bool is_mac_control(const std::uint8_t* frame, std::uint32_t len) {
  return len >= 14 && frame[12] == (kEtherTypeMacControl >> 8) && frame[13] == (kEtherTypeMacControl & 0xFF);
}

// Writes a 60-byte PFC frame from `src_mac` into `out` (room >= kPfcFrameBytes); returns its length or 0.
[[nodiscard]] inline std::uint32_t build_pfc(const std::uint8_t src_mac[6], const PfcFrame& f, std::uint8_t* out,
                                             std::uint32_t room) {
  if (room < kPfcFrameBytes) return 0;
  std::memset(out, 0, kPfcFrameBytes);
  std::memcpy(out, kPfcDestMac, 6);
  std::memcpy(out + 6, src_mac, 6);
  out[12] = kEtherTypeMacControl >> 8;
  out[13] = kEtherTypeMacControl & 0xFF;
  out[14] = kMacControlOpcodePfc >> 8;
  out[15] = kMacControlOpcodePfc & 0xFF;
  out[17] = static_cast<std::uint8_t>(f.class_enable);
  for (int i = 0; i < 8; ++i) {
    out[18 + 2 * i] = static_cast<std::uint8_t>(f.quanta[i] >> 8);
    out[19 + 2 * i] = static_cast<std::uint8_t>(f.quanta[i]);
  }
  return kPfcFrameBytes;
}

}  // namespace droce::wire
