// InfiniBand transport headers carried by RoCEv2: BTH and the extended headers (IBTA vol. 1 §9.2-9.3).
#pragma once

#include <cstdint>

#include "protocols/wire/be.h"

namespace droce::wire {

// Base Transport Header, IBTA §9.2. Bit fields are reached through mask accessors, never C
// bitfields, so the layout is the wire layout on every compiler.
struct Bth {
  std::uint8_t opcode;
  std::uint8_t flags;  // SE(7) MigReq(6) PadCnt(5:4) TVer(3:0)
  Be16 pkey;
  std::uint8_t fecn_becn;  // FECN(7) BECN(6) resv6(5:0)
  Be24 dest_qp;
  std::uint8_t ack_req;  // AckReq(7) resv7(6:0)
  Be24 psn;

  [[nodiscard]] constexpr bool se() const { return (flags & 0x80) != 0; }
  [[nodiscard]] constexpr bool mig_req() const { return (flags & 0x40) != 0; }
  [[nodiscard]] constexpr std::uint8_t pad_count() const { return (flags >> 4) & 0x03; }
  [[nodiscard]] constexpr std::uint8_t tver() const { return flags & 0x0F; }
  [[nodiscard]] constexpr bool fecn() const { return (fecn_becn & 0x80) != 0; }
  [[nodiscard]] constexpr bool becn() const { return (fecn_becn & 0x40) != 0; }
  [[nodiscard]] constexpr bool ack_requested() const { return (ack_req & 0x80) != 0; }

  constexpr void set_flags(bool se_bit, bool mig, std::uint8_t pad) {
    flags = static_cast<std::uint8_t>((se_bit ? 0x80 : 0) | (mig ? 0x40 : 0) | ((pad & 0x03) << 4));
  }
  constexpr void set_becn(bool b) {
    fecn_becn = static_cast<std::uint8_t>(b ? (fecn_becn | 0x40) : (fecn_becn & ~0x40));
  }
  constexpr void set_ack_req(bool a) { ack_req = a ? 0x80 : 0x00; }
};
static_assert(sizeof(Bth) == 12);

inline constexpr std::uint16_t kDefaultPkey = 0xFFFF;

// RDMA Extended Transport Header, §9.3.3.
struct Reth {
  Be64 va;
  Be32 rkey;
  Be32 dma_len;
};
static_assert(sizeof(Reth) == 16);

// ACK Extended Transport Header, §9.3.5: syndrome then the 24-bit MSN.
struct Aeth {
  std::uint8_t syndrome;
  Be24 msn;
};
static_assert(sizeof(Aeth) == 4);

// Immediate data, §9.3.6 (opaque to the transport; carried as 4 bytes in wire order).
struct ImmDt {
  Be32 imm;
};
static_assert(sizeof(ImmDt) == 4);

// Invalidate Extended Transport Header, §9.3.7.
struct Ieth {
  Be32 rkey;
};
static_assert(sizeof(Ieth) == 4);

// Atomic Extended Transport Header, §9.3.4.
struct AtomicEth {
  Be64 va;
  Be32 rkey;
  Be64 swap_add;
  Be64 compare;
};
static_assert(sizeof(AtomicEth) == 28);

// Atomic ACK Extended Transport Header, §9.3.5.3.
struct AtomicAckEth {
  Be64 orig_data;
};
static_assert(sizeof(AtomicAckEth) == 8);

// RoCEv2 Congestion Notification Packet body (Annex A17.9.3): BTH opcode 0x81, BECN set,
// DestQP = the reaction point's QP, 16 reserved bytes, then the ICRC.
struct CnpBody {
  std::uint8_t reserved[16];
};
static_assert(sizeof(CnpBody) == 16);

inline constexpr std::uint32_t kIcrcBytes = 4;

// AETH syndrome encoding, §9.3.5.1 table 44.
inline constexpr std::uint8_t kAethTypeMask = 0x60;
inline constexpr std::uint8_t kAethTypeAck = 0x00;
inline constexpr std::uint8_t kAethTypeRnrNak = 0x20;
inline constexpr std::uint8_t kAethTypeNak = 0x60;
inline constexpr std::uint8_t kAethCreditsInvalid = 0x1F;  // what rxe sends: no end-to-end credits
inline constexpr std::uint8_t kAethAckUnlimited = kAethTypeAck | kAethCreditsInvalid;

enum class NakCode : std::uint8_t {
  kPsnSequenceError = 0x00,
  kInvalidRequest = 0x01,
  kRemoteAccessError = 0x02,
  kRemoteOperationalError = 0x03,
  kInvalidRdRequest = 0x04,
};
[[nodiscard]] constexpr std::uint8_t nak_syndrome(NakCode c) {
  return static_cast<std::uint8_t>(kAethTypeNak | static_cast<std::uint8_t>(c));
}
[[nodiscard]] constexpr std::uint8_t rnr_nak_syndrome(std::uint8_t timer_code) {
  return static_cast<std::uint8_t>(kAethTypeRnrNak | (timer_code & 0x1F));
}

// RNR NAK timer field, §9.7.5.2.8 table 45, in nanoseconds. Code 0 is the longest (655.36 ms).
inline constexpr std::uint64_t kRnrTimerNs[32] = {
    655'360'000, 10'000,     20'000,     30'000,      40'000,      60'000,      80'000,      120'000,
    160'000,     240'000,    320'000,    480'000,     640'000,     960'000,     1'280'000,   1'920'000,
    2'560'000,   3'840'000,  5'120'000,  7'680'000,   10'240'000,  15'360'000,  20'480'000,  30'720'000,
    40'960'000,  61'440'000, 81'920'000, 122'880'000, 163'840'000, 245'760'000, 327'680'000, 491'520'000};

}  // namespace droce::wire
