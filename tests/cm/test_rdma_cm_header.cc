// The rdma_cm service IDs and the addressing header at the front of REQ private data.
#include <catch2/catch.hpp>
#include <cstring>

#include "protocols/cm/rdma_cm_header.h"

using namespace droce::cm;

TEST_CASE("rdma_cm: TCP port space service IDs", "[cm][rdma_cm]") {
  CHECK(rdma_cm_tcp_service_id(0) == 0x0000000001060000ull);
  CHECK(rdma_cm_tcp_service_id(18515) == 0x0000000001064853ull);  // perftest's default port
  std::uint16_t port = 0;
  CHECK(rdma_cm_tcp_port(0x0000000001061C06ull, port));
  CHECK(port == 7174);                                         // rping's default port
  CHECK_FALSE(rdma_cm_tcp_port(0x0000000001110001ull, port));  // the UDP port space
  CHECK_FALSE(rdma_cm_tcp_port(0x1000000001060001ull, port));  // not an IP CM service ID
}

TEST_CASE("rdma_cm: IPv4 header bytes and round trip", "[cm][rdma_cm]") {
  RdmaCmHeader h;
  h.src_port = 0xC123;
  const std::uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {10, 0, 0, 2};
  std::memcpy(h.src_ip, src, 4);
  std::memcpy(h.dst_ip, dst, 4);
  std::uint8_t b[kRdmaCmHeaderBytes];
  std::memset(b, 0xEE, sizeof(b));
  write_rdma_cm_header(h, b);
  const std::uint8_t want[36] = {0, 0x40, 0xC1, 0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0, 10, 0,
                                 0, 1,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0,  2};
  CHECK(std::memcmp(b, want, sizeof(want)) == 0);
  RdmaCmHeader g;
  REQUIRE(parse_rdma_cm_header(b, sizeof(b), g) == RdmaCmHeaderRefusal::kNone);
  CHECK_FALSE(g.ipv6);
  CHECK(g.src_port == 0xC123);
  CHECK(std::memcmp(g.src_ip, src, 4) == 0);
  CHECK(std::memcmp(g.dst_ip, dst, 4) == 0);
  CHECK(g.src_ip[4] == 0);
}

TEST_CASE("rdma_cm: IPv6 header round trip", "[cm][rdma_cm]") {
  RdmaCmHeader h;
  h.ipv6 = true;
  h.src_port = 1;
  for (int i = 0; i < 16; ++i) {
    h.src_ip[i] = static_cast<std::uint8_t>(0xF0 + i);
    h.dst_ip[i] = static_cast<std::uint8_t>(i);
  }
  std::uint8_t b[kRdmaCmHeaderBytes];
  write_rdma_cm_header(h, b);
  CHECK(b[1] == 0x60);
  CHECK(b[4] == 0xF0);
  CHECK(b[20] == 0x00);
  CHECK(b[35] == 15);
  RdmaCmHeader g;
  REQUIRE(parse_rdma_cm_header(b, sizeof(b), g) == RdmaCmHeaderRefusal::kNone);
  CHECK(g.ipv6);
  CHECK(std::memcmp(g.src_ip, h.src_ip, 16) == 0);
  CHECK(std::memcmp(g.dst_ip, h.dst_ip, 16) == 0);
}

TEST_CASE("rdma_cm: malformed headers are refused with words", "[cm][rdma_cm]") {
  std::uint8_t b[kRdmaCmHeaderBytes] = {};
  b[1] = 0x40;
  RdmaCmHeader g;
  CHECK(parse_rdma_cm_header(b, 35, g) == RdmaCmHeaderRefusal::kTooShort);
  b[0] = 1;
  CHECK(parse_rdma_cm_header(b, sizeof(b), g) == RdmaCmHeaderRefusal::kBadVersion);
  b[0] = 0;
  b[1] = 0x50;
  CHECK(parse_rdma_cm_header(b, sizeof(b), g) == RdmaCmHeaderRefusal::kBadIpVersion);
  b[1] = 0x4F;  // the low nibble is reserved
  CHECK(parse_rdma_cm_header(b, sizeof(b), g) == RdmaCmHeaderRefusal::kNone);
  CHECK(rdma_cm_header_refusal_text(RdmaCmHeaderRefusal::kBadIpVersion).find("IP version") != std::string_view::npos);
}

TEST_CASE("rdma_cm: REQ private data is the header then at most 56 bytes of the consumer's", "[cm][rdma_cm]") {
  RdmaCmHeader h;
  h.src_port = 5;
  std::uint8_t user[kRdmaCmReqUserBytes + 1];
  for (std::uint32_t i = 0; i < sizeof(user); ++i) user[i] = static_cast<std::uint8_t>(i + 1);
  std::uint8_t out[92] = {};
  CHECK(write_rdma_cm_req_private(h, user, kRdmaCmReqUserBytes + 1, out) == 0);
  REQUIRE(write_rdma_cm_req_private(h, user, kRdmaCmReqUserBytes, out) == 92);
  CHECK(out[3] == 5);
  CHECK(out[36] == 1);
  CHECK(out[91] == kRdmaCmReqUserBytes);
  CHECK(write_rdma_cm_req_private(h, nullptr, 0, out) == kRdmaCmHeaderBytes);
}

TEST_CASE("rdma_cm: RoCEv2 GIDs of IP addresses", "[cm][rdma_cm]") {
  const std::uint8_t v4[16] = {192, 168, 1, 7};
  std::uint8_t gid[16];
  roce_gid_from_ip(v4, false, gid);
  const std::uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 7};
  CHECK(std::memcmp(gid, want, 16) == 0);
  std::uint8_t v6[16];
  for (int i = 0; i < 16; ++i) v6[i] = static_cast<std::uint8_t>(0xFE - i);
  roce_gid_from_ip(v6, true, gid);
  CHECK(std::memcmp(gid, v6, 16) == 0);
}
