// The ICRC (IBTA A17.4.1) of a QP's frames by CRC linearity: a per-QP header template's CRC
// combined with small per-position tables for the bytes that change per frame, continued over the
// rest of the frame with a seeded CRC.
#pragma once

#include <cstdint>
#include <cstring>

#include "protocols/wire/crc32.h"

namespace droce::wire {

// Why this works: CRC-32 in zlib's convention is affine in the message for a fixed length,
// crc(M ^ D) = crc(M) ^ L(D) with L linear and L(D) unchanged by leading zero bytes. The ICRC's
// first bytes (8 ones for the LRH, IP, UDP, BTH with §7.8.1's variant fields as ones) are the
// same in every frame of a QP but for IPv4 total length and ID / IPv6 payload length, UDP length,
// BTH opcode, flags byte, AckReq byte and PSN. So the header's CRC is the CRC of the template
// with those bytes zero, XOR, for each such byte b at distance d from the header's end, the
// table entry L(b followed by d - 1 zero bytes). The tables are built once per process from
// crc32_continue itself (no CRC arithmetic of our own). The CRC then continues over the
// extension headers, payload and pad, seeded with the header's.
struct IcrcTemplate {
  // IP + UDP + BTH as the ICRC sees them, as 8-byte words at l3 + 8i, each already ANDed with
  // the mask of the bytes a frame must repeat (the invariant ones); IPv4: 5 words (40 bytes),
  // IPv6: 7 words (the 8th, l3+52..59, holds only per-frame bytes and §7.8.1's BTH byte 4).
  std::uint64_t word[7] = {};
  std::uint32_t base_crc = 0;  // CRC of the LRH stand-in and the template with per-frame bytes zero
  bool ipv6 = false;
  bool valid = false;
  std::uint32_t misses = 0;  // frames whose invariant bytes differed: CRC'd in full and learned

