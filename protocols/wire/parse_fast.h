// parse_frame's fast path for the common RoCEv2 frame shape, header-only so that parse_frame and
// the endpoint's receive path (parse_headers below) inline it: the receive budget is counted in
// instructions.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__SSE4_1__) && defined(__SSSE3__)
#include <immintrin.h>
#endif

#include "protocols/wire/ib_headers.h"
#include "protocols/wire/l2l3_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/packet_info.h"
#include "protocols/wire/parse.h"
#include "protocols/wire/parse_general.h"

namespace droce::wire {
namespace fast_detail {

// Offsets of the common shape: Ethernet without 802.1Q tag, IPv4 without options, UDP, BTH.
inline constexpr std::uint32_t kL3 = sizeof(EthHdr);
inline constexpr std::uint32_t kL4 = kL3 + sizeof(Ipv4Hdr);
inline constexpr std::uint32_t kBthAt = kL4 + sizeof(UdpHdr);
inline constexpr std::uint32_t kExtAt = kBthAt + sizeof(Bth);
// IPv4 total length without ext headers and payload: IP + UDP + BTH + ICRC.
inline constexpr std::uint32_t kMinIpTotal = sizeof(Ipv4Hdr) + sizeof(UdpHdr) + sizeof(Bth) + kIcrcBytes;
// The shortest frame of the shape; the fast path reads (16 bytes at a time) only below it
// until the opcode says how long the ext headers are.
inline constexpr std::uint32_t kMinFrame = kExtAt + kIcrcBytes;

// Where an opcode's AETH or ImmDt fields come from: the four bytes after the BTH, which are in
// the BTH view (bytes 42..57) at 12..15, or the RETH and the ImmDt after it (§9.2.1 table 38).
enum class ExtLayout : std::uint8_t { kNone, kAeth, kImmDt, kReth, kRethImmDt };

// What the fast path needs of an opcode whose ext headers are one of those layouts, or the CNP
// body. Atomics, IETH and invalid opcodes are not taken: their min_total is beyond any IPv4
// total length, so the payload length check fails for them.
struct alignas(16) FastOpcode {
  std::uint32_t min_total = 0x10000;  // IPv4 total length with no payload: kMinIpTotal + ext headers
  std::uint16_t max_payload = 0;      // 0 for opcodes without payload
  std::uint16_t payload_offset = 0;
  ExtLayout ext = ExtLayout::kNone;
};

constexpr bool ext_layout_of(std::uint8_t headers, ExtLayout& out) {
  switch (headers) {
    case 0:
    case kHdrCnp:
      out = ExtLayout::kNone;
      return true;
    case kHdrAeth:
      out = ExtLayout::kAeth;
      return true;
    case kHdrImmDt:
      out = ExtLayout::kImmDt;
      return true;
    case kHdrReth:
      out = ExtLayout::kReth;
      return true;
    case kHdrReth | kHdrImmDt:
      out = ExtLayout::kRethImmDt;
      return true;
    default:
      return false;
  }
}

constexpr std::array<FastOpcode, 256> make_fast_opcodes() {
  std::array<FastOpcode, 256> t{};
  for (std::size_t i = 0; i < t.size(); ++i) {
    const OpcodeInfo& op = kOpcodeTable[i];
    ExtLayout ext{};
    // The SR extension's opcodes (manufacturer-specific) are judged by the general parser, which
    // knows whether the owner accepts them (ParseOptions::accept_droce_sr).
    if (!op.valid() || is_manufacturer_opcode(static_cast<std::uint8_t>(i)) || !ext_layout_of(op.headers, ext))
      continue;
    t[i] = FastOpcode{kMinIpTotal + op.ext_bytes, static_cast<std::uint16_t>(op.has_payload ? 0xFFFF : 0),
                      static_cast<std::uint16_t>(kExtAt + op.ext_bytes), ext};
  }
  return t;
}
static constexpr std::array<FastOpcode, 256> kFastOpcodes = make_fast_opcodes();

// Byte shuffles (-1: a zero byte) into PacketInfo bytes 104..119 (aeth_syndrome, aeth_msn,
// imm_data, ieth_rkey) from the BTH view, by ExtLayout; and into 88..103 (reth_va, reth_rkey,
// reth_dma_len) from the 16 RETH bytes. Big-endian fields are reversed.
alignas(16) static constexpr std::int8_t kExtShuffles[5][16] = {
    {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {12, -1, -1, -1, 15, 14, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {-1, -1, -1, -1, -1, -1, -1, -1, 15, 14, 13, 12, -1, -1, -1, -1},
    {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
};
alignas(16) static constexpr std::int8_t kRethShuffle[16] = {7, 6, 5, 4, 3, 2, 1, 0, 11, 10, 9, 8, 15, 14, 13, 12};

// The PadCnt shortcut in parse_headers_fast needs payload + pad to be a multiple of 4 whenever
// the IPv4 total length is: true while every taken opcode's ext headers are whole words.
constexpr bool taken_ext_headers_are_words() {
  for (const FastOpcode& op : kFastOpcodes)
    if (op.min_total <= 0xFFFF && op.min_total % 4 != 0) return false;
  return true;
}
static_assert(taken_ext_headers_are_words());

// parse_headers_fast writes PacketInfo as 16- and 8-byte words: the layout it relies on.
constexpr bool packet_info_layout_is_known() {
  using P = PacketInfo;
  return offsetof(P, dst_mac) == 0 && offsetof(P, src_mac) == 6 && offsetof(P, has_vlan) == 12 &&
         offsetof(P, vlan_pcp) == 13 && offsetof(P, vlan_id) == 14 && offsetof(P, ipv6) == 16 &&
         offsetof(P, ecn) == 17 && offsetof(P, dscp) == 18 && offsetof(P, src_ip) == 19 && offsetof(P, dst_ip) == 35 &&
         offsetof(P, udp_src_port) == 52 && offsetof(P, l3_offset) == 54 && offsetof(P, bth_offset) == 56 &&
         offsetof(P, payload_offset) == 58 && offsetof(P, payload_len) == 60 && offsetof(P, frame_len) == 64 &&
         offsetof(P, opcode) == 68 && offsetof(P, se) == 69 && offsetof(P, mig_req) == 70 &&
         offsetof(P, pad_count) == 71 && offsetof(P, pkey) == 72 && offsetof(P, fecn) == 74 &&
         offsetof(P, becn) == 75 && offsetof(P, dest_qpn) == 76 && offsetof(P, ack_req) == 80 &&
         offsetof(P, psn) == 84 && offsetof(P, reth_va) == 88 && offsetof(P, reth_rkey) == 96 &&
         offsetof(P, reth_dma_len) == 100 && offsetof(P, aeth_syndrome) == 104 && offsetof(P, aeth_msn) == 108 &&
         offsetof(P, imm_data) == 112 && offsetof(P, ieth_rkey) == 116 && offsetof(P, atomic_va) == 120 &&
         offsetof(P, atomic_rkey) == 128 && offsetof(P, atomic_swap_add) == 136 && offsetof(P, atomic_compare) == 144 &&
         offsetof(P, atomic_ack_orig) == 152 && sizeof(P) == 160;
}
static_assert(packet_info_layout_is_known(), "PacketInfo changed: update parse_headers_fast's word stores");

inline unsigned char* bytes_of(PacketInfo& out) { return reinterpret_cast<unsigned char*>(&out); }

template <typename T>
T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// Big-endian wire fields on a little-endian host.
inline std::uint16_t be16(const std::uint8_t* p) { return __builtin_bswap16(load<std::uint16_t>(p)); }
inline std::uint32_t be32(const std::uint8_t* p) { return __builtin_bswap32(load<std::uint32_t>(p)); }
inline std::uint64_t be64(const std::uint8_t* p) { return __builtin_bswap64(load<std::uint64_t>(p)); }

#if defined(__x86_64__) && defined(__SSE4_1__) && defined(__SSSE3__)
#define DROCE_PARSE_FAST 1
// RFC 1071 over exactly the 20 header bytes. 2^16 = 1 (mod 0xFFFF), and 0xFFFF divides
// 2^64 - 1, so the ones' complement sum of the ten 16-bit words is congruent to an end-around-
// carry sum of 64-bit words; it folds to all ones (what rte_raw_cksum returns for a correct
// header) iff that is 0 mod 0xFFFF and the header is not all zero bytes, which a header
// starting 0x45 is not. The second carry can only come with a small sum, so the last add
// (the end-around carry) cannot carry again.
inline bool ipv4_header_sums_to_ones(const std::uint8_t* h) {
  unsigned long long sum;
  unsigned char carry = _addcarry_u64(0, load<std::uint64_t>(h), load<std::uint64_t>(h + 8), &sum);
  carry = _addcarry_u64(carry, sum, load<std::uint32_t>(h + 16), &sum);
  // x % 0xFFFF == 0 as one multiply: x * 0xFFFF^-1 (mod 2^64) stays below 2^64 / 0xFFFF exactly
  // for the multiples of 0xFFFF (Granlund & Montgomery, "Division by invariant integers", §9).
  constexpr std::uint64_t kInverse = 0xFFFEFFFEFFFEFFFF, kMaxQuotient = ~std::uint64_t{0} / 0xFFFF;
  static_assert(kInverse * 0xFFFF == 1);
  return (sum + carry) * kInverse <= kMaxQuotient;
}
#endif

}  // namespace fast_detail

// The common shape: Ethernet without VLAN / IPv4 with IHL 5, not fragmented / UDP to 4791 /
// BTH with TVer 0 and an opcode whose ext headers are only RETH, AETH, ImmDt or the CNP body
// (RC SEND, WRITE, READ request and response, ACKNOWLEDGE, CNP).
// When the frame has that shape and breaks no header rule, fills `out` as parse_headers_general
// (parse_general.h) would, except the fields of the ext headers the opcode does not carry: those
// it leaves as they were (PacketInfo's rule: they are not read; parse_frame completes them with
// complete_ext_headers below), and returns true; P_Key and ICRC are still unchecked. Otherwise
// returns false without judging the frame (`out` may be partly written): the caller runs the
// general parser, which names the rule the frame broke, if any. Built on SSE4.1 byte shuffles
// (every x86-64 DPDK target has them); elsewhere it always declines and the general parser does
// all the work.
[[gnu::always_inline]] inline bool parse_headers_fast(const std::uint8_t* f, std::uint32_t len, PacketInfo& out,
                                                      const ParseOptions& opt) {
#if defined(DROCE_PARSE_FAST)
  using namespace fast_detail;
  if (len < kMinFrame) return false;
  // Four 16-byte views of the headers: Ethernet, IPv4 from its total length, addresses + UDP, BTH.
  const __m128i eth = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f));
  const __m128i ip = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + 16));
  const __m128i addr_udp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + 26));
  const __m128i bth = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + kBthAt));

  // The fixed parts of the shape, one masked compare over the four views (the masks of each
  // view pick distinct bytes, or bytes that must all be zero):
  //   12-13 EtherType IPv4 right after the MACs (no 802.1Q tag); 14 version 4, IHL 5;
  //   17 total length a multiple of 4 (BTH + ext headers + payload + pad + ICRC always is, §9.2);
  //   20-21 MF and fragment offset zero (DF and the reserved bit are not judged); 23 protocol UDP;
  //   36-37 UDP destination port 4791; 43 BTH TVer 0.
  const __m128i fixed = _mm_or_si128(
      _mm_or_si128(_mm_and_si128(eth, _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, 0)),
                   _mm_and_si128(ip, _mm_setr_epi8(0, 0x03, 0, 0, 0x3F, -1, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0))),
      _mm_or_si128(_mm_and_si128(addr_udp, _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, 0, 0)),
                   _mm_and_si128(bth, _mm_setr_epi8(0, 0x0F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))));
  const __m128i want =
      _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, kIpProtoUdp, 0, 0, kRoceV2UdpPort >> 8,
                    static_cast<char>(kRoceV2UdpPort & 0xFF), kEtherTypeIpv4 >> 8, kEtherTypeIpv4 & 0xFF, 0x45, 0);
  const __m128i differs = _mm_xor_si128(fixed, want);
  if (!_mm_testz_si128(differs, differs)) return false;

  // The IP packet lies within the frame, and the UDP datagram is all of its payload.
  const std::uint32_t total = be16(f + kL3 + 2);
  if (total + kL3 > len) return false;
  if (load<std::uint16_t>(f + kL4 + 4) != __builtin_bswap16(static_cast<std::uint16_t>(total - sizeof(Ipv4Hdr))))
    return false;
  // Room for BTH, the opcode's ext headers and ICRC, and PadCnt (§9.2): payload + pad fills the
  // rest (a multiple of 4, as total is), with no pad and no payload where the opcode has none.
  // Too short a packet, a pad larger than payload + pad, or an opcode not taken wraps payload_len.
  const FastOpcode& op = kFastOpcodes[f[kBthAt]];
  const std::uint32_t pad = (f[kBthAt + 1] >> 4) & 0x03;
  const std::uint32_t payload_len = total - op.min_total - pad;
  if (payload_len > op.max_payload) return false;
  if (opt.verify_ip_checksum && !ipv4_header_sums_to_ones(f + kL3)) return false;

  // Every field, as parse_headers_general leaves it for this shape: VLAN, IPv6, the ext headers
  // the opcode lacks and the padding bytes are zero. Bytes 0..87 are the views shuffled into
  // PacketInfo's layout (-1: a zero byte), big-endian fields reversed on the way.
  auto* o = reinterpret_cast<__m128i*>(bytes_of(out));
  // dst_mac, src_mac; no VLAN.
  _mm_storeu_si128(o, _mm_and_si128(eth, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0)));
  // Not IPv6; src_ip (ECN and DSCP below); dst_ip at 35.
  _mm_storeu_si128(
      o + 1, _mm_shuffle_epi8(addr_udp, _mm_setr_epi8(-1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1, -1)));
  _mm_storeu_si128(
      o + 2, _mm_shuffle_epi8(addr_udp, _mm_setr_epi8(-1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1, -1)));
  // udp_src_port, l3_offset 14, bth_offset 42, payload_offset, payload_len.
  __m128i w = _mm_or_si128(
      _mm_shuffle_epi8(addr_udp, _mm_setr_epi8(-1, -1, -1, -1, 9, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)),
      _mm_setr_epi8(0, 0, 0, 0, 0, 0, kL3, 0, kBthAt, 0, 0, 0, 0, 0, 0, 0));
  w = _mm_insert_epi16(w, op.payload_offset, 5);
  _mm_storeu_si128(o + 3, _mm_insert_epi32(w, static_cast<int>(payload_len), 3));
  // frame_len; opcode, se, mig_req, pad_count; pkey, fecn, becn; dest_qpn. The flag bits are
  // gathered under a mask and clamped to 1 (min with 1), PadCnt shifted down from its nibble.
  const __m128i flag_bytes =
      _mm_shuffle_epi8(bth, _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 1, 1, -1, -1, 4, 4, -1, -1, -1, -1));
  const __m128i bools = _mm_min_epu8(
      _mm_and_si128(flag_bytes, _mm_setr_epi8(0, 0, 0, 0, 0, -0x80, 0x40, 0, 0, 0, -0x80, 0x40, 0, 0, 0, 0)),
      _mm_set1_epi8(1));
  const __m128i pad_count =
      _mm_and_si128(_mm_srli_epi16(flag_bytes, 4), _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0));
  w = _mm_or_si128(_mm_shuffle_epi8(bth, _mm_setr_epi8(-1, -1, -1, -1, 0, -1, -1, -1, 3, 2, -1, -1, 7, 6, 5, -1)),
                   _mm_or_si128(bools, pad_count));
  _mm_storeu_si128(o + 4, _mm_insert_epi32(w, static_cast<int>(kL3 + total), 0));
  // ack_req (below), psn.
  _mm_storel_epi64(o + 5,
                   _mm_shuffle_epi8(bth, _mm_setr_epi8(-1, -1, -1, -1, 11, 10, 9, -1, -1, -1, -1, -1, -1, -1, -1, -1)));
  const std::uint8_t tos = f[kL3 + 1];
  const std::uint16_t ecn_dscp = static_cast<std::uint16_t>((tos | tos << 6) & 0x3F03);  // ECN, then DSCP
  std::memcpy(bytes_of(out) + offsetof(PacketInfo, ecn), &ecn_dscp, 2);
  out.ack_req = (f[kBthAt + 8] & 0x80) != 0;

  // Only the ext headers the opcode carries (PacketInfo's rule: the others are not read); a SEND
  // without immediate stores none of them. The fields of one header are written together.
  if (op.ext == ExtLayout::kAeth || op.ext == ExtLayout::kImmDt) {
    const auto* ext_shuffle = reinterpret_cast<const __m128i*>(kExtShuffles[static_cast<std::size_t>(op.ext)]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes_of(out) + offsetof(PacketInfo, aeth_syndrome)),
                     _mm_shuffle_epi8(bth, _mm_load_si128(ext_shuffle)));
  } else if (op.ext >= ExtLayout::kReth) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes_of(out) + offsetof(PacketInfo, reth_va)),
                     _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f + kExtAt)),
                                      _mm_load_si128(reinterpret_cast<const __m128i*>(kRethShuffle))));
    if (op.ext == ExtLayout::kRethImmDt) out.imm_data = be32(f + kExtAt + sizeof(Reth));
  }
  return true;
