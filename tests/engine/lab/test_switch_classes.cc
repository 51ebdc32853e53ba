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
#include "tests/engine/lab/switch_star.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;

namespace {

using test::pfc_frame;
using test::Star;
std::uint32_t ip4(std::uint32_t i) { return test::star_ip4(i); }

// A frame to endpoint 2 of `bytes` on the wire with the given DSCP; a CNP (BTH opcode 0x81) when asked.
std::vector<std::uint8_t> frame(std::uint32_t from, std::uint8_t dscp, std::uint16_t bytes = 1024, bool cnp = false) {
  auto f = test::udp4_frame(ip4(from), ip4(2), 49152, static_cast<std::uint16_t>(bytes - 42));
  f[15] = static_cast<std::uint8_t>(dscp << 2 | 2);
  if (cnp) f[42] = 0x81;
  return f;
}

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
