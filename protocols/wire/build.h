// Frame builders: a per-QP header template plus per-packet fields -> RoCEv2 headers, ACKs, CNPs.
#pragma once

#include <cstdint>

#include "protocols/wire/ib_headers.h"
#include "protocols/wire/l2l3_headers.h"
#include "protocols/wire/opcode.h"

namespace droce::wire {

// Addressing of one side of a connection.
struct L2L3Address {
  std::uint8_t mac[6] = {};
  std::uint8_t ip[16] = {};  // IPv4 in the first 4 bytes
};

struct TemplateConfig {
  L2L3Address local;
  L2L3Address remote;
  bool ipv6 = false;
  bool vlan = false;
  std::uint16_t vlan_id = 0;
  std::uint8_t vlan_pcp = 0;
  std::uint8_t dscp = 0;
  std::uint8_t ecn = kEcnEct0;  // data leaves ECT(0) so switches can mark CE (DCQCN)
  std::uint8_t ttl = 64;
  std::uint16_t udp_src_port = 0xC000;
  std::uint16_t pkey = kDefaultPkey;
  std::uint32_t dest_qpn = 0;
};

// UDP source port for a QP pair, as Linux computes it (rdma_get_udp_sport: flow label from
// lqpn * rqpn folded to 20 bits, then 14 bits into 0xC000..0xFFFF). Matches rxe on the wire.
[[nodiscard]] std::uint16_t roce_udp_src_port(std::uint32_t local_qpn, std::uint32_t remote_qpn);

// The bytes every packet of a QP starts with (Ethernet [VLAN] IP UDP BTH), prebuilt once.
struct HeaderTemplate {
  static constexpr std::uint32_t kMaxBytes = 14 + 4 + 40 + 8 + 12;
  std::uint8_t bytes[kMaxBytes] = {};
  std::uint16_t l3_offset = 0;
  std::uint16_t bth_offset = 0;  // also the length of the template
  bool ipv6 = false;

  [[nodiscard]] static HeaderTemplate make(const TemplateConfig& cfg);
};

// Per-packet fields; only those of the opcode's headers are used.
struct PacketFields {
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  bool ack_req = false;
  bool se = false;
  bool becn = false;
  std::uint32_t dest_qpn = 0;  // 0: the template's
  std::uint32_t payload_len = 0;
  std::uint16_t ip_id = 0;
  std::uint8_t ecn_override = 0xFF;  // 0xFF: the template's ECN; ACK/CNP use Not-ECT
  std::uint8_t dscp_override = 0xFF;
  std::uint64_t reth_va = 0;
  std::uint32_t reth_rkey = 0;
  std::uint32_t reth_len = 0;
  std::uint8_t aeth_syndrome = 0;
  std::uint32_t aeth_msn = 0;
  std::uint32_t imm = 0;
  std::uint32_t ieth_rkey = 0;
  std::uint64_t atomic_va = 0;
  std::uint32_t atomic_rkey = 0;
  std::uint64_t atomic_swap_add = 0;
  std::uint64_t atomic_compare = 0;
  std::uint64_t atomic_ack_orig = 0;
};

[[nodiscard]] constexpr std::uint32_t pad_for(std::uint32_t payload_len) { return (4 - (payload_len & 3)) & 3; }

// Writes L2 through the last extended header into `out` (room: HeaderTemplate::kMaxBytes + 28)
// and returns their length. IP total length, ID and checksum and UDP length already account
// for payload + pad + ICRC, so the caller appends payload, pad zeros and the ICRC (see
// icrc.h) and the frame is complete.
[[nodiscard]] std::uint32_t write_headers(const HeaderTemplate& t, const PacketFields& f, std::uint8_t* out);

// Largest frame write_headers can start.
inline constexpr std::uint32_t kMaxHeaderBytes = HeaderTemplate::kMaxBytes + 28;

// Builds a complete contiguous frame (headers, copied payload, pad, ICRC) into `out` of
// `room` bytes; returns the frame length or 0 if it does not fit. For tests, ACKs and CNPs —
// the zero-copy datapath attaches the payload instead.
[[nodiscard]] std::uint32_t build_frame(const HeaderTemplate& t, const PacketFields& f, const std::uint8_t* payload,
                                        std::uint8_t* out, std::uint32_t room);

// ACKNOWLEDGE (opcode 0x11) with an AETH: ACK, NAK or RNR NAK per `syndrome`, §9.3.5.
[[nodiscard]] std::uint32_t build_ack(const HeaderTemplate& t, std::uint32_t psn, std::uint8_t syndrome,
                                      std::uint32_t msn, std::uint8_t* out, std::uint32_t room);

// CNP, Annex A17.9.3: opcode 0x81, BECN set, DestQP = the sender's QP, PSN 0, 16 reserved zero
// bytes, ICRC; not ECN-capable (it must not itself be marked); `dscp` per the fabric's CNP
// class (mlx5 default 48).
[[nodiscard]] std::uint32_t build_cnp(const HeaderTemplate& t, std::uint32_t dest_qpn, std::uint8_t dscp,
                                      std::uint8_t* out, std::uint32_t room);

}  // namespace droce::wire
