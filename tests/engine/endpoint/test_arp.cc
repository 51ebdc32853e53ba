// ARP on the endpoint: two endpoints resolve each other's MAC over the lab's link, a silent
// address fails with words, requests for us are answered, malformed ARP is counted, and the
// RoCE drop counters do not see ARP.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "protocols/arp/arp_frame.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;
using Catch::Matchers::StartsWith;

namespace {

constexpr std::uint64_t kStepNs = 1'000'000;  // each lab poll moves the endpoints' clock 1 ms

LabOptions on_test_clock() {
  LabOptions o;
  o.clock_step_ns = kStepNs;
  return o;
}

// Sends `len` bytes to A as if from the wire (the relay's end of A's link).
void inject_to_a(Lab& lab, const std::uint8_t* frame, std::uint16_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  std::memcpy(rte_pktmbuf_append(m, len), frame, len);
  REQUIRE(rte_eth_tx_burst(lab.left.b->id(), 0, &m, 1) == 1);
}

// Polls A alone (nothing relayed) and returns the ARP frames it sent, parsed.
std::vector<arp::ArpFrame> a_sends(Lab& lab) {
  lab.advance_ns(kStepNs);
  lab.a->poll(lab.now_tsc());
  std::vector<arp::ArpFrame> out;
  rte_mbuf* got[32];
  const std::uint16_t n = rte_eth_rx_burst(lab.left.b->id(), 0, got, 32);
  for (std::uint16_t i = 0; i < n; ++i) {
    arp::ArpFrame f;
    if (arp::parse_arp(rte_pktmbuf_mtod(got[i], const std::uint8_t*), got[i]->data_len, f) == arp::ArpRefusal::kNone)
      out.push_back(f);
    rte_pktmbuf_free(got[i]);
  }
  return out;
}

}  // namespace

TEST_CASE("arp: two endpoints resolve each other's MAC; a silent address fails with words", "[engine][arp]") {
  Lab lab("arpres", on_test_clock());
  const wire::L2L3Address a = addr(1), b = addr(2), nobody = addr(3);
  REQUIRE(lab.a->resolution(b.ip).state == NeighbourResolution::State::kUnknown);
  CHECK(lab.a->resolution(b.ip).status.code() == StatusCode::kNotFound);
  REQUIRE(lab.a->start_resolve(b.ip, lab.now_tsc()).ok());
  REQUIRE(lab.b->start_resolve(a.ip, lab.now_tsc()).ok());
  REQUIRE(lab.a->start_resolve(nobody.ip, lab.now_tsc()).ok());
  CHECK(lab.a->resolution(nobody.ip).state == NeighbourResolution::State::kResolving);
  // Bounded: the silent address fails after 3 requests 1 s apart, i.e. ~3000 polls.
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
  // 3000 ms from the first request to the failure, give or take the TSC's rounding of the
  // test clock's 1 ms step.
  CHECK_THAT(none.status.message(), StartsWith("no ARP reply from 10.0.0.3 after 3 requests in 300"));
  const arp::NeighbourTable* table = lab.a->neighbours().table<ArpProtocol>();
  REQUIRE(table != nullptr);
  CHECK(lab.a->neighbours().table<NdProtocol>() == nullptr);
  const arp::Neighbour* n = table->find(0x0A000003, lab.now_ns());
  REQUIRE(n != nullptr);
  CHECK(n->deadline_ns - n->started_ns >= 3 * arp::kArpRetryIntervalNs);
  CHECK(n->deadline_ns - n->started_ns < 3 * arp::kArpRetryIntervalNs + 2 * kStepNs);

  const EndpointCounters& ca = lab.a->counters();
  const EndpointCounters& cb = lab.b->counters();
  CHECK(ca.arp_requests_sent == 1 + 3);  // one to B, three to nobody
  CHECK(cb.arp_requests_answered == 1);
  // A's request reaches B before B's first poll sends its own, and already teaches B A's MAC
  // (RFC 826's merge): B then has nothing to ask. Whatever B did ask, A answered.
  CHECK(cb.arp_requests_sent <= 1);
  CHECK(ca.arp_requests_answered == cb.arp_requests_sent);
  CHECK(ca.arp_resolve_failures == 1);
  CHECK(cb.arp_resolve_failures == 0);
  // Each learned the other from its request, its reply, or both.
  CHECK(ca.arp_replies_learned + ca.arp_requests_learned >= 1);
  CHECK(cb.arp_replies_learned + cb.arp_requests_learned >= 1);
  CHECK(cb.arp_ignored == 3);  // A's requests for 10.0.0.3
  CHECK(ca.arp_malformed + cb.arp_malformed == 0);
  // ARP is not a RoCE drop.
  CHECK(ca.rx_drops[static_cast<std::size_t>(wire::DropReason::kNotIp)] == 0);
  CHECK(cb.rx_drops[static_cast<std::size_t>(wire::DropReason::kNotIp)] == 0);
  // Asking again starts a new resolution.
  REQUIRE(lab.a->start_resolve(nobody.ip, lab.now_tsc()).ok());
  CHECK(lab.a->resolution(nobody.ip).state == NeighbourResolution::State::kResolving);
}

