// LabSwitch's failure switches with raw frames on a star of ring links: the drop rule drops exactly
// its frames (IPv4 ID ending in a byte; every Nth of each flow); a stuck NIC without a watchdog
// holds its lossless class and the switch pauses the upstream, counted; the PFC watchdog stops
// honouring the endless pause, drops the held frames, resumes the upstream, and restores once
// pauses stop. Waits are on counters, bounded by generous deadlines; no result depends on speed.
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

// A 256-byte frame to endpoint 2: DSCP, IPv4 ID and UDP source port as given, `seq` in its payload.
std::vector<std::uint8_t> frame(std::uint8_t dscp, std::uint16_t ip_id, std::uint16_t sport = 49152,
                                std::uint32_t seq = 0) {
  auto f = test::udp4_frame(ip4(0), ip4(2), sport, 256 - 42);
  f[15] = static_cast<std::uint8_t>(dscp << 2 | 2);
  f[18] = static_cast<std::uint8_t>(ip_id >> 8);
  f[19] = static_cast<std::uint8_t>(ip_id);
  for (int i = 0; i < 4; ++i) f[60 + i] = static_cast<std::uint8_t>(seq >> (24 - 8 * i));
  return f;
}

std::uint32_t seq_of(const std::vector<std::uint8_t>& f) {
  return std::uint32_t{f[60]} << 24 | std::uint32_t{f[61]} << 16 | std::uint32_t{f[62]} << 8 | f[63];
}

