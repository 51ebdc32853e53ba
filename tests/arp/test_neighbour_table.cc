// NeighbourTable: the learning rules, the lifetime, retries then failure, and a full table.
#include <catch2/catch.hpp>
#include <cstring>

#include "protocols/arp/neighbour_table.h"

using namespace droce::arp;

namespace {

constexpr std::uint32_t kUs = 0x0A000001;    // 10.0.0.1
constexpr std::uint32_t kPeer = 0x0A000002;  // 10.0.0.2
constexpr std::uint32_t kOther = 0x0A000003;
constexpr std::uint8_t kOurMac[6] = {0x02, 0, 0, 0, 0, 0x01};
constexpr std::uint8_t kPeerMac[6] = {0x02, 0, 0, 0, 0, 0x02};
constexpr std::uint8_t kBroadcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
constexpr std::uint64_t kT0 = 5'000'000'000;

NeighbourTable table() {
  NeighbourConfig c;
  std::memcpy(c.local_mac, kOurMac, 6);
  c.local_ip = kUs;
  return NeighbourTable(c);
}

// An ARP frame from `sender` (kPeerMac unless told) to `target`.
ArpFrame frame(ArpOp op, std::uint32_t sender, std::uint32_t target, const std::uint8_t* eth_dst = kBroadcast) {
  ArpFrame f;
  f.op = op;
  std::memcpy(f.eth_dst, eth_dst, 6);
  std::memcpy(f.eth_src, kPeerMac, 6);
  std::memcpy(f.sender_mac, kPeerMac, 6);
  f.sender_ip = sender;
  f.target_ip = target;
  return f;
}

unsigned due(NeighbourTable& t, std::uint64_t now, std::uint32_t* ips, unsigned& failed) {
  return t.due_queries(now, ips, 8, failed);
}

}  // namespace

TEST_CASE("neighbours: a resolution sends its requests an interval apart, then fails", "[arp][neighbour]") {
  NeighbourTable t = table();
  REQUIRE(t.start_resolve(kPeer, kT0) == StartResult::kStarted);
  CHECK(t.start_resolve(kPeer, kT0 + 1) == StartResult::kResolving);
  std::uint32_t ips[8];
  unsigned failed = 0;
  for (std::uint32_t i = 0; i < kArpMaxRequests; ++i) {
    const std::uint64_t at = kT0 + i * kArpRetryIntervalNs;
    if (i != 0) CHECK(due(t, at - 1, ips, failed) == 0);  // not before its time
    CHECK(due(t, at, ips, failed) == 1);
    CHECK(ips[0] == kPeer);
    CHECK(failed == 0);
    CHECK(t.find(kPeer, at)->queries_sent == i + 1);
    CHECK(t.next_due_ns() == at + kArpRetryIntervalNs);
  }
  const std::uint64_t end = kT0 + kArpMaxRequests * kArpRetryIntervalNs;
  CHECK(due(t, end - 1, ips, failed) == 0);
  CHECK(failed == 0);
  CHECK(t.find(kPeer, end - 1)->state == NeighbourState::kIncomplete);
  CHECK(due(t, end, ips, failed) == 0);
  CHECK(failed == 1);
  const Neighbour* n = t.find(kPeer, end);
  REQUIRE(n != nullptr);
  CHECK(n->state == NeighbourState::kFailed);
  CHECK(n->queries_sent == kArpMaxRequests);
  CHECK(n->deadline_ns - n->started_ns == kArpMaxRequests * kArpRetryIntervalNs);
  CHECK(t.next_due_ns() == NeighbourTable::kNever);
  // Asking again starts over.
  CHECK(t.start_resolve(kPeer, end + 10) == StartResult::kStarted);
  CHECK(t.find(kPeer, end + 10)->queries_sent == 0);
}

