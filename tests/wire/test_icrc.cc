// ICRC: the ROCEV2.md known-answer vector, masking of variant fields, split == contiguous.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "protocols/wire/icrc.h"

using namespace droce::wire;

namespace {
std::vector<std::uint8_t> from_hex(const std::string& h) {
  std::vector<std::uint8_t> v;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2)
    v.push_back(static_cast<std::uint8_t>(std::stoul(h.substr(i, 2), nullptr, 16)));
  return v;
}
// IPv4 192.168.1.1 -> .2, TOS 0x02, TTL 64, sport 0xC000, SEND_ONLY, P_Key 0xFFFF, DestQP 0x11,
// AckReq, PSN 1, payload "ABCD"; IP header onward, ICRC last (ROCEV2.md).
const char* kKnownAnswer =
    "45020030123440004011a533c0a80101c0a80102c00012b7001c00000400ffff0000001180000001414243447ba35d2b";
}  // namespace

TEST_CASE("ICRC known answer: SEND_ONLY 'ABCD' -> 7b a3 5d 2b", "[wire][icrc]") {
  auto pkt = from_hex(kKnownAnswer);
  REQUIRE(pkt.size() == 48);
  const std::uint32_t icrc = icrc_compute(pkt.data(), 44, false);
  CHECK(icrc == 0x2b5da37bu);
  CHECK(icrc == icrc_load(pkt.data() + 44));
  std::uint8_t stored[4];
  icrc_store(stored, icrc);
  CHECK(stored[0] == 0x7b);
  CHECK(stored[3] == 0x2b);
}

TEST_CASE("ICRC ignores the variant fields: TOS/ECN, TTL, IP checksum, UDP checksum, FECN/BECN", "[wire][icrc]") {
  auto pkt = from_hex(kKnownAnswer);
  const std::uint32_t ref = icrc_compute(pkt.data(), 44, false);
  pkt[1] = 0x03;    // CE mark from a switch
  pkt[8] = 17;      // TTL decremented by routers
  pkt[10] ^= 0xAA;  // checksum rewritten
  pkt[26] = 0x12;   // UDP checksum
  pkt[32] = 0xC0;   // FECN + BECN
  CHECK(icrc_compute(pkt.data(), 44, false) == ref);
  pkt[41] ^= 1;  // a covered byte (payload)
  CHECK(icrc_compute(pkt.data(), 44, false) != ref);
}

TEST_CASE("ICRC over IPv6 masks traffic class, flow label and hop limit", "[wire][icrc]") {
  std::vector<std::uint8_t> p(40 + 8 + 12 + 8, 0);
  p[0] = 0x60;
  p[6] = 17;
  p[7] = 64;
  for (int i = 8; i < 40; ++i) p[i] = static_cast<std::uint8_t>(i);
  p[40 + 2] = 0x12;
  p[40 + 3] = 0xb7;
  p[48] = 0x04;
  p[50] = p[51] = 0xFF;
  const std::uint32_t ref = icrc_compute(p.data(), static_cast<std::uint32_t>(p.size()), true);
  p[0] = 0x6F;
  p[1] = 0xFF;
  p[3] = 0x42;
  p[7] = 1;
  CHECK(icrc_compute(p.data(), static_cast<std::uint32_t>(p.size()), true) == ref);
  p[8] ^= 1;  // source address is covered
  CHECK(icrc_compute(p.data(), static_cast<std::uint32_t>(p.size()), true) != ref);
}

TEST_CASE("split ICRC (headers + separate payload + pad) equals the contiguous ICRC for every length", "[wire][icrc]") {
  std::vector<std::uint8_t> frame(20 + 8 + 12 + 16 + 9000 + 3);
  for (std::size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<std::uint8_t>(i * 37 + 11);
  frame[0] = 0x45;
  const std::uint32_t hdr = 20 + 8 + 12 + 16;  // with a RETH
  for (std::uint32_t len : {0u, 1u, 2u, 3u, 4u, 63u, 64u, 255u, 256u, 257u, 1000u, 1024u, 4096u, 8191u, 9000u}) {
    const std::uint32_t pad = (4 - (len & 3)) & 3;
    std::vector<std::uint8_t> contiguous(frame.begin(), frame.begin() + hdr + len);
    contiguous.insert(contiguous.end(), pad, 0);
    const auto whole = icrc_compute(contiguous.data(), static_cast<std::uint32_t>(contiguous.size()), false);
    const auto split = icrc_compute_split(frame.data(), hdr, false, frame.data() + hdr, len, pad);
    INFO("payload " << len);
    CHECK(whole == split);
  }
}

TEST_CASE("in-place ICRC equals the copying form and leaves every byte as it was", "[wire][icrc]") {
  for (const bool ipv6 : {false, true}) {
    const std::uint32_t ip = ipv6 ? 40 : 20;
    for (std::uint32_t len : {0u, 1u, 4u, 64u, 255u, 460u, 461u, 600u, 1024u, 4096u}) {
      // 14 bytes of Ethernet header, then IP + UDP + BTH + payload; every variant field nonzero
      // and unlike 0xFF, so a missed mask or a missed restore shows.
      std::vector<std::uint8_t> frame(14 + ip + 8 + 12 + len);
      for (std::size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<std::uint8_t>(i * 53 + 7);
      frame[14] = ipv6 ? 0x6A : 0x45;
      const std::vector<std::uint8_t> before = frame;
      std::uint8_t* l3 = frame.data() + 14;
      const auto n = static_cast<std::uint32_t>(frame.size() - 14);
      const std::uint32_t copied = icrc_compute(l3, n, ipv6);
      INFO((ipv6 ? "IPv6" : "IPv4") << ", payload " << len);
      CHECK(icrc_compute_in_place(l3, n, ipv6) == copied);
      CHECK(frame == before);
    }
  }
}

TEST_CASE("in-place ICRC: the known answer, and the variant fields still ignored", "[wire][icrc]") {
  auto pkt = from_hex(kKnownAnswer);
  std::vector<std::uint8_t> frame(14 + pkt.size(), 0xA5);
  std::memcpy(frame.data() + 14, pkt.data(), pkt.size());
  CHECK(icrc_compute_in_place(frame.data() + 14, 44, false) == 0x2b5da37bu);
  frame[14 + 1] = 0x03;   // CE
  frame[14 + 8] = 3;      // TTL
  frame[14 + 32] = 0x80;  // FECN
  CHECK(icrc_compute_in_place(frame.data() + 14, 44, false) == 0x2b5da37bu);
  CHECK(icrc_compute_in_place(frame.data() + 14, 20 + 8 + 11, false) == 0);  // shorter than IP+UDP+BTH
}
