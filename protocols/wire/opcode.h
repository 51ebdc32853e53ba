// RC and CNP opcodes and the constexpr table of which headers follow the BTH (IBTA §9.2.1 table 38).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "protocols/wire/ib_headers.h"

namespace droce::wire {

enum class Opcode : std::uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendLastImm = 0x03,
  kSendOnly = 0x04,
  kSendOnlyImm = 0x05,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0A,
  kWriteOnlyImm = 0x0B,
  kReadRequest = 0x0C,
  kReadRespFirst = 0x0D,
  kReadRespMiddle = 0x0E,
  kReadRespLast = 0x0F,
  kReadRespOnly = 0x10,
  kAck = 0x11,
  kAtomicAck = 0x12,
  kCmpSwap = 0x13,
  kFetchAdd = 0x14,
  kSendLastInv = 0x16,
  kSendOnlyInv = 0x17,
  kCnp = 0x81,  // RoCEv2 CNP, Annex A17.9.3
  // droce's selective-repeat extension (docs/selective-repeat.md), in the manufacturer-specific
  // opcode space (§9.2.1 table 38: transport bits 110 and 111, 0xC0..0xFF). An SR data opcode is
  // its RC counterpart with the two top bits set, and carries a RETH on every packet; the SR
  // acknowledgement is the RC ACKNOWLEDGE's counterpart with a 16-byte SACK bitmap as payload.
  kSrSendFirst = 0xC0,
  kSrSendMiddle = 0xC1,
  kSrSendLast = 0xC2,
  kSrSendLastImm = 0xC3,
  kSrSendOnly = 0xC4,
  kSrSendOnlyImm = 0xC5,
  kSrWriteFirst = 0xC6,
  kSrWriteMiddle = 0xC7,
  kSrWriteLast = 0xC8,
  kSrWriteLastImm = 0xC9,
  kSrWriteOnly = 0xCA,
  kSrWriteOnlyImm = 0xCB,
  kSrReadRequest = 0xCC,
  kSrReadRespFirst = 0xCD,
  kSrReadRespMiddle = 0xCE,
  kSrReadRespLast = 0xCF,
  kSrReadRespOnly = 0xD0,
  kSrAck = 0xD1,
  kSrAtomicAck = 0xD2,
  kSrCmpSwap = 0xD3,
  kSrFetchAdd = 0xD4,
  kSrSendLastInv = 0xD6,
  kSrSendOnlyInv = 0xD7,
};

// The manufacturer-specific opcode space (§9.2.1): droce's SR extension lives there, and only a
// QP whose recovery is selective repeat accepts it (a parser only with accept_droce_sr).
[[nodiscard]] constexpr bool is_manufacturer_opcode(std::uint8_t opcode) { return opcode >= 0xC0; }
// The SR opcode of an RC SEND/WRITE/READ/atomic opcode (or response), and back.
[[nodiscard]] constexpr std::uint8_t sr_opcode_of(std::uint8_t rc_opcode) {
  return static_cast<std::uint8_t>(rc_opcode | 0xC0);
}
[[nodiscard]] constexpr std::uint8_t rc_opcode_of(std::uint8_t sr_opcode) {
  return static_cast<std::uint8_t>(sr_opcode & 0x3F);
}
// The SR window: PSNs a selective-repeat responder accepts from its ePSN on, and the bits of the
// SACK bitmap (bit i: PSN ePSN + i, i.e. the acknowledged PSN + 1 + i).
inline constexpr std::uint32_t kSrWindow = 128;
inline constexpr std::uint32_t kSackBytes = kSrWindow / 8;

// What a packet is, for dispatch: requests go to the responder, responses to the completer.
enum class OpKind : std::uint8_t {
  kInvalid,
  kSend,
  kWrite,
  kReadRequest,
  kReadResponse,
  kAck,
  kAtomic,
  kAtomicAck,
  kCnp
};
// Where a packet sits in its message (§9.5): only FIRST/MIDDLE must carry exactly one PMTU.
enum class OpPosition : std::uint8_t { kNone, kFirst, kMiddle, kLast, kOnly };

// Header flags (bitmask) after the BTH, in wire order RETH/AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
inline constexpr std::uint8_t kHdrReth = 1u << 0;
inline constexpr std::uint8_t kHdrAeth = 1u << 1;
inline constexpr std::uint8_t kHdrImmDt = 1u << 2;
inline constexpr std::uint8_t kHdrIeth = 1u << 3;
inline constexpr std::uint8_t kHdrAtomicEth = 1u << 4;
inline constexpr std::uint8_t kHdrAtomicAckEth = 1u << 5;
inline constexpr std::uint8_t kHdrCnp = 1u << 6;