TEST_CASE("arp: a request for us from a new host is answered and learned; others' are not", "[engine][arp]") {
  Lab lab("arpreq", on_test_clock());
  const arp::ArpSender host{{0x02, 0, 0, 0, 0, 0x09}, 0x0A000009, 0, 0};
  std::uint8_t f[arp::kArpFrameBytes];
  REQUIRE(arp::build_arp_request(host, 0x0A000001, f, sizeof(f)) == sizeof(f));
  inject_to_a(lab, f, sizeof(f));
  std::vector<arp::ArpFrame> sent = a_sends(lab);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].op == arp::ArpOp::kReply);
  CHECK(std::memcmp(sent[0].eth_dst, host.mac, 6) == 0);
  CHECK(sent[0].target_ip == host.ip);
  CHECK(sent[0].sender_ip == 0x0A000001);
  CHECK(std::memcmp(sent[0].sender_mac, addr(1).mac, 6) == 0);
  const std::uint8_t host_ip[4] = {10, 0, 0, 9};
  const NeighbourResolution r = lab.a->resolution(host_ip);
  REQUIRE(r.state == NeighbourResolution::State::kResolved);
  CHECK(std::memcmp(r.mac, host.mac, 6) == 0);
  CHECK(lab.a->counters().arp_requests_answered == 1);
  CHECK(lab.a->counters().arp_requests_learned == 1);

  // A request for another IP: no reply, nothing learned.
  const arp::ArpSender other{{0x02, 0, 0, 0, 0, 0x0A}, 0x0A00000A, 0, 0};
  REQUIRE(arp::build_arp_request(other, 0x0A000002, f, sizeof(f)) == sizeof(f));
  inject_to_a(lab, f, sizeof(f));
  CHECK(a_sends(lab).empty());
  const std::uint8_t other_ip[4] = {10, 0, 0, 10};
  CHECK(lab.a->resolution(other_ip).state == NeighbourResolution::State::kUnknown);
  CHECK(lab.a->counters().arp_ignored == 1);
  CHECK(lab.a->counters().arp_requests_answered == 1);
}

TEST_CASE("arp: malformed ARP is counted apart from other non-IP frames", "[engine][arp][malformed]") {
  Lab lab("arpbad", on_test_clock());
  const arp::ArpSender host{{0x02, 0, 0, 0, 0, 0x09}, 0x0A000009, 0, 0};
  std::uint8_t f[arp::kArpFrameBytes];
  REQUIRE(arp::build_arp_request(host, 0x0A000001, f, sizeof(f)) == sizeof(f));
  f[14 + 4] = 8;  // hardware length 8
  inject_to_a(lab, f, sizeof(f));
  inject_to_a(lab, f, 20);  // ARP ether type, packet cut short
  f[12] = 0x88;             // another ether type altogether
  f[13] = 0xB5;
  inject_to_a(lab, f, sizeof(f));
  CHECK(a_sends(lab).empty());
  CHECK(lab.a->counters().arp_malformed == 2);
  CHECK(lab.a->counters().arp_requests_answered == 0);
  CHECK(lab.a->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kNotIp)] == 1);
}

TEST_CASE("arp: the announcement is a gratuitous ARP; neighbours learn nothing new from it", "[engine][arp]") {
  Lab lab("arpann", on_test_clock());
  REQUIRE(lab.a->announce().ok());
  const std::vector<arp::ArpFrame> sent = a_sends(lab);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].op == arp::ArpOp::kRequest);
  CHECK(sent[0].sender_ip == 0x0A000001);
  CHECK(sent[0].target_ip == 0x0A000001);
  CHECK(sent[0].eth_dst[0] == 0xFF);
  CHECK(lab.a->counters().arp_announcements_sent == 1);
  // B sees one and, holding no entry for A, learns nothing (the frame is not addressed to it).
  REQUIRE(lab.a->announce().ok());
  for (int i = 0; i < 4; ++i) lab.poll();
  CHECK(lab.b->counters().arp_ignored == 1);
  CHECK(lab.b->resolution(addr(1).ip).state == NeighbourResolution::State::kUnknown);
}

TEST_CASE("arp: addresses that name no neighbour are refused; an IPv6 endpoint speaks no ARP", "[engine][arp]") {
  Lab lab("arpinv", on_test_clock());
  const std::uint8_t ours[4] = {10, 0, 0, 1}, zero[4] = {}, bcast[4] = {255, 255, 255, 255};
  for (const std::uint8_t* ip : {ours, zero, bcast})
    CHECK(lab.a->start_resolve(ip).code() == StatusCode::kInvalidArgument);
  // The same calls on an IPv6 endpoint resolve and announce by Neighbor Discovery, never by ARP.
  LabOptions v6 = on_test_clock();
  v6.ipv6 = true;
  Lab lab6("arpv6", v6);
  const wire::L2L3Address peer = addr(2, true);
  REQUIRE(lab6.a->start_resolve(peer.ip, lab6.now_tsc()).ok());
  REQUIRE(lab6.a->announce().ok());
  lab6.poll();
  CHECK(lab6.a->neighbours().table<ArpProtocol>() == nullptr);
  const EndpointCounters& c = lab6.a->counters();
  CHECK(c.nd_solicitations_sent == 1);
  CHECK(c.nd_announcements_sent == 1);
  CHECK(c.arp_requests_sent == 0);
  CHECK(c.arp_announcements_sent == 0);
}
