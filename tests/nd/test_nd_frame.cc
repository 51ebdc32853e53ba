// ND frames (RFC 4861 §4.3, §4.4): the builders' bytes against reference frames made outside
// droce (scapy 2.5, which computes the ICMPv6 checksum itself), parse of those frames, and each
// validity rule of §7.1.1 / §7.1.2 refused by name.
#include <rte_ip.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "protocols/nd/nd_frame.h"

using namespace droce;
using namespace droce::nd;

namespace {

constexpr std::uint8_t kIp1[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};  // fd00::1
constexpr std::uint8_t kIp2[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
constexpr std::uint8_t kIp9[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
constexpr std::uint8_t kMac1[6] = {0x02, 0, 0, 0, 0, 0x01};
constexpr std::uint8_t kMac2[6] = {0x02, 0, 0, 0, 0, 0x02};
constexpr std::uint8_t kMac9[6] = {0x02, 0, 0, 0, 0, 0x09};

// scapy: Ether(src=02:..:09, dst=33:33:ff:00:00:01) / IPv6(src=fd00::9, dst=ff02::1:ff00:1,
// hlim=255) / ICMPv6ND_NS(tgt=fd00::1) / ICMPv6NDOptSrcLLAddr(02:..:09)
const std::vector<std::uint8_t> kScapyNs = {
    0x33, 0x33, 0xff, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x09, 0x86, 0xdd, 0x60, 0x00, 0x00, 0x00,
    0x00, 0x20, 0x3a, 0xff, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x09, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x01,
    0x87, 0x00, 0x7d, 0x89, 0x00, 0x00, 0x00, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x09,
};
// scapy: Ether(02:..:02 -> 02:..:01) / IPv6(fd00::2 -> fd00::1, hlim=255) /
// ICMPv6ND_NA(tgt=fd00::2, R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(02:..:02)
const std::vector<std::uint8_t> kScapyNa = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x86, 0xdd, 0x60, 0x00, 0x00, 0x00,
    0x00, 0x20, 0x3a, 0xff, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x02, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x88, 0x00, 0x1c, 0x9a, 0x60, 0x00, 0x00, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
};
// scapy: Ether(02:..:01 -> 33:33:00:00:00:01) / Dot1Q(vlan=100, prio=3) / IPv6(fd00::1 ->
// ff02::1, hlim=255) / ICMPv6ND_NA(tgt=fd00::1, R=0, S=0, O=1) / ICMPv6NDOptDstLLAddr(02:..:01)
const std::vector<std::uint8_t> kScapyUnsolicitedNaVlan = {
    0x33, 0x33, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x81, 0x00, 0x60, 0x64, 0x86, 0xdd,
    0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x88, 0x00, 0x5a, 0x9b, 0x20, 0x00, 0x00, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
};

// Offsets in an untagged frame.
constexpr std::size_t kIpOff = 14;
constexpr std::size_t kHopLimitOff = kIpOff + 7;
constexpr std::size_t kSrcOff = kIpOff + 8;
constexpr std::size_t kDstOff = kIpOff + 24;
constexpr std::size_t kIcmpOff = kIpOff + 40;
constexpr std::size_t kOptOff = kIcmpOff + 24;

NdSender sender(const std::uint8_t* mac, const std::uint8_t* ip, std::uint16_t vlan = 0, std::uint8_t pcp = 0) {
  NdSender s;
  std::memcpy(s.mac, mac, 6);
  std::memcpy(s.ip, ip, 16);
  s.vlan_id = vlan;
  s.vlan_pcp = pcp;
  return s;
}

// After a test edits an untagged frame: its payload length from its size, and its checksum
// again, so that the rule under test is the one the frame breaks.
void reseal(std::vector<std::uint8_t>& f) {
  auto* ip = reinterpret_cast<rte_ipv6_hdr*>(f.data() + kIpOff);
  ip->payload_len = rte_cpu_to_be_16(static_cast<std::uint16_t>(f.size() - kIcmpOff));
  f[kIcmpOff + 2] = 0;
  f[kIcmpOff + 3] = 0;
  const std::uint16_t sum = rte_ipv6_udptcp_cksum(ip, f.data() + kIcmpOff);
  std::memcpy(f.data() + kIcmpOff + 2, &sum, 2);
}

NdRefusal parse(const std::vector<std::uint8_t>& f) {
  NdFrame out;
  return parse_nd(f.data(), static_cast<std::uint32_t>(f.size()), out);
}

}  // namespace

TEST_CASE("nd: the solicitation is built byte for byte as the reference frame", "[nd][frame]") {
  std::uint8_t out[kNdFrameBytes];
  const std::uint32_t n = build_ns(sender(kMac9, kIp9), kIp1, out, sizeof(out));
  REQUIRE(n == kScapyNs.size());
  CHECK(std::vector<std::uint8_t>(out, out + n) == kScapyNs);
}

TEST_CASE("nd: the solicited advertisement is built byte for byte as the reference frame", "[nd][frame]") {
  std::uint8_t out[kNdFrameBytes];
  const std::uint32_t n = build_na(sender(kMac2, kIp2), kMac1, kIp1, true, out, sizeof(out));
  REQUIRE(n == kScapyNa.size());
  CHECK(std::vector<std::uint8_t>(out, out + n) == kScapyNa);
}

TEST_CASE("nd: the unsolicited advertisement goes to all nodes, S clear, O set, with our tag (§7.2.6)", "[nd][frame]") {
  std::uint8_t out[kNdFrameBytes];
  const std::uint32_t n = build_unsolicited_na(sender(kMac1, kIp1, 100, 3), out, sizeof(out));
  REQUIRE(n == kScapyUnsolicitedNaVlan.size());
  CHECK(std::vector<std::uint8_t>(out, out + n) == kScapyUnsolicitedNaVlan);
  NdFrame f;
  REQUIRE(parse_nd(out, n, f) == NdRefusal::kNone);
  CHECK(f.has_vlan);
  CHECK(f.vlan_id == 100);
  CHECK(f.type == NdType::kAdvertisement);
  CHECK_FALSE(f.solicited);
  CHECK(f.override_flag);
  CHECK(std::memcmp(f.ip_dst, kAllNodes, 16) == 0);
}

TEST_CASE("nd: builders refuse a buffer too small for the frame", "[nd][frame]") {
  std::uint8_t out[kNdFrameBytes];
  CHECK(build_ns(sender(kMac9, kIp9), kIp1, out, 85) == 0);
  CHECK(build_ns(sender(kMac9, kIp9, 5), kIp1, out, 89) == 0);
  CHECK(build_na(sender(kMac2, kIp2), kMac1, kIp1, true, out, 85) == 0);
  CHECK(build_ns(sender(kMac9, kIp9, 5), kIp1, out, 90) == 90);
}

TEST_CASE("nd: the reference solicitation and advertisement parse with their fields", "[nd][frame]") {
  NdFrame f;
  REQUIRE(parse_nd(kScapyNs.data(), static_cast<std::uint32_t>(kScapyNs.size()), f) == NdRefusal::kNone);
  CHECK(f.type == NdType::kSolicitation);
  CHECK_FALSE(f.has_vlan);
  CHECK(std::memcmp(f.target, kIp1, 16) == 0);
  CHECK(std::memcmp(f.ip_src, kIp9, 16) == 0);
  REQUIRE(f.has_link_addr);
  CHECK(std::memcmp(f.link_addr, kMac9, 6) == 0);
  CHECK(std::memcmp(f.eth_src, kMac9, 6) == 0);

  REQUIRE(parse_nd(kScapyNa.data(), static_cast<std::uint32_t>(kScapyNa.size()), f) == NdRefusal::kNone);
  CHECK(f.type == NdType::kAdvertisement);
  CHECK(f.solicited);
  CHECK(f.override_flag);
  CHECK_FALSE(f.router);
  CHECK(std::memcmp(f.target, kIp2, 16) == 0);
  REQUIRE(f.has_link_addr);
  CHECK(std::memcmp(f.link_addr, kMac2, 6) == 0);
}

TEST_CASE("nd: solicited-node group and multicast MACs (RFC 4291 §2.7.1, RFC 2464 §7)", "[nd][frame]") {
  const std::uint8_t ip[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78};
  std::uint8_t group[16], mac[6];
  solicited_node(ip, group);
  const std::uint8_t want[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0x34, 0x56, 0x78};
  CHECK(std::memcmp(group, want, 16) == 0);
  multicast_mac(group, mac);
  const std::uint8_t want_mac[6] = {0x33, 0x33, 0xff, 0x34, 0x56, 0x78};
  CHECK(std::memcmp(mac, want_mac, 6) == 0);
  multicast_mac(kAllNodes, mac);
  const std::uint8_t all_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
  CHECK(std::memcmp(mac, all_mac, 6) == 0);
  std::uint8_t groups[kNdGroupCount][6];
  nd_group_macs(ip, groups);
  CHECK(std::memcmp(groups[0], want_mac, 6) == 0);
  CHECK(std::memcmp(groups[1], all_mac, 6) == 0);
  CHECK(is_multicast(group));
  CHECK_FALSE(is_multicast(ip));
  const std::uint8_t zero[16] = {};
  CHECK(is_unspecified(zero));
  CHECK_FALSE(is_unspecified(ip));
}

TEST_CASE("nd: Ethernet padding and unknown options are ignored (§4.6)", "[nd][frame]") {
  std::vector<std::uint8_t> f = kScapyNs;
  f.insert(f.end(), 10, 0);  // padding after the IPv6 payload
  CHECK(parse(f) == NdRefusal::kNone);
  f = kScapyNs;
  // A Nonce option (RFC 3971, type 14) of 8 bytes after the link-layer option.
  const std::uint8_t nonce[8] = {14, 1, 1, 2, 3, 4, 5, 6};
  f.insert(f.end(), nonce, nonce + 8);
  reseal(f);
  NdFrame out;
  REQUIRE(parse_nd(f.data(), static_cast<std::uint32_t>(f.size()), out) == NdRefusal::kNone);
  CHECK(std::memcmp(out.link_addr, kMac9, 6) == 0);
  // A target link-layer option in a solicitation is not its sender's: skipped.
  f = kScapyNs;
  f[kOptOff] = kOptTargetLinkLayer;
  reseal(f);
  REQUIRE(parse_nd(f.data(), static_cast<std::uint32_t>(f.size()), out) == NdRefusal::kNone);
  CHECK_FALSE(out.has_link_addr);
}

TEST_CASE("nd: the parser refuses each broken rule by name (§7.1.1, §7.1.2)", "[nd][frame][malformed]") {
  std::vector<std::uint8_t> f;
  SECTION("truncated and stacked Ethernet") {
    f.assign(kScapyNs.begin(), kScapyNs.begin() + 10);
    CHECK(parse(f) == NdRefusal::kTruncatedEthernet);
    f = kScapyNs;
    f[12] = 0x88;
    f[13] = 0xA8;
    CHECK(parse(f) == NdRefusal::kStackedVlan);
  }
  SECTION("not IPv6, not ICMPv6, not NS/NA: not ND at all") {
    f = kScapyNs;
    f[12] = 0x08;
    f[13] = 0x00;
    CHECK(parse(f) == NdRefusal::kNotIpv6);
    CHECK(not_nd(NdRefusal::kNotIpv6));
    f = kScapyNs;
    f[kIpOff + 6] = 17;  // UDP
    CHECK(parse(f) == NdRefusal::kNotIcmpv6);
    f = kScapyNs;
    f[kIcmpOff] = 128;  // echo request
    reseal(f);
    CHECK(parse(f) == NdRefusal::kNotNd);
    f[kIcmpOff] = 133;  // router solicitation
    reseal(f);
    CHECK(parse(f) == NdRefusal::kNotNd);
  }
  SECTION("IPv6 header") {
    f.assign(kScapyNs.begin(), kScapyNs.begin() + 40);
    CHECK(parse(f) == NdRefusal::kTruncatedIpv6);
    f = kScapyNs;
    f[kIpOff] = 0x40;
    CHECK(parse(f) == NdRefusal::kBadIpVersion);
    f = kScapyNs;
    f[kIpOff + 5] = 0x21;  // payload one byte longer than the frame
    CHECK(parse(f) == NdRefusal::kBadPayloadLength);
  }
  SECTION("hop limit below 255: forwarded by a router") {
    f = kScapyNs;
    f[kHopLimitOff] = 254;
    reseal(f);
    CHECK(parse(f) == NdRefusal::kBadHopLimit);
  }
  SECTION("checksum") {
    f = kScapyNs;
    f[kIcmpOff + 3] ^= 1;
    CHECK(parse(f) == NdRefusal::kBadChecksum);
    f = kScapyNa;
    f[kOptOff + 7] ^= 0x80;  // a changed MAC, the checksum left as it was
    CHECK(parse(f) == NdRefusal::kBadChecksum);
  }
  SECTION("code") {
    f = kScapyNs;
    f[kIcmpOff + 1] = 1;
    reseal(f);
    CHECK(parse(f) == NdRefusal::kBadCode);
  }
  SECTION("shorter than 24 bytes") {
    f.assign(kScapyNs.begin(), kScapyNs.begin() + kIcmpOff + 20);
    reseal(f);
    CHECK(parse(f) == NdRefusal::kTooShort);
  }
  SECTION("multicast target") {
    f = kScapyNs;
    f[kIcmpOff + 8] = 0xff;
    reseal(f);
    CHECK(parse(f) == NdRefusal::kMulticastTarget);
  }
  SECTION("unspecified target (found by fuzz_nd: an NA for :: round-tripped to another target)") {
    f = kScapyNs;
    for (int i = 0; i < 16; ++i) f[kIcmpOff + 8 + i] = 0;
    reseal(f);
    CHECK(parse(f) == NdRefusal::kUnspecifiedTarget);
  }
  SECTION("options: zero length, past the end, a link-layer option of the wrong size") {
    f = kScapyNs;
    f[kOptOff + 1] = 0;
    reseal(f);
    CHECK(parse(f) == NdRefusal::kBadOptionLength);
    f = kScapyNs;
    f[kOptOff + 1] = 2;
    reseal(f);
    CHECK(parse(f) == NdRefusal::kBadOptionLength);
    f = kScapyNs;
    f.push_back(0x01);  // one byte of an option
    reseal(f);
    CHECK(parse(f) == NdRefusal::kBadOptionLength);
    f = kScapyNs;
    f[kOptOff + 1] = 2;
    f.insert(f.end(), 8, 0);
    reseal(f);
    CHECK(parse(f) == NdRefusal::kBadLinkLayerOption);
  }
  SECTION("a DAD probe (source ::) not to a solicited-node group, or with a link-layer option") {
    f = kScapyNs;
    std::memset(f.data() + kSrcOff, 0, 16);
    reseal(f);
    CHECK(parse(f) == NdRefusal::kUnspecifiedSourceWithOption);
    f.resize(kOptOff);  // without the option: a valid probe
    reseal(f);
    CHECK(parse(f) == NdRefusal::kNone);
    std::memcpy(f.data() + kDstOff, kIp1, 16);
    reseal(f);
    CHECK(parse(f) == NdRefusal::kUnspecifiedSourceNotSolicitedNode);
  }
  SECTION("a solicited advertisement to a multicast address") {
    f = kScapyNa;
    std::memcpy(f.data() + kDstOff, kAllNodes, 16);
    reseal(f);
    CHECK(parse(f) == NdRefusal::kSolicitedToMulticast);
  }
}

TEST_CASE("nd: refusal names are the counter names", "[nd][frame]") {
  CHECK(nd_refusal_name(NdRefusal::kNone) == "none");
  CHECK(nd_refusal_name(NdRefusal::kBadChecksum) == "bad_checksum");
  CHECK(nd_refusal_name(NdRefusal::kSolicitedToMulticast) == "solicited_to_multicast");
  CHECK(nd_refusal_name(NdRefusal::kCount) == "invalid");
}

TEST_CASE("nd: every seed of the fuzz corpus (scapy's frames) parses", "[nd][frame]") {
  int seeds = 0;
  for (const auto& e : std::filesystem::directory_iterator(DROCE_ND_CORPUS)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::vector<std::uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(e.path().string());
    CHECK(parse(f) == NdRefusal::kNone);
    ++seeds;
  }
  CHECK(seeds >= 7);
}
