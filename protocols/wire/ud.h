// Unreliable Datagram framing on RoCEv2: the DETH, UD SEND ONLY [with immediate], the GSI QP1's
// Q_Key and the P_Key and Q_Key rules a UD receiver applies (IBTA vol. 1 ch. 9 for the DETH and
// the UD service, §10.9 for partitions, ch. 13 for the GSI; Annex A17.4 for RoCEv2).
#pragma once

#include <cstdint>
#include <string_view>

#include "protocols/wire/be.h"
#include "protocols/wire/build.h"
#include "protocols/wire/drop_reason.h"
#include "protocols/wire/ib_headers.h"

namespace droce::wire {

// Datagram Extended Transport Header, §9.3.2: Q_Key, 8 reserved bits, source QP (24 bits).
struct Deth {
  Be32 qkey;
  std::uint8_t reserved;
  Be24 src_qp;
};
static_assert(sizeof(Deth) == 8);

// UD opcodes, §9.2.1 table 38: transport class 011 (UD) in bits 7:5, SEND Only / with Immediate.
// UD has no other operations: no RDMA, no atomics, and every message is one packet.
inline constexpr std::uint8_t kOpUdSendOnly = 0x64;
inline constexpr std::uint8_t kOpUdSendOnlyImm = 0x65;
[[nodiscard]] constexpr bool is_ud_opcode(std::uint8_t op) { return op == kOpUdSendOnly || op == kOpUdSendOnlyImm; }

// The General Services Interface QP and its well-known Q_Key (ch. 13, GSI: QP1 always uses
// 0x80010000). The high bit marks a controlled Q_Key: a send request cannot use it unless the
// QP's own Q_Key is it (§10.2.5, Q_Keys), so no consumer can forge GSI traffic by naming it.
inline constexpr std::uint32_t kGsiQpn = 1;
inline constexpr std::uint32_t kGsiQkey = 0x80010000u;
inline constexpr std::uint32_t kControlledQkeyBit = 0x80000000u;

// A valid P_Key has a non-zero 15-bit key (§10.9.1.2: 0x0000 and 0x8000 are invalid).
[[nodiscard]] constexpr bool pkey_valid(std::uint16_t pkey) { return (pkey & 0x7FFF) != 0; }

// What a UD receiver learnt from one RoCEv2 frame: addressing, BTH, DETH, ImmDt, payload.
// Offsets index the frame as given.
struct UdPacket {
  std::uint8_t dst_mac[6] = {};
  std::uint8_t src_mac[6] = {};
  bool has_vlan = false;
  std::uint16_t vlan_id = 0;
  std::uint8_t vlan_pcp = 0;
  bool ipv6 = false;
  std::uint8_t dscp = 0;
  std::uint8_t src_ip[16] = {};  // IPv4 in the first 4 bytes
  std::uint8_t dst_ip[16] = {};
  std::uint16_t udp_src_port = 0;
  std::uint8_t opcode = 0;
  bool se = false;
  std::uint16_t pkey = 0;
  std::uint32_t dest_qpn = 0;
  std::uint32_t psn = 0;
  std::uint32_t qkey = 0;
  std::uint32_t src_qpn = 0;
  bool has_imm = false;
  std::uint32_t imm = 0;
  std::uint16_t l3_offset = 0;
  std::uint16_t payload_offset = 0;
  std::uint32_t payload_len = 0;
  std::uint32_t frame_len = 0;
};

// Why a frame was not taken as a UD packet: one value per rule, named for counters.
#define DROCE_UD_REFUSALS(X)                                        \
  X(kNone, "none")                                                  \
  X(kFrame, "frame") /* an L2-L4 or BTH rule: see the DropReason */ \
  X(kNotUd, "not_ud")                                               \
  X(kTruncatedDeth, "truncated_deth")                               \
  X(kBadPadCount, "bad_pad_count")                                  \
  X(kBadIcrc, "bad_icrc")                                           \
  X(kBadPkey, "bad_pkey")                                           \
  X(kBadQkey, "bad_qkey")                                           \
  X(kWrongQp, "wrong_qp")

enum class UdRefusal : std::uint8_t {
#define DROCE_UD_ENUM(name, str) name,
  DROCE_UD_REFUSALS(DROCE_UD_ENUM)
#undef DROCE_UD_ENUM
      kCount
};
inline constexpr std::size_t kUdRefusalCount = static_cast<std::size_t>(UdRefusal::kCount);

[[nodiscard]] constexpr std::string_view ud_refusal_name(UdRefusal r) {
  constexpr std::string_view kNames[] = {
#define DROCE_UD_NAME(name, str) str,
      DROCE_UD_REFUSALS(DROCE_UD_NAME)
#undef DROCE_UD_NAME
  };
  const auto i = static_cast<std::size_t>(r);
  return i < kUdRefusalCount ? kNames[i] : std::string_view{"invalid"};
}

// Parses one frame as a UD packet: the RC parser's L2-L4 and BTH rules (it does not know the UD
// opcodes yet: it stops at them with kUnknownOpcode, the offsets and addresses already filled),
// then DETH, ImmDt, pad and — when `verify_icrc` — the ICRC. On kFrame, `frame_reason` names the
// parser's rule. Never reads outside [frame, frame + len). No P_Key or Q_Key check: that is the
// receiving QP's (ud_accept).
[[nodiscard]] UdRefusal parse_ud_frame(const std::uint8_t* frame, std::uint32_t len, UdPacket& out,
                                       DropReason& frame_reason, bool verify_icrc = true);

// The receiving QP's rules (§10.9.3 for the P_Key; ch. 9 for the Q_Key): the destination QP is
// this one, the P_Key is valid and matches one of `pkeys` (a UD QP has one; the GSI QP1 accepts
// every P_Key of the port's table, ch. 13), and the DETH Q_Key equals the QP's.
struct UdQpRules {
  std::uint32_t qpn = kGsiQpn;
  std::uint32_t qkey = kGsiQkey;
  const std::uint16_t* pkeys = nullptr;  // nullptr: the default partition 0xFFFF only
  std::uint32_t pkey_count = 0;
};
[[nodiscard]] UdRefusal ud_accept(const UdPacket& p, const UdQpRules& qp);

// What a UD SEND carries beyond the QP's header template (whose dest_qpn is ignored).
struct UdSendFields {
  std::uint32_t dest_qpn = kGsiQpn;
  std::uint32_t qkey = kGsiQkey;
  std::uint32_t src_qpn = kGsiQpn;
  std::uint32_t psn = 0;  // UD receivers do not check it (UD has no sequence checks)
  bool se = false;
  bool with_imm = false;
  std::uint32_t imm = 0;
  std::uint16_t ip_id = 0;
  std::uint16_t pkey = 0;  // 0: the template's; a GMP reply carries its request's P_Key
};

// The fields of the reply to a GMP that arrived as `request`: to its source QP, from QP1, with
// the GSI Q_Key and the request's P_Key.
[[nodiscard]] UdSendFields gsi_reply_fields(const UdPacket& request);

// Bytes a UD SEND of `payload_len` bytes takes: headers, DETH, [ImmDt], payload, pad, ICRC.
[[nodiscard]] std::uint32_t ud_frame_bytes(const HeaderTemplate& t, bool with_imm, std::uint32_t payload_len);

// Builds a complete UD SEND ONLY [with immediate] frame into `out` of `room` bytes and returns
// its length (0 when it does not fit). The ICRC is the RC one (icrc.h): the same variant fields
// are masked for UD (§7.8.1; A17.4.1) and the P_Key, DETH and source QP are covered by it.
[[nodiscard]] std::uint32_t build_ud_send(const HeaderTemplate& t, const UdSendFields& f, const std::uint8_t* payload,
                                          std::uint32_t payload_len, std::uint8_t* out, std::uint32_t room);

}  // namespace droce::wire
