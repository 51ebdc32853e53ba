// LabSwitch's eight classes with raw frames on a star of ring links (no endpoints): DSCP picks
// the priority and the queue, strict priority sends the highest queue first, the weighted
// scheduler shares by weight, CNPs take their own class, and PFC pauses and resumes one priority
// at a time (802.1Qbb) in both directions. Nothing here depends on timing: frames are queued
// before the switch transmits, and pauses last tens of seconds on the lab's 1 Mb/s PFC clock.
#include <rte_cycles.h>

#include <catch2/catch.hpp>
#include <vector>

#include "engine/lab/lab_switch.h"
#include "protocols/wire/pfc.h"
#include "tests/engine/lab/frames_udp.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;

namespace {

constexpr std::uint32_t kEndpoints = 3;  // endpoints 0 and 1 send to endpoint 2
std::uint32_t ip4(std::uint32_t i) { return 0x0A000000u | (i + 1); }

// A frame to endpoint 2 of `bytes` on the wire with the given DSCP; a CNP (BTH opcode 0x81) when asked.
std::vector<std::uint8_t> frame(std::uint32_t from, std::uint8_t dscp, std::uint16_t bytes = 1024, bool cnp = false) {
  auto f = test::udp4_frame(ip4(from), ip4(2), 49152, static_cast<std::uint16_t>(bytes - 42));
  f[15] = static_cast<std::uint8_t>(dscp << 2 | 2);
  if (cnp) f[42] = 0x81;
  return f;
}

std::vector<std::uint8_t> pfc_frame(std::uint32_t prio, std::uint16_t quanta) {
  wire::PfcFrame p;
  p.class_enable = static_cast<std::uint16_t>(1u << prio);
  p.quanta[prio] = quanta;
  std::vector<std::uint8_t> f(wire::kPfcFrameBytes);
  const std::uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x77};
  REQUIRE(wire::build_pfc(mac, p, f.data(), wire::kPfcFrameBytes) == wire::kPfcFrameBytes);
  return f;
}

struct Star {
  std::unique_ptr<RingFabric> fabric;
  std::unique_ptr<LabSwitch> sw;

  explicit Star(LabSwitchConfig c) {
    Status err;
    fabric = RingFabric::create(FabricSpec::star(kEndpoints, ImpairmentConfig{}), test::pool().get(), err);
    REQUIRE(fabric);
    for (RingEnd* end : fabric->ends_of(kEndpoints)) c.frame_ports.push_back(FramePort::ring(end));
    for (std::uint16_t i = 0; i < kEndpoints; ++i) c.host_routes.push_back(HostRoute::ipv4(ip4(i), i));
    c.pool = test::pool().get();
    // Pauses on a 1 Mb/s clock: 65535 quanta hold for 33 s, far longer than any test waits.
    c.link_gbps_for_pfc = 0.001;
    sw = LabSwitch::create(c, err);
    INFO(err.message());
    REQUIRE(sw);
  }
  ~Star() {
    sw.reset();
    fabric->drain();
  }
  void send(std::uint32_t from, const std::vector<std::uint8_t>& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(test::pool().get());
    REQUIRE(m != nullptr);
    auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(f.size())));
    REQUIRE(d != nullptr);
    std::memcpy(d, f.data(), f.size());
    REQUIRE(fabric->end(from, 0).send(&m, 1) == 1);
  }
  // What endpoint `at` received over `polls` switch rounds: the first bytes of each frame.
  std::vector<std::vector<std::uint8_t>> received(std::uint32_t at, int polls) {
    std::vector<std::vector<std::uint8_t>> got;
    for (int round = 0; round < polls; ++round) {
      sw->poll(rte_get_tsc_cycles());
      rte_mbuf* pkts[32];
      const std::uint16_t n = fabric->end(at, 0).receive(pkts, 32);
      for (std::uint16_t i = 0; i < n; ++i) {
        const auto* d = rte_pktmbuf_mtod(pkts[i], const std::uint8_t*);
        got.emplace_back(d, d + std::min<std::uint32_t>(pkts[i]->data_len, 64));
      }
      rte_pktmbuf_free_bulk(pkts, n);
    }
    return got;
  }
};

