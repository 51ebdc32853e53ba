// Invariant CRC of RoCEv2 packets (IBTA Annex A17.4.1, vol. 1 §7.8.1): masked pseudo-header + CRC-32.
#pragma once

#include <cstdint>

namespace droce::wire {

// Picks the fastest CRC-32 implementation DPDK offers on this CPU (AVX-512/VPCLMULQDQ, SSE4.2
// PCLMULQDQ, else a table). Call once after rte_eal_init: before EAL has parsed
// --force-max-simd-bitwidth, DPDK's SIMD limit is unset and it silently keeps the table path
// (about 100x slower). Results are identical whichever path runs. Safe to call again.
void icrc_init();

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
[[nodiscard]] std::uint32_t icrc_compute_in_place(std::uint8_t* l3, std::uint32_t len, bool ipv6);

// Split form for zero-copy TX: the headers (IP through the last ext header) in one buffer and
// the payload + pad in another (the application's memory). CRCs of both parts are joined with
// zlib's crc32_combine, since DPDK's CRC has no seed argument.
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
[[nodiscard]] inline std::uint32_t icrc_load(const std::uint8_t* in) {
  return static_cast<std::uint32_t>(in[0]) | static_cast<std::uint32_t>(in[1]) << 8 |
         static_cast<std::uint32_t>(in[2]) << 16 | static_cast<std::uint32_t>(in[3]) << 24;
}

}  // namespace droce::wire
