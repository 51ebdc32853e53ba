// ICRC: one seeded CRC-32 (crc32.h) over the masked headers and then the rest of the frame, in
// place or from a masked copy of the headers, or continued across a split frame's buffers.
#include "protocols/wire/icrc.h"

#include <cstring>

#include "protocols/wire/ib_headers.h"
#include "protocols/wire/l2l3_headers.h"

namespace droce::wire {
namespace {

constexpr std::uint32_t fixed_header_bytes(bool ipv6) {
  return (ipv6 ? sizeof(Ipv6Hdr) : sizeof(Ipv4Hdr)) + sizeof(UdpHdr) + sizeof(Bth);
}
static_assert(detail::kIcrcMaskedMax == 8 + fixed_header_bytes(true));

std::uint32_t masked_header_crc(const std::uint8_t* l3, bool ipv6) {
  std::uint8_t buf[detail::kIcrcMaskedMax];
  return crc32_continue(0, buf, detail::icrc_masked_header(l3, ipv6, buf));
}

}  // namespace

std::uint32_t detail::icrc_masked_header(const std::uint8_t* l3, bool ipv6, std::uint8_t* buf) {
  std::memset(buf, 0xFF, 8);
  const std::uint32_t ip_len = ipv6 ? sizeof(Ipv6Hdr) : sizeof(Ipv4Hdr);
  const std::uint32_t n = fixed_header_bytes(ipv6);
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

std::uint32_t icrc_compute(const std::uint8_t* l3, std::uint32_t len, bool ipv6) {
  const std::uint32_t fixed = fixed_header_bytes(ipv6);
  if (len < fixed) return 0;
  return crc32_continue(masked_header_crc(l3, ipv6), l3 + fixed, len - fixed);
}

// IPv6: traffic class and flow label (l3+0 low nibble .. l3+3), hop limit (l3+7); UDP checksum
// at l3+46..47; BTH byte 4 at l3+52.
std::uint32_t detail::icrc_in_place_ipv6(std::uint8_t* l3, std::uint32_t len) {
  if (len < fixed_header_bytes(true)) return 0;
  const std::uint64_t lrh = detail::icrc_load64(l3 - 8), a = detail::icrc_load64(l3), c = detail::icrc_load64(l3 + 40);
  const std::uint8_t bth4 = l3[52];
  detail::icrc_store64(l3 - 8, ~std::uint64_t{0});
  detail::icrc_store64(l3, a | 0xFF000000FFFFFF0Fu);
  detail::icrc_store64(l3 + 40, c | 0xFFFF000000000000u);
  l3[52] = 0xFF;
  const std::uint32_t crc = crc32_continue(0, l3 - 8, len + 8);
  detail::icrc_store64(l3 - 8, lrh);
  detail::icrc_store64(l3, a);
  detail::icrc_store64(l3 + 40, c);
  l3[52] = bth4;
  return crc;
}

std::uint32_t icrc_compute_split(const std::uint8_t* l3, std::uint32_t hdr_len, bool ipv6, const std::uint8_t* payload,
                                 std::uint32_t payload_len, std::uint32_t pad) {
  const std::uint32_t fixed = fixed_header_bytes(ipv6);
  if (hdr_len < fixed) return 0;
  std::uint32_t crc = crc32_continue(masked_header_crc(l3, ipv6), l3 + fixed, hdr_len - fixed);
  crc = crc32_continue(crc, payload, payload_len);
  static constexpr std::uint8_t kZeros[4] = {0, 0, 0, 0};
  return crc32_continue(crc, kZeros, pad & 3);
}

}  // namespace droce::wire