TEST_CASE("neighbours: a reply ends the resolution; the MAC lives kNeighbourLifetimeNs", "[arp][neighbour]") {
  NeighbourTable t = table();
  REQUIRE(t.start_resolve(kPeer, kT0) == StartResult::kStarted);
  std::uint32_t ips[8];
  unsigned failed = 0;
  REQUIRE(due(t, kT0, ips, failed) == 1);
  const ArpVerdict v = t.on_frame(frame(ArpOp::kReply, kPeer, kUs, kOurMac), false, kT0 + 100);
  CHECK(v.learned);
  CHECK_FALSE(v.reply);
  const Neighbour* n = t.find(kPeer, kT0 + 100);
  REQUIRE(n != nullptr);
  CHECK(n->state == NeighbourState::kReachable);
  CHECK(std::memcmp(n->mac, kPeerMac, 6) == 0);
  // No more requests, no failure.
  CHECK(due(t, kT0 + 10 * kArpRetryIntervalNs, ips, failed) == 0);
  CHECK(failed == 0);
  CHECK(t.start_resolve(kPeer, kT0 + 200) == StartResult::kResolved);
  const std::uint64_t expiry = kT0 + 100 + kNeighbourLifetimeNs;
  CHECK(t.find(kPeer, expiry - 1) != nullptr);
  CHECK(t.find(kPeer, expiry) == nullptr);
  CHECK(t.start_resolve(kPeer, expiry) == StartResult::kStarted);
}

TEST_CASE("neighbours: a request for us is answered and teaches the requester's MAC", "[arp][neighbour]") {
  NeighbourTable t = table();
  const ArpVerdict v = t.on_frame(frame(ArpOp::kRequest, kPeer, kUs), false, kT0);
  CHECK(v.reply);
  CHECK(v.learned);
  const Neighbour* n = t.find(kPeer, kT0);
  REQUIRE(n != nullptr);
  CHECK(n->state == NeighbourState::kReachable);
  CHECK(t.start_resolve(kPeer, kT0) == StartResult::kResolved);
  // A request also completes a resolution in progress.
  REQUIRE(t.start_resolve(kOther, kT0) == StartResult::kStarted);
  ArpFrame f = frame(ArpOp::kRequest, kOther, kUs);
  f.sender_mac[5] = 0x03;
  CHECK(t.on_frame(f, false, kT0 + 1).learned);
  CHECK(t.find(kOther, kT0 + 1)->state == NeighbourState::kReachable);
  CHECK(t.find(kOther, kT0 + 1)->mac[5] == 0x03);
}

TEST_CASE("neighbours: nothing is learned from frames not addressed to us", "[arp][neighbour]") {
  NeighbourTable t = table();
  REQUIRE(t.start_resolve(kPeer, kT0) == StartResult::kStarted);
  SECTION("a request for another IP") {
    const ArpVerdict v = t.on_frame(frame(ArpOp::kRequest, kPeer, kOther), false, kT0);
    CHECK_FALSE(v.reply);
    CHECK(v.ignored == ArpIgnore::kNotForUs);
  }
  SECTION("a reply to another IP") {
    CHECK(t.on_frame(frame(ArpOp::kReply, kPeer, kOther), true, kT0).ignored == ArpIgnore::kNotForUs);
  }
  SECTION("another host's announcement (target = its own IP)") {
    CHECK(t.on_frame(frame(ArpOp::kRequest, kPeer, kPeer), false, kT0).ignored == ArpIgnore::kNotForUs);
  }
  SECTION("a unicast frame for another MAC, unless the port is promiscuous") {
    const std::uint8_t other_mac[6] = {0x02, 0, 0, 0, 0, 0x09};
    CHECK(t.on_frame(frame(ArpOp::kReply, kPeer, kUs, other_mac), false, kT0).ignored == ArpIgnore::kNotOurMac);
    CHECK(t.on_frame(frame(ArpOp::kReply, kPeer, kUs, other_mac), true, kT0).learned);
    return;
  }
  CHECK(t.find(kPeer, kT0)->state == NeighbourState::kIncomplete);
}

