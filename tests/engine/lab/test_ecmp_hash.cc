// EcmpHash without EAL: the 5-tuple read from IPv4, IPv6 and VLAN frames, --ecmp-hash parsing,
// fields left out not changing the choice, the seed changing it, and source ports spreading over
// next hops as a hash does.
#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "engine/lab/ecmp_hash.h"
#include "tests/engine/lab/frames_udp.h"

using namespace droce;
using namespace droce::engine;

namespace {

FlowKey key_of(const std::vector<std::uint8_t>& f) {
  FlowKey k;
  REQUIRE(flow_key_of(f.data(), static_cast<std::uint32_t>(f.size()), k));
  return k;
}

}  // namespace

TEST_CASE("the flow of IPv4, VLAN-tagged and IPv6 RoCEv2 frames", "[ecmp]") {
  const FlowKey k4 = key_of(test::udp4_frame(0x0A000001, 0x0A000102, 49152));
  CHECK(!k4.ipv6);
  CHECK(k4.src[0] == 10);
  CHECK(k4.src[3] == 1);
  CHECK(k4.dst[2] == 1);
  CHECK(k4.dst[3] == 2);
  CHECK(k4.proto == 17);
  CHECK(k4.src_port == 49152);
  CHECK(k4.dst_port == 4791);

  auto tagged = test::udp4_frame(0x0A000001, 0x0A000102, 49152);
  const std::uint8_t tag[4] = {0x81, 0x00, 0x60, 0x05};
  tagged.insert(tagged.begin() + 12, tag, tag + 4);
  const FlowKey kv = key_of(tagged);
  CHECK(kv.src_port == 49152);
  CHECK(ecmp_hash(kv, {}) == ecmp_hash(k4, {}));

  std::array<std::uint8_t, 16> a{}, b{};
  a[0] = b[0] = 0xFD;
  a[15] = 1;
  b[15] = 2;
  const FlowKey k6 = key_of(test::udp6_frame(a, b, 50000));
  CHECK(k6.ipv6);
  CHECK(k6.src[15] == 1);
  CHECK(k6.dst[15] == 2);
  CHECK(k6.src_port == 50000);

  FlowKey none;
  auto arp = test::udp4_frame(1, 2, 3);
  arp[12] = 0x08;
  arp[13] = 0x06;
  CHECK(!flow_key_of(arp.data(), static_cast<std::uint32_t>(arp.size()), none));
  CHECK(!flow_key_of(arp.data(), 20, none));
  // A later IPv4 fragment has no UDP header: no ports.
  auto frag = test::udp4_frame(1, 2, 3);
  frag[14 + 7] = 8;
  CHECK(key_of(frag).src_port == 0);
}

TEST_CASE("--ecmp-hash: fields, seed, and one line naming a bad item", "[ecmp]") {
  EcmpHashConfig c;
  REQUIRE(EcmpHashConfig::parse("src-ip,dst-ip,dst-port,seed=7", c).ok());
  CHECK(c.fields == (kEcmpSrcIp | kEcmpDstIp | kEcmpDstPort));
  CHECK(c.seed == 7);
  CHECK(c.describe() == "src-ip,dst-ip,dst-port,seed=7");
  REQUIRE(EcmpHashConfig::parse("5-tuple", c).ok());
  CHECK(c.fields == kEcmpAll);
  const Status bad = EcmpHashConfig::parse("src-ip,sport", c);
  CHECK(bad.code() == StatusCode::kInvalidArgument);
  CHECK(bad.message().find("sport") != std::string::npos);
  CHECK(!EcmpHashConfig::parse("seed=x", c).ok());
  CHECK(!EcmpHashConfig::parse("seed=99999999999", c).ok());
  CHECK(!EcmpHashConfig::parse("", c).ok());
  CHECK(!EcmpHashConfig::parse("seed=3", c).ok());  // a seed alone hashes nothing
}

TEST_CASE("ECMP: a flow keeps its choice; the source port spreads flows only while it is hashed", "[ecmp]") {
  constexpr std::uint32_t kHops = 4;
  EcmpHashConfig with_port;
  EcmpHashConfig without_port;
  without_port.fields = kEcmpAll & ~kEcmpSrcPort;
  std::set<std::uint32_t> with, without;
  std::uint32_t per_hop[kHops] = {};
  for (std::uint16_t sport = 49152; sport < 49152 + 256; ++sport) {
    const FlowKey k = key_of(test::udp4_frame(0x0A000001, 0x0A000102, sport));
    const std::uint32_t pick = ecmp_pick(k, with_port, kHops);
    CHECK(pick == ecmp_pick(k, with_port, kHops));  // the same flow, the same hop
    with.insert(pick);
    ++per_hop[pick];
    without.insert(ecmp_pick(k, without_port, kHops));
  }
  CHECK(with.size() == kHops);
  CHECK(without.size() == 1);  // every source port of one address pair collides
  // 256 flows over 4 hops: a hash leaves each near 64 (a binomial's sd is 7; 32 is 4.5 sd away).
  for (std::uint32_t n : per_hop) CHECK((n > 32 && n < 96));
  // Another seed moves some flows.
  EcmpHashConfig seeded;
  seeded.seed = 12345;
  std::uint32_t moved = 0;
  for (std::uint16_t sport = 49152; sport < 49152 + 64; ++sport) {
    const FlowKey k = key_of(test::udp4_frame(0x0A000001, 0x0A000102, sport));
    moved += ecmp_pick(k, seeded, kHops) != ecmp_pick(k, with_port, kHops) ? 1 : 0;
  }
  CHECK(moved > 0);
}

TEST_CASE("ECMP: another seed parts flows that collide, over a power-of-two number of hops", "[ecmp]") {
  // A linear hash (CRC32C alone) keeps the XOR of two flows' hashes under every seed, so over 2
  // or 4 hops (hash % S: the low bits) a pair that collides under one seed would collide under
  // all. Count the pairs of 32 flows whose colliding or not differs between two seeds.
  for (const std::uint32_t hops : {2u, 4u}) {
    EcmpHashConfig a, b;
    a.seed = 1;
    b.seed = 2;
    std::vector<FlowKey> keys;
    for (std::uint16_t sport = 49152; sport < 49152 + 32; ++sport)
      keys.push_back(key_of(test::udp4_frame(0x0A000001, 0x0A000102, sport)));
    std::uint32_t changed = 0, collide_a = 0;
    for (std::size_t i = 0; i < keys.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const bool ca = ecmp_pick(keys[i], a, hops) == ecmp_pick(keys[j], a, hops);
        const bool cb = ecmp_pick(keys[i], b, hops) == ecmp_pick(keys[j], b, hops);
        collide_a += ca ? 1 : 0;
        changed += ca != cb ? 1 : 0;
      }
    INFO("hops " << hops << ": " << collide_a << " of 496 pairs collide under seed 1, " << changed << " differ");
    CHECK(collide_a > 0);
    // Independent picks differ on a pair with probability 2 (1 / hops)(1 - 1 / hops): 248 pairs of
    // 496 over 2 hops, 186 over 4; a linear hash gives 0.
    CHECK(changed > 496 / (2 * hops));
  }
}
