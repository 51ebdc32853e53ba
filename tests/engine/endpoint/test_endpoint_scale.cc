// Endpoint at scale: 10,000 connected QPs, a poll's work follows the active ones (issue 13).
#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;

namespace {

constexpr std::uint32_t kQps = 10'000;

// Small queues: the idle QPs only have to exist and be connected.
rc::QpAttr scale_attr(std::uint32_t sq_psn) {
  rc::QpAttr a;
  a.pmtu = 1024;
  a.sq_psn = sq_psn;
  a.sq_depth = 16;
  a.rq_depth = 16;
  a.timeout = 14;  // 67 ms
  a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
  return a;
}

// Connects kQps - 1 more QP pairs beside the lab's own (which is pair 0).
void connect_all(Lab& lab, std::vector<std::uint32_t>& on_a, std::vector<std::uint32_t>& on_b) {
  on_a = {lab.qpn_a};
  on_b = {lab.qpn_b};
  for (std::uint32_t i = 1; i < kQps; ++i) {
    const rc::QpAttr qa = scale_attr(0x100 * i), qb = scale_attr(0x80 * i);
    std::uint32_t a = 0, b = 0;
    REQUIRE(lab.a->create_qp(qa, a).ok());
    REQUIRE(lab.b->create_qp(qb, b).ok());
    REQUIRE(lab.a->connect(a, RemoteQp{addr(2), b, qb.sq_psn}).ok());
    REQUIRE(lab.b->connect(b, RemoteQp{addr(1), a, qa.sq_psn}).ok());
    on_a.push_back(a);
    on_b.push_back(b);
  }
}

LabOptions scale_options(double loss) {
  LabOptions o;
  o.loss = loss;
  o.clock_step_ns = 10'000;  // the test's clock: an ACK timeout is ~6,700 polls at any speed
  o.tune_a = [](EndpointConfig& c) { c.transport.max_qps = kQps; };
  o.tune_b = o.tune_a;
  return o;
}

// One WRITE on QP `qpn` of A: `size` bytes at `off` of src into the same offset of dst.
void post_write(Lab& lab, std::uint32_t qpn, std::uint64_t wr_id, const std::vector<std::uint8_t>& src,
                const rc::MemoryRegion& smr, std::vector<std::uint8_t>& dst, const rc::MemoryRegion& dmr,
                std::uint64_t off, std::uint32_t size) {
  rc::SendWr w;
  w.wr_id = wr_id;
  w.opcode = rc::WrOpcode::kWrite;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()) + off, size, smr.lkey};
  w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data()) + off;
  w.rkey = dmr.rkey;
  REQUIRE(lab.a->post_send(qpn, w).ok());
}

std::uint64_t visits(const Lab& lab) {
  return lab.a->counters().tx_qp_turns + lab.a->counters().timer_fires + lab.b->counters().tx_qp_turns +
         lab.b->counters().timer_fires;
}

}  // namespace

TEST_CASE(
    "10,000 connected QPs, 100 of them active, 5 % loss both ways -> every message arrives intact, the idle "
    "QPs send nothing",
    "[engine][transport][scale]") {
  Lab lab("tscale", scale_options(0.05));
  std::vector<std::uint32_t> on_a, on_b;
  connect_all(lab, on_a, on_b);
  // Every 100th pair is active, so active QPs sit between idle ones all over the slot range.
  constexpr std::uint32_t kActive = 100, kMsgs = 4, kSize = 3000;  // 3 packets per WRITE
  std::vector<std::uint8_t> src(std::size_t{kActive} * kMsgs * kSize), dst(src.size(), 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 31 + (i >> 12));
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  auto active_qpn = [&](std::uint32_t k) { return on_a[k * (kQps / kActive)]; };
  for (std::uint32_t k = 0; k < kActive; ++k)
    for (std::uint32_t m = 0; m < kMsgs; ++m)
      post_write(lab, active_qpn(k), m, src, smr, dst, dmr, (std::uint64_t{k} * kMsgs + m) * kSize, kSize);

  std::uint32_t done = 0, failed = 0, out_of_order = 0;
  std::vector<std::uint32_t> next_wr(kActive, 0);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(100);  // hang guard only
  while (done + failed < kActive * kMsgs && std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 64; ++i) lab.poll();
    for (std::uint32_t k = 0; k < kActive; ++k) {
      rc::Completion c[8];
      const unsigned n = lab.a->poll_cq(active_qpn(k), c, 8);
      for (unsigned j = 0; j < n; ++j) {
        (c[j].status == rc::WcStatus::kSuccess ? done : failed)++;
        out_of_order += c[j].wr_id != next_wr[k]++;
      }
    }
  }
  CHECK(failed == 0);
  CHECK(out_of_order == 0);
  REQUIRE(done == kActive * kMsgs);
  CHECK(dst == src);
  CHECK(lab.relay.dropped > 0);  // the loss was real: recovery (NAKs, timeouts) was exercised
  std::uint64_t idle_sent = 0, resent = 0;
  for (std::uint32_t i = 0; i < kQps; ++i) {
    const bool active = i % (kQps / kActive) == 0;
    const std::uint64_t sent =
        lab.a->qp(on_a[i])->counters().packets_sent + lab.b->qp(on_b[i])->counters().packets_sent;
    if (!active) idle_sent += sent;
    resent += lab.a->qp(on_a[i])->counters().retransmitted_packets;
  }
  CHECK(idle_sent == 0);
  CHECK(resent > 0);
}

