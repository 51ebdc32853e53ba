// LeafSpine with raw RoCEv2-shaped frames (no endpoints): every endpoint reaches every other over
// IPv4 and IPv6, a flow keeps one spine, distinct source ports land on the spines the hash picks,
// and two flows forced onto one hash value share one uplink while the others stay idle.
#include <rte_cycles.h>

#include <catch2/catch.hpp>
#include <set>

#include "engine/lab/leaf_spine.h"
#include "protocols/wire/pfc.h"
#include "tests/engine/lab/frames_udp.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;

namespace {

std::uint32_t ip4(std::uint32_t i) { return 0x0A000000u | (i + 1); }  // 10.0.0.(i+1)

std::array<std::uint8_t, 16> ip6(std::uint32_t i) {
  std::array<std::uint8_t, 16> a{};
  a[0] = 0xFD;
  a[15] = static_cast<std::uint8_t>(i + 1);
  return a;
}

LeafSpineConfig config(std::uint32_t leaves, std::uint32_t spines, std::uint32_t per_leaf) {
  LeafSpineConfig c;
  c.leaves = leaves;
  c.spines = spines;
  c.endpoints_per_leaf = per_leaf;
  for (std::uint32_t i = 0; i < c.endpoints(); ++i) {
    c.ipv4.push_back(ip4(i));
    c.ipv6.push_back(ip6(i));
  }
  c.pool = test::pool().get();
  return c;
}

void send(LeafSpine& f, std::uint32_t from, const std::vector<std::uint8_t>& frame) {
  rte_mbuf* m = rte_pktmbuf_alloc(test::pool().get());
  REQUIRE(m != nullptr);
  auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(frame.size())));
  REQUIRE(d != nullptr);
  std::memcpy(d, frame.data(), frame.size());
  REQUIRE(f.endpoint_end(from).send(&m, 1) == 1);
}

// Polls the fabric until `expected` frames reached endpoints (bounded: unshaped switches forward
// within a few rounds), and returns what each endpoint received, freeing the frames.
std::vector<std::uint32_t> deliver(LeafSpine& f, std::uint32_t endpoints, std::uint32_t expected) {
  std::vector<std::uint32_t> got(endpoints, 0);
  std::uint32_t total = 0;
  for (int round = 0; round < 10'000 && total < expected; ++round) {
    f.poll(rte_get_tsc_cycles());
    for (std::uint32_t i = 0; i < endpoints; ++i) {
      rte_mbuf* pkts[32];
      const std::uint16_t n = f.endpoint_end(i).receive(pkts, 32);
      got[i] += n;
      total += n;
      rte_pktmbuf_free_bulk(pkts, n);
    }
  }
  return got;
}

std::uint64_t sum_up(const std::vector<FabricLinkCounters>& links, std::uint32_t leaf, std::uint32_t spine) {
  for (const auto& l : links)
    if (l.leaf == leaf && l.spine == spine) return l.up.tx_frames;
  return 0;
}

}  // namespace

