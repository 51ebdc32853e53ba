// parse_arp and the ARP builders: what they accept, what they refuse (one rule each), and that
// every builder's frame parses back to what was asked.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "protocols/arp/arp_frame.h"

using namespace droce::arp;

namespace {

constexpr std::uint32_t kIpA = 0x0A000001;  // 10.0.0.1
constexpr std::uint32_t kIpB = 0x0A000002;

ArpSender sender_a(std::uint16_t vlan = 0) {
  ArpSender s;
  const std::uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x01};
  std::memcpy(s.mac, mac, 6);
  s.ip = kIpA;
  s.vlan_id = vlan;
  s.vlan_pcp = 3;
  return s;
}

std::vector<std::uint8_t> request_frame(std::uint16_t vlan = 0) {
  std::vector<std::uint8_t> f(kArpFrameBytes);
  REQUIRE(build_arp_request(sender_a(vlan), kIpB, f.data(), static_cast<std::uint32_t>(f.size())) == kArpFrameBytes);
  return f;
}

// Offset of the ARP packet in an untagged frame.
constexpr std::size_t kArp = 14;

ArpRefusal parse(const std::vector<std::uint8_t>& f, ArpFrame& out) {
  return parse_arp(f.data(), static_cast<std::uint32_t>(f.size()), out);
}

}  // namespace

TEST_CASE("arp: a request is broadcast, asks for the target and parses back", "[arp][frame]") {
  const auto f = request_frame();
  CHECK(f[12] == 0x08);
  CHECK(f[13] == 0x06);
  ArpFrame a;
  REQUIRE(parse(f, a) == ArpRefusal::kNone);
  CHECK(a.op == ArpOp::kRequest);
  CHECK(a.sender_ip == kIpA);
  CHECK(a.target_ip == kIpB);
  const std::uint8_t bcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, zero[6] = {};
  CHECK(std::memcmp(a.eth_dst, bcast, 6) == 0);
  CHECK(std::memcmp(a.target_mac, zero, 6) == 0);
  CHECK(std::memcmp(a.sender_mac, sender_a().mac, 6) == 0);
  CHECK(std::memcmp(a.eth_src, sender_a().mac, 6) == 0);
  CHECK_FALSE(a.has_vlan);
  // Padding to the 60-byte minimum frame is zero.
  for (std::size_t i = kArp + sizeof(ArpHdr); i < f.size(); ++i) CHECK(f[i] == 0);
}

TEST_CASE("arp: a reply goes to the requester and says our IP is at our MAC", "[arp][frame]") {
  const std::uint8_t to[6] = {0x02, 0, 0, 0, 0, 0x02};
  std::uint8_t f[kArpFrameBytes];
  REQUIRE(build_arp_reply(sender_a(), to, kIpB, f, sizeof(f)) == kArpFrameBytes);
  ArpFrame a;
  REQUIRE(parse_arp(f, sizeof(f), a) == ArpRefusal::kNone);
  CHECK(a.op == ArpOp::kReply);
  CHECK(std::memcmp(a.eth_dst, to, 6) == 0);
  CHECK(std::memcmp(a.target_mac, to, 6) == 0);
  CHECK(a.target_ip == kIpB);
  CHECK(a.sender_ip == kIpA);
  CHECK(std::memcmp(a.sender_mac, sender_a().mac, 6) == 0);
}

TEST_CASE("arp: the announcement is a broadcast request for our own IP (RFC 5227 §3)", "[arp][frame]") {
  std::uint8_t f[kArpFrameBytes];
  REQUIRE(build_gratuitous_arp(sender_a(), f, sizeof(f)) == kArpFrameBytes);
  ArpFrame a;
  REQUIRE(parse_arp(f, sizeof(f), a) == ArpRefusal::kNone);
  CHECK(a.op == ArpOp::kRequest);
  CHECK(a.sender_ip == kIpA);
  CHECK(a.target_ip == kIpA);
  CHECK(a.eth_dst[0] == 0xFF);
}

TEST_CASE("arp: builders refuse a buffer below the minimum frame", "[arp][frame]") {
  std::uint8_t f[kArpFrameBytes - 1];
  const std::uint8_t to[6] = {0x02, 0, 0, 0, 0, 0x02};
  CHECK(build_arp_request(sender_a(), kIpB, f, sizeof(f)) == 0);
  CHECK(build_arp_reply(sender_a(), to, kIpB, f, sizeof(f)) == 0);
  CHECK(build_gratuitous_arp(sender_a(), f, sizeof(f)) == 0);
}

