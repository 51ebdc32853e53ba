// Congestion control and flow control in the engine: CE marks draw CNPs (notification point),
// CNPs cut the sender's rate (reaction point), the pacer holds data to that rate, hostile CNP
// floods stay bounded, and received PFC frames pause transmit for the quanta they give.
// Every lab here runs on a clock the test controls (1 µs per poll): rate recovery, pacing and
// pause times are measured in that time, so a busy machine cannot change the outcome.
#include <rte_cycles.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "protocols/wire/pfc.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using droce::test::addr;
using droce::test::Lab;
using droce::test::LabOptions;
using droce::test::pool;

namespace {

// A's memory (source) and B's (target) for WRITEs of `count` x `size` bytes.
struct WriteJob {
  std::vector<std::uint8_t> src, dst;
  rc::MemoryRegion smr, dmr;
  WriteJob(Lab& lab, std::uint32_t count, std::uint32_t size) : src(std::size_t{count} * size), dst(src.size()) {
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
    REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
    REQUIRE(
        lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  }
  void post(Lab& lab, std::uint32_t i, std::uint32_t size) const {
    rc::SendWr w;
    w.wr_id = i;
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(src.data()) + std::uint64_t{i} * size, size, smr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data()) + std::uint64_t{i} * size;
    w.rkey = dmr.rkey;
    REQUIRE(lab.a->post_send(lab.qpn_a, w).ok());
  }
};

// Counts successful completions of A's QP; fails the test on any error completion.
std::uint32_t reap(Lab& lab) {
  rc::Completion c[32];
  const unsigned n = lab.a->poll_cq(lab.qpn_a, c, 32);
  for (unsigned i = 0; i < n; ++i) REQUIRE(c[i].status == rc::WcStatus::kSuccess);
  return n;
}

// Hands a raw frame to A's port as if it came off the wire (through the relay's side of the ring).
void inject(Lab& lab, const std::uint8_t* frame, std::uint32_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)), frame, len);
  REQUIRE(rte_eth_tx_burst(lab.left.b->id(), 0, &m, 1) == 1);
}

std::uint32_t pfc_frame(std::uint16_t enable, std::uint8_t prio, std::uint16_t quanta, std::uint8_t* out) {
  wire::PfcFrame f;
  f.class_enable = enable;
  f.quanta[prio] = quanta;
  const std::uint8_t switch_mac[6] = {0x02, 0, 0, 0, 0, 0xEE};
  return wire::build_pfc(switch_mac, f, out, wire::kPfcFrameBytes);
}

void enable_rp(EndpointConfig& c) {
  c.dcqcn.reaction_point = true;
  c.dcqcn.params = dcqcn::DcqcnParams::paper(10e9);
}

constexpr std::uint64_t kPollNs = 1'000;  // the test clock's step per lab poll

}  // namespace