std::size_t pfc_frames(const std::vector<std::vector<std::uint8_t>>& got, std::uint32_t prio, bool xon) {
  std::size_t n = 0;
  for (const auto& f : got) {
    wire::PfcFrame p;
    if (wire::parse_pfc(f.data(), static_cast<std::uint32_t>(f.size()), p) && (p.class_enable & (1u << prio)) != 0 &&
        (p.quanta[prio] == 0) == xon)
      ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("drop rule ip-id:0xff drops exactly the frames whose IPv4 ID ends in 0xff", "[lab][failures]") {
  LabSwitchConfig c;
  REQUIRE(DropRuleConfig::parse("ip-id:0xff", c.drop_rule).ok());
  Star s{c};
  std::vector<std::uint32_t> got;
  for (std::uint32_t id = 0; id < 1024; id += 16) {
    for (std::uint32_t k = id; k < id + 16; ++k) s.send(0, frame(26, static_cast<std::uint16_t>(k), 49152, k));
    for (const auto& f : s.received(2, 4)) got.push_back(seq_of(f));
  }
  REQUIRE(got.size() == 1024 - 4);
  for (std::uint32_t seq : got) CHECK((seq & 0xFF) != 0xFF);
  CHECK(s.sw->counters(0).rule_drops == 4);
  CHECK(s.sw->drop_rule_counters().dropped == 4);
  CHECK(s.sw->drop_rule_counters().seen == 1024);
}

TEST_CASE("drop rule every:4 drops every fourth frame of each flow", "[lab][failures]") {
  LabSwitchConfig c;
  REQUIRE(DropRuleConfig::parse("every:4", c.drop_rule).ok());
  Star s{c};
  std::vector<std::uint32_t> a, b;  // two flows, interleaved: each counts its own frames
  for (std::uint32_t k = 1; k <= 20; ++k) {
    s.send(0, frame(26, 0, 50000, k));
    s.send(0, frame(26, 0, 50001, 100 + k));
    for (const auto& f : s.received(2, 2)) (seq_of(f) < 100 ? a : b).push_back(seq_of(f));
  }
  REQUIRE(a.size() == 15);
  REQUIRE(b.size() == 15);
  for (std::uint32_t seq : a) CHECK(seq % 4 != 0);
  for (std::uint32_t seq : b) CHECK((seq - 100) % 4 != 0);
  CHECK(s.sw->counters(0).rule_drops == 10);
}

TEST_CASE("drop rule: bad rules are refused naming --drop-rule", "[lab][failures]") {
  DropRuleConfig r;
  for (const char* bad : {"every:1", "every:", "every:x", "ip-id:256", "ip-id:0x100", "ip-id:-1", "all", ""}) {
    const Status s = DropRuleConfig::parse(bad, r);
    CHECK(!s.ok());
    CHECK(s.message().find("--drop-rule") != std::string::npos);
  }
}

TEST_CASE("a stuck NIC without a watchdog holds its class and the switch pauses the upstream", "[lab][failures][pfc]") {
  LabSwitchConfig c;
  c.pfc = true;
  c.pfc_xoff_bytes = 2'000;
  c.pfc_xon_bytes = 1'000;
  c.stuck_ports = {2};
  Star s{c};
  for (std::uint32_t k = 0; k < 10; ++k) s.send(0, frame(26, static_cast<std::uint16_t>(k)));
  for (std::uint32_t k = 0; k < 5; ++k) s.send(1, frame(8, static_cast<std::uint16_t>(k)));  // lossy: flows
  const auto at2 = s.received(2, 50);
  CHECK(at2.size() == 5);
  for (const auto& f : at2) CHECK((f[15] >> 2) == 8);
  CHECK(s.sw->counters(2).prio_pause_received[3] == 1);  // one endless pause
  CHECK(s.sw->counters(2).queue_class_bytes[3] == 10 * 256);
  CHECK(s.sw->counters(0).prio_pause_sent[3] >= 1);
  CHECK(pfc_frames(s.received(0, 1), 3, false) >= 1);
  CHECK(s.sw->counters(0).pfc_resume_sent == 0);
  CHECK(s.sw->counters(2).pfc_watchdog_trips == 0);
}

TEST_CASE("the PFC watchdog ends a stuck NIC's storm: held frames dropped, the upstream resumed",
          "[lab][failures][pfc]") {
  LabSwitchConfig c;
  c.pfc = true;
  c.pfc_xoff_bytes = 2'000;
  c.pfc_xon_bytes = 1'000;
  c.stuck_ports = {2};
  c.pfc_watchdog_ms = 20;
  Star s{c};
  const std::uint64_t start = rte_get_tsc_cycles();
  for (std::uint32_t k = 0; k < 10; ++k) s.send(0, frame(26, static_cast<std::uint16_t>(k)));
  REQUIRE(s.poll_until([&] { return s.sw->counters(0).pfc_resume_sent == 1; }));
  const double held_ms =
      static_cast<double>(rte_get_tsc_cycles() - start) * 1e3 / static_cast<double>(rte_get_tsc_hz());
  CHECK(held_ms >= 20);  // not before the watchdog's time
  const SwitchPortCounters& stuck = s.sw->counters(2);
  CHECK(stuck.pfc_watchdog_trips == 1);
  CHECK(stuck.pfc_watchdog_drops == 10);
  CHECK(stuck.queue_class_bytes[3] == 0);
  CHECK(s.sw->counters(0).prio_ingress_bytes[3] == 0);
  const auto to0 = s.received(0, 1);
  CHECK(pfc_frames(to0, 3, false) >= 1);
  CHECK(pfc_frames(to0, 3, true) == 1);
  // Arriving frames of the class are dropped too, never held: the upstream stays resumed.
  for (std::uint32_t k = 0; k < 20; ++k) s.send(0, frame(26, static_cast<std::uint16_t>(k)));
  CHECK(s.received(2, 20).empty());
  CHECK(stuck.pfc_watchdog_drops == 30);
  CHECK(s.sw->counters(0).prio_pause_sent[3] == 1);
  CHECK(stuck.pfc_watchdog_restores == 0);  // the stuck NIC never stops pausing
}

TEST_CASE("the PFC watchdog restores a priority once pauses stop", "[lab][failures][pfc]") {
  LabSwitchConfig c;
  c.pfc = true;
  c.pfc_watchdog_ms = 20;
  Star s{c};
  s.send(2, pfc_frame(3, 0xFFFF));  // one 33 s pause, never refreshed
  REQUIRE(s.poll_until([&] { return s.sw->counters(2).pfc_watchdog_trips == 1; }));
  REQUIRE(s.poll_until([&] { return s.sw->counters(2).pfc_watchdog_restores == 1; }));
  // Honoured again: frames flow, and a new pause holds them.
  s.send(0, frame(26, 1));
  CHECK(s.received(2, 10).size() == 1);
  s.send(2, pfc_frame(3, 0xFFFF));
  s.received(2, 2);
  s.send(0, frame(26, 2));
  CHECK(s.received(2, 10).empty());
  CHECK(s.sw->counters(2).prio_pause_received[3] == 2);
}

TEST_CASE("a slow receiver drains at its fraction of the port's rate and pauses the switch, nothing dropped",
          "[lab][failures][pfc][slow]") {
  LabSwitchConfig c;
  c.pfc = true;
  c.pfc_xoff_bytes = 8'000;
  c.pfc_xon_bytes = 4'000;
  c.egress_gbps = {0, 0, 1};              // the receiver's port at 1 Gb/s ...
  c.slow_receivers = {{2, 0.25}};         // ... its host draining at 0.25 Gb/s
  c.slow_receiver_buffer_bytes = 40'000;  // pauses above 20 KB, resumes at 10 KB
  Star s{c};
  constexpr std::uint32_t kFrames = 400;  // 256 bytes each: 112 KB on the wire
  for (std::uint32_t k = 0; k < kFrames; ++k) s.send(0, frame(26, static_cast<std::uint16_t>(k), 49152, k));
  // The switch on a clock of its own, 1 us a round.
  const std::uint64_t t0 = rte_get_tsc_cycles(), us = rte_get_tsc_hz() / 1'000'000;
  std::vector<std::uint32_t> seqs;
  std::uint64_t last_round = 0, pauses_to_sender = 0;
  for (std::uint64_t r = 0; r < 8'000; ++r) {
    s.sw->poll(t0 + r * us);
    rte_mbuf* pkts[32];
    std::uint16_t n = s.fabric->end(2, 0).receive(pkts, 32);
    for (std::uint16_t i = 0; i < n; ++i) {
      const auto* d = rte_pktmbuf_mtod(pkts[i], const std::uint8_t*);
      seqs.push_back(seq_of(std::vector<std::uint8_t>(d, d + 64)));
      last_round = r;
    }
    rte_pktmbuf_free_bulk(pkts, n);
    n = s.fabric->end(0, 0).receive(pkts, 32);
    for (std::uint16_t i = 0; i < n; ++i) {
      const auto* d = rte_pktmbuf_mtod(pkts[i], const std::uint8_t*);
      pauses_to_sender += pfc_frames({std::vector<std::uint8_t>(d, d + rte_pktmbuf_data_len(pkts[i]))}, 3, false);
    }
    rte_pktmbuf_free_bulk(pkts, n);
  }
  REQUIRE(seqs.size() == kFrames);
  for (std::uint32_t k = 0; k < kFrames; ++k) CHECK(seqs[k] == k);
  // At 0.25 Gb/s the 399 frames after the first take 399 x (256 + 24) x 8 / 0.25 ns = 3,575 us:
  // the last comes no sooner (less the NIC's 2 us of credit).
  CHECK(last_round >= 3'572);
  CHECK(last_round < 3'700);  // and the NIC drained at its rate, not slower
  const SwitchPortCounters& rx = s.sw->counters(2);
  CHECK(rx.slow_receiver_pauses >= 5);  // filled at 1 Gb/s, drained at a quarter: again and again
  CHECK(rx.slow_receiver_resumes == rx.slow_receiver_pauses);
  CHECK(rx.prio_pause_received[3] == rx.slow_receiver_pauses);
  CHECK(rx.slow_receiver_max_bytes <= 40'000);
  CHECK(rx.slow_receiver_max_bytes > 20'000);
  CHECK(rx.pfc_paused_ns > 0);
  CHECK(rx.tail_drops == 0);
  // The switch's queue grew behind the pauses: its ingress paused the sender.
  CHECK(s.sw->counters(0).pfc_pause_sent > 0);
  CHECK(pauses_to_sender > 0);
}

TEST_CASE("slow receivers: bad values are refused naming --slow-receiver", "[lab][failures][slow]") {
  SlowReceiverConfig r;
  CHECK(SlowReceiverConfig::parse("--slow-receiver", "2:0.25", r).ok());
  CHECK(r.port == 2);
  CHECK(r.fraction == 0.25);
  for (const char* bad : {"2", "2:", ":0.5", "2:1", "2:0", "2:-0.5", "2:x", "64:0.5", "a:0.5", "2:0.5x"}) {
    INFO(bad);
    const Status st = SlowReceiverConfig::parse("--slow-receiver", bad, r);
    CHECK(!st.ok());
    CHECK(st.message().find("--slow-receiver") != std::string::npos);
  }
  CHECK(!check_slow_receivers({{3, 0.5}}, {}, 3, true, 256'000).ok());            // no such port
  CHECK(!check_slow_receivers({{1, 0.5}, {1, 0.3}}, {}, 3, true, 256'000).ok());  // twice
  CHECK(!check_slow_receivers({{1, 0.5}}, {1}, 3, true, 256'000).ok());           // stuck already
  CHECK(!check_slow_receivers({{1, 0.5}}, {}, 3, false, 256'000).ok());           // no PFC
  CHECK(!check_slow_receivers({{1, 0.5}}, {}, 3, true, 10'000).ok());             // buffer too small
  CHECK(check_slow_receivers({{1, 0.5}}, {}, 3, true, 256'000).ok());
}