TEST_CASE("leaf-spine: every endpoint reaches every other, IPv4 and IPv6, nothing flooded", "[lab][leafspine]") {
  const LeafSpineConfig c = config(3, 2, 2);
  Status err;
  auto f = LeafSpine::create(c, err);
  INFO(err.message());
  REQUIRE(f);
  const std::uint32_t n = c.endpoints();
  for (std::uint32_t a = 0; a < n; ++a)
    for (std::uint32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      send(*f, a, test::udp4_frame(ip4(a), ip4(b), 49152));
      send(*f, a, test::udp6_frame(ip6(a), ip6(b), 49152));
      const auto got = deliver(*f, n, 2);
      for (std::uint32_t i = 0; i < n; ++i) CHECK(got[i] == (i == b ? 2u : 0u));
    }
  // Frames between leaves crossed one spine each: every uplink frame came down again.
  std::uint64_t up = 0, down = 0;
  for (const auto& l : f->fabric_links()) {
    CHECK(l.name == "leaf" + std::to_string(l.leaf) + "-spine" + std::to_string(l.spine));
    up += l.up.tx_frames;
    down += l.down.tx_frames;
  }
  // Pairs on different leaves: n * (n - endpoints_per_leaf), two frames each.
  CHECK(up == 2u * n * (n - c.endpoints_per_leaf));
  CHECK(down == up);
  for (std::uint32_t l = 0; l < c.leaves; ++l)
    for (std::size_t p = 0; p < f->leaf(l).ports(); ++p) {
      CHECK(f->leaf(l).counters(p).flooded == 0);
      CHECK(f->leaf(l).counters(p).unrouted == 0);
    }
  // A frame to an address no endpoint has is dropped and counted, not flooded.
  send(*f, 0, test::udp4_frame(ip4(0), 0x0B000001, 1));
  deliver(*f, n, 1);
  CHECK(f->endpoint_port(0).unrouted == 1);
}

TEST_CASE("leaf-spine ECMP: a flow keeps its spine, source ports spread as the hash picks", "[lab][leafspine]") {
  LeafSpineConfig c = config(2, 4, 1);
  Status err;
  auto f = LeafSpine::create(c, err);
  INFO(err.message());
  REQUIRE(f);
  // One flow, 50 frames: one uplink carries all of them.
  for (int k = 0; k < 50; ++k) send(*f, 0, test::udp4_frame(ip4(0), ip4(1), 50000));
  CHECK(deliver(*f, 2, 50)[1] == 50);
  std::uint32_t used = 0;
  for (const auto& l : f->fabric_links())
    if (l.leaf == 0 && l.up.tx_frames != 0) {
      ++used;
      CHECK(l.up.tx_frames == 50);
    }
  CHECK(used == 1);

  // 64 source ports, one frame each: each uplink carries what the hash predicts, and more than
  // one spine is used.
  auto g = LeafSpine::create(c, err);
  REQUIRE(g);
  std::vector<std::uint64_t> predicted(c.spines, 0);
  for (std::uint16_t sport = 49152; sport < 49152 + 64; ++sport) {
    const auto frame = test::udp4_frame(ip4(0), ip4(1), sport);
    FlowKey k;
    REQUIRE(flow_key_of(frame.data(), static_cast<std::uint32_t>(frame.size()), k));
    ++predicted[g->spine_of(k)];
    send(*g, 0, frame);
  }
  CHECK(deliver(*g, 2, 64)[1] == 64);
  const auto links = g->fabric_links();
  std::set<std::uint32_t> spines_used;
  for (std::uint32_t s = 0; s < c.spines; ++s) {
    CHECK(sum_up(links, 0, s) == predicted[s]);
    if (predicted[s] != 0) spines_used.insert(s);
  }
  CHECK(spines_used.size() > 1);
}

TEST_CASE("leaf-spine ECMP: a forced collision shows on one uplink's counters", "[lab][leafspine]") {
  LeafSpineConfig c = config(2, 2, 2);
  Status err;
  // Two flows, endpoints 0 -> 2 and 1 -> 3, made to collide: with only the destination port
  // hashed, every RoCEv2 flow has one hash value.
  REQUIRE(EcmpHashConfig::parse("dst-port", c.ecmp).ok());
  auto f = LeafSpine::create(c, err);
  INFO(err.message());
  REQUIRE(f);
  for (int k = 0; k < 40; ++k) {
    send(*f, 0, test::udp4_frame(ip4(0), ip4(2), static_cast<std::uint16_t>(49152 + k)));
    send(*f, 1, test::udp6_frame(ip6(1), ip6(3), static_cast<std::uint16_t>(50000 + k)));
  }
  const auto got = deliver(*f, 4, 80);
  CHECK(got[2] == 40);
  CHECK(got[3] == 40);
  const auto links = f->fabric_links();
  const std::uint64_t s0 = sum_up(links, 0, 0), s1 = sum_up(links, 0, 1);
  CHECK(s0 + s1 == 80);
  CHECK((s0 == 0 || s1 == 0));  // all on one uplink, the other idle

  // The same traffic with the source port hashed (the default 5-tuple) uses both uplinks.
  c.ecmp = EcmpHashConfig{};
  auto g = LeafSpine::create(c, err);
  REQUIRE(g);
  for (int k = 0; k < 40; ++k) {
    send(*g, 0, test::udp4_frame(ip4(0), ip4(2), static_cast<std::uint16_t>(49152 + k)));
    send(*g, 1, test::udp6_frame(ip6(1), ip6(3), static_cast<std::uint16_t>(50000 + k)));
  }
  deliver(*g, 4, 80);
  const auto spread = g->fabric_links();
  CHECK(sum_up(spread, 0, 0) > 0);
  CHECK(sum_up(spread, 0, 1) > 0);
}