TEST_CASE("DCQCN in the engine: CE marks draw CNPs, the sender's rate is cut and paced, then recovers",
          "[engine][dcqcn]") {
  LabOptions o;
  o.ce_every = 8;  // a congested switch marking one data frame in eight
  o.tune_a = enable_rp;
  o.clock_step_ns = kPollNs;
  Lab lab("tcc", o);
  constexpr std::uint32_t kMsgs = 200, kSize = 16384;
  WriteJob job(lab, kMsgs, kSize);
  for (std::uint32_t i = 0; i < kMsgs; ++i) job.post(lab, i, kSize);
  std::uint32_t done = 0;
  REQUIRE(lab.run([&] { return (done += reap(lab)) == kMsgs; }));
  CHECK(job.dst == job.src);

  const auto& nb = lab.b->counters();
  const auto& na = lab.a->counters();
  // Every CE mark the relay made reached B's notification point; CNPs are rate-limited per QP.
  CHECK(nb.np_ecn_marked_roce_packets == lab.relay.ce_marked);
  CHECK(lab.relay.ce_marked > 100);
  CHECK(nb.np_cnp_sent > 0);
  CHECK(nb.np_cnp_sent <= nb.np_ecn_marked_roce_packets);
  // Each CNP reached A's reaction point; it cut unless it came within the cut-monitor period
  // (50 us, the CNP interval) of the last cut, as one delayed behind a queue may.
  CHECK(na.rp_cnp_handled + na.rp_cnp_ignored == nb.np_cnp_sent);
  CHECK(na.rp_cnp_handled > 0);
  const dcqcn::DcqcnReactionPoint* rp = lab.a->dcqcn_state(lab.qpn_a);
  REQUIRE(rp != nullptr);
  CHECK(rp->state().rate_cuts == na.rp_cnp_handled);
  CHECK(rp->rate_bps() < 10e9);
  CHECK(rp->rate_bps() >= rp->params().min_rate_bps);
  CHECK(na.pacer_waits > 0);
  // A (no notification point traffic towards it) sent no CNPs; B (no reaction point) cut nothing.
  CHECK(na.np_cnp_sent == 0);
  CHECK(nb.rp_cnp_handled == 0);

  // Marks stop: the timer-driven increases bring the rate back up (fast recovery towards the
  // target, then additive increase), polled while idle for 30 ms of the test's clock.
  lab.relay.ce_every = 0;
  const double cut = rp->rate_bps();
  for (int i = 0; i < 30'000; ++i) lab.poll();
  CHECK(rp->rate_bps() > cut);
  CHECK(rp->state().rate_increases > 0);
}

TEST_CASE("DCQCN governs READ traffic: CE-marked READ responses draw CNPs that slow the responder", "[engine][dcqcn]") {
  // A READs from B: the data flows B -> A as READ responses, which must leave ECT(0) so that a
  // switch can mark them, and the CNPs A's notification point answers them with must reach B's
  // QP (the one sending the data) and cut its rate.
  LabOptions o;
  o.ce_every = 8;
  o.ce_b_to_a = true;
  o.tune_b = enable_rp;
  o.clock_step_ns = kPollNs;
  Lab lab("tccr", o);
  constexpr std::uint32_t kMsgs = 100, kSize = 16384;
  std::vector<std::uint8_t> src(std::size_t{kMsgs} * kSize), dst(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 13 + 5);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_b.register_memory(src.data(), src.size(), rc::kAccessLocalWrite | rc::kAccessRemoteRead, smr).ok());
  REQUIRE(lab.mem_a.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  for (std::uint32_t i = 0; i < kMsgs; ++i) {
    rc::SendWr w;
    w.wr_id = i;
    w.opcode = rc::WrOpcode::kRead;
    w.sge = {reinterpret_cast<std::uint64_t>(dst.data()) + std::uint64_t{i} * kSize, kSize, dmr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(src.data()) + std::uint64_t{i} * kSize;
    w.rkey = smr.rkey;
    REQUIRE(lab.a->post_send(lab.qpn_a, w).ok());
  }
  std::uint32_t done = 0;
  REQUIRE(lab.run([&] { return (done += reap(lab)) == kMsgs; }));
  CHECK(dst == src);

  const auto& na = lab.a->counters();
  const auto& nb = lab.b->counters();
  // The READ responses were ECN-capable: the relay marked some, and every mark reached A.
  CHECK(lab.relay.ce_marked > 50);
  CHECK(na.np_ecn_marked_roce_packets == lab.relay.ce_marked);
  CHECK(na.np_cnp_sent > 0);
  // A's CNPs addressed B's QP, whose reaction point cut the READ responses' rate and paced them.
  CHECK(nb.rp_cnp_handled == na.np_cnp_sent);
  const dcqcn::DcqcnReactionPoint* rp = lab.b->dcqcn_state(lab.qpn_b);
  REQUIRE(rp != nullptr);
  CHECK(rp->state().rate_cuts == nb.rp_cnp_handled);
  CHECK(rp->rate_bps() < 10e9);
  CHECK(nb.pacer_waits > 0);
  // A has no reaction point: nothing of A's was cut.
  CHECK(na.rp_cnp_handled == 0);
}

TEST_CASE("the pacer holds a QP to its DCQCN rate", "[engine][dcqcn]") {
  LabOptions o;
  o.tune_a = [](EndpointConfig& c) {
    c.dcqcn.reaction_point = true;
    c.dcqcn.params = dcqcn::DcqcnParams::paper(200e6);  // a 200 Mb/s ceiling: 256 KiB takes >= 10.5 ms
  };
  o.clock_step_ns = kPollNs;
  Lab lab("tpace", o);
  constexpr std::uint32_t kMsgs = 64, kSize = 4096;
  WriteJob job(lab, kMsgs, kSize);
  const std::uint64_t t0 = lab.now_ns();
  for (std::uint32_t i = 0; i < kMsgs; ++i) job.post(lab, i, kSize);
  std::uint32_t done = 0;
  REQUIRE(lab.run([&] { return (done += reap(lab)) == kMsgs; }));
  const double secs = static_cast<double>(lab.now_ns() - t0) / 1e9;
  CHECK(job.dst == job.src);
  // The frames' bits at 200 Mb/s, less the pacer's 2 µs idle credit, on the test's clock; and
  // not much more (the lab moves 32 frames a poll, far above 200 Mb/s).
  const double frame_bits = static_cast<double>(kMsgs) * 4 * (1024 + 58) * 8;
  CHECK(secs >= frame_bits / 200e6 * 0.95);
  CHECK(secs <= frame_bits / 200e6 * 1.25);
  CHECK(lab.a->counters().pacer_waits > 0);
}

// B only answers (SACKs for A's lossy WRITEs): with its DCQCN rate at 50 Mb/s, a paced SACK
// would wait ~11 us for every ~70 bytes. Acknowledgements of every kind leave unpaced, as the RC
// ACK always did: B's pacer never holds its QP.
TEST_CASE("under DCQCN, selective repeat's acknowledgements are not paced: the responder's pacer never waits",
          "[engine][dcqcn][sr]") {
  LabOptions o;
  o.loss = 0.02;
  o.recovery = rc::Recovery::kSelectiveRepeat;
  o.tune_b = [](EndpointConfig& c) {
    c.dcqcn.reaction_point = true;
    c.dcqcn.params = dcqcn::DcqcnParams::paper(50e6);
  };
  o.clock_step_ns = kPollNs;
  Lab lab("tsrack", o);
  constexpr std::uint32_t kMsgs = 64, kSize = 4096;
  WriteJob job(lab, kMsgs, kSize);
  for (std::uint32_t i = 0; i < kMsgs; ++i) job.post(lab, i, kSize);
  std::uint32_t done = 0;
  REQUIRE(lab.run([&] { return (done += reap(lab)) == kMsgs; }));
  CHECK(job.dst == job.src);
  CHECK(lab.relay.dropped > 0);
  CHECK(lab.b->counters().tx_frames > 0);
  CHECK(lab.b->counters().pacer_waits == 0);
}

TEST_CASE("hostile CNPs: unknown QPs counted and dropped; a flood cannot push the rate below Rmin or stall the QP",
          "[engine][dcqcn]") {
  LabOptions o;
  o.tune_a = [](EndpointConfig& c) {
    c.dcqcn.reaction_point = true;
    c.dcqcn.params = dcqcn::DcqcnParams::paper(10e9);
    c.dcqcn.params.min_rate_bps = 50e6;
    c.dcqcn.params.min_time_between_cuts_ns = 2'000;  // mlx5's cut-monitor period: CNPs inside it are ignored
  };
  o.clock_step_ns = kPollNs;
  Lab lab("tflood", o);
  // CNPs as B would build them: to A's QP, and to a QPN A does not have.
  wire::TemplateConfig tc;
  tc.local = addr(2);
  tc.remote = addr(1);
  const auto t = wire::HeaderTemplate::make(tc);
  std::uint8_t cnp[128], stray[128];
  const std::uint32_t n = wire::build_cnp(t, lab.qpn_a, 48, cnp, sizeof(cnp));
  const std::uint32_t ns = wire::build_cnp(t, 0x7777, 48, stray, sizeof(stray));
  REQUIRE(n != 0);
  REQUIRE(ns != 0);
  // A burst every 3 µs of the test's clock: each burst's first CNP is outside the cut-monitor
  // period and cuts, its other 29 fall inside it.
  for (int burst = 0; burst < 100; ++burst) {
    for (int i = 0; i < 30; ++i) inject(lab, cnp, n);
    inject(lab, stray, ns);
    lab.advance_ns(3'000);
    lab.a->poll(lab.now_tsc());
  }
  const auto& na = lab.a->counters();
  CHECK(na.rp_cnp_handled + na.rp_cnp_ignored == 3000);
  CHECK(na.rp_cnp_handled == 100);
  CHECK(na.rp_cnp_ignored == 2900);
  CHECK(na.cnp_unknown_qp == 100);
  CHECK(na.rx_drops[static_cast<int>(wire::DropReason::kUnknownQpn)] == 100);
  const dcqcn::DcqcnReactionPoint* rp = lab.a->dcqcn_state(lab.qpn_a);
  CHECK(rp->rate_bps() >= 50e6);
  CHECK(rp->rate_bps() < 1e9);
  // At the floor the QP still moves data: 32 x 1 KiB at >= 50 Mb/s is a few ms.
  WriteJob job(lab, 32, 1024);
  for (std::uint32_t i = 0; i < 32; ++i) job.post(lab, i, 1024);
  std::uint32_t done = 0;
  REQUIRE(lab.run([&] { return (done += reap(lab)) == 32; }, 10));
  CHECK(job.dst == job.src);
}

TEST_CASE(
    "spoofed CNPs from the peer's address at the unmodified paper preset: one cut per 50 us, rate above its floor",
    "[engine][dcqcn][hardening]") {
  LabOptions o;
  o.tune_a = enable_rp;  // DcqcnParams::paper(10e9) as it ships: Rmin 2.5 Mb/s, cut monitor 50 us
  o.clock_step_ns = kPollNs;
  Lab lab("tcnpflood", o);
  wire::TemplateConfig tc;
  tc.local = addr(2);  // forged as B's: the source-address check lets them through
  tc.remote = addr(1);
  const auto t = wire::HeaderTemplate::make(tc);
  std::uint8_t cnp[128];
  const std::uint32_t n = wire::build_cnp(t, lab.qpn_a, 48, cnp, sizeof(cnp));
  REQUIRE(n != 0);
  // 20 CNPs every 10 us of the test's clock for 300 us: 620 CNPs, cuts only at 0, 50, ... 300 us.
  for (int burst = 0; burst <= 30; ++burst) {
    for (int i = 0; i < 20; ++i) inject(lab, cnp, n);
    lab.a->poll(lab.now_tsc());
    lab.advance_ns(10'000);
  }
  const auto& na = lab.a->counters();
  CHECK(na.rp_cnp_handled + na.rp_cnp_ignored == 620);
  CHECK(na.rp_cnp_handled <= 7);
  CHECK(na.rp_cnp_handled >= 6);
  const dcqcn::DcqcnReactionPoint* rp = lab.a->dcqcn_state(lab.qpn_a);
  REQUIRE(rp != nullptr);
  // At most 7 cuts at alpha <= 1 leave at least 10 Gb/s / 2^7 (78 Mb/s, 31 x Rmin); 620 unbounded
  // cuts would sit at Rmin (2.5 Mb/s).
  CHECK(rp->rate_bps() >= 10e9 / 128);
  CHECK(rp->rate_bps() > 30 * rp->params().min_rate_bps);
}

TEST_CASE("PFC: a pause for our priority holds transmit for its quanta, XON resumes, others are ignored",
          "[engine][pfc]") {
  LabOptions o;
  o.tune_a = [](EndpointConfig& c) {
    c.pfc.priority = 3;
    c.pfc.link_bps = 10e9;  // 65535 quanta = 3.36 ms; 1000 quanta = 51.2 µs
  };
  o.clock_step_ns = kPollNs;
  Lab lab("tpfc", o);
  WriteJob job(lab, 4, 1024);
  std::uint8_t f[wire::kPfcFrameBytes];

  // Priority 5 only: not ours, counted, nothing held.
  inject(lab, f, pfc_frame(1u << 5, 5, 65535, f));
  // A truncated MAC Control frame: counted, never parsed past its end.
  inject(lab, f, 20);
  lab.a->poll(lab.now_tsc());
  CHECK(lab.a->counters().pfc_other_frames == 2);
  CHECK(!lab.a->pfc_paused());

  // The longest pause for priority 3: the WRITE waits.
  inject(lab, f, pfc_frame(1u << 3, 3, 65535, f));
  lab.a->poll(lab.now_tsc());
  REQUIRE(lab.a->pfc_paused());
  job.post(lab, 0, 1024);
  for (int i = 0; i < 1'000; ++i) lab.poll();  // 1 ms of the test's clock
  CHECK(lab.a->pfc_paused());
  CHECK(job.dst[0] != job.src[0]);
  CHECK(reap(lab) == 0);

  // XON: it leaves at once.
  inject(lab, f, pfc_frame(1u << 3, 3, 0, f));
  std::uint32_t done = 0;
  REQUIRE(lab.run([&] { return (done += reap(lab)) == 1; }, 5));
  CHECK(!lab.a->pfc_paused());
  CHECK(lab.a->counters().pfc_pause_frames == 1);
  CHECK(lab.a->counters().pfc_resume_frames == 1);
  const std::uint64_t held = lab.a->counters().pfc_paused_ns;
  CHECK(held >= 1'000'000);  // 1 ms of polls, then XON
  CHECK(held < 1'100'000);

  // A short pause expires by itself: 1000 quanta at 10 Gb/s = 51.2 µs.
  inject(lab, f, pfc_frame(1u << 3, 3, 1000, f));
  lab.a->poll(lab.now_tsc());
  job.post(lab, 1, 1024);
  REQUIRE(lab.run([&] { return (done += reap(lab)) == 2; }, 5));
  CHECK(lab.a->counters().pfc_pause_frames == 2);
  const std::uint64_t second = lab.a->counters().pfc_paused_ns - held;
  CHECK(second >= 51'000);
  CHECK(second <= 51'300);
}

// A pause storm (a stuck peer renewing its XOFF for ever, SIGCOMM'16 §4.3) against the endpoint's
// watchdog: held for its 2 ms, transmit stops obeying and the WRITE leaves; later pauses are
// counted as ignored; 2 ms without one and pauses are obeyed again. Test clock: 1 µs per poll.
TEST_CASE("PFC watchdog: a storm held past watchdog_ms is no longer obeyed; a quiet watchdog_ms restores",
          "[engine][pfc]") {
  LabOptions o;
  o.tune_a = [](EndpointConfig& c) {
    c.pfc.priority = 3;
    c.pfc.link_bps = 10e9;  // 65535 quanta = 3.36 ms, longer than the watchdog
    c.pfc.watchdog_ms = 2;
  };
  o.clock_step_ns = kPollNs;
  Lab lab("tpfcwd", o);
  WriteJob job(lab, 2, 1024);
  std::uint8_t f[wire::kPfcFrameBytes];

  // The storm: a fresh XOFF every 500 µs, each longer than the gap.
  inject(lab, f, pfc_frame(1u << 3, 3, 65535, f));
  lab.a->poll(lab.now_tsc());
  REQUIRE(lab.a->pfc_paused());
  job.post(lab, 0, 1024);
  std::uint32_t done = 0;
  for (int i = 0; i < 1'900; ++i) {  // 1.9 ms: held, not yet tripped
    if (i % 500 == 499) inject(lab, f, pfc_frame(1u << 3, 3, 65535, f));
    lab.poll();
    done += reap(lab);
  }
  CHECK(done == 0);
  CHECK(lab.a->pfc_paused());
  CHECK(lab.a->counters().pfc_watchdog_trips == 0);
  for (int i = 1'900; i < 3'000 && done == 0; ++i) {  // past 2 ms the watchdog lets it go
    if (i % 500 == 499) inject(lab, f, pfc_frame(1u << 3, 3, 65535, f));
    lab.poll();
    done += reap(lab);
  }
  CHECK(done == 1);
  CHECK(job.dst[0] == job.src[0]);
  CHECK(lab.a->pfc_watchdog_tripped());
  CHECK(lab.a->counters().pfc_watchdog_trips == 1);
  const std::uint64_t held = lab.a->counters().pfc_paused_ns;
  CHECK(held >= 2'000'000);
  CHECK(held < 2'100'000);

  // The storm goes on: its pauses are counted, not obeyed.
  inject(lab, f, pfc_frame(1u << 3, 3, 65535, f));
  lab.poll();
  CHECK(!lab.a->pfc_paused());
  CHECK(lab.a->counters().pfc_watchdog_ignored >= 1);

  // It stops: 2 ms later the watchdog restores, and a pause holds transmit again.
  for (int i = 0; i < 2'100; ++i) lab.poll();
  CHECK(!lab.a->pfc_watchdog_tripped());
  CHECK(lab.a->counters().pfc_watchdog_restores == 1);
  inject(lab, f, pfc_frame(1u << 3, 3, 65535, f));
  lab.a->poll(lab.now_tsc());
  CHECK(lab.a->pfc_paused());
  job.post(lab, 1, 1024);
  for (int i = 0; i < 500; ++i) {
    lab.poll();
    done += reap(lab);
  }
  CHECK(done == 1);
  inject(lab, f, pfc_frame(1u << 3, 3, 0, f));
  REQUIRE(lab.run([&] { return (done += reap(lab)) == 2; }, 5));
  CHECK(lab.a->counters().pfc_watchdog_trips == 1);
}
