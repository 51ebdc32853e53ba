// The DCQCN paper's headline behaviour, reproduced on the deterministic simulator.
#include <catch2/catch.hpp>

#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/fabric.h"

using namespace droce::sim;

namespace {
SimConfig base(std::uint32_t flows, bool cc) {
  SimConfig c;
  c.flows = flows;
  c.link_gbps = 40;
  c.cc = cc;
  c.dcqcn = droce::dcqcn::DcqcnParams::paper();
  return c;
}
}  // namespace

TEST_CASE("paper preset, 40 Gb/s: a second flow starting later converges to a fair share", "[dcqcn][sim]") {
  auto c = base(2, true);
  c.start_stagger_ms = 10;
  c.duration_ms = 100;
  const auto r = run_dumbbell(c);
  CHECK(r.jain_index >= 0.95);
  CHECK(r.utilization >= 0.90);
  CHECK(r.queue_p99_bytes <= c.kmax_bytes);
  CHECK(r.drops == 0);
  CHECK(r.cnps > 0);
  REQUIRE(r.flows.size() == 2);
  CHECK(r.flows[1].throughput_gbps > 15);  // the late flow got its share
}

TEST_CASE("8 -> 1 incast with DCQCN: the queue stays bounded, no drops; without CC the buffer overflows",
          "[dcqcn][sim]") {
  // 8 senders at line rate for the first round trip build ~2.7 MB before the first cuts land
  // (a single-priority switch without PFC needs that much buffer).
  auto c = base(8, true);
  c.incast = true;
  c.duration_ms = 50;
  c.buffer_bytes = 4'000'000;
  const auto r = run_dumbbell(c);
  CHECK(r.drops == 0);
  CHECK(r.queue_max_bytes < c.buffer_bytes);
  CHECK(r.queue_p99_bytes <= c.kmax_bytes + 10'000);
  CHECK(r.utilization >= 0.90);
  CHECK(r.jain_index >= 0.95);

  c.cc = false;
  const auto n = run_dumbbell(c);
  CHECK(n.drops > 0);
  CHECK(n.queue_max_bytes >= c.buffer_bytes - c.packet_bytes);
  CHECK(n.queue_p99_bytes > 10 * r.queue_p99_bytes);
}

TEST_CASE("two flows without congestion control overflow the buffer", "[dcqcn][sim]") {
  auto c = base(2, false);
  c.start_stagger_ms = 10;
  c.duration_ms = 40;
  const auto r = run_dumbbell(c);
  CHECK(r.drops > 0);
  CHECK(r.queue_p99_bytes >= c.buffer_bytes - c.packet_bytes);
}

TEST_CASE("same seed -> identical run; the run is independent of wall-clock time", "[dcqcn][sim]") {
  auto c = base(4, true);
  c.start_stagger_ms = 2;
  c.duration_ms = 20;
  c.loss = 0.001;
  c.seed = 42;
  const auto a = run_dumbbell(c);
  const auto b = run_dumbbell(c);
  CHECK(a.series_queue_bytes == b.series_queue_bytes);
  CHECK(a.series_rate_gbps == b.series_rate_gbps);
  CHECK(a.drops == b.drops);
  CHECK(a.cnps == b.cnps);
  CHECK(a.events == b.events);
  c.seed = 43;
  const auto d = run_dumbbell(c);
  CHECK((d.series_queue_bytes != a.series_queue_bytes || d.drops != a.drops));
}

TEST_CASE("simulator options are validated with the option's name", "[dcqcn][sim]") {
  auto c = base(2, true);
  CHECK(c.validate().ok());
  c.kmin_bytes = 300'000;
  CHECK(c.validate().code() == droce::StatusCode::kInvalidArgument);
  CHECK(c.validate().message().rfind("--kmin-bytes", 0) == 0);
  c = base(2, true);
  c.flows = 0;
  CHECK(c.validate().message().rfind("--flows", 0) == 0);
  c = base(2, true);
  c.loss = 1.0;
  CHECK(c.validate().message().rfind("--loss", 0) == 0);
  c = base(2, true);
  c.dcqcn.g = 2;
  CHECK(c.validate().message().rfind("--g", 0) == 0);
  c = base(3, true);
  c.start_stagger_ms = 30;
  c.duration_ms = 50;
  CHECK(c.validate().message().rfind("--start-stagger-ms", 0) == 0);
}

TEST_CASE("Jain's index: equal shares -> 1, one of n hogging -> 1/n", "[dcqcn][sim]") {
  CHECK(jain_index({5, 5, 5, 5}) == Approx(1.0));
  CHECK(jain_index({8, 0, 0, 0}) == Approx(0.25));
}

TEST_CASE("lossless dumbbell: PFC holds an 8 -> 1 incast without CC with no drops", "[dcqcn][sim][pfc]") {
  FabricConfig f;
  f.base = base(8, false);
  f.base.incast = true;
  f.base.duration_ms = 20;
  f.topology = Topology::kDumbbell;
  f.pfc = true;
  REQUIRE(f.validate().ok());
  const auto r = run_fabric(f);
  CHECK(r.sim.drops == 0);
  CHECK(r.pauses_sent > 0);
  CHECK(r.sim.utilization > 0.99);
  // Without PFC the same incast overflows the buffer.
  auto lossy = base(8, false);
  lossy.incast = true;
  lossy.duration_ms = 20;
  CHECK(run_dumbbell(lossy).drops > 0);
}

TEST_CASE("two-hop incast: PFC alone pauses an innocent flow (head-of-line blocking); DCQCN keeps pauses rare",
          "[dcqcn][sim][pfc]") {
  FabricConfig f;
  f.base = base(8, false);
  f.base.incast = true;
  f.base.duration_ms = 50;  // the innocent flow's rate needs ~35 ms to climb back after the first cuts
  f.topology = Topology::kTwoHop;
  f.pfc = true;
  const auto pfc_only = run_fabric(f);
  f.base.cc = true;
  const auto with_dcqcn = run_fabric(f);
  for (const auto* r : {&pfc_only, &with_dcqcn}) {
    CHECK(r->sim.drops == 0);
    CHECK(r->sim.utilization > 0.9);  // the incast still fills the congested port
  }
  // The innocent flow shares only the first hop, whose uplink has room for it; PFC spreading
  // back from the second hop pauses it anyway.
  CHECK(pfc_only.innocent_gbps < 10);
  CHECK(pfc_only.host_paused_fraction.back() > 0.5);
  CHECK(pfc_only.pauses_s1 > 100);
  CHECK(with_dcqcn.innocent_gbps > 20);
  CHECK(with_dcqcn.pauses_sent * 20 < pfc_only.pauses_sent);
  CHECK(with_dcqcn.sim.jain_index > 0.95);
}

TEST_CASE("fabric options: XON above XOFF and XOFF without headroom are refused by name", "[dcqcn][sim][pfc]") {
  FabricConfig f;
  f.xon_bytes = f.xoff_bytes;
  CHECK(f.validate().message().find("--pfc-xon-bytes") != std::string::npos);
  f = FabricConfig{};
  f.xoff_bytes = f.base.buffer_bytes;
  CHECK(f.validate().message().find("--pfc-xoff-bytes") != std::string::npos);
}
