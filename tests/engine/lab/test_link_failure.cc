// A leaf-spine link that fails and comes back (LeafSpineConfig::link_failures), with raw
// RoCEv2-shaped frames on the fabric's own clock (the test passes the TSC, so nothing depends on
// timing): the frames queued on the link and on the wire as it fails are dropped and counted on
// that link; the flows whose hash picked it move to the other spine (resilient hashing: the
// others stay where they were) and lose nothing more; when it is back they move back. Every frame
// sent is delivered once or counted dropped. The transport's recovery of the dropped frames is
// droce-coll's test (tests/apps/check_coll.sh, --link-down).
#include <rte_cycles.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "engine/lab/leaf_spine.h"
#include "tests/engine/lab/frames_udp.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;

namespace {

std::uint32_t ip4(std::uint32_t i) { return 0x0A000000u | (i + 1); }  // 10.0.0.(i+1)

// 2 leaves of 2 endpoints, 2 spines; every leaf-spine link 10 Mb/s both ways (a 106-byte frame
// every ~0.1 ms), so frames queue on the uplinks when a burst is sent.
LeafSpineConfig config() {
  LeafSpineConfig c;
  c.leaves = 2;
  c.spines = 2;
  c.endpoints_per_leaf = 2;
  for (std::uint32_t i = 0; i < c.endpoints(); ++i) c.ipv4.push_back(ip4(i));
  c.uplink.gbps = 0.01;
  c.downlink.gbps = 0.01;
  c.pool = test::pool().get();
  return c;
}

struct Flow {
  std::uint32_t from = 0, to = 0;
  std::uint16_t sport = 0;
  std::uint32_t spine = 0;  // the hash's pick
  std::uint16_t sent = 0;
};

// The fabric on a clock the test moves: `origin` + `step` per poll.
struct Clocked {
  std::unique_ptr<LeafSpine> f;
  std::uint64_t origin = 0, step = 0, now = 0;
  std::vector<Flow> flows;
  std::map<std::pair<std::uint16_t, std::uint16_t>, int> got;  // (flow, seq) -> times delivered

  // The fabric from `c`, its clock at the host's now, 0.1 ms a poll (start_clock is the caller's).
  void open(const LeafSpineConfig& c) {
    Status err;
    f = LeafSpine::create(c, err);
    INFO(err.message());
    REQUIRE(f);
    origin = now = rte_get_tsc_cycles();
    step = rte_get_tsc_hz() / 10'000;
  }
  std::uint64_t at_ms(double ms) const {
    return origin + static_cast<std::uint64_t>(ms * 1e-3 * static_cast<double>(rte_get_tsc_hz()));
  }
  void send(std::uint16_t id) {
    Flow& fl = flows[id];
    auto frame = test::udp4_frame(ip4(fl.from), ip4(fl.to), fl.sport);
    frame[42] = static_cast<std::uint8_t>(id);
    frame[43] = static_cast<std::uint8_t>(fl.sent >> 8);
    frame[44] = static_cast<std::uint8_t>(fl.sent);
    ++fl.sent;
    rte_mbuf* m = rte_pktmbuf_alloc(test::pool().get());
    REQUIRE(m != nullptr);
    auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(frame.size())));
    REQUIRE(d != nullptr);
    std::memcpy(d, frame.data(), frame.size());
    REQUIRE(f->endpoint_end(fl.from).send(&m, 1) == 1);
  }
  // Polls until the clock reaches `ms`, taking what the endpoints receive.
  void run_until(double ms) {
    const std::uint64_t end = at_ms(ms);
    while (now < end) {
      now += step;
      f->poll(now);
      for (std::uint32_t i = 0; i < 4; ++i) {
        rte_mbuf* pkts[32];
        const std::uint16_t n = f->endpoint_end(i).receive(pkts, 32);
        for (std::uint16_t k = 0; k < n; ++k) {
          const auto* d = rte_pktmbuf_mtod(pkts[k], const std::uint8_t*);
          const auto seq = static_cast<std::uint16_t>(d[43] << 8 | d[44]);
          ++got[{d[42], seq}];
        }
        rte_pktmbuf_free_bulk(pkts, n);
      }
    }
  }
};

const FabricLinkCounters& link(const std::vector<FabricLinkCounters>& v, std::uint32_t leaf, std::uint32_t spine) {
  for (const auto& l : v)
    if (l.leaf == leaf && l.spine == spine) return l;
  FAIL("no link leaf" << leaf << "-spine" << spine);
  return v.front();
}

}  // namespace