TEST_CASE("neighbours: senders that name no neighbour teach nothing", "[arp][neighbour]") {
  NeighbourTable t = table();
  SECTION("a probe (sender 0.0.0.0) is answered, not learned (RFC 5227 §2.1.1)") {
    const ArpVerdict v = t.on_frame(frame(ArpOp::kRequest, 0, kUs), false, kT0);
    CHECK(v.reply);
    CHECK_FALSE(v.learned);
  }
  SECTION("a sender claiming our IP") {
    const ArpVerdict v = t.on_frame(frame(ArpOp::kRequest, kUs, kUs), false, kT0);
    CHECK_FALSE(v.reply);
    CHECK(v.ignored == ArpIgnore::kAddressConflict);
  }
  SECTION("a reply from 0.0.0.0, multicast or loopback") {
    for (std::uint32_t ip : {0u, 0xE0000001u, 0xFFFFFFFFu, 0x7F000001u})
      CHECK(t.on_frame(frame(ArpOp::kReply, ip, kUs), false, kT0).ignored == ArpIgnore::kBadSenderIp);
  }
  SECTION("a multicast or zero sender MAC") {
    ArpFrame f = frame(ArpOp::kRequest, kPeer, kUs);
    f.sender_mac[0] = 0x01;
    CHECK(t.on_frame(f, false, kT0).ignored == ArpIgnore::kBadSenderMac);
    std::memset(f.sender_mac, 0, 6);
    CHECK(t.on_frame(f, false, kT0).ignored == ArpIgnore::kBadSenderMac);
  }
  SECTION("a reply nobody asked for") {
    CHECK(t.on_frame(frame(ArpOp::kReply, kPeer, kUs), false, kT0).ignored == ArpIgnore::kUnsolicitedReply);
  }
  CHECK(t.size() == 0);
}

TEST_CASE("neighbours: addresses that cannot be resolved are refused", "[arp][neighbour]") {
  NeighbourTable t = table();
  for (std::uint32_t ip : {0u, kUs, 0xFFFFFFFFu, 0xE00000FBu, 0x7F000001u, 0x00000005u})
    CHECK(t.start_resolve(ip, kT0) == StartResult::kBadAddress);
  CHECK(t.size() == 0);
}

TEST_CASE("neighbours: a full table refuses new addresses, then reuses failed and expired ones", "[arp][neighbour]") {
  NeighbourTable t = table();
  const std::uint32_t base = 0x0A010000;
  for (std::uint32_t i = 0; i < kNeighbourCapacity; ++i)
    REQUIRE(t.start_resolve(base + i, kT0) == StartResult::kStarted);
  CHECK(t.size() == kNeighbourCapacity);
  CHECK(t.start_resolve(kPeer, kT0) == StartResult::kTableFull);
  // A request for us from a new address is still answered, only not learned.
  const ArpVerdict v = t.on_frame(frame(ArpOp::kRequest, kPeer, kUs), false, kT0);
  CHECK(v.reply);
  CHECK_FALSE(v.learned);
  CHECK(v.ignored == ArpIgnore::kTableFull);
  // Every resolution fails (more due than one call takes: the rest go next call).
  std::uint32_t ips[kNeighbourCapacity];
  unsigned failed = 0, sent = 0, failures = 0;
  for (std::uint64_t now = kT0; now <= kT0 + kArpMaxRequests * kArpRetryIntervalNs; now += kArpRetryIntervalNs) {
    for (int round = 0; round < 4; ++round) {
      sent += t.due_queries(now, ips, 16, failed);
      failures += failed;
    }
  }
  CHECK(sent == kNeighbourCapacity * kArpMaxRequests);
  CHECK(failures == kNeighbourCapacity);
  // A failed entry makes room.
  CHECK(t.start_resolve(kPeer, kT0 + 10 * kArpRetryIntervalNs) == StartResult::kStarted);
  CHECK(t.size() == kNeighbourCapacity);
  // A learned one holds its slot for its lifetime, then gives it up.
  NeighbourTable u = table();
  for (std::uint32_t i = 0; i < kNeighbourCapacity; ++i) {
    ArpFrame f = frame(ArpOp::kRequest, base + i, kUs);
    REQUIRE(u.on_frame(f, false, kT0).learned);
  }
  CHECK(u.start_resolve(kPeer, kT0 + kNeighbourLifetimeNs - 1) == StartResult::kTableFull);
  CHECK(u.start_resolve(kPeer, kT0 + kNeighbourLifetimeNs) == StartResult::kStarted);
}