struct OpcodeInfo {
  std::string_view name;  // Wireshark's spelling, for logs and captures
  OpKind kind = OpKind::kInvalid;
  OpPosition position = OpPosition::kNone;
  std::uint8_t headers = 0;    // kHdr* mask
  std::uint8_t ext_bytes = 0;  // bytes of extended headers between BTH and payload
  bool has_payload = false;    // may carry payload bytes
  bool is_request = false;     // travels requester -> responder

  [[nodiscard]] constexpr bool valid() const { return kind != OpKind::kInvalid; }
};

namespace detail {
constexpr std::uint8_t ext_bytes_of(std::uint8_t h) {
  return static_cast<std::uint8_t>(((h & kHdrReth) ? sizeof(Reth) : 0) + ((h & kHdrAeth) ? sizeof(Aeth) : 0) +
                                   ((h & kHdrImmDt) ? sizeof(ImmDt) : 0) + ((h & kHdrIeth) ? sizeof(Ieth) : 0) +
                                   ((h & kHdrAtomicEth) ? sizeof(AtomicEth) : 0) +
                                   ((h & kHdrAtomicAckEth) ? sizeof(AtomicAckEth) : 0) +
                                   ((h & kHdrCnp) ? sizeof(CnpBody) : 0));
}
constexpr OpcodeInfo op(std::string_view name, OpKind k, OpPosition p, std::uint8_t h, bool payload, bool req) {
  return OpcodeInfo{name, k, p, h, ext_bytes_of(h), payload, req};
}
// Names of the SR opcodes, indexed by their RC counterpart (SEND: 0x00..0x05 and 0x16/0x17;
// WRITE: 0x06..0x0B, from 0x06).
inline constexpr std::string_view kSrSendNames[0x18] = {"DROCE SR SEND First",
                                                        "DROCE SR SEND Middle",
                                                        "DROCE SR SEND Last",
                                                        "DROCE SR SEND Last with Immediate",
                                                        "DROCE SR SEND Only",
                                                        "DROCE SR SEND Only with Immediate",
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        {},
                                                        "DROCE SR SEND Last with Invalidate",
                                                        "DROCE SR SEND Only with Invalidate"};
inline constexpr std::string_view kSrWriteNames[6] = {"DROCE SR WRITE First", "DROCE SR WRITE Middle",
                                                      "DROCE SR WRITE Last",  "DROCE SR WRITE Last with Immediate",
                                                      "DROCE SR WRITE Only",  "DROCE SR WRITE Only with Immediate"};
constexpr std::array<OpcodeInfo, 256> make_opcode_table() {
  using K = OpKind;
  using P = OpPosition;
  std::array<OpcodeInfo, 256> t{};
  t[0x00] = op("SEND First", K::kSend, P::kFirst, 0, true, true);
  t[0x01] = op("SEND Middle", K::kSend, P::kMiddle, 0, true, true);
  t[0x02] = op("SEND Last", K::kSend, P::kLast, 0, true, true);
  t[0x03] = op("SEND Last with Immediate", K::kSend, P::kLast, kHdrImmDt, true, true);
  t[0x04] = op("SEND Only", K::kSend, P::kOnly, 0, true, true);
  t[0x05] = op("SEND Only with Immediate", K::kSend, P::kOnly, kHdrImmDt, true, true);
  t[0x06] = op("RDMA WRITE First", K::kWrite, P::kFirst, kHdrReth, true, true);
  t[0x07] = op("RDMA WRITE Middle", K::kWrite, P::kMiddle, 0, true, true);
  t[0x08] = op("RDMA WRITE Last", K::kWrite, P::kLast, 0, true, true);
  t[0x09] = op("RDMA WRITE Last with Immediate", K::kWrite, P::kLast, kHdrImmDt, true, true);
  t[0x0A] = op("RDMA WRITE Only", K::kWrite, P::kOnly, kHdrReth, true, true);
  t[0x0B] = op("RDMA WRITE Only with Immediate", K::kWrite, P::kOnly, kHdrReth | kHdrImmDt, true, true);
  t[0x0C] = op("RDMA READ Request", K::kReadRequest, P::kOnly, kHdrReth, false, true);
  t[0x0D] = op("RDMA READ Response First", K::kReadResponse, P::kFirst, kHdrAeth, true, false);
  t[0x0E] = op("RDMA READ Response Middle", K::kReadResponse, P::kMiddle, 0, true, false);
  t[0x0F] = op("RDMA READ Response Last", K::kReadResponse, P::kLast, kHdrAeth, true, false);
  t[0x10] = op("RDMA READ Response Only", K::kReadResponse, P::kOnly, kHdrAeth, true, false);
  t[0x11] = op("Acknowledge", K::kAck, P::kOnly, kHdrAeth, false, false);
  t[0x12] = op("ATOMIC Acknowledge", K::kAtomicAck, P::kOnly, kHdrAeth | kHdrAtomicAckEth, false, false);
  t[0x13] = op("CmpSwap", K::kAtomic, P::kOnly, kHdrAtomicEth, false, true);
  t[0x14] = op("FetchAdd", K::kAtomic, P::kOnly, kHdrAtomicEth, false, true);
  t[0x16] = op("SEND Last with Invalidate", K::kSend, P::kLast, kHdrIeth, true, true);
  t[0x17] = op("SEND Only with Invalidate", K::kSend, P::kOnly, kHdrIeth, true, true);
  t[0x81] = op("CNP", K::kCnp, P::kOnly, kHdrCnp, false, false);
  // droce SR (docs/selective-repeat.md): each SEND/WRITE opcode again, a RETH on every packet.
  for (std::uint8_t rc : {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x16, 0x17}) {
    const OpcodeInfo& base = t[rc];
    t[rc | 0xC0] = op(base.kind == K::kSend ? kSrSendNames[rc] : kSrWriteNames[rc - 0x06], base.kind, base.position,
                      static_cast<std::uint8_t>(base.headers | kHdrReth), true, true);
  }
  t[0xD1] = op("DROCE SR Acknowledge", K::kAck, P::kOnly, kHdrAeth, true, false);
  // The READ request, its responses, the atomics and their acknowledgement: the RC opcode's
  // headers unchanged (the READ request's RETH and the response's PSN already place every byte).
  t[0xCC] = op("DROCE SR RDMA READ Request", K::kReadRequest, P::kOnly, kHdrReth, false, true);
  t[0xCD] = op("DROCE SR RDMA READ Response First", K::kReadResponse, P::kFirst, kHdrAeth, true, false);
  t[0xCE] = op("DROCE SR RDMA READ Response Middle", K::kReadResponse, P::kMiddle, 0, true, false);
  t[0xCF] = op("DROCE SR RDMA READ Response Last", K::kReadResponse, P::kLast, kHdrAeth, true, false);
  t[0xD0] = op("DROCE SR RDMA READ Response Only", K::kReadResponse, P::kOnly, kHdrAeth, true, false);
  t[0xD2] = op("DROCE SR ATOMIC Acknowledge", K::kAtomicAck, P::kOnly, kHdrAeth | kHdrAtomicAckEth, false, false);
  t[0xD3] = op("DROCE SR CmpSwap", K::kAtomic, P::kOnly, kHdrAtomicEth, false, true);
  t[0xD4] = op("DROCE SR FetchAdd", K::kAtomic, P::kOnly, kHdrAtomicEth, false, true);
  return t;
}
}  // namespace detail