TEST_CASE("leaf-spine: a shaped uplink with a small buffer tail-drops on its own counters", "[lab][leafspine]") {
  LeafSpineConfig c = config(2, 2, 1);
  REQUIRE(EcmpHashConfig::parse("src-ip,dst-ip", c.ecmp).ok());  // every 0 -> 1 frame on one spine
  const auto probe = test::udp4_frame(ip4(0), ip4(1), 1, 1000);
  FlowKey k;
  REQUIRE(flow_key_of(probe.data(), static_cast<std::uint32_t>(probe.size()), k));
  const std::uint32_t spine = ecmp_pick(k, c.ecmp, c.spines);
  // That uplink only: 1 Mb/s and 4 KB of buffer; the rest unshaped with the default buffer.
  c.uplinks.assign(std::size_t{c.leaves} * c.spines, LinkQueueParams{});
  c.uplinks[spine] = LinkQueueParams{0.001, 4096, {}};
  Status err;
  auto f = LeafSpine::create(c, err);
  INFO(err.message());
  REQUIRE(f);
  for (int i = 0; i < 40; ++i) send(*f, 0, probe);
  for (int round = 0; round < 100; ++round) f->poll(rte_get_tsc_cycles());
  for (const auto& l : f->fabric_links()) {
    if (l.leaf != 0) continue;
    if (l.spine == spine) {
      CHECK(l.up.rx_frames == 0);  // the uplink port received nothing back
      CHECK(l.up.tail_drops > 0);  // 40 frames of 1 KB overflow 4 KB draining at 1 Mb/s
      CHECK(l.up.queue_max_bytes <= 4096);
      CHECK(l.up.tail_drops + l.up.tx_frames + l.up.queue_frames == 40);
    } else {
      CHECK(l.up.tx_frames == 0);
      CHECK(l.up.tail_drops == 0);
    }
  }
  f->finish();
}

TEST_CASE("leaf-spine: bad configurations are refused with a reason", "[lab][leafspine]") {
  Status err;
  LeafSpineConfig c = config(2, 2, 1);
  c.ipv4.pop_back();
  CHECK(!LeafSpine::create(c, err));
  CHECK(err.code() == StatusCode::kInvalidArgument);
  c = config(2, 2, 1);
  c.ipv4[1] = c.ipv4[0];
  CHECK(!LeafSpine::create(c, err));
  CHECK(err.message().find("share") != std::string::npos);
  c = config(2, 0, 1);
  CHECK(!LeafSpine::create(c, err));
  c = config(2, 2, 1);
  c.uplinks.resize(3);
  CHECK(!LeafSpine::create(c, err));
}

