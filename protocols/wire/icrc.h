// Invariant CRC of RoCEv2 packets (IBTA Annex A17.4.1, vol. 1 §7.8.1): masked pseudo-header + CRC-32.
#pragma once

#include <cstdint>
#include <cstring>

#include "protocols/wire/crc32.h"

namespace droce::wire {

// Every CRC here runs on crc32_continue (crc32.h), seeded: nothing to initialise, nothing shared
// between workers. A QP's frames take the template form (icrc_template.h); these are the full
// CRCs it falls back to and learns from.

// ICRC of a packet whose IP header starts at `l3` and whose bytes up to (not including) the
// ICRC trailer are contiguous: `len` = IP header + UDP + BTH + ext headers + payload + pad.
// The variant fields are masked to ones on a private copy of the headers (§7.8.1):
// IPv4 TOS, TTL, header checksum; IPv6 traffic class, flow label, hop limit; UDP checksum;
// BTH byte 4 (FECN, BECN, resv6). `l3` itself is never written.
[[nodiscard]] std::uint32_t icrc_compute(const std::uint8_t* l3, std::uint32_t len, bool ipv6);

// The same ICRC without a copy, for a frame this thread owns (one it received or is building):
// the 8 bytes before `l3` (the end of the Ethernet header) and the variant fields are set to
// ones in place while one CRC pass runs over [l3 - 8, l3 + len), then restored, so the buffer
// is unchanged on return. `l3` must have 8 writable bytes before it, and nothing else may read
// the buffer meanwhile. Saves icrc_compute's copy of the frame (or, above its copy threshold,
// a second CRC pass and a zlib join).
[[nodiscard]] inline std::uint32_t icrc_compute_in_place(std::uint8_t* l3, std::uint32_t len, bool ipv6);

// Split form for zero-copy TX: the headers (IP through the last ext header) in one buffer and
// the payload + pad in another (the application's memory): one seeded CRC continued over each.
[[nodiscard]] std::uint32_t icrc_compute_split(const std::uint8_t* l3, std::uint32_t hdr_len, bool ipv6,
                                               const std::uint8_t* payload, std::uint32_t payload_len,
                                               std::uint32_t pad);

// The ICRC travels least significant byte first.
inline void icrc_store(std::uint8_t* out, std::uint32_t icrc) {
  out[0] = static_cast<std::uint8_t>(icrc);
  out[1] = static_cast<std::uint8_t>(icrc >> 8);
  out[2] = static_cast<std::uint8_t>(icrc >> 16);
  out[3] = static_cast<std::uint8_t>(icrc >> 24);
}
// (Little-endian hosts, as the in-place masks below: one load.)
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
[[nodiscard]] inline std::uint32_t icrc_load(const std::uint8_t* in) {
  std::uint32_t v;
  std::memcpy(&v, in, sizeof(v));
  return v;
}

// icrc_compute_in_place: the masked bytes are saved in a few words, set to ones, CRC'd with the
// frame and restored. A17.4.1: 8 bytes of ones stand in for the LRH; §7.8.1's variant fields
// count as ones. Little-endian word masks (x86, like the rest of the datapath). The IPv4 half is
// inline: every received frame runs it (the receive budget is counted in instructions).
namespace detail {

// Writes 8 bytes of ones (the LRH stand-in of A17.4.1) and the IP + UDP + BTH headers at `l3`
// with §7.8.1's variant fields as ones into `buf` (kIcrcMaskedMax bytes); returns the bytes written.
inline constexpr std::uint32_t kIcrcMaskedMax = 8 + 40 + 8 + 12;
std::uint32_t icrc_masked_header(const std::uint8_t* l3, bool ipv6, std::uint8_t* buf);

inline std::uint64_t icrc_load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void icrc_store64(std::uint8_t* p, std::uint64_t v) { std::memcpy(p, &v, sizeof(v)); }

// IPv4: [l3-8, l3+8) holds the LRH stand-in and TOS (l3+1); [l3+8, l3+16) TTL and the header
// checksum (l3+8, l3+10..11); [l3+24, l3+32) the UDP checksum (l3+26..27); l3+32 is BTH byte 4.
// 20 + 8 + 12: IPv4 header, UDP, BTH.
[[gnu::always_inline]] inline std::uint32_t icrc_in_place_ipv4(std::uint8_t* l3, std::uint32_t len) {
  if (len < 20 + 8 + 12) return 0;
  const std::uint64_t lrh = icrc_load64(l3 - 8), a = icrc_load64(l3), b = icrc_load64(l3 + 8), c = icrc_load64(l3 + 24);
  const std::uint8_t bth4 = l3[32];
  icrc_store64(l3 - 8, ~std::uint64_t{0});
  icrc_store64(l3, a | 0x000000000000FF00u);       // TOS: DSCP + ECN
  icrc_store64(l3 + 8, b | 0x00000000FFFF00FFu);   // TTL, header checksum (not the protocol)
  icrc_store64(l3 + 24, c | 0x00000000FFFF0000u);  // UDP checksum
  l3[32] = 0xFF;                                   // FECN, BECN, resv6
  const std::uint32_t crc = crc32_continue(0, l3 - 8, len + 8);
  icrc_store64(l3 - 8, lrh);
  icrc_store64(l3, a);
  icrc_store64(l3 + 8, b);
  icrc_store64(l3 + 24, c);
  l3[32] = bth4;
  return crc;
}

// IPv6 (icrc.cc): traffic class and flow label, hop limit, UDP checksum, BTH byte 4.
std::uint32_t icrc_in_place_ipv6(std::uint8_t* l3, std::uint32_t len);

}  // namespace detail

inline std::uint32_t icrc_compute_in_place(std::uint8_t* l3, std::uint32_t len, bool ipv6) {
  return ipv6 ? detail::icrc_in_place_ipv6(l3, len) : detail::icrc_in_place_ipv4(l3, len);
}

}  // namespace droce::wire
