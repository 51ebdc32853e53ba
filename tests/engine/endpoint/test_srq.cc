// A shared receive queue on an endpoint: two QPs of B take their receives from one SRQ while A
// sends on both; every message lands whole, each QP's completions come through B's CQ, the limit
// event tells the application to post more, and an empty SRQ only delays (RNR), never fails.
#include <catch2/catch.hpp>
#include <vector>

#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

TEST_CASE("endpoint SRQ: two QPs share one receive queue, limit event, RNR until reposted", "[engine][srq]") {
  Lab lab("tsrq", LabOptions{});
  std::uint32_t srq = 0;
  CHECK_FALSE(lab.b->create_srq(0, srq).ok());
  REQUIRE(lab.b->create_srq(16, srq).ok());
  CHECK_FALSE(lab.b->attach_srq(lab.qpn_b, srq).ok());  // the lab's QP is connected already
  // Two more QP pairs; B's take their receives from the SRQ.
  std::uint32_t qa[2], qb[2];
  for (int i = 0; i < 2; ++i) {
    rc::QpAttr a;
    a.timeout = 14;
    a.rnr_retry = 7;  // an empty SRQ only delays
    a.min_rnr_timer = 1;
    REQUIRE(lab.a->create_qp(a, qa[i]).ok());
    REQUIRE(lab.b->create_qp(a, qb[i]).ok());
    REQUIRE(lab.b->attach_srq(qb[i], srq).ok());
    REQUIRE(lab.a->connect(qa[i], RemoteQp{addr(2), qb[i], lab.b->qp(qb[i])->attr().sq_psn}).ok());
    REQUIRE(lab.b->connect(qb[i], RemoteQp{addr(1), qa[i], lab.a->qp(qa[i])->attr().sq_psn}).ok());
  }
  CHECK_FALSE(lab.b->post_recv(qb[0], {1, {0, 0, 0}}).ok());  // an SRQ QP posts no receives of its own
  constexpr int kMsgs = 60;
  constexpr std::uint32_t kSize = 3000;  // three packets at PMTU 1024
  std::vector<std::uint8_t> src(kMsgs * kSize), dst(16 * 4096);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 1);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  std::uint64_t next_wr = 0;
  auto repost = [&](int n) {
    for (int k = 0; k < n; ++k, ++next_wr)
      REQUIRE(
          lab.b
              ->post_srq_recv(
                  srq, {next_wr, {reinterpret_cast<std::uint64_t>(dst.data() + (next_wr % 16) * 4096), 4096, dmr.lkey}})
              .ok());
  };
  repost(8);
  REQUIRE(lab.b->arm_srq_limit(srq, 4).ok());
  int posted = 0, sent = 0, failed = 0, received = 0, limit_events = 0;
  int per_qp[2] = {0, 0};
  const bool done = lab.run([&] {
    while (posted < kMsgs && posted - sent < 8) {
      rc::SendWr w;
      w.wr_id = static_cast<std::uint64_t>(posted);
      w.sge = {reinterpret_cast<std::uint64_t>(src.data() + posted * kSize), kSize, smr.lkey};
      if (!lab.a->post_send(qa[posted % 2], w).ok()) break;
      ++posted;
    }
    rc::Completion c[16];
    for (unsigned n = lab.a->poll_cq(c, 16), i = 0; i < n; ++i)
      (c[i].status == rc::WcStatus::kSuccess ? sent : failed)++;
    for (unsigned n = lab.b->poll_cq(c, 16), i = 0; i < n; ++i) {
      CHECK(c[i].status == rc::WcStatus::kSuccess);
      CHECK(c[i].byte_len == kSize);
      const int q = c[i].qp_num == qb[0] ? 0 : 1;
      CHECK(c[i].qp_num == qb[q]);
      // Each QP's messages arrive in its order: QP q carries messages q, q + 2, q + 4, ...
      const int m = q + 2 * per_qp[q]++;
      CHECK(std::equal(src.begin() + m * kSize, src.begin() + (m + 1) * kSize, dst.begin() + (c[i].wr_id % 16) * 4096));
      ++received;
    }
    // The limit event is the cue to post more; 8 at a time, re-armed, keeps at most 16 posted.
    if (lab.b->srq_limit_reached(srq)) {
      ++limit_events;
      repost(8);
      REQUIRE(lab.b->arm_srq_limit(srq, 4).ok());
    }
    return failed != 0 || (received == kMsgs && sent == kMsgs);
  });
  CHECK(done);
  CHECK(failed == 0);
  CHECK(received == kMsgs);
  CHECK(per_qp[0] == kMsgs / 2);
  CHECK(limit_events > 0);
  CHECK(lab.b->srq(srq)->taken() == static_cast<std::uint64_t>(kMsgs));
}
