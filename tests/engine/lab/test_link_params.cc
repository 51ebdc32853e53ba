// A leaf-spine link's own settings (LinkQueueParams::port, --link): RED/ECN thresholds that mark
// where the tier's do not, a link without PFC that tail-drops where a PFC link pauses, a link's
// delay judged on the fabric's own clock, and the --link grammar's accept/refuse table.
#include <rte_cycles.h>

#include <catch2/catch.hpp>

#include "engine/lab/leaf_spine.h"
#include "engine/lab/link_spec.h"
#include "tests/engine/lab/frames_udp.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;

namespace {

std::uint32_t ip4(std::uint32_t i) { return 0x0A000000u | (i + 1); }  // 10.0.0.(i+1)

// Two leaves of one endpoint each, two spines; `links` applied over the tiers.
LeafSpineConfig config(const std::vector<std::string>& links) {
  LeafSpineConfig c;
  c.leaves = 2;
  c.spines = 2;
  c.endpoints_per_leaf = 1;
  c.ipv4 = {ip4(0), ip4(1)};
  c.pool = test::pool().get();
  std::vector<LinkSpec> specs;
  for (const std::string& s : links) {
    LinkSpec l;
    const Status st = LinkSpec::parse(s, l);
    INFO(st.message());
    REQUIRE(st.ok());
    specs.push_back(l);
  }
  REQUIRE(apply_link_specs(specs, c).ok());
  return c;
}

// A source port whose flow from endpoint `from` to `to` the leaves' ECMP sends through `spine`.
std::uint16_t sport_via(const LeafSpine& f, std::uint32_t from, std::uint32_t to, std::uint32_t spine) {
  for (std::uint16_t sport = 49152; sport < 49152 + 1024; ++sport) {
    const auto frame = test::udp4_frame(ip4(from), ip4(to), sport);
    FlowKey k;
    REQUIRE(flow_key_of(frame.data(), static_cast<std::uint32_t>(frame.size()), k));
    if (f.spine_of(k) == spine) return sport;
  }
  FAIL("no source port of 1024 hashes to spine " << spine);
  return 0;
}

// The fabric on a clock the test moves (the fabric's own: nothing here reads wall time).
struct Clocked {
  std::unique_ptr<LeafSpine> f;
  std::uint64_t now = 0, us = 1;
  std::vector<std::uint32_t> got = {0, 0};
  std::vector<std::uint64_t> first_us = {0, 0};  // when each endpoint first received, in µs of the clock

