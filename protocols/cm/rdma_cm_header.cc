// The rdma_cm addressing header in REQ private data: writer and parser.
#include "protocols/cm/rdma_cm_header.h"

#include <cstring>

#include "protocols/cm/cm_messages.h"

namespace droce::cm {

static_assert(kRdmaCmHeaderBytes + kRdmaCmReqUserBytes == kReqPrivateBytes);

namespace {

// An address's 16 bytes on the wire: IPv6 as is; IPv4 right-aligned after 12 zero bytes.
void put_addr(const std::uint8_t* host, bool ipv6, std::uint8_t* wire) {
  if (ipv6) {
    std::memcpy(wire, host, 16);
  } else {
    std::memset(wire, 0, 12);
    std::memcpy(wire + 12, host, 4);
  }
}
void get_addr(const std::uint8_t* wire, bool ipv6, std::uint8_t* host) {
  std::memset(host, 0, 16);
  if (ipv6)
    std::memcpy(host, wire, 16);
  else
    std::memcpy(host, wire + 12, 4);
}

}  // namespace

void write_rdma_cm_header(const RdmaCmHeader& h, std::uint8_t* out) {
  out[0] = kRdmaCmHeaderVersion;
  out[1] = static_cast<std::uint8_t>((h.ipv6 ? 6 : 4) << 4);
  out[2] = static_cast<std::uint8_t>(h.src_port >> 8);
  out[3] = static_cast<std::uint8_t>(h.src_port);
  put_addr(h.src_ip, h.ipv6, out + 4);
  put_addr(h.dst_ip, h.ipv6, out + 20);
}

std::uint32_t write_rdma_cm_req_private(const RdmaCmHeader& h, const std::uint8_t* user, std::uint32_t user_len,
                                        std::uint8_t* out) {
  if (user_len > kRdmaCmReqUserBytes || (user_len != 0 && user == nullptr)) return 0;
  write_rdma_cm_header(h, out);
  if (user_len != 0) std::memcpy(out + kRdmaCmHeaderBytes, user, user_len);
  return kRdmaCmHeaderBytes + user_len;
}

void roce_gid_from_ip(const std::uint8_t* ip, bool ipv6, std::uint8_t* gid) {
  if (ipv6) {
    std::memcpy(gid, ip, 16);
    return;
  }
  std::memset(gid, 0, 10);
  gid[10] = 0xFF;
  gid[11] = 0xFF;
  std::memcpy(gid + 12, ip, 4);
}

RdmaCmHeaderRefusal parse_rdma_cm_header(const std::uint8_t* data, std::uint32_t len, RdmaCmHeader& out) {
  out = RdmaCmHeader{};
  if (len < kRdmaCmHeaderBytes) return RdmaCmHeaderRefusal::kTooShort;
  if (data[0] != kRdmaCmHeaderVersion) return RdmaCmHeaderRefusal::kBadVersion;
  const std::uint8_t ipv = data[1] >> 4;  // the low nibble is reserved
  if (ipv != 4 && ipv != 6) return RdmaCmHeaderRefusal::kBadIpVersion;
  out.ipv6 = ipv == 6;
  out.src_port = static_cast<std::uint16_t>(data[2] << 8 | data[3]);
  get_addr(data + 4, out.ipv6, out.src_ip);
  get_addr(data + 20, out.ipv6, out.dst_ip);
  return RdmaCmHeaderRefusal::kNone;
}

}  // namespace droce::cm
