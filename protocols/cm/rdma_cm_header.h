// The rdma_cm conventions carried inside CM messages over RoCE: the service ID of an IP port space
// (RDMA_PS_TCP: 0x0000000001060000 + port) and the 36-byte addressing header librdmacm's kernel
// half puts at the front of REQ private data (IBTA vol. 1 Annex A11, RDMA IP CM Service).
#pragma once

#include <cstdint>
#include <string_view>

namespace droce::cm {

// Port spaces of the IP-based CM service (A11): service ID = 0x00000000_01_PP_pppp with PP the
// IP protocol and pppp the destination port. TCP (0x06) is what rping and perftest -R use.
inline constexpr std::uint16_t kRdmaPsTcp = 0x0106;
inline constexpr std::uint16_t kRdmaPsUdp = 0x0111;

[[nodiscard]] constexpr std::uint64_t rdma_cm_service_id(std::uint16_t port_space, std::uint16_t port) {
  return (std::uint64_t{port_space} << 16) | port;
}
[[nodiscard]] constexpr std::uint64_t rdma_cm_tcp_service_id(std::uint16_t port) {
  return rdma_cm_service_id(kRdmaPsTcp, port);
}
// True when `sid` lies in the TCP port space; `port` gets the destination port.
[[nodiscard]] constexpr bool rdma_cm_tcp_port(std::uint64_t sid, std::uint16_t& port) {
  if ((sid >> 16) != kRdmaPsTcp) return false;
  port = static_cast<std::uint16_t>(sid);
  return true;
}
static_assert(rdma_cm_tcp_service_id(7174) == 0x0000000001061C06ull);

// The header (A11, CM REQ private data): version 0, IP version in the high nibble of byte 1,
// the active side's (source) port, then source and destination address, 16 bytes each: an IPv6
// address as is, an IPv4 address in the last 4 bytes after 12 zero bytes. The consumer's own
// private data follows it: 92 - 36 = 56 bytes of it fit in a REQ.
inline constexpr std::uint32_t kRdmaCmHeaderBytes = 36;
inline constexpr std::uint8_t kRdmaCmHeaderVersion = 0;

struct RdmaCmHeader {
  bool ipv6 = false;
  std::uint16_t src_port = 0;    // the active side's port (its sockaddr's)
  std::uint8_t src_ip[16] = {};  // IPv4 in the first 4 bytes, as everywhere in droce
  std::uint8_t dst_ip[16] = {};
};

enum class RdmaCmHeaderRefusal : std::uint8_t { kNone, kTooShort, kBadVersion, kBadIpVersion };
[[nodiscard]] constexpr std::string_view rdma_cm_header_refusal_text(RdmaCmHeaderRefusal r) {
  switch (r) {
    case RdmaCmHeaderRefusal::kNone:
      return "accepted";
    case RdmaCmHeaderRefusal::kTooShort:
      return "private data shorter than the rdma_cm header (36 bytes)";
    case RdmaCmHeaderRefusal::kBadVersion:
      return "rdma_cm header version is not 0";
    case RdmaCmHeaderRefusal::kBadIpVersion:
      return "rdma_cm header IP version is neither 4 nor 6";
  }
  return "invalid refusal";
}

// Writes the 36 bytes at `out`.
void write_rdma_cm_header(const RdmaCmHeader& h, std::uint8_t* out);

// What is left of REQ private data (92 bytes) for the consumer after the header.
inline constexpr std::uint32_t kRdmaCmReqUserBytes = 92 - kRdmaCmHeaderBytes;

// REQ private data as rdma_cm builds it: the header, then `user_len` bytes of the consumer's,
// into `out` (room for 92 bytes). Returns the bytes written, 0 when user_len exceeds
// kRdmaCmReqUserBytes.
[[nodiscard]] std::uint32_t write_rdma_cm_req_private(const RdmaCmHeader& h, const std::uint8_t* user,
                                                      std::uint32_t user_len, std::uint8_t* out);

// The RoCEv2 GID of an IP address, as REQ paths carry it (Annex A17): an IPv6 address as is, an
// IPv4 address as ::ffff:a.b.c.d. `ip` holds IPv4 in its first 4 bytes.
void roce_gid_from_ip(const std::uint8_t* ip, bool ipv6, std::uint8_t* gid);
// Reads the header from the first `len` bytes of private data.
[[nodiscard]] RdmaCmHeaderRefusal parse_rdma_cm_header(const std::uint8_t* data, std::uint32_t len, RdmaCmHeader& out);

}  // namespace droce::cm