TEST_CASE("arp: an 802.1Q-tagged frame is built and parsed with its tag", "[arp][frame]") {
  const auto f = request_frame(100);
  CHECK(f[12] == 0x81);
  CHECK(f[13] == 0x00);
  CHECK((f[14] >> 5) == 3);  // PCP
  ArpFrame a;
  REQUIRE(parse(f, a) == ArpRefusal::kNone);
  CHECK(a.has_vlan);
  CHECK(a.vlan_id == 100);
  CHECK(a.target_ip == kIpB);
}

TEST_CASE("arp: the parser refuses each broken rule by name", "[arp][frame][malformed]") {
  ArpFrame a;
  SECTION("every length short of the ARP packet") {
    const auto f = request_frame();
    for (std::uint32_t len = 0; len < kArp + sizeof(ArpHdr); ++len) {
      // An exact-size copy, so a read past `len` is a sanitizer error.
      const std::vector<std::uint8_t> cut(f.begin(), f.begin() + len);
      const ArpRefusal r = parse(cut, a);
      INFO("len " << len);
      CHECK(r == (len < 14 ? ArpRefusal::kTruncatedEthernet : ArpRefusal::kTruncatedArp));
    }
    // No padding needed: the 42 bytes of header and packet are enough.
    const std::vector<std::uint8_t> exact(f.begin(), f.begin() + kArp + sizeof(ArpHdr));
    CHECK(parse(exact, a) == ArpRefusal::kNone);
  }
  SECTION("a tag cut short") {
    auto f = request_frame(5);
    f.resize(16);
    CHECK(parse(f, a) == ArpRefusal::kTruncatedEthernet);
  }
  SECTION("stacked tags") {
    auto f = request_frame(5);
    f[16] = 0x81;
    f[17] = 0x00;
    CHECK(parse(f, a) == ArpRefusal::kStackedVlan);
    f = request_frame();
    f[12] = 0x88;
    f[13] = 0xA8;
    CHECK(parse(f, a) == ArpRefusal::kStackedVlan);
  }
  SECTION("another ether type") {
    auto f = request_frame();
    f[13] = 0x00;  // IPv4
    CHECK(parse(f, a) == ArpRefusal::kNotArp);
  }
  SECTION("hardware type not Ethernet") {
    auto f = request_frame();
    f[kArp + 1] = 6;  // IEEE 802
    CHECK(parse(f, a) == ArpRefusal::kBadHardwareType);
  }
  SECTION("protocol type not IPv4") {
    auto f = request_frame();
    f[kArp + 2] = 0x86;
    f[kArp + 3] = 0xDD;
    CHECK(parse(f, a) == ArpRefusal::kBadProtocolType);
  }
  SECTION("hardware length not 6") {
    auto f = request_frame();
    f[kArp + 4] = 8;
    CHECK(parse(f, a) == ArpRefusal::kBadHardwareLength);
  }
  SECTION("protocol length not 4") {
    auto f = request_frame();
    f[kArp + 5] = 16;
    CHECK(parse(f, a) == ArpRefusal::kBadProtocolLength);
  }
  SECTION("ops other than request and reply") {
    for (std::uint16_t op : {0, 3, 4, 8, 9, 0x0100, 0xFFFF}) {
      auto f = request_frame();
      f[kArp + 6] = static_cast<std::uint8_t>(op >> 8);
      f[kArp + 7] = static_cast<std::uint8_t>(op);
      INFO("op " << op);
      CHECK(parse(f, a) == ArpRefusal::kBadOp);
    }
  }
}

TEST_CASE("arp: refusal names are the counter names", "[arp][frame]") {
  CHECK(arp_refusal_name(ArpRefusal::kNone) == "none");
  CHECK(arp_refusal_name(ArpRefusal::kBadOp) == "bad_op");
  CHECK(arp_refusal_name(ArpRefusal::kCount) == "invalid");
  for (std::size_t i = 0; i < kArpRefusalCount; ++i) CHECK_FALSE(arp_refusal_name(static_cast<ArpRefusal>(i)).empty());
}

TEST_CASE("arp: IPv4 addresses load and store in network order", "[arp][frame]") {
  std::uint8_t b[4];
  store_ipv4(0xC0A80105, b);
  CHECK(b[0] == 192);
  CHECK(b[3] == 5);
  CHECK(load_ipv4(b) == 0xC0A80105);
}
