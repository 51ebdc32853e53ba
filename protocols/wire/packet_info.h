// PacketInfo: everything the transport needs from one received RoCEv2 frame, parsed once.
#pragma once

#include <cstdint>

#include "protocols/wire/opcode.h"

namespace droce::wire {

// Filled by parse_frame() (parse.h). Offsets index the frame as given to the parser, so the
// same record describes a contiguous buffer or the first segment of an mbuf chain.
// Fields of extended headers are valid only when the opcode's table entry lists that header.
struct PacketInfo {
  // L2/L3/L4
  std::uint8_t dst_mac[6];
  std::uint8_t src_mac[6];
  bool has_vlan;
  std::uint8_t vlan_pcp;
  std::uint16_t vlan_id;
  bool ipv6;
  std::uint8_t ecn;  // IP ECN codepoint (kEcn*)
  std::uint8_t dscp;
  std::uint8_t src_ip[16];  // IPv4 in the first 4 bytes; IPv6 all 16
  std::uint8_t dst_ip[16];
  std::uint16_t udp_src_port;
  std::uint16_t l3_offset;
  std::uint16_t bth_offset;
  std::uint16_t payload_offset;
  std::uint32_t payload_len;  // payload only: excludes pad bytes and the ICRC
  std::uint32_t frame_len;    // bytes of the frame that belong to the packet (Ethernet padding excluded)

  // BTH
  std::uint8_t opcode;
  bool se;
  bool mig_req;
  std::uint8_t pad_count;
  std::uint16_t pkey;
  bool fecn;
  bool becn;
  std::uint32_t dest_qpn;
  bool ack_req;
  std::uint32_t psn;

  // Extended headers
  std::uint64_t reth_va;
  std::uint32_t reth_rkey;
  std::uint32_t reth_dma_len;
  std::uint8_t aeth_syndrome;
  std::uint32_t aeth_msn;
  std::uint32_t imm_data;  // host order of the 4 wire bytes
  std::uint32_t ieth_rkey;
  std::uint64_t atomic_va;
  std::uint32_t atomic_rkey;
  std::uint64_t atomic_swap_add;
  std::uint64_t atomic_compare;
  std::uint64_t atomic_ack_orig;

  [[nodiscard]] const OpcodeInfo& op() const { return opcode_info(opcode); }
};

}  // namespace droce::wire