#else
  (void)f;
  (void)len;
  (void)out;
  (void)opt;
  return false;
#endif
}

// Zeroes the fields of the ext headers `out`'s opcode does not carry, as parse_headers_general
// leaves them: parse_frame's callers get the general parser's record field for field
// (fuzz_parse_fast), while the receive path (parse_headers) skips these stores.
inline void complete_ext_headers(PacketInfo& out) {
  const std::uint8_t h = out.op().headers;
  if ((h & kHdrReth) == 0) {
    out.reth_va = 0;
    out.reth_rkey = out.reth_dma_len = 0;
  }
  if ((h & kHdrAeth) == 0) {
    out.aeth_syndrome = 0;
    out.aeth_msn = 0;
  }
  if ((h & kHdrImmDt) == 0) out.imm_data = 0;
  if ((h & kHdrIeth) == 0) out.ieth_rkey = 0;
  if ((h & kHdrAtomicEth) == 0) {
    out.atomic_va = out.atomic_swap_add = out.atomic_compare = 0;
    out.atomic_rkey = 0;
  }
  if ((h & kHdrAtomicAckEth) == 0) out.atomic_ack_orig = 0;
}

// Every header rule of parse_frame, for a caller that checks the P_Key and the ICRC itself: the
// fast path inline at the call site, the general parser behind it for every other shape and for
// a frame the fast path declines (it names the rule the frame broke). With opt.check_pkey and
// opt.verify_icrc false, the same result as parse_frame, but for the fields of ext headers the
// opcode does not carry (parse_headers_fast), which the caller must not read.
[[nodiscard, gnu::always_inline]] inline DropReason parse_headers(const std::uint8_t* f, std::uint32_t len,
                                                                  PacketInfo& out, const ParseOptions& opt) {
  if (parse_headers_fast(f, len, out, opt)) [[likely]]
    return DropReason::kNone;
  return parse_headers_general(f, len, out, opt);
}

}  // namespace droce::wire
