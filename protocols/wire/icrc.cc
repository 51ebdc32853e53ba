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
    ip[7] = 0xFF;   // hop limit
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

// The bytes icrc_compute_in_place overwrites, saved for the restore.
struct Saved {
  std::uint64_t lrh;    // the 8 bytes before l3 (the end of the Ethernet header)
  std::uint32_t ip_a;   // IPv4: bytes 8..11 (TTL, protocol, checksum); IPv6: bytes 0..3
  std::uint8_t ip_b;    // IPv4: byte 1 (TOS); IPv6: byte 7 (hop limit)
  std::uint16_t udp;    // UDP checksum
  std::uint8_t bth4;    // BTH byte 4
};

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

std::uint32_t icrc_compute_in_place(std::uint8_t* l3, std::uint32_t len, bool ipv6) {
  const std::uint32_t ip_len = ipv6 ? sizeof(Ipv6Hdr) : sizeof(Ipv4Hdr);
  if (len < ip_len + sizeof(UdpHdr) + sizeof(Bth)) return 0;
  std::uint8_t* lrh = l3 - 8;
  std::uint8_t* ip_a = ipv6 ? l3 : l3 + 8;
  std::uint8_t* ip_b = ipv6 ? l3 + 7 : l3 + 1;
  std::uint8_t* udp_csum = l3 + ip_len + 6;
  std::uint8_t* bth4 = l3 + ip_len + sizeof(UdpHdr) + 4;
  Saved saved;
  std::memcpy(&saved.lrh, lrh, 8);
  std::memcpy(&saved.ip_a, ip_a, 4);
  saved.ip_b = *ip_b;
  std::memcpy(&saved.udp, udp_csum, 2);
  saved.bth4 = *bth4;
  // A17.4.1: 8 bytes of ones stand in for the LRH; §7.8.1's variant fields count as ones.
  std::memset(lrh, 0xFF, 8);
  if (ipv6) {
    ip_a[0] |= 0x0F;  // traffic class (high nibble) ...
    ip_a[1] = ip_a[2] = ip_a[3] = 0xFF;  // ... traffic class (low nibble) + flow label
  } else {
    ip_a[0] = 0xFF;   // TTL
    ip_a[2] = ip_a[3] = 0xFF;  // header checksum
  }
  *ip_b = 0xFF;  // IPv4 TOS (DSCP + ECN); IPv6 hop limit
  udp_csum[0] = udp_csum[1] = 0xFF;
  *bth4 = 0xFF;  // FECN, BECN, resv6
  const std::uint32_t crc = rte_net_crc_calc(lrh, len + 8, RTE_NET_CRC32_ETH);
  std::memcpy(lrh, &saved.lrh, 8);
  std::memcpy(ip_a, &saved.ip_a, 4);
  *ip_b = saved.ip_b;
  std::memcpy(udp_csum, &saved.udp, 2);
  *bth4 = saved.bth4;
  return crc;
}

std::uint32_t icrc_compute_split(const std::uint8_t* l3, std::uint32_t hdr_len, bool ipv6,
                                 const std::uint8_t* payload, std::uint32_t payload_len, std::uint32_t pad) {
  const std::uint32_t fixed = (ipv6 ? sizeof(Ipv6Hdr) : sizeof(Ipv4Hdr)) + sizeof(UdpHdr) + sizeof(Bth);
  if (hdr_len < fixed) return 0;
  std::uint32_t crc = crc_continue(masked_header_crc(l3, ipv6), l3 + fixed, hdr_len - fixed);
  crc = crc_continue(crc, payload, payload_len);
  static constexpr std::uint8_t kZeros[4] = {0, 0, 0, 0};
  return (pad & 3) == 0 ? crc : static_cast<std::uint32_t>(crc32(crc, kZeros, pad & 3));
}

}  // namespace droce::wire