TEST_CASE("leaf-spine link failure: the failed link's flows move to the other spine and back, nothing else moves",
          "[lab][leafspine][linkdown]") {
  LeafSpineConfig c = config();
  c.link_failures.push_back(LinkFailure{0, 0, 1.0, 20.0});  // leaf0-spine0 down at 1 ms, up at 20 ms
  Clocked lab;
  lab.open(c);
  lab.f->start_clock(lab.origin);
  // 16 flows leaf 0 -> leaf 1 and 8 back, on distinct source ports: the first port from 49152 up
  // whose hash picks spine k % 2, so that each spine has flows both ways.
  std::uint16_t sport = 49152;
  for (std::uint16_t k = 0; k < 24; ++k) {
    Flow fl;
    fl.from = k < 16 ? k % 2 : 2 + k % 2;
    fl.to = k < 16 ? 2 + (k / 2) % 2 : (k / 2) % 2;
    for (int tries = 0; tries < 1000; ++tries, ++sport) {
      const auto probe = test::udp4_frame(ip4(fl.from), ip4(fl.to), sport);
      FlowKey key;
      REQUIRE(flow_key_of(probe.data(), static_cast<std::uint32_t>(probe.size()), key));
      fl.spine = lab.f->spine_of(key);
      if (fl.spine == k % 2u) break;
    }
    REQUIRE(fl.spine == k % 2u);
    fl.sport = sport++;
    lab.flows.push_back(fl);
  }
  // Frames per (direction, picked spine): [leaf][spine].
  auto count = [&](std::uint32_t leaf, std::uint32_t spine) {
    std::uint64_t n = 0;
    for (const Flow& fl : lab.flows)
      if (fl.from / 2 == leaf && fl.spine == spine) ++n;
    return n;
  };
  const std::uint64_t out0 = count(0, 0), out1 = count(0, 1), back0 = count(1, 0), back1 = count(1, 1);
  REQUIRE(out0 == 8);
  REQUIRE(out1 == 8);
  REQUIRE(back0 == 4);
  REQUIRE(back1 == 4);
  auto burst = [&] {
    for (int round = 0; round < 4; ++round)
      for (std::uint16_t id = 0; id < lab.flows.size(); ++id) lab.send(id);
  };

  // A: 4 frames a flow at 0 ms; the link fails at 1 ms with frames queued on it.
  burst();
  lab.run_until(1.05);
  {
    const auto v = lab.f->fabric_links();
    const auto& l = link(v, 0, 0);
    CHECK_FALSE(l.link_up);
    CHECK(l.downs == 1);
    CHECK(l.last_down_ns >= 1'000'000);
    CHECK(l.last_down_ns < 1'100'000);
    CHECK(l.up.link_down_drops > 0);  // ~10 of leaf 0's spine-0 frames had left; the rest were queued
    CHECK(l.up.queue_frames == 0);
  }
  lab.run_until(5);  // every queue drained
  // B at 5 ms: 4 more a flow while the link is down.
  burst();
  lab.run_until(19);
  // C at 25 ms, the link back since 20 ms: 4 more a flow.
  lab.run_until(25);
  burst();
  lab.run_until(40);

  const auto v = lab.f->fabric_links();
  const auto &l00 = link(v, 0, 0), &l01 = link(v, 0, 1), &l10 = link(v, 1, 0), &l11 = link(v, 1, 1);
  CHECK(l00.link_up);
  CHECK(l00.downs == 1);
  CHECK(l00.last_up_ns >= 20'000'000);
  CHECK(l00.last_up_ns < 20'100'000);
  for (const auto* l : {&l01, &l10, &l11}) {
    CHECK(l->downs == 0);
    CHECK(l->up.link_down_drops + l->up.link_down_lost == 0);
    CHECK(l->down.link_down_drops + l->down.link_down_lost == 0);
  }
  // Every frame delivered once, or dropped on the failed link (queued at either end, or arriving
  // at a spine for the leaf it can no longer reach).
  std::uint64_t delivered = 0, sent = 0;
  for (const auto& [key, times] : lab.got) {
    CHECK(times == 1);
    delivered += static_cast<std::uint64_t>(times);
  }
  for (const Flow& fl : lab.flows) sent += fl.sent;
  const std::uint64_t dropped =
      l00.up.link_down_drops + l00.down.link_down_drops + l00.up.link_down_lost + l00.down.link_down_lost;
  CHECK(l00.down.link_down_lost == 0);  // the spine takes what the leaf sends in the same round
  CHECK(sent == 24 * 12);
  CHECK(delivered + dropped == sent);
  // Only frames of A can have been lost; every frame of B and C arrived.
  for (std::uint16_t id = 0; id < lab.flows.size(); ++id)
    for (std::uint16_t seq = 4; seq < 12; ++seq) CHECK(lab.got.count({id, seq}) == 1);
  // The flows that never picked spine 0 lost nothing and never moved: their frames, and only
  // theirs (plus the moved flows' B frames), are on spine 1's links.
  for (std::uint16_t id = 0; id < lab.flows.size(); ++id)
    if (lab.flows[id].spine == 1)
      for (std::uint16_t seq = 0; seq < 12; ++seq) CHECK(lab.got.count({id, seq}) == 1);
  // Leaf 0's uplinks: spine 1 carried its own flows' 12 frames and the moved flows' 4 frames of B;
  // spine 0 what left before the failure and C's frames (the flows moved back).
  CHECK(l01.up.tx_frames == 12 * out1 + 4 * out0);
  CHECK(l00.up.tx_frames + l00.up.link_down_drops == 12 * out0 - 4 * out0);
  // Leaf 1's flows towards leaf 0: spine 0 cannot reach leaf 0 while the link is down, so the
  // ones that picked it went through spine 1 in B as well; in A they reached spine 0 and were
  // dropped there (on the failed link's `down` counters) if it was down by then.
  CHECK(l11.up.tx_frames == 12 * back1 + 4 * back0);
  CHECK(l10.up.tx_frames == 8 * back0);
  CHECK(l00.down.tx_frames + l00.down.link_down_drops == 8 * back0);
  // The re-hash, counted on the link each flow picked: every flow that picked spine 0 moved
  // once (in B), 4 frames each; nothing re-hashed off spine 1.
  CHECK(l00.up.rehashed_flows == out0);
  CHECK(l00.up.rehashed_frames == 4 * out0);
  CHECK(l10.up.rehashed_flows == back0);
  CHECK(l10.up.rehashed_frames == 4 * back0);
  CHECK(l01.up.rehashed_frames + l11.up.rehashed_frames == 0);
  CHECK(l00.up.rehash_untracked + l10.up.rehash_untracked == 0);
  lab.f->finish();
}

