// IPv6 Neighbor Discovery on the endpoint: two IPv6 endpoints resolve each other's MAC over the
// lab's link (solicitations to the solicited-node group's MAC, on ports that are not
// promiscuous), a silent address fails with words, solicitations for us are answered, DAD
// probes are answered to all nodes, malformed NS/NA are counted and ignored, and the RoCE drop
// counters see neither (while other ICMPv6 still counts as not_udp).
#include <rte_ip.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "protocols/nd/nd_frame.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;
using Catch::Matchers::StartsWith;

namespace {

constexpr std::uint64_t kStepNs = 1'000'000;  // each lab poll moves the endpoints' clock 1 ms

LabOptions v6_on_test_clock() {
  LabOptions o;
  o.clock_step_ns = kStepNs;
  o.ipv6 = true;
  return o;
}

std::size_t drops(const Lab& lab, wire::DropReason r, bool a = true) {
  return (a ? lab.a : lab.b)->counters().rx_drops[static_cast<std::size_t>(r)];
}

// Sends `len` bytes to A as if from the wire (the relay's end of A's link).
void inject_to_a(Lab& lab, const std::uint8_t* frame, std::uint32_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)), frame, len);
  REQUIRE(rte_eth_tx_burst(lab.left.b->id(), 0, &m, 1) == 1);
}

// Polls A alone (nothing relayed) and returns the ND frames it sent, parsed.
std::vector<nd::NdFrame> a_sends(Lab& lab) {
  lab.advance_ns(kStepNs);
  lab.a->poll(lab.now_tsc());
  std::vector<nd::NdFrame> out;
  rte_mbuf* got[32];
  const std::uint16_t n = rte_eth_rx_burst(lab.left.b->id(), 0, got, 32);
  for (std::uint16_t i = 0; i < n; ++i) {
    nd::NdFrame f;
    if (nd::parse_nd(rte_pktmbuf_mtod(got[i], const std::uint8_t*), got[i]->data_len, f) == nd::NdRefusal::kNone)
      out.push_back(f);
    rte_pktmbuf_free(got[i]);
  }
  return out;
}

// A host on A's link: fd00::9 at 02:00:00:00:00:09.
nd::NdSender host(std::uint8_t last = 9) {
  nd::NdSender s;
  s.mac[0] = 0x02;
  s.mac[5] = last;
  s.ip[0] = 0xfd;
  s.ip[15] = last;
  return s;
}

// After an edit: the ICMPv6 checksum again (untagged frame), so that only the edited rule breaks.
void reseal(std::uint8_t* f) {
  auto* ip = reinterpret_cast<rte_ipv6_hdr*>(f + 14);
  f[54 + 2] = f[54 + 3] = 0;
  const std::uint16_t sum = rte_ipv6_udptcp_cksum(ip, f + 54);
  std::memcpy(f + 54 + 2, &sum, 2);
}

}  // namespace