TEST_CASE(
    "10,000 connected idle QPs -> a poll gives no QP a transmit turn and fires no timer; with 3 active, at "
    "most 3 turns a poll",
    "[engine][transport][scale]") {
  LabOptions o = scale_options(0);
  // DCQCN on both sides: a QP at line rate has no rate timer to run either.
  o.tune_a = [](EndpointConfig& c) {
    c.transport.max_qps = kQps;
    c.dcqcn.reaction_point = true;
  };
  o.tune_b = o.tune_a;
  Lab lab("tidle", o);
  std::vector<std::uint32_t> on_a, on_b;
  connect_all(lab, on_a, on_b);
  // Connecting puts each QP on the ready list once: the first poll finds nothing to send.
  lab.poll();
  const std::uint64_t before = visits(lab);
  for (int i = 0; i < 1000; ++i) lab.poll();
  CHECK(visits(lab) == before);

  // Three QPs far apart get one WRITE each: only they (and their peers) take turns.
  std::vector<std::uint8_t> src(3 * 4096), dst(src.size(), 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 1);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  const std::uint32_t active[3] = {on_a[17], on_a[5000], on_a[kQps - 1]};
  for (std::uint32_t k = 0; k < 3; ++k) post_write(lab, active[k], k, src, smr, dst, dmr, k * 4096, 4096);
  std::uint32_t done = 0;
  std::uint64_t most_turns = 0;
  for (int i = 0; i < 2000 && done < 3; ++i) {
    const std::uint64_t a0 = lab.a->counters().tx_qp_turns, b0 = lab.b->counters().tx_qp_turns;
    lab.poll();
    most_turns = std::max(most_turns, lab.a->counters().tx_qp_turns - a0);
    most_turns = std::max(most_turns, lab.b->counters().tx_qp_turns - b0);
    for (std::uint32_t q : active) {
      rc::Completion c;
      if (lab.a->poll_cq(q, &c, 1) == 1 && c.status == rc::WcStatus::kSuccess) ++done;
    }
  }
  REQUIRE(done == 3);
  CHECK(dst == src);
  CHECK(most_turns >= 1);
  CHECK(most_turns <= 3);

  // Done and acknowledged: the ACK timers are disarmed and the QPs idle again.
  for (int i = 0; i < 10; ++i) lab.poll();
  const std::uint64_t after = visits(lab);
  for (int i = 0; i < 1000; ++i) lab.poll();
  CHECK(visits(lab) == after);
}

TEST_CASE("an idle QP's ACK timer still fires from the wheel: a WRITE into a silent peer times out and retries",
          "[engine][transport][scale]") {
  LabOptions o = scale_options(1.0);  // the relay drops everything
  Lab lab("tsilent", o);
  std::vector<std::uint8_t> src(1024, 0x5A);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  rc::SendWr w;
  w.wr_id = 1;
  w.opcode = rc::WrOpcode::kWrite;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 1024, smr.lkey};
  w.remote_addr = 0x1000;
  w.rkey = 0x1234;
  REQUIRE(lab.a->post_send(lab.qpn_a, w).ok());
  // 67 ms of ACK timeout is ~6,700 polls of 10 µs; 20,000 polls cover two timeouts.
  for (int i = 0; i < 20'000; ++i) lab.poll();
  CHECK(lab.qa->counters().local_ack_timeout_err >= 2);
  CHECK(lab.qa->counters().retransmitted_packets >= 2);
  CHECK(lab.a->counters().timer_fires >= 2);
}