  // Takes the headers at `l3` (IP + UDP + BTH, `ipv6` says which IP) as the template.
  void learn(const std::uint8_t* l3, bool ipv6_frame);
};

namespace detail {

// Little-endian word masks of the invariant bytes (x86, as the rest of the datapath); in the
// comments, [bracketed] fields are not compared: §7.8.1's variant fields or per-frame ones.
inline constexpr std::uint64_t kIpv4Care[5] = {
    0xFFFF0000000000FFull,  // version/IHL, [TOS], [total length, ID], flags/fragment offset
    0xFFFFFFFF0000FF00ull,  // [TTL], protocol, [checksum], source address
    0xFFFFFFFFFFFFFFFFull,  // destination address, UDP source and destination ports
    0xFFFF000000000000ull,  // [UDP length], [UDP checksum], [BTH opcode, flags], P_Key
    0x00000000FFFFFF00ull,  // [BTH byte 4: FECN, BECN], destination QP, [AckReq, PSN]
};
inline constexpr std::uint64_t kIpv6Care[7] = {
    0x00FF0000000000F0ull,  // version, [TC, flow label], [payload length], next header, [hop limit]
    0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull,  // addresses
    0x00000000FFFFFFFFull,  // UDP source and destination ports, [UDP length], [UDP checksum]
    0xFFFFFF00FFFF0000ull,  // [BTH opcode, flags], P_Key, [byte 4: FECN, BECN], destination QP
};

// The header bytes a frame changes, as (offset from l3, table): IPv4 40-byte and IPv6 60-byte
// headers end alike from the UDP length on (distances 16..1 from the end).
enum IcrcTable : std::uint8_t {
  kD56,
  kD55,
  kD38,
  kD37,
  kD36,
  kD35,
  kD16,
  kD15,
  kD12,
  kD11,
  kD4,
  kD3,
  kD2,
  kD1,
  kTables
};
struct VariableByte {
  std::uint8_t offset;
  IcrcTable table;
};
inline constexpr std::uint32_t kIpv4HeaderBytes = 40, kIpv6HeaderBytes = 60;  // IP + UDP + BTH
inline constexpr VariableByte kIpv4Variable[12] = {{2, kD38},  {3, kD37},  {4, kD36}, {5, kD35}, {24, kD16}, {25, kD15},
                                                   {28, kD12}, {29, kD11}, {36, kD4}, {37, kD3}, {38, kD2},  {39, kD1}};
inline constexpr VariableByte kIpv6Variable[10] = {{4, kD56},  {5, kD55}, {44, kD16}, {45, kD15}, {48, kD12},
                                                   {49, kD11}, {56, kD4}, {57, kD3},  {58, kD2},  {59, kD1}};

// tables[t][b]: L(b followed by d - 1 zero bytes), d the table's distance. Built at start-up.
extern const std::uint32_t (*const icrc_delta_tables)[256];

inline std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Unrolled, so that every offset and table is a constant: two instructions per byte (a byte
// load, an XOR from the table) instead of a loop that reads the VariableByte array.
template <std::size_t N>
[[gnu::always_inline]] inline std::uint32_t header_crc(std::uint32_t base, const std::uint8_t* l3,
                                                       const VariableByte (&bytes)[N]) {
  const std::uint32_t(*const t)[256] = icrc_delta_tables;
  std::uint32_t crc = base;
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) crc ^= t[bytes[i].table][l3[bytes[i].offset]];
  return crc;
}

}  // namespace detail

// The ICRC of a frame built from the template's headers, without looking at its invariant bytes
// (the transmit path, whose headers are a copy of the template): `l3` and `len` as icrc_compute's
// (IP header to the last byte before the ICRC, at least IP + UDP + BTH).
[[nodiscard, gnu::always_inline]] inline std::uint32_t icrc_from_template(const IcrcTemplate& t, const std::uint8_t* l3,
                                                                          std::uint32_t len) {
  if (t.ipv6) {
    const std::uint32_t h = detail::header_crc(t.base_crc, l3, detail::kIpv6Variable);
    return crc32_continue(h, l3 + detail::kIpv6HeaderBytes, len - detail::kIpv6HeaderBytes);
  }
  const std::uint32_t h = detail::header_crc(t.base_crc, l3, detail::kIpv4Variable);
  return crc32_continue(h, l3 + detail::kIpv4HeaderBytes, len - detail::kIpv4HeaderBytes);
}

// The same for a frame whose payload lies in another buffer (zero-copy transmit): headers at `l3`
// (`hdr_len` bytes: IP through the last extension header), then `payload_len` bytes at
// `payload`, then `pad` zero bytes; one seeded CRC continued over each part.
[[nodiscard]] std::uint32_t icrc_from_template_split(const IcrcTemplate& t, const std::uint8_t* l3,
                                                     std::uint32_t hdr_len, const std::uint8_t* payload,
                                                     std::uint32_t payload_len, std::uint32_t pad);

// Whether the frame at `l3` repeats every invariant byte of the template.
[[nodiscard, gnu::always_inline]] inline bool icrc_template_matches(const IcrcTemplate& t, const std::uint8_t* l3,
                                                                    bool ipv6) {
  if (!t.valid || t.ipv6 != ipv6) return false;
  std::uint64_t diff = 0;
  if (ipv6) {
#pragma GCC unroll 8
    for (int i = 0; i < 7; ++i) diff |= (detail::load64(l3 + 8 * i) & detail::kIpv6Care[i]) ^ t.word[i];
  } else {
#pragma GCC unroll 8
    for (int i = 0; i < 5; ++i) diff |= (detail::load64(l3 + 8 * i) & detail::kIpv4Care[i]) ^ t.word[i];
  }
  return diff == 0;
}

// The ICRC of a received frame (`l3`, `len`, `ipv6` as icrc_compute's), through the QP's template.
// A frame whose invariant bytes differ (another source port, a first frame, a forged one) is not
// an error: the template learns its headers, a full CRC, and every covered byte is still checked
// either way. Returns 0 for a frame shorter than IP + UDP + BTH (as icrc_compute).
[[nodiscard]] std::uint32_t icrc_relearn(IcrcTemplate& t, const std::uint8_t* l3, std::uint32_t len, bool ipv6);
[[nodiscard, gnu::always_inline]] inline std::uint32_t icrc_by_template(IcrcTemplate& t, const std::uint8_t* l3,
                                                                        std::uint32_t len, bool ipv6) {
  const std::uint32_t h = ipv6 ? detail::kIpv6HeaderBytes : detail::kIpv4HeaderBytes;
  if (len < h) return 0;
  if (!icrc_template_matches(t, l3, ipv6)) [[unlikely]]
    return icrc_relearn(t, l3, len, ipv6);
  return icrc_from_template(t, l3, len);
}

}  // namespace droce::wire
