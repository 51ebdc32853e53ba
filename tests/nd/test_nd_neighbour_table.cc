// nd::NeighbourTable: ND's learning rules (RFC 4861 §7.2.3, §7.2.5), the lifetime, retries then
// failure (§7.2.2), DAD probes answered to all nodes, and a full table.
#include <catch2/catch.hpp>
#include <cstring>

#include "protocols/nd/neighbour_table.h"

using namespace droce::nd;

namespace {

const Ipv6Address kUs = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
const Ipv6Address kPeer = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
const Ipv6Address kOther = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3};
constexpr std::uint8_t kOurMac[6] = {0x02, 0, 0, 0, 0, 0x01};
constexpr std::uint8_t kPeerMac[6] = {0x02, 0, 0, 0, 0, 0x02};
constexpr std::uint8_t kNewMac[6] = {0x02, 0, 0, 0, 0, 0x22};
constexpr std::uint64_t kT0 = 5'000'000'000;

NeighbourTable table() {
  NeighbourConfig c;
  std::memcpy(c.local_mac, kOurMac, 6);
  c.local_ip = kUs;
  return NeighbourTable(c);
}

// A solicitation from `src` (kPeerMac) for `target`, to target's solicited-node group.
NdFrame ns(const Ipv6Address& src, const Ipv6Address& target, bool with_mac = true) {
  NdFrame f;
  f.type = NdType::kSolicitation;
  std::uint8_t group[16];
  solicited_node(target.data(), group);
  multicast_mac(group, f.eth_dst);
  std::memcpy(f.ip_dst, group, 16);
  std::memcpy(f.eth_src, kPeerMac, 6);
  std::memcpy(f.ip_src, src.data(), 16);
  std::memcpy(f.target, target.data(), 16);
  f.has_link_addr = with_mac;
  if (with_mac) std::memcpy(f.link_addr, kPeerMac, 6);
  return f;
}

// A solicited advertisement of `target` at `mac`, to us.
NdFrame na(const Ipv6Address& target, const std::uint8_t* mac = kPeerMac, bool override_flag = true) {
  NdFrame f;
  f.type = NdType::kAdvertisement;
  std::memcpy(f.eth_dst, kOurMac, 6);
  std::memcpy(f.eth_src, mac, 6);
  std::memcpy(f.ip_src, target.data(), 16);
  std::memcpy(f.ip_dst, kUs.data(), 16);
  std::memcpy(f.target, target.data(), 16);
  f.solicited = true;
  f.override_flag = override_flag;
  f.has_link_addr = true;
  std::memcpy(f.link_addr, mac, 6);
  return f;
}

unsigned due(NeighbourTable& t, std::uint64_t now, Ipv6Address* ips, unsigned& failed) {
  return t.due_queries(now, ips, 8, failed);
}

}  // namespace

TEST_CASE("nd neighbours: a resolution solicits an interval apart, then fails", "[nd][neighbour]") {
  NeighbourTable t = table();
  REQUIRE(t.start_resolve(kPeer, kT0) == StartResult::kStarted);
  CHECK(t.start_resolve(kPeer, kT0) == StartResult::kResolving);
  Ipv6Address ips[8];
  unsigned failed = 0;
  for (std::uint32_t i = 0; i < kNdMaxSolicitations; ++i) {
    const std::uint64_t now = kT0 + i * kNdRetryIntervalNs;
    REQUIRE(due(t, now, ips, failed) == 1);
    CHECK(ips[0] == kPeer);
    CHECK(failed == 0);
    CHECK(due(t, now + 1, ips, failed) == 0);
    CHECK(t.next_due_ns() == now + kNdRetryIntervalNs);
  }
  CHECK(due(t, kT0 + kNdMaxSolicitations * kNdRetryIntervalNs, ips, failed) == 0);
  CHECK(failed == 1);
  const Neighbour* n = t.find(kPeer, kT0 + 4 * kNdRetryIntervalNs);
  REQUIRE(n != nullptr);
  CHECK(n->state == NeighbourState::kFailed);
  CHECK(n->queries_sent == kNdMaxSolicitations);
  CHECK(n->deadline_ns - n->started_ns == kNdMaxSolicitations * kNdRetryIntervalNs);
  CHECK(t.next_due_ns() == NeighbourTable::kNever);
  // Asking again starts over.
  CHECK(t.start_resolve(kPeer, kT0 + 5 * kNdRetryIntervalNs) == StartResult::kStarted);
}