inline constexpr std::array<OpcodeInfo, 256> kOpcodeTable = detail::make_opcode_table();

[[nodiscard]] constexpr const OpcodeInfo& opcode_info(std::uint8_t opcode) { return kOpcodeTable[opcode]; }
[[nodiscard]] constexpr const OpcodeInfo& opcode_info(Opcode opcode) {
  return kOpcodeTable[static_cast<std::uint8_t>(opcode)];
}

static_assert(opcode_info(Opcode::kWriteOnlyImm).ext_bytes == 20);
static_assert(opcode_info(Opcode::kAtomicAck).ext_bytes == 12);
static_assert(opcode_info(Opcode::kCnp).ext_bytes == 16);
static_assert(!opcode_info(0x15).valid());
static_assert(opcode_info(Opcode::kSrWriteMiddle).ext_bytes == 16 &&
              opcode_info(Opcode::kSrWriteOnlyImm).ext_bytes == 20);
static_assert(opcode_info(Opcode::kSrSendLastInv).ext_bytes == 20 && opcode_info(Opcode::kSrSendMiddle).is_request);
static_assert(!opcode_info(0xFF).valid() && !opcode_info(0xD5).valid() && !opcode_info(Opcode::kSrAck).is_request);
static_assert(sr_opcode_of(0x0C) == 0xCC && sr_opcode_of(0x10) == 0xD0 && sr_opcode_of(0x14) == 0xD4);
static_assert(opcode_info(Opcode::kSrReadRequest).ext_bytes == 16 && opcode_info(Opcode::kSrCmpSwap).ext_bytes == 28);
static_assert(opcode_info(Opcode::kSrAtomicAck).ext_bytes == 12 && !opcode_info(Opcode::kSrReadRespMiddle).is_request);

}  // namespace droce::wire