TEST_CASE("leaf-spine: a spine's PFC pauses the leaf's uplink, nothing dropped", "[lab][leafspine][pfc]") {
  LeafSpineConfig c = config(2, 1, 1);
  // The spine's port towards leaf 1 drains at 1 Mb/s: what leaf 0 sends piles up in the spine,
  // whose ingress from leaf 0 passes XOFF and pauses leaf 0's uplink (802.1Qbb, priority 3: the
  // test frames' DSCP 26).
  c.downlinks = {LinkQueueParams{}, LinkQueueParams{0.001, 0, {}}};
  c.spine.pfc = true;
  c.spine.pfc_xoff_bytes = 8'000;
  c.spine.pfc_xon_bytes = 4'000;
  c.spine.buffer_bytes = 100'000;
  Status err;
  auto f = LeafSpine::create(c, err);
  INFO(err.message());
  REQUIRE(f);
  for (int i = 0; i < 40; ++i) send(*f, 0, test::udp4_frame(ip4(0), ip4(1), 7, 1000));
  // The fabric on a clock of its own, 1 us a round: 200 us, well inside one pause (65535 quanta,
  // 3.4 ms at 10 Gb/s). On the host's clock, 200 polls under ASan on a loaded host outlasted the
  // pause, leaf 0 sent on, and no frame was left waiting in it: the result depended on the polling.
  const std::uint64_t t0 = rte_get_tsc_cycles(), us = rte_get_tsc_hz() / 1'000'000;
  for (std::uint64_t round = 0; round < 200; ++round) f->poll(t0 + round * us);
  const auto links = f->fabric_links();
  REQUIRE(links.size() == 2);
  const FabricLinkCounters& l0 = links[0];  // leaf0-spine0
  const FabricLinkCounters& l1 = links[1];  // leaf1-spine0
  CHECK(f->spine(0).counters(0).pfc_pause_sent > 0);
  CHECK(l0.up.pfc_pause_received > 0);
  CHECK(l0.up.queue_frames > 0);  // the rest wait in leaf 0, paused
  CHECK(l1.down.tail_drops == 0);
  CHECK(l0.up.tail_drops == 0);
  CHECK(l0.up.tx_frames + l0.up.queue_frames == 40);
  f->finish();
}

namespace {

// A stuck NIC on the leaf-spine (LeafSpineConfig::stuck_endpoints), on the fabric's own clock (1 us
// a round). 2 leaves of 2 endpoints, 1 spine, PFC everywhere (XOFF 8 KB): endpoint 2 (leaf 1)
// sends 60 frames of 1000 bytes to endpoint 0, whose NIC pauses forever; then endpoint 3 (leaf 1)
// sends 20 to endpoint 1 (leaf 0), a flow that never meets the stuck port. Endpoints here inject
// without honouring pauses: what is measured is the switches'.
struct StuckStorm {
  std::unique_ptr<LeafSpine> f;
  std::uint32_t innocent_received = 0, storm_received = 0;
  std::uint32_t pauses_to_sender = 0;  // PFC XOFF frames leaf 1 sent endpoint 2

  explicit StuckStorm(double watchdog_ms, std::uint64_t rounds) {
    LeafSpineConfig c = config(2, 1, 2);
    for (LabSwitchConfig* t : {&c.leaf, &c.spine}) {
      t->pfc = true;
      t->pfc_xoff_bytes = 8'000;
      t->pfc_xon_bytes = 4'000;
      t->buffer_bytes = 200'000;
      t->pfc_watchdog_ms = watchdog_ms;
    }
    c.stuck_endpoints = {0};
    Status err;
    f = LeafSpine::create(c, err);
    INFO(err.message());
    REQUIRE(f);
    const std::uint64_t t0 = rte_get_tsc_cycles(), us = rte_get_tsc_hz() / 1'000'000;
    for (std::uint64_t round = 0; round < rounds; ++round) {
      if (round < 60) send(*f, 2, test::udp4_frame(ip4(2), ip4(0), 7, 1000));
      if (round >= 100 && round < 120) send(*f, 3, test::udp4_frame(ip4(3), ip4(1), 9, 1000));
      f->poll(t0 + round * us);
      for (std::uint32_t i = 0; i < 4; ++i) {
        rte_mbuf* pkts[32];
        const std::uint16_t n = f->endpoint_end(i).receive(pkts, 32);
        for (std::uint16_t k = 0; k < n; ++k) {
          wire::PfcFrame pfc;
          const auto* d = rte_pktmbuf_mtod(pkts[k], const std::uint8_t*);
          if (wire::parse_pfc(d, rte_pktmbuf_data_len(pkts[k]), pfc)) {
            if (i == 2 && (pfc.class_enable & (1u << 3)) != 0 && pfc.quanta[3] != 0) ++pauses_to_sender;
          } else if (i == 1) {
            ++innocent_received;
          } else if (i == 0) {
            ++storm_received;
          }
        }
        rte_pktmbuf_free_bulk(pkts, n);
      }
    }
  }
  ~StuckStorm() { f->finish(); }
};

}  // namespace