TEST_CASE("nd neighbours: an advertisement ends the resolution; the MAC lives its lifetime", "[nd][neighbour]") {
  NeighbourTable t = table();
  REQUIRE(t.start_resolve(kPeer, kT0) == StartResult::kStarted);
  Ipv6Address ips[8];
  unsigned failed = 0;
  REQUIRE(due(t, kT0, ips, failed) == 1);
  const NdVerdict v = t.on_frame(na(kPeer), false, kT0 + 10);
  CHECK(v.learned);
  CHECK_FALSE(v.reply);
  CHECK(v.ignored == NdIgnore::kNone);
  const Neighbour* n = t.find(kPeer, kT0 + 10);
  REQUIRE(n != nullptr);
  CHECK(n->state == NeighbourState::kReachable);
  CHECK(std::memcmp(n->mac, kPeerMac, 6) == 0);
  CHECK(t.start_resolve(kPeer, kT0 + 20) == StartResult::kResolved);
  CHECK(due(t, kT0 + 2 * kNdRetryIntervalNs, ips, failed) == 0);
  CHECK(failed == 0);
  CHECK(t.find(kPeer, kT0 + 10 + kNeighbourLifetimeNs) == nullptr);
  CHECK(t.start_resolve(kPeer, kT0 + 10 + kNeighbourLifetimeNs) == StartResult::kStarted);
}

TEST_CASE("nd neighbours: a different MAC replaces a known one only with Override (§7.2.5)", "[nd][neighbour]") {
  NeighbourTable t = table();
  REQUIRE(t.start_resolve(kPeer, kT0) == StartResult::kStarted);
  REQUIRE(t.on_frame(na(kPeer), false, kT0).learned);
  NdVerdict v = t.on_frame(na(kPeer, kNewMac, false), false, kT0 + 1);
  CHECK(v.ignored == NdIgnore::kNoOverride);
  CHECK(std::memcmp(t.find(kPeer, kT0 + 1)->mac, kPeerMac, 6) == 0);
  v = t.on_frame(na(kPeer, kNewMac, true), false, kT0 + 2);
  CHECK(v.learned);
  CHECK(std::memcmp(t.find(kPeer, kT0 + 2)->mac, kNewMac, 6) == 0);
  // Without the option there is nothing to learn.
  NdFrame bare = na(kPeer);
  bare.has_link_addr = false;
  CHECK(t.on_frame(bare, false, kT0 + 3).ignored == NdIgnore::kNoLinkAddress);
}

TEST_CASE("nd neighbours: a solicitation for us is answered and teaches the asker's MAC (§7.2.3)", "[nd][neighbour]") {
  NeighbourTable t = table();
  const NdVerdict v = t.on_frame(ns(kPeer, kUs), false, kT0);
  CHECK(v.reply);
  CHECK(v.reply_solicited);
  CHECK(std::memcmp(v.reply_mac, kPeerMac, 6) == 0);
  CHECK(std::memcmp(v.reply_ip, kPeer.data(), 16) == 0);
  CHECK(v.learned);
  const Neighbour* n = t.find(kPeer, kT0);
  REQUIRE(n != nullptr);
  CHECK(n->state == NeighbourState::kReachable);
  CHECK(t.start_resolve(kPeer, kT0) == StartResult::kResolved);
  // Without a source link-layer option: answered to the frame's MAC, not learned.
  NeighbourTable u = table();
  const NdVerdict w = u.on_frame(ns(kPeer, kUs, false), false, kT0);
  CHECK(w.reply);
  CHECK_FALSE(w.learned);
  CHECK(u.find(kPeer, kT0) == nullptr);
}

