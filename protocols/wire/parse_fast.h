// Internal to the wire library and its tests: parse_frame's fast path for the common RoCEv2 frame
// shape, header-only so that parse_frame inlines it (the receive budget is counted in instructions).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "protocols/wire/ib_headers.h"
#include "protocols/wire/l2l3_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/packet_info.h"
#include "protocols/wire/parse.h"

namespace droce::wire {
namespace fast_detail {

// Offsets of the common shape: Ethernet without 802.1Q tag, IPv4 without options, UDP, BTH.
inline constexpr std::uint32_t kL3 = sizeof(EthHdr);
inline constexpr std::uint32_t kL4 = kL3 + sizeof(Ipv4Hdr);
inline constexpr std::uint32_t kBthAt = kL4 + sizeof(UdpHdr);
inline constexpr std::uint32_t kExtAt = kBthAt + sizeof(Bth);
// IPv4 total length without ext headers and payload: IP + UDP + BTH + ICRC.
inline constexpr std::uint32_t kMinIpTotal = sizeof(Ipv4Hdr) + sizeof(UdpHdr) + sizeof(Bth) + kIcrcBytes;

// Wire bytes as they lie in memory, compared with raw64() constants.
inline std::uint64_t load_raw64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline std::uint32_t load_raw32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// What load_raw64 returns for eight wire bytes on a little-endian host (the only kind the fast
// path runs on: the field extraction below assumes it).
constexpr std::uint64_t raw64(std::array<std::uint8_t, 8> b) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v |= std::uint64_t{b[i]} << (8 * i);
  return v;
}
constexpr std::uint16_t be16(std::uint64_t raw) { return __builtin_bswap16(static_cast<std::uint16_t>(raw)); }
constexpr std::uint32_t be32(std::uint64_t raw) { return __builtin_bswap32(static_cast<std::uint32_t>(raw)); }
constexpr std::uint64_t be64(std::uint64_t raw) { return __builtin_bswap64(raw); }

// The fixed parts of the shape, as masked compares on three words (bytes 12..27, 34..41) and
// the BTH's first word (42..49):
//   12-13 EtherType IPv4 right after the MACs (no 802.1Q tag); 14 version 4, IHL 5;
//   17 total length a multiple of 4 (BTH + ext headers + payload + pad + ICRC always is, §9.2);
//   20-21 MF and fragment offset zero (DF and the reserved bit are not judged); 23 protocol UDP;
//   36-37 UDP destination port 4791; 43 BTH TVer 0.
inline constexpr std::uint16_t kFragmentBits = 0x2000 | 0x1FFF;
inline constexpr std::uint64_t kMask12 = raw64({0xFF, 0xFF, 0xFF, 0, 0, 0x03, 0, 0});
inline constexpr std::uint64_t kWant12 = raw64({kEtherTypeIpv4 >> 8, kEtherTypeIpv4 & 0xFF, 0x45, 0, 0, 0, 0, 0});
inline constexpr std::uint64_t kMask20 = raw64({kFragmentBits >> 8, kFragmentBits & 0xFF, 0, 0xFF, 0, 0, 0, 0});
inline constexpr std::uint64_t kWant20 = raw64({0, 0, 0, kIpProtoUdp, 0, 0, 0, 0});
inline constexpr std::uint64_t kMask34 = raw64({0, 0, 0xFF, 0xFF, 0, 0, 0, 0});
inline constexpr std::uint64_t kWant34 = raw64({0, 0, kRoceV2UdpPort >> 8, kRoceV2UdpPort & 0xFF, 0, 0, 0, 0});
inline constexpr std::uint64_t kMaskTver = raw64({0, 0x0F, 0, 0, 0, 0, 0, 0});

// What the fast path needs of an opcode whose ext headers are only RETH, AETH, ImmDt (in that
// wire order, §9.2.1 table 38) or the CNP body. Atomics, IETH and invalid opcodes are not taken.
struct FastOpcode {
  bool taken = false;
  std::uint8_t headers = 0;
  std::uint8_t aeth_at = 0;  // offsets from the end of the BTH
  std::uint8_t imm_at = 0;
  std::uint16_t ext_bytes = 0;
  std::uint16_t max_payload = 0;  // 0 for opcodes without payload
};
inline constexpr std::uint8_t kFastHeaders = kHdrReth | kHdrAeth | kHdrImmDt | kHdrCnp;

constexpr std::array<FastOpcode, 256> make_fast_opcodes() {
  std::array<FastOpcode, 256> t{};
  for (std::size_t i = 0; i < t.size(); ++i) {
    const OpcodeInfo& op = kOpcodeTable[i];
    if (!op.valid() || (op.headers & ~kFastHeaders) != 0) continue;
    const std::uint8_t reth = (op.headers & kHdrReth) ? sizeof(Reth) : 0;
    const std::uint8_t aeth = (op.headers & kHdrAeth) ? sizeof(Aeth) : 0;
    t[i] = FastOpcode{true, op.headers, reth, static_cast<std::uint8_t>(reth + aeth), op.ext_bytes,
                      static_cast<std::uint16_t>(op.has_payload ? 0xFFFF : 0)};
  }
  return t;
}
inline constexpr std::array<FastOpcode, 256> kFastOpcodes = make_fast_opcodes();

// RFC 1071 over the 20 IPv4 header bytes 14..33, given as the words loaded at 12, 20 and 26.
// 2^16 = 1 (mod 0xFFFF), so the ones' complement sum of the ten 16-bit words is congruent to a
// plain sum of any 16-bit-aligned pieces; it folds to all ones (what rte_raw_cksum returns for a
// correct header) iff that is 0 mod 0xFFFF and the header is not all zero bytes, which a header
// starting 0x45 is not.
inline bool ipv4_header_sums_to_ones(std::uint64_t w12, std::uint64_t w20, std::uint64_t w26) {
  const std::uint64_t sum = (w12 >> 16) + (w20 & 0xFFFFFFFF) + (w20 >> 32) + (w26 >> 16);  // < 2^50
  return sum % 0xFFFF == 0;
}

}  // namespace fast_detail

