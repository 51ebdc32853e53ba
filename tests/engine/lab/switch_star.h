// A star of ring links (three endpoints) around one LabSwitch, for the switch tests that send raw
// frames and read what an endpoint receives (test_switch_classes.cc, test_switch_failures.cc).
#pragma once

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/lab/lab_switch.h"
#include "protocols/wire/pfc.h"
#include "tests/engine/rc_lab.h"

namespace droce::test {

constexpr std::uint32_t kStarEndpoints = 3;  // endpoints 0 and 1 send to endpoint 2
inline std::uint32_t star_ip4(std::uint32_t i) { return 0x0A000000u | (i + 1); }

inline std::vector<std::uint8_t> pfc_frame(std::uint32_t prio, std::uint16_t quanta) {
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
    fabric = RingFabric::create(FabricSpec::star(kStarEndpoints, ImpairmentConfig{}), pool().get(), err);
    REQUIRE(fabric);
    for (RingEnd* end : fabric->ends_of(kStarEndpoints)) c.frame_ports.push_back(FramePort::ring(end));
    for (std::uint16_t i = 0; i < kStarEndpoints; ++i) c.host_routes.push_back(HostRoute::ipv4(star_ip4(i), i));
    c.pool = pool().get();
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
    rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
    REQUIRE(m != nullptr);
    auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(f.size())));
    REQUIRE(d != nullptr);
    std::memcpy(d, f.data(), f.size());
    REQUIRE(fabric->end(from, 0).send(&m, 1) == 1);
  }
  // One switch round, then what endpoint `at` received (the first 64 bytes of each frame).
  std::vector<std::vector<std::uint8_t>> round(std::uint32_t at) {
    sw->poll(rte_get_tsc_cycles());
    std::vector<std::vector<std::uint8_t>> got;
    rte_mbuf* pkts[32];
    const std::uint16_t n = fabric->end(at, 0).receive(pkts, 32);
    for (std::uint16_t i = 0; i < n; ++i) {
      const auto* d = rte_pktmbuf_mtod(pkts[i], const std::uint8_t*);
      got.emplace_back(d, d + std::min<std::uint32_t>(pkts[i]->data_len, 64));
    }
    rte_pktmbuf_free_bulk(pkts, n);
    return got;
  }
  std::vector<std::vector<std::uint8_t>> received(std::uint32_t at, int polls) {
    std::vector<std::vector<std::uint8_t>> all;
    for (int r = 0; r < polls; ++r)
      for (auto& f : round(at)) all.push_back(std::move(f));
    return all;
  }
  // Polls until `done` holds or 30 s pass (a deadline for a stalled test, never the expectation).
  template <typename F>
  bool poll_until(F done) {
    const std::uint64_t end = rte_get_tsc_cycles() + 30 * rte_get_tsc_hz();
    while (!done()) {
      if (rte_get_tsc_cycles() > end) return false;
      sw->poll(rte_get_tsc_cycles());
    }
    return true;
  }
};

}  // namespace droce::test