TEST_CASE("nd neighbours: a DAD probe for our address is answered to all nodes, S clear", "[nd][neighbour]") {
  NeighbourTable t = table();
  NdFrame f = ns(kPeer, kUs, false);
  std::memset(f.ip_src, 0, 16);
  const NdVerdict v = t.on_frame(f, false, kT0);
  CHECK(v.reply);
  CHECK_FALSE(v.reply_solicited);
  CHECK(std::memcmp(v.reply_ip, kAllNodes, 16) == 0);
  const std::uint8_t all_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
  CHECK(std::memcmp(v.reply_mac, all_mac, 6) == 0);
  CHECK_FALSE(v.learned);
  CHECK(t.size() == 0);
}

TEST_CASE("nd neighbours: nothing is learned from what we did not ask and what does not ask us", "[nd][neighbour]") {
  NeighbourTable t = table();
  // Another target's solicitation.
  CHECK(t.on_frame(ns(kPeer, kOther), true, kT0).ignored == NdIgnore::kNotForUs);
  // An advertisement nobody asked for (an unsolicited NA of a host we do not know).
  CHECK(t.on_frame(na(kOther), false, kT0).ignored == NdIgnore::kUnsolicitedAdvertisement);
  // Another node claims our address, or solicits from it.
  CHECK(t.on_frame(na(kUs), false, kT0).ignored == NdIgnore::kAddressConflict);
  CHECK(t.on_frame(ns(kUs, kUs), false, kT0).ignored == NdIgnore::kAddressConflict);
  // Not our MAC nor one of our groups' (the port is not promiscuous) ...
  NdFrame f = ns(kPeer, kUs);
  f.eth_dst[5] ^= 1;
  CHECK(t.on_frame(f, false, kT0).ignored == NdIgnore::kNotOurMac);
  // ... unless the port takes any MAC.
  CHECK(t.on_frame(f, true, kT0).reply);
  // A bad link-layer address, a multicast source.
  NeighbourTable u = table();
  f = ns(kPeer, kUs);
  f.link_addr[0] = 0x01;
  CHECK(u.on_frame(f, false, kT0).ignored == NdIgnore::kBadLinkAddress);
  f = ns(kPeer, kUs);
  f.ip_src[0] = 0xff;
  CHECK(u.on_frame(f, false, kT0).ignored == NdIgnore::kBadSenderIp);
  CHECK(u.size() == 0);
}

TEST_CASE("nd neighbours: addresses that cannot be resolved are refused", "[nd][neighbour]") {
  NeighbourTable t = table();
  const Ipv6Address unspecified{};
  Ipv6Address loopback{};
  loopback[15] = 1;
  Ipv6Address mapped{};
  mapped[10] = mapped[11] = 0xff;
  mapped[12] = 10;
  Ipv6Address group{};
  group[0] = 0xff;
  group[1] = 0x02;
  for (const Ipv6Address& a : {unspecified, loopback, mapped, group, kUs})
    CHECK(t.start_resolve(a, kT0) == StartResult::kBadAddress);
}

TEST_CASE("nd neighbours: a full table refuses new addresses, then reuses failed ones", "[nd][neighbour]") {
  NeighbourTable t = table();
  Ipv6Address a = kPeer;
  for (std::uint32_t i = 0; i < kNeighbourCapacity; ++i) {
    a[14] = static_cast<std::uint8_t>(i);
    a[15] = 0x10;
    REQUIRE(t.start_resolve(a, kT0) == StartResult::kStarted);
  }
  a[14] = 0xEE;
  CHECK(t.start_resolve(a, kT0) == StartResult::kTableFull);
  CHECK(t.on_frame(ns(kPeer, kUs), false, kT0).ignored == NdIgnore::kTableFull);
  Ipv6Address ips[kNeighbourCapacity];
  unsigned failed = 0;
  for (std::uint32_t i = 0; i <= kNdMaxSolicitations; ++i)
    (void)t.due_queries(kT0 + i * kNdRetryIntervalNs, ips, kNeighbourCapacity, failed);
  CHECK(failed == kNeighbourCapacity);
  CHECK(t.start_resolve(a, kT0 + 10 * kNdRetryIntervalNs) == StartResult::kStarted);
}