TEST_CASE("nd: two IPv6 endpoints resolve each other's MAC; a silent address fails with words", "[engine][nd]") {
  Lab lab("ndres", v6_on_test_clock());
  const wire::L2L3Address a = addr(1, true), b = addr(2, true), nobody = addr(3, true);
  REQUIRE(lab.a->resolution(b.ip).state == NeighbourResolution::State::kUnknown);
  CHECK(lab.a->resolution(b.ip).status.code() == StatusCode::kNotFound);
  REQUIRE(lab.a->start_resolve(b.ip, lab.now_tsc()).ok());
  REQUIRE(lab.b->start_resolve(a.ip, lab.now_tsc()).ok());
  REQUIRE(lab.a->start_resolve(nobody.ip, lab.now_tsc()).ok());
  CHECK(lab.a->resolution(nobody.ip).state == NeighbourResolution::State::kResolving);
  // Bounded: the silent address fails after 3 solicitations 1 s apart, i.e. ~3000 polls.
  int polls = 0;
  for (; polls < 5000 && lab.a->resolution(nobody.ip).state != NeighbourResolution::State::kFailed; ++polls) lab.poll();
  INFO("polls " << polls);
  const NeighbourResolution ab = lab.a->resolution(b.ip);
  REQUIRE(ab.state == NeighbourResolution::State::kResolved);
  CHECK(ab.status.ok());
  CHECK(std::memcmp(ab.mac, b.mac, 6) == 0);
  const NeighbourResolution ba = lab.b->resolution(a.ip);
  REQUIRE(ba.state == NeighbourResolution::State::kResolved);
  CHECK(std::memcmp(ba.mac, a.mac, 6) == 0);

  const NeighbourResolution none = lab.a->resolution(nobody.ip);
  REQUIRE(none.state == NeighbourResolution::State::kFailed);
  CHECK(none.status.code() == StatusCode::kTimeout);
  CHECK_THAT(none.status.message(), StartsWith("no Neighbor Advertisement from fd00::3 after 3 solicitations in 300"));

  const EndpointCounters& ca = lab.a->counters();
  const EndpointCounters& cb = lab.b->counters();
  CHECK(ca.nd_solicitations_sent == 1 + 3);  // one to B, three to nobody
  CHECK(cb.nd_solicitations_answered == 1);
  CHECK(cb.nd_solicitations_sent <= 1);  // A's solicitation may have taught B already
  CHECK(ca.nd_solicitations_answered == cb.nd_solicitations_sent);
  CHECK(ca.nd_resolve_failures == 1);
  CHECK(cb.nd_resolve_failures == 0);
  CHECK(ca.nd_advertisements_learned + ca.nd_solicitations_learned >= 1);
  CHECK(cb.nd_advertisements_learned + cb.nd_solicitations_learned >= 1);
  // B's port is not promiscuous: A's solicitations for fd00::3 go to fd00::3's group MAC,
  // which is not B's, and are ignored by that rule.
  CHECK(cb.nd_ignored == 3);
  CHECK(ca.nd_malformed + cb.nd_malformed == 0);
  // ND is not a RoCE drop.
  CHECK(drops(lab, wire::DropReason::kNotUdp) == 0);
  CHECK(drops(lab, wire::DropReason::kNotUdp, false) == 0);
  // ARP stays out of an IPv6 endpoint's way.
  CHECK(ca.arp_requests_sent + cb.arp_requests_sent == 0);
  // Asking again starts a new resolution.
  REQUIRE(lab.a->start_resolve(nobody.ip, lab.now_tsc()).ok());
  CHECK(lab.a->resolution(nobody.ip).state == NeighbourResolution::State::kResolving);
}

TEST_CASE("nd: a solicitation for us from a new host is answered and learned; others' are not", "[engine][nd]") {
  Lab lab("ndreq", v6_on_test_clock());
  const nd::NdSender h = host();
  std::uint8_t f[nd::kNdFrameBytes];
  const std::uint32_t n = nd::build_ns(h, addr(1, true).ip, f, sizeof(f));
  REQUIRE(n == 86);
  inject_to_a(lab, f, n);
  std::vector<nd::NdFrame> sent = a_sends(lab);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].type == nd::NdType::kAdvertisement);
  CHECK(sent[0].solicited);
  CHECK(sent[0].override_flag);
  CHECK(std::memcmp(sent[0].eth_dst, h.mac, 6) == 0);
  CHECK(std::memcmp(sent[0].ip_dst, h.ip, 16) == 0);
  CHECK(std::memcmp(sent[0].target, addr(1, true).ip, 16) == 0);
  REQUIRE(sent[0].has_link_addr);
  CHECK(std::memcmp(sent[0].link_addr, addr(1).mac, 6) == 0);
  const NeighbourResolution r = lab.a->resolution(h.ip);
  REQUIRE(r.state == NeighbourResolution::State::kResolved);
  CHECK(std::memcmp(r.mac, h.mac, 6) == 0);
  CHECK(lab.a->counters().nd_solicitations_answered == 1);
  CHECK(lab.a->counters().nd_solicitations_learned == 1);

  // A solicitation for another target, sent to our group's MAC: no answer, nothing learned.
  const nd::NdSender other = host(10);
  std::uint8_t target[16] = {0xfd};
  target[14] = 7;
  target[15] = 1;  // fd00::701, not ours
  REQUIRE(nd::build_ns(other, target, f, sizeof(f)) == 86);
  std::uint8_t group[16];
  nd::solicited_node(addr(1, true).ip, group);
  nd::multicast_mac(group, f);  // to our group's MAC, so that the target rule is the one that acts
  inject_to_a(lab, f, 86);
  CHECK(a_sends(lab).empty());
  CHECK(lab.a->resolution(other.ip).state == NeighbourResolution::State::kUnknown);
  CHECK(lab.a->counters().nd_ignored == 1);
  CHECK(lab.a->counters().nd_solicitations_answered == 1);
}

