// apps::PeerMac over the engine's lab link: an IPv6 GID is resolved by Neighbor Discovery on an
// IPv6 endpoint, an IPv4-mapped one by ARP on an IPv4 endpoint, a silent IPv6 peer fails with the
// engine's words and the --peer-mac hint, and a GID of the other family is refused with words.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "apps/common/peer_mac.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

LabOptions lab_options(bool ipv6) {
  LabOptions o;
  o.clock_step_ns = 1'000'000;  // each poll moves the endpoints' clock 1 ms
  o.ipv6 = ipv6;
  return o;
}

// The GID a peer at addr(host) sends in the exchange.
void gid_of(std::uint8_t host, bool ipv6, std::uint8_t gid[16]) {
  std::memset(gid, 0, 16);
  const wire::L2L3Address a = addr(host, ipv6);
  if (ipv6) {
    std::memcpy(gid, a.ip, 16);
  } else {
    gid[10] = gid[11] = 0xFF;
    std::memcpy(gid + 12, a.ip, 4);
  }
}

}  // namespace

TEST_CASE("peer_mac: an IPv6 GID is resolved by Neighbor Discovery", "[apps][peer_mac][nd]") {
  Lab lab("pmv6", lab_options(true));
  apps::PeerMac pm("", *lab.a, [&lab] { lab.poll(); });
  CHECK(pm.by_arp());
  pm.announce();
  std::uint8_t gid[16], mac[6] = {};
  gid_of(2, true, gid);
  const Status s = pm.of_gid(gid, 0, mac);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(std::memcmp(mac, addr(2).mac, 6) == 0);
  CHECK(lab.a->counters().nd_announcements_sent == 1);
  CHECK(lab.a->counters().arp_announcements_sent == 0);
  CHECK(lab.b->counters().nd_solicitations_answered == 1);
}

TEST_CASE("peer_mac: a silent IPv6 peer fails with the engine's words and the hint", "[apps][peer_mac][nd]") {
  Lab lab("pmv6f", lab_options(true));
  apps::PeerMac pm("", *lab.a, [&lab] { lab.poll(); });
  std::uint8_t gid[16], mac[6] = {};
  gid_of(3, true, gid);
  const Status s = pm.of_gid(gid, 0, mac);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kTimeout);
  CHECK_THAT(s.message(), StartsWith("no Neighbor Advertisement from fd00::3 after 3 solicitations in "));
  CHECK_THAT(s.message(), Contains("a peer that does not answer Neighbor Discovery needs --peer-mac"));
}

TEST_CASE("peer_mac: an IPv4-mapped GID is resolved by ARP; a GID of the other family is refused",
          "[apps][peer_mac][arp]") {
  Lab lab("pmv4", lab_options(false));
  apps::PeerMac pm("", *lab.a, [&lab] { lab.poll(); });
  std::uint8_t gid[16], mac[6] = {};
  gid_of(2, false, gid);
  REQUIRE(pm.of_gid(gid, 0, mac).ok());
  CHECK(std::memcmp(mac, addr(2).mac, 6) == 0);
  gid_of(2, true, gid);
  const Status s = pm.of_gid(gid, 0, mac);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK_THAT(s.message(), Contains("fd00::2 is an IPv6 address"));
  CHECK_THAT(s.message(), Contains("--peer-mac is required"));

  Lab lab6("pmv6x", lab_options(true));
  apps::PeerMac pm6("", *lab6.a, [&lab6] { lab6.poll(); });
  gid_of(2, false, gid);
  CHECK(pm6.of_gid(gid, 0, mac).code() == StatusCode::kUnsupported);
  // Given: used as is, whatever the family, no neighbour traffic.
  apps::PeerMac given("02:00:00:00:00:77", *lab6.a, [&lab6] { lab6.poll(); });
  gid_of(2, true, gid);
  REQUIRE(given.of_gid(gid, 0, mac).ok());
  CHECK(mac[5] == 0x77);
  CHECK(lab6.a->counters().nd_solicitations_sent == 0);
}

TEST_CASE("peer_mac: a round that goes unanswered is said, with what the endpoint and its port saw",
          "[apps][peer_mac][nd]") {
  Lab lab("pmv6r", lab_options(true));
  // B is not polled (and the link not pumped) until A's first round has failed: its solicitations
  // wait in the link, and B answers them in A's second round.
  bool b_on = false;
  apps::PeerMac pm("", *lab.a, [&] {
    lab.clock_tsc += lab.step_tsc;
    lab.a->poll(lab.now_tsc());
    if (!b_on) return;
    lab.relay.poll();
    lab.b->poll(lab.now_tsc());
    lab.relay.poll();
  });
  std::vector<std::string> notes;
  pm.set_note([&](const std::string& line) {
    notes.push_back(line);
    b_on = true;
  });
  std::uint8_t gid[16], mac[6] = {};
  gid_of(2, true, gid);
  const Status s = pm.of_gid(gid, 60000, mac);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(std::memcmp(mac, addr(2).mac, 6) == 0);
  REQUIRE(notes.size() == 2);
  CHECK_THAT(notes[0], StartsWith("Neighbor Discovery of fd00::2, round 1: no Neighbor Advertisement from fd00::2 "
                                  "after 3 solicitations in "));
  CHECK_THAT(notes[0], Contains(" of 60000 ms spent); this endpoint so far: 3 solicitations sent, 0 advertisements "
                                "learned, 0 of the peer's solicitations answered, 0 ND frames ignored, 0 malformed, 0 "
                                "not sent (no mbuf or TX room); port "));
  CHECK_THAT(notes[0], Contains(" 0 frames in (0 missed, 0 without an mbuf, 0 errors), 3 out (0 errors)"));
  CHECK_THAT(notes[1], StartsWith("Neighbor Discovery of fd00::2 answered in round 2, "));
  // The three solicitations that waited in the link and the fourth, each answered and each answer learned.
  CHECK_THAT(notes[1], Contains("this endpoint so far: 4 solicitations sent, 4 advertisements learned"));
}