  explicit Clocked(const LeafSpineConfig& c) {
    Status err;
    f = LeafSpine::create(c, err);
    INFO(err.message());
    REQUIRE(f);
    us = std::max<std::uint64_t>(1, rte_get_tsc_hz() / 1'000'000);
    now = rte_get_tsc_cycles();
  }
  ~Clocked() {
    if (f) f->finish();
  }
  void send(std::uint32_t from, std::uint32_t to, std::uint16_t sport, std::uint32_t frames) {
    const auto frame = test::udp4_frame(ip4(from), ip4(to), sport);
    for (std::uint32_t k = 0; k < frames; ++k) {
      rte_mbuf* m = rte_pktmbuf_alloc(test::pool().get());
      REQUIRE(m != nullptr);
      auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(frame.size())));
      REQUIRE(d != nullptr);
      std::memcpy(d, frame.data(), frame.size());
      REQUIRE(f->endpoint_end(from).send(&m, 1) == 1);
    }
  }
  // `polls` rounds, the clock moving `step_us` before each; data frames the endpoints take are
  // counted (PFC pauses to them are freed: these endpoints ignore them).
  void run(std::uint32_t polls, std::uint64_t step_us, std::uint64_t origin) {
    for (std::uint32_t r = 0; r < polls; ++r) {
      now += step_us * us;
      f->poll(now);
      for (std::uint32_t i = 0; i < 2; ++i) {
        rte_mbuf* pkts[32];
        const std::uint16_t n = f->endpoint_end(i).receive(pkts, 32);
        for (std::uint16_t k = 0; k < n; ++k) {
          const auto* d = rte_pktmbuf_mtod(pkts[k], const std::uint8_t*);
          if (d[12] == 0x08 && d[13] == 0x00) {  // IPv4 data, not a MAC control frame
            if (got[i]++ == 0) first_us[i] = (now - origin) / us;
          }
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

TEST_CASE("per-link ECN: a link with its own thresholds marks where the tier's link does not", "[lab][linkparams]") {
  // The tiers never mark (Kmin far above any queue here); leaf0-spine0's uplink marks every
  // ECN-capable frame above 1 KB of queue.
  LeafSpineConfig c = config({"leaf0-spine0:dir=up,ecn=0:1K:1"});
  c.leaf.kmin_bytes = c.leaf.kmax_bytes = c.spine.kmin_bytes = c.spine.kmax_bytes = 500'000;
  Clocked lab(c);
  // The same burst of 24 frames of 106 bytes (a queue of 2.5 KB at most) through each uplink.
  const std::uint64_t origin = lab.now;
  lab.send(0, 1, sport_via(*lab.f, 0, 1, 0), 24);
  lab.send(0, 1, sport_via(*lab.f, 0, 1, 1), 24);
  lab.run(50, 1, origin);
  CHECK(lab.got[1] == 48);
  const auto links = lab.f->fabric_links();
  const FabricLinkCounters& own = link(links, 0, 0);
  const FabricLinkCounters& tier = link(links, 0, 1);
  CHECK(own.up.tx_frames == 24);
  CHECK(tier.up.tx_frames == 24);
  CHECK(own.up.ecn_marked > 0);
  CHECK(tier.up.ecn_marked == 0);
  // The same frames queued again at spine 0's port towards leaf 1 (the tier's thresholds): unmarked there.
  CHECK(link(links, 1, 0).down.tx_frames == 24);
  CHECK(link(links, 1, 0).down.queue_max_bytes > 1024);
  CHECK(link(links, 1, 0).down.ecn_marked == 0);
  CHECK(own.down_params.port.kmax_bytes == 500'000u);  // dir=up: the spine's side keeps the tier's
  CHECK(own.up_params.port.kmax_bytes == 1024u);
  CHECK(own.up_params.port.pmax == 1.0);
  CHECK(tier.up_params.port.kmin_bytes == 500'000u);
}

TEST_CASE("per-link PFC: a link without PFC tail-drops where a PFC link pauses", "[lab][linkparams]") {
  // PFC on in both tiers with low thresholds; leaf1-spine0 runs without it. Leaf1's port towards
  // its endpoint is slow (1 Gb/s, 16 KB): a burst of 200 frames (21 KB) from leaf0 congests it.
  auto make = [] {
    LeafSpineConfig c = config({"leaf1-spine0:pfc=off"});
    for (LabSwitchConfig* t : {&c.leaf, &c.spine}) {
      t->pfc = true;
      t->pfc_priority = 3;  // DSCP 26's priority
      t->pfc_xoff_bytes = 4'000;
      t->pfc_xon_bytes = 2'000;
    }
    c.to_endpoint = LinkQueueParams{1, 16 * 1024, {}};
    return c;
  };
  for (std::uint32_t spine : {0u, 1u}) {
    Clocked lab(make());
    INFO("through spine " << spine);
    const std::uint64_t origin = lab.now;
    lab.send(0, 1, sport_via(*lab.f, 0, 1, spine), 200);
    // The burst crosses the unshaped links and piles up at leaf1's slow port (no time passes),
    // then the clock runs until that port has sent everything it holds.
    lab.run(40, 0, origin);
    lab.run(4000, 2, origin);
    const auto links = lab.f->fabric_links();
    const SwitchPortCounters& leaf1_from_spine = lab.f->leaf(1).counters(1 + spine);
    const SwitchPortCounters& to_ep1 = lab.f->leaf(1).counters(0);
    if (spine == 0) {
      CHECK(link(links, 1, 0).down_params.port.pfc == false);
      CHECK(link(links, 1, 0).up_params.port.pfc == false);
      CHECK(leaf1_from_spine.pfc_pause_sent == 0);
      CHECK(to_ep1.tail_drops > 0);
      CHECK(lab.got[1] + to_ep1.tail_drops == 200);
    } else {
      CHECK(link(links, 1, 1).down_params.port.pfc == true);
      CHECK(leaf1_from_spine.pfc_pause_sent > 0);
      CHECK(link(links, 1, 1).down.pfc_pause_received > 0);
      CHECK(to_ep1.tail_drops == 0);
      CHECK(lab.got[1] == 200);
    }
  }
}

TEST_CASE("per-link delay: a link's own delay delivers later by that delay, one way only", "[lab][linkparams]") {
  Clocked lab(config({"leaf0-spine0:dir=up,delay-us=50"}));
  const std::uint64_t origin = lab.now;
  lab.send(0, 1, sport_via(*lab.f, 0, 1, 0), 1);
  lab.run(200, 1, origin);
  REQUIRE(lab.got[1] == 1);
  const std::uint64_t delayed = lab.first_us[1];

  Clocked plain(config({"leaf0-spine0:dir=up,delay-us=50"}));
  const std::uint64_t origin2 = plain.now;
  plain.send(0, 1, sport_via(*plain.f, 0, 1, 1), 1);  // through spine 1: no delay of its own
  plain.send(1, 0, sport_via(*plain.f, 1, 0, 0), 1);  // back down leaf0-spine0: dir=up only
  plain.run(200, 1, origin2);
  REQUIRE(plain.got[1] == 1);
  REQUIRE(plain.got[0] == 1);
  // Each hop takes at most a few polls of 1 µs; the delayed frame waited 50 µs more.
  CHECK(delayed >= plain.first_us[1] + 50);
  CHECK(delayed <= plain.first_us[1] + 52);
  CHECK(plain.first_us[0] < 10);
  const auto links = lab.f->fabric_links();
  CHECK(link(links, 0, 0).up_params.port.delay_us == 50);
  CHECK(link(links, 0, 0).down_params.port.delay_us == 0);
}

TEST_CASE("--link: the grammar's accept and refuse table", "[lab][linkparams]") {
  LinkSpec l;
  REQUIRE(LinkSpec::parse("leaf0-spine1:gbps=40,buffer=256K,delay-us=5,ecn=20K:200K:0.05,pfc=off", l).ok());
  CHECK(l.leaf == 0);
  CHECK(l.spine == 1);
  CHECK(l.up);
  CHECK(l.down);
  CHECK(*l.gbps == 40);
  CHECK(*l.buffer_bytes == 256 * 1024u);
  CHECK(l.port.delay_us == 5);
  CHECK(*l.port.kmin_bytes == 20 * 1024u);
  CHECK(*l.port.kmax_bytes == 200 * 1024u);
  CHECK(*l.port.pmax == 0.05);
  CHECK(*l.port.pfc == false);
  REQUIRE(LinkSpec::parse("leaf3-spine0:pfc=64K:32K", l).ok());
  CHECK(*l.port.pfc);
  CHECK(*l.port.pfc_xoff_bytes == 65536u);
  CHECK(*l.port.pfc_xon_bytes == 32768u);
  CHECK_FALSE(l.gbps);
  REQUIRE(LinkSpec::parse("leaf1-spine2:dir=down,gbps=0", l).ok());
  CHECK_FALSE(l.up);
  CHECK(l.down);
  for (const char* bad : {"",
                          "leaf0-spine1",
                          "leaf0-spine1:",
                          "spine0-leaf1:gbps=1",
                          "leaf0spine1:gbps=1",
                          "leafx-spine1:gbps=1",
                          "leaf0-spine1:gbps=1,",
                          "leaf0-spine1:gbps",
                          "leaf0-spine1:speed=1",
                          "leaf0-spine1:gbps=1,gbps=2",
                          "leaf0-spine1:gbps=-1",
                          "leaf0-spine1:gbps=1001",
                          "leaf0-spine1:gbps=nan",
                          "leaf0-spine1:buffer=1K",
                          "leaf0-spine1:buffer=2G",
                          "leaf0-spine1:delay-us=-1",
                          "leaf0-spine1:ecn=200K:20K:0.1",
                          "leaf0-spine1:ecn=1K:2K:1.5",
                          "leaf0-spine1:ecn=1K:2K",
                          "leaf0-spine1:pfc=maybe",
                          "leaf0-spine1:pfc=32K:64K",
                          "leaf0-spine1:dir=up,pfc=on",
                          "leaf0-spine1:dir=sideways"}) {
    INFO(bad);
    const Status s = LinkSpec::parse(bad, l);
    CHECK_FALSE(s.ok());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("--link") != std::string::npos);
  }
  // Against a fabric: a link it lacks, one direction twice; both directions separately is fine.
  LeafSpineConfig c = config({});
  auto parsed = [](std::initializer_list<const char*> v) {
    std::vector<LinkSpec> out;
    for (const char* s : v) {
      LinkSpec x;
      REQUIRE(LinkSpec::parse(s, x).ok());
      out.push_back(x);
    }
    return out;
  };
  CHECK(apply_link_specs(parsed({"leaf2-spine0:gbps=1"}), c).message().find("no link leaf2-spine0") !=
        std::string::npos);
  CHECK(apply_link_specs(parsed({"leaf0-spine1:gbps=1", "leaf0-spine1:dir=up,gbps=2"}), c).message().find("twice") !=
        std::string::npos);
  LeafSpineConfig d = config({});
  REQUIRE(apply_link_specs(parsed({"leaf0-spine1:dir=up,gbps=1", "leaf0-spine1:dir=down,gbps=2"}), d).ok());
  CHECK(d.uplinks[1].gbps == 1);
  CHECK(d.downlinks[1].gbps == 2);
  CHECK(d.validate().ok());
}

TEST_CASE("per-link settings refused against their tiers, naming the link", "[lab][linkparams]") {
  LeafSpineConfig c = config({});
  c.uplinks.assign(4, c.uplink);
  c.downlinks.assign(4, c.downlink);
  c.uplinks[1].port.kmin_bytes = 300'000;  // above the tier's Kmax
  Status s = c.validate();
  CHECK(s.message().find("leaf0-spine1 up") != std::string::npos);
  CHECK(s.message().find("kmin") != std::string::npos);
  c.uplinks[1].port = {};
  c.downlinks[2].port.pfc = true;  // the tiers run no PFC
  s = c.validate();
  CHECK(s.message().find("leaf1-spine0 down") != std::string::npos);
  CHECK(s.message().find("PFC") != std::string::npos);
  c.downlinks[2].port = {};
  c.leaf.pfc = true;  // the leaves run PFC, the spines not: a link set on must agree both ways
  c.uplinks[3].port.pfc = false;
  c.downlinks[3].port.pfc = false;
  CHECK(c.validate().ok());
  c.spine.pfc = true;
  c.uplinks[3].port.pfc = true;
  c.downlinks[3].port = {};
  c.uplinks[3].port.pfc_xoff_bytes = 10'000;
  c.uplinks[3].port.pfc_xon_bytes = 10'000;
  s = c.validate();
  CHECK(s.message().find("leaf1-spine1 up") != std::string::npos);
  CHECK(s.message().find("xon") != std::string::npos);
  c.uplinks[3].port = {};
  c.spine.pfc = false;
  c.uplinks[3].port.pfc = true;
  s = c.validate();
  CHECK_FALSE(s.ok());
  c.uplinks[3].port.pfc_xoff_bytes.reset();
  c.uplinks[3].port = {};
  c.uplinks[0].port.pmax = 2;
  CHECK(c.validate().message().find("pmax") != std::string::npos);
}
