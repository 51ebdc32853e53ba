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
};

// What a packet is, for dispatch: requests go to the responder, responses to the completer.
enum class OpKind : std::uint8_t { kInvalid, kSend, kWrite, kReadRequest, kReadResponse, kAck, kAtomic, kAtomicAck, kCnp };
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
  std::string_view name;       // Wireshark's spelling, for logs and captures
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

}  // namespace droce::wire