std::uint8_t dscp_of(const std::vector<std::uint8_t>& f) { return static_cast<std::uint8_t>(f[15] >> 2); }

}  // namespace

TEST_CASE("switch classes: strict priority sends the higher queue first", "[lab][classes]") {
  Star s{LabSwitchConfig{}};
  for (int k = 0; k < 10; ++k) s.send(0, frame(0, 8));   // DSCP 8: priority 1, queue 1
  for (int k = 0; k < 10; ++k) s.send(1, frame(1, 26));  // DSCP 26: priority 3, queue 3
  const auto got = s.received(2, 20);
  REQUIRE(got.size() == 20);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(dscp_of(got[i]) == (i < 10 ? 26 : 8));
  CHECK(s.sw->counters(2).queue_tx_frames[3] == 10);
  CHECK(s.sw->counters(2).queue_tx_frames[1] == 10);
}

TEST_CASE("switch classes: a DSCP map and a priority-to-queue map pick the queue", "[lab][classes]") {
  LabSwitchConfig c;
  c.dscp_priority[8] = 5;   // DSCP 8 -> priority 5
  c.priority_queue[5] = 0;  // priority 5 -> queue 0, below DSCP 26's queue 3
  c.priority_queue[3] = 7;  // priority 3 -> queue 7
  Star s{c};
  for (int k = 0; k < 4; ++k) s.send(0, frame(0, 8));
  for (int k = 0; k < 4; ++k) s.send(1, frame(1, 26));
  const auto got = s.received(2, 20);
  REQUIRE(got.size() == 8);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(dscp_of(got[i]) == (i < 4 ? 26 : 8));
  CHECK(s.sw->counters(2).queue_tx_frames[0] == 4);
  CHECK(s.sw->counters(2).queue_tx_frames[7] == 4);
}

TEST_CASE("switch classes: the weighted scheduler shares a backlogged port by weight", "[lab][classes]") {
  LabSwitchConfig c;
  c.scheduler = SwitchScheduler::kWeighted;
  c.queue_weights[1] = 1;
  c.queue_weights[3] = 3;
  Star s{c};
  // 1024-byte frames: a quantum of weight x 1024 bytes sends exactly `weight` frames a round.
  for (int k = 0; k < 12; ++k) s.send(0, frame(0, 8));
  for (int k = 0; k < 12; ++k) s.send(1, frame(1, 26));
  const auto got = s.received(2, 20);
  REQUIRE(got.size() == 24);
  int low = 0, high = 0;
  for (std::size_t i = 0; i < 16; ++i) (dscp_of(got[i]) == 8 ? low : high)++;
  CHECK(low == 4);
  CHECK(high == 12);
}

TEST_CASE("switch classes: CNPs take their own class and overtake queued data", "[lab][classes]") {
  LabSwitchConfig c;
  c.cnp_priority = 6;
  Star s{c};
  for (int k = 0; k < 10; ++k) s.send(0, frame(0, 26));
  s.send(1, frame(1, 26, 64, true));  // the same DSCP as the data: only its opcode tells it apart
  const auto got = s.received(2, 20);
  REQUIRE(got.size() == 11);
  CHECK(got[0][42] == 0x81);
  CHECK(s.sw->counters(2).queue_tx_frames[6] == 1);
  CHECK(s.sw->counters(2).queue_tx_frames[3] == 10);
}