TEST_CASE("leaf-spine: a stuck NIC's pauses spread to the spine and the other leaf's hosts", "[lab][leafspine][pfc]") {
  StuckStorm s(0, 3'000);
  const FabricLinkCounters l0 = s.f->fabric_links()[0], l1 = s.f->fabric_links()[1];
  CHECK(s.storm_received == 0);                                 // the stuck NIC drains nothing
  CHECK(s.f->leaf(0).counters(0).prio_pause_received[3] == 1);  // one endless pause, counted once
  CHECK(l0.up.pfc_pause_sent > 0);                              // leaf 0 paused the spine ...
  CHECK(l0.down.pfc_pause_received > 0);
  CHECK(l1.down.pfc_pause_sent > 0);  // ... the spine paused leaf 1 ...
  CHECK(l1.up.pfc_pause_received > 0);
  CHECK(s.pauses_to_sender > 0);  // ... and leaf 1 its sender
  // The innocent flow shares leaf 1's paused uplink (one lossless class): it is held, not lost.
  CHECK(s.innocent_received == 0);
  CHECK(l1.up.queue_frames > 0);
  for (const FabricLinkCounters& l : s.f->fabric_links()) {
    CHECK(l.up.tail_drops == 0);
    CHECK(l.down.tail_drops == 0);
  }
  CHECK(s.f->leaf(0).counters(0).pfc_watchdog_trips == 0);
}

TEST_CASE("leaf-spine: the PFC watchdog ends a stuck NIC's storm, the innocent flow delivered whole",
          "[lab][leafspine][pfc]") {
  StuckStorm s(1, 5'000);  // 1 ms: 1,000 rounds
  const SwitchPortCounters& stuck = s.f->leaf(0).counters(0);
  CHECK(stuck.pfc_watchdog_trips == 1);
  CHECK(s.storm_received == 0);
  // Every storm frame is dropped by the watchdog once it reaches the stuck port, none elsewhere.
  CHECK(stuck.pfc_watchdog_drops == 60);
  CHECK(s.innocent_received == 20);
  for (const FabricLinkCounters& l : s.f->fabric_links()) {
    CHECK(l.up.tail_drops == 0);
    CHECK(l.up.queue_frames == 0);
    CHECK(l.down.queue_frames == 0);
  }
}

TEST_CASE("leaf-spine: a stuck endpoint that does not exist, or without PFC, is refused", "[lab][leafspine]") {
  LeafSpineConfig c = config(2, 1, 2);
  c.leaf.pfc = true;
  c.stuck_endpoints = {4};
  Status err;
  CHECK(!LeafSpine::create(c, err));
  CHECK(err.message().find("--stuck-endpoint") != std::string::npos);
  c.stuck_endpoints = {1, 1};
  CHECK(!LeafSpine::create(c, err));
  c.stuck_endpoints = {1};
  c.leaf.pfc = false;
  CHECK(!LeafSpine::create(c, err));
  CHECK(err.message().find("--pfc") != std::string::npos);
}