// The common shape: Ethernet without VLAN / IPv4 with IHL 5, not fragmented / UDP to 4791 /
// BTH with TVer 0 and an opcode whose ext headers are only RETH, AETH, ImmDt or the CNP body
// (RC SEND, WRITE, READ request and response, ACKNOWLEDGE, CNP).
// When the frame has that shape and breaks no header rule, fills `out` exactly as
// parse_headers_general (parse_general.h) would and returns true; P_Key and ICRC are still
// unchecked. Otherwise returns false without judging the frame (`out` may be partly written):
// the caller runs the general parser, which names the rule the frame broke, if any.
[[gnu::always_inline]] inline bool parse_headers_fast(const std::uint8_t* f, std::uint32_t len, PacketInfo& out,
                                                     const ParseOptions& opt) {
  using namespace fast_detail;
  if constexpr (std::endian::native != std::endian::little) return false;
  if (len < kExtAt + kIcrcBytes) return false;
  // All header words are loaded before the first store: `out` could alias the frame as far as
  // the compiler knows, and would otherwise force reloads.
  const std::uint64_t w12 = load_raw64(f + 12), w20 = load_raw64(f + 20), w26 = load_raw64(f + 26);
  const std::uint64_t w34 = load_raw64(f + 34), bth = load_raw64(f + kBthAt);
  const std::uint32_t bth8 = load_raw32(f + kBthAt + 8);
  if ((((w12 & kMask12) ^ kWant12) | ((w20 & kMask20) ^ kWant20) | ((w34 & kMask34) ^ kWant34) |
       (bth & kMaskTver)) != 0)
    return false;
  // The IP packet lies within the frame and holds BTH + ICRC (unsigned: a shorter one wraps),
  // and the UDP datagram is all of its payload.
  const std::uint32_t total = be16(w12 >> 32);
  const std::uint32_t after_bth = total - kMinIpTotal;
  if (after_bth > len - (kExtAt + kIcrcBytes)) return false;
  if (be16(w34 >> 32) != total - sizeof(Ipv4Hdr)) return false;
  const std::uint8_t opcode = static_cast<std::uint8_t>(bth);
  const FastOpcode& op = kFastOpcodes[opcode];
  if (!op.taken) return false;
  // PadCnt (§9.2): payload + pad fills what the ext headers leave, a multiple of 4 as total is;
  // no pad and no payload where the opcode has none. Too few bytes for the ext headers, or a pad
  // larger than payload + pad, wraps payload_len.
  const std::uint8_t flags = static_cast<std::uint8_t>(bth >> 8);
  const std::uint32_t pad = (flags >> 4) & 0x03;
  const std::uint32_t payload_len = after_bth - op.ext_bytes - pad;
  if (payload_len > op.max_payload) return false;
  if (opt.verify_ip_checksum && !ipv4_header_sums_to_ones(w12, w20, w26)) return false;

  // Every field, as parse_headers_general leaves it for this shape: VLAN, IPv6 and the ext
  // headers the opcode lacks are zero.
  std::memcpy(out.dst_mac, f, sizeof(out.dst_mac));
  std::memcpy(out.src_mac, f + sizeof(out.dst_mac), sizeof(out.src_mac));
  out.has_vlan = false;
  out.vlan_pcp = 0;
  out.vlan_id = 0;
  out.ipv6 = false;
  const std::uint8_t tos = static_cast<std::uint8_t>(w12 >> 24);
  out.ecn = tos & 0x03;
  out.dscp = tos >> 2;
  const std::uint32_t src_ip = static_cast<std::uint32_t>(w26), dst_ip = static_cast<std::uint32_t>(w26 >> 32);
  std::memcpy(out.src_ip, &src_ip, 4);
  std::memset(out.src_ip + 4, 0, sizeof(out.src_ip) - 4);
  std::memcpy(out.dst_ip, &dst_ip, 4);
  std::memset(out.dst_ip + 4, 0, sizeof(out.dst_ip) - 4);
  out.udp_src_port = be16(w34);
  out.l3_offset = kL3;
  out.bth_offset = kBthAt;
  out.payload_offset = static_cast<std::uint16_t>(kExtAt + op.ext_bytes);
  out.payload_len = payload_len;
  out.frame_len = kL3 + total;

  out.opcode = opcode;
  out.se = (flags & 0x80) != 0;
  out.mig_req = (flags & 0x40) != 0;
  out.pad_count = static_cast<std::uint8_t>(pad);
  out.pkey = be16(bth >> 16);
  out.fecn = ((bth >> 32) & 0x80) != 0;
  out.becn = ((bth >> 32) & 0x40) != 0;
  out.dest_qpn = be32(bth >> 32) & 0xFFFFFF;
  out.ack_req = (bth8 & 0x80) != 0;
  out.psn = be32(bth8) & 0xFFFFFF;

  const std::uint8_t* ext = f + kExtAt;
  if (op.headers & kHdrReth) {
    out.reth_va = be64(load_raw64(ext));
    out.reth_rkey = be32(load_raw32(ext + 8));
    out.reth_dma_len = be32(load_raw32(ext + 12));
  } else {
    out.reth_va = 0;
    out.reth_rkey = 0;
    out.reth_dma_len = 0;
  }
  const std::uint32_t aeth = (op.headers & kHdrAeth) ? be32(load_raw32(ext + op.aeth_at)) : 0;  // syndrome msn
  out.aeth_syndrome = static_cast<std::uint8_t>(aeth >> 24);
  out.aeth_msn = aeth & 0xFFFFFF;
  out.imm_data = (op.headers & kHdrImmDt) ? be32(load_raw32(ext + op.imm_at)) : 0;
  out.ieth_rkey = 0;
  out.atomic_va = 0;
  out.atomic_rkey = 0;
  out.atomic_swap_add = 0;
  out.atomic_compare = 0;
  out.atomic_ack_orig = 0;
  return true;
}

}  // namespace droce::wire
