// ICRC: DPDK's CRC32 over the masked headers and the bulk, in place or over a masked copy; zlib
// joins the parts of a split frame.
#include "protocols/wire/icrc.h"

#include <zlib.h>

#include <cstring>

extern "C" {
#include <rte_net_crc.h>
}

#include "protocols/wire/ib_headers.h"
#include "protocols/wire/l2l3_headers.h"

namespace droce::wire {
namespace {

// Frames up to this size are CRC'd in one DPDK call over a masked copy: one SIMD pass beats
// a CRC join for small packets.
constexpr std::uint32_t kCopyThreshold = 512;

// crc32_combine(crc1, crc2, len2) with the length-dependent operator cached: generating it is
// the expensive part of a join, and a QP's packets come in a handful of lengths (the PMTU,
// ACK-sized, the last packet of a message). Per thread, so workers never share it.
std::uint32_t combine(std::uint32_t crc1, std::uint32_t crc2, std::uint32_t len2) {
  struct Op {
    std::uint32_t len = 0;
    uLong op = 0;
  };
  thread_local Op cache[64];
  Op& e = cache[(len2 ^ (len2 >> 6)) & 63];
  if (e.len != len2 || e.op == 0) {
    e.len = len2;
    e.op = crc32_combine_gen(static_cast<z_off_t>(len2));
  }
  return static_cast<std::uint32_t>(crc32_combine_op(crc1, crc2, e.op));
}

// CRC-32 (zlib convention: init and final XOR 0xFFFFFFFF) of `len` bytes, continuing `crc`.
// rte_net_crc_calc(RTE_NET_CRC32_ETH) is zlib's crc32 from a zero seed (ENVIRONMENT.md).
std::uint32_t crc_continue(std::uint32_t crc, const std::uint8_t* p, std::uint32_t len) {
  if (len == 0) return crc;
  return combine(crc, rte_net_crc_calc(p, len, RTE_NET_CRC32_ETH), len);
}

// Writes 8 bytes of ones (the LRH stand-in of A17.4.1) + masked IP + UDP + BTH into `buf`;
// returns the bytes written.
std::uint32_t masked_header(const std::uint8_t* l3, bool ipv6, std::uint8_t* buf) {
  std::memset(buf, 0xFF, 8);
  const std::uint32_t ip_len = ipv6 ? sizeof(Ipv6Hdr) : sizeof(Ipv4Hdr);
  const std::uint32_t n = ip_len + sizeof(UdpHdr) + sizeof(Bth);
  std::memcpy(buf + 8, l3, n);
  std::uint8_t* ip = buf + 8;
  if (ipv6) {
    ip[0] |= 0x0F;  // traffic class (high nibble) ...
    ip[1] = 0xFF;   // ... traffic class (low nibble) + flow label
    ip[2] = 0xFF;
    ip[3] = 0xFF;
    ip[7] = 0xFF;  // hop limit
  } else {
    ip[1] = 0xFF;   // TOS: DSCP + ECN
    ip[8] = 0xFF;   // TTL
    ip[10] = 0xFF;  // header checksum
    ip[11] = 0xFF;
  }
  std::uint8_t* udp = ip + ip_len;
  udp[6] = 0xFF;  // UDP checksum
  udp[7] = 0xFF;
  std::uint8_t* bth = udp + sizeof(UdpHdr);
  bth[4] = 0xFF;  // FECN, BECN, resv6
  return 8 + n;
}

constexpr std::uint32_t kMaskedMax = 8 + sizeof(Ipv6Hdr) + sizeof(UdpHdr) + sizeof(Bth);

std::uint32_t masked_header_crc(const std::uint8_t* l3, bool ipv6) {
  std::uint8_t buf[kMaskedMax];
  return rte_net_crc_calc(buf, masked_header(l3, ipv6, buf), RTE_NET_CRC32_ETH);
}

}  // namespace

void icrc_init() {
  // Falls back by itself (AVX-512 -> SSE4.2 -> scalar) to what the CPU and EAL allow.
  rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
}

std::uint32_t icrc_compute(const std::uint8_t* l3, std::uint32_t len, bool ipv6) {
  const std::uint32_t fixed = (ipv6 ? sizeof(Ipv6Hdr) : sizeof(Ipv4Hdr)) + sizeof(UdpHdr) + sizeof(Bth);
  if (len < fixed) return 0;
  if (len <= kCopyThreshold) {
    std::uint8_t buf[kMaskedMax + kCopyThreshold];
    const std::uint32_t h = masked_header(l3, ipv6, buf);
    std::memcpy(buf + h, l3 + fixed, len - fixed);
    return rte_net_crc_calc(buf, h + len - fixed, RTE_NET_CRC32_ETH);
  }
  return crc_continue(masked_header_crc(l3, ipv6), l3 + fixed, len - fixed);
}

// IPv6: traffic class and flow label (l3+0 low nibble .. l3+3), hop limit (l3+7); UDP checksum
// at l3+46..47; BTH byte 4 at l3+52.
std::uint32_t detail::icrc_in_place_ipv6(std::uint8_t* l3, std::uint32_t len) {
  if (len < sizeof(Ipv6Hdr) + sizeof(UdpHdr) + sizeof(Bth)) return 0;
  const std::uint64_t lrh = detail::icrc_load64(l3 - 8), a = detail::icrc_load64(l3), c = detail::icrc_load64(l3 + 40);
  const std::uint8_t bth4 = l3[52];
  detail::icrc_store64(l3 - 8, ~std::uint64_t{0});
  detail::icrc_store64(l3, a | 0xFF000000FFFFFF0Fu);
  detail::icrc_store64(l3 + 40, c | 0xFFFF000000000000u);
  l3[52] = 0xFF;
  const std::uint32_t crc = rte_net_crc_calc(l3 - 8, len + 8, RTE_NET_CRC32_ETH);
  detail::icrc_store64(l3 - 8, lrh);
  detail::icrc_store64(l3, a);
  detail::icrc_store64(l3 + 40, c);
  l3[52] = bth4;
  return crc;
}

std::uint32_t icrc_compute_split(const std::uint8_t* l3, std::uint32_t hdr_len, bool ipv6, const std::uint8_t* payload,
                                 std::uint32_t payload_len, std::uint32_t pad) {
  const std::uint32_t fixed = (ipv6 ? sizeof(Ipv6Hdr) : sizeof(Ipv4Hdr)) + sizeof(UdpHdr) + sizeof(Bth);
  if (hdr_len < fixed) return 0;
  std::uint32_t crc = crc_continue(masked_header_crc(l3, ipv6), l3 + fixed, hdr_len - fixed);
  crc = crc_continue(crc, payload, payload_len);
  static constexpr std::uint8_t kZeros[4] = {0, 0, 0, 0};
  return (pad & 3) == 0 ? crc : static_cast<std::uint32_t>(crc32(crc, kZeros, pad & 3));
}

}  // namespace droce::wire
