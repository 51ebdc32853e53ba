// droce-switch's core with real droce endpoints around it (SwitchExperiment): ECN marking at a shaped
// bottleneck drives CNPs and rate cuts; PFC keeps the fabric lossless; without either, tail drops
// are recovered by go-back-N. Every run must end with the receiver's memory equal to the source.
#include <catch2/catch.hpp>

#include "engine/lab/switch_experiment.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;

namespace {

SwitchExperimentConfig base(bool dcqcn) {
  SwitchExperimentConfig c;
  c.senders = 2;
  c.bottleneck_gbps = 2;
  c.dcqcn = dcqcn;
  c.params = dcqcn::DcqcnParams::paper(10e9);
  c.duration_ms = 100;
  c.start_ms = {0, 30};
  c.min_messages_per_sender = 32;  // a busy machine may sleep through the late sender's window
  c.sw.kmax_bytes = 40'000;
  c.sw.pmax = 0.1;
  c.pool = test::pool().get();
  return c;
}

SwitchExperimentResult run(const SwitchExperimentConfig& c) {
  Status err;
  auto lab = SwitchExperiment::create(c, err);
  INFO(err.message());
  REQUIRE(lab);
  return lab->run();
}

}  // namespace

TEST_CASE("two droce senders through the lab switch: ECN marks, CNPs and rate cuts at the bottleneck",
          "[engine][switch][dcqcn]") {
  const SwitchExperimentResult r = run(base(true));
  CHECK(r.data_ok);
  CHECK(r.bottleneck.ecn_marked > 0);
  CHECK(r.bottleneck.tail_drops == 0);  // two windows of 128 KB never fill a 1 MB buffer
  CHECK(r.receiver_ecn_marked == r.bottleneck.ecn_marked);
  CHECK(r.receiver_cnps_sent > 0);
  for (const auto& s : r.senders) {
    CHECK(s.errors == 0);
    CHECK(s.messages > 0);
    CHECK(s.cnps_handled > 0);
    CHECK(s.rate_cuts == s.cnps_handled);
  }
  CHECK(!r.samples.empty());
}

TEST_CASE("lab switch in lossless mode: PFC pauses the senders, nothing is dropped or retransmitted",
          "[engine][switch][pfc]") {
  SwitchExperimentConfig c = base(false);
  c.sw.pfc = true;
  c.sw.pfc_xoff_bytes = 30'000;
  c.sw.pfc_xon_bytes = 15'000;
  c.sw.pfc_pause_quanta = 2000;  // 102 µs at 10 Gb/s, refreshed while over XOFF
  const SwitchExperimentResult r = run(c);
  CHECK(r.data_ok);
  CHECK(r.bottleneck.tail_drops == 0);
  std::uint64_t sent = 0;
  for (const auto& i : r.ingress) sent += i.pfc_pause_sent + i.pfc_resume_sent;
  CHECK(sent > 0);
  for (const auto& s : r.senders) {
    CHECK(s.errors == 0);
    CHECK(s.pfc_pauses > 0);
    CHECK(s.pfc_paused_ns > 0);
    CHECK(s.retransmitted == 0);
  }
}

TEST_CASE("lab switch without congestion control or PFC: a small buffer tail-drops and go-back-N recovers",
          "[engine][switch]") {
  SwitchExperimentConfig c = base(false);
  c.sw.buffer_bytes = 48'000;
  const SwitchExperimentResult r = run(c);
  CHECK(r.data_ok);
  CHECK(r.bottleneck.tail_drops > 0);
  std::uint64_t retx = 0;
  for (const auto& s : r.senders) retx += s.retransmitted;
  CHECK(retx > 0);
}