TEST_CASE("nd: a DAD probe for our address is answered to all nodes", "[engine][nd]") {
  Lab lab("nddad", v6_on_test_clock());
  nd::NdSender prober = host();
  std::memset(prober.ip, 0, 16);
  std::uint8_t f[nd::kNdFrameBytes];
  REQUIRE(nd::build_ns(prober, addr(1, true).ip, f, sizeof(f)) == 86);
  // RFC 4862 §5.4.2: the probe carries no source link-layer option: cut it off.
  f[14 + 5] = 24;  // payload length
  reseal(f);
  inject_to_a(lab, f, 78);
  const std::vector<nd::NdFrame> sent = a_sends(lab);
  REQUIRE(sent.size() == 1);
  CHECK_FALSE(sent[0].solicited);
  CHECK(std::memcmp(sent[0].ip_dst, nd::kAllNodes, 16) == 0);
  CHECK(sent[0].eth_dst[0] == 0x33);
  CHECK(lab.a->neighbours().size() == 0);
}

TEST_CASE("nd: malformed NS/NA are counted and ignored; other ICMPv6 stays a not_udp drop", "[engine][nd][malformed]") {
  Lab lab("ndbad", v6_on_test_clock());
  const nd::NdSender h = host();
  std::uint8_t good[nd::kNdFrameBytes];
  REQUIRE(nd::build_ns(h, addr(1, true).ip, good, sizeof(good)) == 86);
  std::uint8_t f[nd::kNdFrameBytes];
  std::memcpy(f, good, 86);
  f[14 + 7] = 64;  // hop limit: forwarded by a router
  inject_to_a(lab, f, 86);
  std::memcpy(f, good, 86);
  f[54 + 3] ^= 0x55;  // checksum
  inject_to_a(lab, f, 86);
  std::memcpy(f, good, 86);
  f[78 + 1] = 0;  // option of length 0
  reseal(f);
  inject_to_a(lab, f, 86);
  std::memcpy(f, good, 86);
  f[54 + 8] = 0xff;  // multicast target
  reseal(f);
  inject_to_a(lab, f, 86);
  std::memcpy(f, good, 86);
  f[54] = 128;  // an echo request: ICMPv6, not ND
  reseal(f);
  inject_to_a(lab, f, 86);
  CHECK(a_sends(lab).empty());
  CHECK(lab.a->counters().nd_malformed == 4);
  CHECK(lab.a->counters().nd_solicitations_answered == 0);
  CHECK(lab.a->neighbours().size() == 0);
  CHECK(drops(lab, wire::DropReason::kNotUdp) == 1);
}

TEST_CASE("nd: the announcement is an unsolicited NA to all nodes; neighbours learn nothing new", "[engine][nd]") {
  Lab lab("ndann", v6_on_test_clock());
  REQUIRE(lab.a->announce().ok());
  const std::vector<nd::NdFrame> sent = a_sends(lab);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].type == nd::NdType::kAdvertisement);
  CHECK_FALSE(sent[0].solicited);
  CHECK(sent[0].override_flag);
  CHECK(std::memcmp(sent[0].target, addr(1, true).ip, 16) == 0);
  CHECK(std::memcmp(sent[0].ip_dst, nd::kAllNodes, 16) == 0);
  CHECK(lab.a->counters().nd_announcements_sent == 1);
  // B holds no entry for A: the advertisement is one it did not ask for (§7.2.5).
  REQUIRE(lab.a->announce().ok());
  for (int i = 0; i < 4; ++i) lab.poll();
  CHECK(lab.b->counters().nd_ignored == 1);
  CHECK(lab.b->resolution(addr(1, true).ip).state == NeighbourResolution::State::kUnknown);
}

TEST_CASE("nd: addresses that name no neighbour are refused; an IPv4 endpoint speaks no ND", "[engine][nd]") {
  Lab lab("ndinv", v6_on_test_clock());
  const std::uint8_t zero[16] = {};
  std::uint8_t group[16] = {0xff, 0x02};
  group[15] = 1;
  const wire::L2L3Address ours = addr(1, true);
  for (const std::uint8_t* ip : std::initializer_list<const std::uint8_t*>{ours.ip, zero, group})
    CHECK(lab.a->start_resolve(ip).code() == StatusCode::kInvalidArgument);
  // The same calls on an IPv4 endpoint resolve and announce by ARP, never by Neighbor Discovery.
  LabOptions v4;
  v4.clock_step_ns = kStepNs;
  Lab lab4("ndv4", v4);
  REQUIRE(lab4.a->start_resolve(addr(2).ip, lab4.now_tsc()).ok());
  REQUIRE(lab4.a->announce().ok());
  lab4.poll();
  CHECK(lab4.a->neighbours().table<NdProtocol>() == nullptr);
  const EndpointCounters& c = lab4.a->counters();
  CHECK(c.arp_requests_sent == 1);
  CHECK(c.arp_announcements_sent == 1);
  CHECK(c.nd_solicitations_sent == 0);
  CHECK(c.nd_announcements_sent == 0);
}