TEST_CASE("switch classes: a received pause holds its priority only; a lossy priority ignores pauses",
          "[lab][classes][pfc]") {
  LabSwitchConfig c;
  c.pfc = true;  // lossless: priority 3 (pfc_priority) alone
  Star s{c};
  s.send(2, pfc_frame(3, 0xFFFF));
  s.send(2, pfc_frame(1, 0xFFFF));  // priority 1 is lossy: not honoured, not counted
  s.received(2, 2);
  for (int k = 0; k < 5; ++k) s.send(0, frame(0, 26));
  for (int k = 0; k < 5; ++k) s.send(1, frame(1, 8));
  auto got = s.received(2, 50);
  REQUIRE(got.size() == 5);
  for (const auto& f : got) CHECK(dscp_of(f) == 8);
  const SwitchPortCounters& held = s.sw->counters(2);
  CHECK(held.prio_pause_received[3] == 1);
  CHECK(held.prio_pause_received[1] == 0);
  CHECK(held.queue_class_bytes[3] == 5 * 1024);
  // XON: priority 3 resumes and its five frames follow.
  s.send(2, pfc_frame(3, 0));
  got = s.received(2, 50);
  REQUIRE(got.size() == 5);
  for (const auto& f : got) CHECK(dscp_of(f) == 26);
  CHECK(s.sw->counters(2).prio_paused_ns[3] > 0);
  CHECK(s.sw->counters(2).queue_class_bytes[3] == 0);
}

TEST_CASE("switch classes: each lossless priority pauses its own ingress upstream, XON when drained",
          "[lab][classes][pfc]") {
  LabSwitchConfig c;
  c.pfc = true;
  c.lossless_priorities = 1u << 3 | 1u << 4;
  c.pfc_xoff_bytes = 5'000;
  c.pfc_xon_bytes = 2'000;
  Star s{c};
  // Endpoint 2 holds priorities 3 and 4: what endpoints 0 and 1 send stays in the switch.
  s.send(2, pfc_frame(3, 0xFFFF));
  s.send(2, pfc_frame(4, 0xFFFF));
  s.received(2, 2);
  for (int k = 0; k < 6; ++k) s.send(0, frame(0, 26));  // priority 3: 6 KiB > XOFF
  for (int k = 0; k < 6; ++k) s.send(1, frame(1, 32));  // priority 4
  CHECK(s.received(2, 20).empty());
  auto pauses_at = [&](std::uint32_t ep) {
    std::vector<wire::PfcFrame> out;
    for (const auto& f : s.received(ep, 1)) {
      wire::PfcFrame p;
      if (wire::parse_pfc(f.data(), static_cast<std::uint32_t>(f.size()), p)) out.push_back(p);
    }
    return out;
  };
  const auto to0 = pauses_at(0), to1 = pauses_at(1);
  REQUIRE(!to0.empty());
  REQUIRE(!to1.empty());
  CHECK(to0[0].class_enable == 1u << 3);
  CHECK(to0[0].quanta[3] == c.pfc_pause_quanta);
  CHECK(to1[0].class_enable == 1u << 4);
  CHECK(s.sw->counters(0).prio_pause_sent[3] >= 1);
  CHECK(s.sw->counters(0).prio_pause_sent[4] == 0);
  CHECK(s.sw->counters(1).prio_pause_sent[4] >= 1);
  CHECK(s.sw->counters(0).prio_ingress_bytes[3] == 6 * 1024);
  // Priority 3 resumes at endpoint 2: its frames drain and endpoint 0 gets its XON; endpoint 1
  // stays paused.
  s.send(2, pfc_frame(3, 0));
  CHECK(s.received(2, 20).size() == 6);
  const auto xon = pauses_at(0);
  REQUIRE(xon.size() == 1);
  CHECK(xon[0].class_enable == 1u << 3);
  CHECK(xon[0].quanta[3] == 0);
  CHECK(s.sw->counters(0).pfc_resume_sent == 1);
  CHECK(s.sw->counters(1).pfc_resume_sent == 0);
  CHECK(s.sw->counters(1).prio_ingress_bytes[4] == 6 * 1024);
}
