// libFuzzer target: parse_frame (with its fast path) against parse_frame_general on arbitrary bytes:
// any difference in DropReason or in any PacketInfo field traps.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocols/wire/icrc.h"
#include "protocols/wire/parse.h"
#include "protocols/wire/parse_general.h"

using namespace droce::wire;

namespace {

bool same(const PacketInfo& a, const PacketInfo& b) {
  return std::memcmp(a.dst_mac, b.dst_mac, 6) == 0 && std::memcmp(a.src_mac, b.src_mac, 6) == 0 &&
         a.has_vlan == b.has_vlan && a.vlan_pcp == b.vlan_pcp && a.vlan_id == b.vlan_id && a.ipv6 == b.ipv6 &&
         a.ecn == b.ecn && a.dscp == b.dscp && std::memcmp(a.src_ip, b.src_ip, 16) == 0 &&
         std::memcmp(a.dst_ip, b.dst_ip, 16) == 0 && a.udp_src_port == b.udp_src_port && a.l3_offset == b.l3_offset &&
         a.bth_offset == b.bth_offset && a.payload_offset == b.payload_offset && a.payload_len == b.payload_len &&
         a.frame_len == b.frame_len && a.opcode == b.opcode && a.se == b.se && a.mig_req == b.mig_req &&
         a.pad_count == b.pad_count && a.pkey == b.pkey && a.fecn == b.fecn && a.becn == b.becn &&
         a.dest_qpn == b.dest_qpn && a.ack_req == b.ack_req && a.psn == b.psn && a.reth_va == b.reth_va &&
         a.reth_rkey == b.reth_rkey && a.reth_dma_len == b.reth_dma_len && a.aeth_syndrome == b.aeth_syndrome &&
         a.aeth_msn == b.aeth_msn && a.imm_data == b.imm_data && a.ieth_rkey == b.ieth_rkey &&
         a.atomic_va == b.atomic_va && a.atomic_rkey == b.atomic_rkey && a.atomic_swap_add == b.atomic_swap_add &&
         a.atomic_compare == b.atomic_compare && a.atomic_ack_orig == b.atomic_ack_orig;
}

// Makes the IPv4 header checksum (Ethernet without VLAN) and the ICRC of the bytes as given
// correct, so that random inputs get past both and reach the rules in between.
void repair_checksums(std::vector<std::uint8_t>& f) {
  if (f.size() >= 34 && f[12] == 0x08 && f[13] == 0x00) {
    f[24] = f[25] = 0;
    std::uint32_t sum = 0;
    for (int i = 14; i < 34; i += 2) sum += static_cast<std::uint32_t>(f[i] << 8 | f[i + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    f[24] = static_cast<std::uint8_t>(~sum >> 8);
    f[25] = static_cast<std::uint8_t>(~sum);
  }
  if (f.size() >= 14 + 20 + 4) {
    const auto n = static_cast<std::uint32_t>(f.size());
    const bool ipv6 = f[12] == 0x86 && f[13] == 0xDD;
    icrc_store(f.data() + n - 4, icrc_compute(f.data() + 14, n - 4 - 14, ipv6));
  }
}

void compare(const std::vector<std::uint8_t>& bytes, const ParseOptions& o) {
  const std::vector<std::uint8_t> f(bytes);  // exact size, so ASan sees any read past the end
  PacketInfo fast, general;
  std::memset(&fast, 0xA5, sizeof(fast));
  std::memset(&general, 0x5A, sizeof(general));
  const auto n = static_cast<std::uint32_t>(f.size());
  if (parse_frame(f.data(), n, fast, o) != parse_frame_general(f.data(), n, general, o)) __builtin_trap();
  if (!same(fast, general)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  std::vector<std::uint8_t> frame(data, data + size);
  ParseOptions strict;
  ParseOptions lax;
  lax.verify_icrc = false;
  lax.verify_ip_checksum = false;
  ParseOptions pkey = lax;
  pkey.check_pkey = true;
  pkey.pkey = 0x8001;
  compare(frame, strict);
  compare(frame, lax);
  compare(frame, pkey);
  repair_checksums(frame);
  compare(frame, strict);
  return 0;
}