TEST_CASE("leaf-spine link failure: a link that never comes back, and a leaf with no live uplink",
          "[lab][leafspine][linkdown]") {
  LeafSpineConfig c = config();
  c.link_failures.push_back(LinkFailure{0, 0, 0.0, -1});
  c.link_failures.push_back(LinkFailure{0, 1, 2.0, -1});
  Clocked lab;
  lab.open(c);
  // Before start_clock nothing fails: the schedule counts from the timed run's start.
  lab.flows.push_back(Flow{0, 2, 50000, 0, 0});
  lab.send(0);
  lab.run_until(3);
  CHECK(lab.got.size() == 1);
  lab.f->start_clock(lab.now);
  lab.origin = lab.now;
  lab.run_until(1);
  // Spine 0 is gone for leaf 0: the flow goes through spine 1 whatever it picked.
  for (int i = 0; i < 3; ++i) lab.send(0);
  lab.run_until(1.9);
  CHECK(lab.got.size() == 4);
  // Both gone: the frames are dropped on the uplink the hash picked, counted.
  lab.run_until(2.1);
  for (int i = 0; i < 5; ++i) lab.send(0);
  lab.run_until(10);
  CHECK(lab.got.size() == 4);
  const auto v = lab.f->fabric_links();
  const auto &l00 = link(v, 0, 0), &l01 = link(v, 0, 1);
  CHECK_FALSE(l00.link_up);
  CHECK_FALSE(l01.link_up);
  CHECK(l00.last_up_ns == -1);
  CHECK(l00.up.link_down_drops + l01.up.link_down_drops == 5);
  lab.f->finish();
}

TEST_CASE("leaf-spine link failure: --link-down values parsed, and refused with the reason",
          "[lab][leafspine][linkdown]") {
  LinkFailure f;
  REQUIRE(LinkFailure::parse("1:0@250", f).ok());
  CHECK(f.leaf == 1);
  CHECK(f.spine == 0);
  CHECK(f.down_ms == 250);
  CHECK(f.up_ms < 0);
  REQUIRE(LinkFailure::parse("0:1@10.5:40", f).ok());
  CHECK(f.down_ms == 10.5);
  CHECK(f.up_ms == 40);
  for (const char* bad : {"", "0:1", "0@5", "a:1@5", "0:1@", "0:1@-5", "0:1@5:5", "0:1@5:2", "0:1@5:x", "0:1@nan"}) {
    const Status s = LinkFailure::parse(bad, f);
    INFO(bad);
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("--link-down") != std::string::npos);
  }
  LeafSpineConfig c = config();
  c.link_failures = {LinkFailure{2, 0, 1, -1}};
  CHECK(c.validate().message().find("no link leaf2-spine0") != std::string::npos);
  c.link_failures = {LinkFailure{0, 2, 1, -1}};
  CHECK_FALSE(c.validate().ok());
  c.link_failures = {LinkFailure{0, 1, 1, 10}, LinkFailure{0, 1, 5, -1}};
  CHECK(c.validate().message().find("overlap") != std::string::npos);
  c.link_failures = {LinkFailure{0, 1, 1, 10}, LinkFailure{0, 1, 10, -1}, LinkFailure{1, 1, 1, -1}};
  CHECK(c.validate().ok());
}
