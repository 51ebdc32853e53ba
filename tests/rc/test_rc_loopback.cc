// Go-back-N end to end: two RC QPs over an impaired fake link carrying real frames. Every message
// must arrive exactly once, in order, with its content intact — whatever the link does.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "tests/rc/loopback.h"

using namespace droce;
using namespace droce::test;
using rc::WcStatus;

namespace {

std::uint8_t pat(std::uint32_t msg, std::uint32_t i) { return static_cast<std::uint8_t>(msg * 31 + i * 7 + (i >> 9)); }

struct SendRun {
  int delivered = 0;
  int in_order = 0;
  int corrupted = 0;
  int send_ok = 0;
  int errors = 0;
};

// Sends `count` messages of varying size (0..3*PMTU+17) A -> B with SEND (or SEND with immediate).
SendRun run_sends(Loopback& lb, int count, int max_steps = 400000) {
  const std::uint32_t kMax = 3 * 1024 + 17;
  std::vector<std::uint8_t> src(64 * kMax), dst(256 * kMax);
  rc::MemoryRegion smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  rc::MemoryRegion dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
  SendRun r;
  int posted = 0, recv_posted = 0;
  std::vector<std::uint32_t> sizes(count);
  for (int i = 0; i < count; ++i) sizes[i] = static_cast<std::uint32_t>((i * 977) % (kMax + 1));
  auto done = [&] { return r.delivered + r.errors >= count && r.send_ok + r.errors >= count; };
  for (int s = 0; s < max_steps && !done(); ++s) {
    // Keep up to 32 sends and 64 receives posted; buffers are reused round-robin.
    while (posted < count && posted - r.send_ok < 32) {
      const int slot = posted % 64;
      for (std::uint32_t i = 0; i < sizes[posted]; ++i) src[slot * kMax + i] = pat(posted, i);
      rc::SendWr wr;
      wr.wr_id = static_cast<std::uint64_t>(posted);
      wr.opcode = posted % 3 == 0 ? rc::WrOpcode::kSendWithImm : rc::WrOpcode::kSend;
      wr.imm = static_cast<std::uint32_t>(posted);
      wr.sge = {reinterpret_cast<std::uint64_t>(src.data() + slot * kMax), sizes[posted], smr.lkey};
      if (!lb.qp(0).post_send(wr).ok()) break;
      ++posted;
    }
    while (recv_posted < count && recv_posted - r.delivered < 64) {
      const int slot = recv_posted % 256;
      rc::RecvWr rw{static_cast<std::uint64_t>(recv_posted),
                    {reinterpret_cast<std::uint64_t>(dst.data() + slot * kMax), kMax, dmr.lkey}};
      if (!lb.qp(1).post_recv(rw).ok()) break;
      ++recv_posted;
    }
    lb.step();
    rc::Completion c;
    while (lb.qp(0).poll_cq(c)) {
      if (c.status == WcStatus::kSuccess)
        ++r.send_ok;
      else
        ++r.errors;
    }
    while (lb.qp(1).poll_cq(c)) {
      if (c.status != WcStatus::kSuccess) {
        ++r.errors;
        continue;
      }
      const int m = static_cast<int>(c.wr_id);
      if (m == r.delivered) ++r.in_order;
      bool ok = c.byte_len == sizes[m] && (m % 3 != 0 || (c.has_imm && c.imm == static_cast<std::uint32_t>(m)));
      const std::uint8_t* p = dst.data() + (m % 256) * kMax;
      for (std::uint32_t i = 0; ok && i < sizes[m]; ++i) ok = p[i] == pat(m, i);
      if (!ok) ++r.corrupted;
      ++r.delivered;
    }
  }
  return r;
}

}  // namespace

TEST_CASE("SEND: 2000 messages of 0..3 PMTU arrive exactly once, in order, intact (clean link)", "[rc][e2e]") {
  Loopback lb(attr(0x11, 0x12, 100, 200), attr(0x12, 0x11, 200, 100));
  connect(lb);
  const auto r = run_sends(lb, 2000);
  CHECK(r.delivered == 2000);
  CHECK(r.in_order == 2000);
  CHECK(r.corrupted == 0);
  CHECK(r.send_ok == 2000);
  CHECK(r.errors == 0);
  CHECK(lb.qp(0).counters().retransmitted_packets == 0);
}

TEST_CASE("SEND across the 2^24 PSN wrap", "[rc][e2e][wrap]") {
  Loopback lb(attr(0x11, 0x12, 0xFFFFF0, 0xFFFFE0), attr(0x12, 0x11, 0xFFFFE0, 0xFFFFF0));
  connect(lb);
  const auto r = run_sends(lb, 300);
  CHECK(r.delivered == 300);
  CHECK(r.in_order == 300);
  CHECK(r.corrupted == 0);
  CHECK(lb.qp(0).sq_nxt() < 0x1000);  // wrapped
}

TEST_CASE("SEND with 1 % and 5 % random loss, duplication and reordering: exactly once, in order", "[rc][e2e][loss]") {
  for (double loss : {0.01, 0.05}) {
    Loopback lb(attr(0x11, 0x12, 7, 9), attr(0x12, 0x11, 9, 7), 42);
    connect(lb);
    for (int s = 0; s < 2; ++s) {
      lb.impair(s).loss = loss;
      lb.impair(s).duplicate = 0.01;
      lb.impair(s).reorder = 0.01;
    }
    const auto r = run_sends(lb, 1000);
    INFO("loss " << loss);
    CHECK(r.delivered == 1000);
    CHECK(r.in_order == 1000);
    CHECK(r.corrupted == 0);
    CHECK(r.errors == 0);
    CHECK(lb.qp(0).counters().retransmitted_packets > 0);
    CHECK(lb.qp(1).counters().duplicate_request + lb.qp(1).counters().out_of_sequence > 0);
  }
}

TEST_CASE("loss bursts and ACK-only loss are recovered", "[rc][e2e][loss]") {
  Loopback lb(attr(0x11, 0x12, 1, 1), attr(0x12, 0x11, 1, 1), 7);
  connect(lb);
  impair_bursts_and_ack_loss(lb);
  const auto r = run_sends(lb, 800);
  CHECK(r.delivered == 800);
  CHECK(r.in_order == 800);
  CHECK(r.corrupted == 0);
  CHECK(r.errors == 0);
}

TEST_CASE("RDMA WRITE and READ with 5 % loss leave the target memory identical to the source", "[rc][e2e][loss]") {
  Loopback lb(attr(0x11, 0x12, 5, 6), attr(0x12, 0x11, 6, 5), 9);
  connect(lb);
  lb.impair(0).loss = 0.05;
  lb.impair(1).loss = 0.05;
  std::vector<std::uint8_t> local(256 * 1024), remote(256 * 1024), back(256 * 1024);
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = static_cast<std::uint8_t>(i * 13 + 1);
  auto lmr = *lb.ep(0).mrs.register_region(local.data(), local.size(), rc::kAccessLocalWrite);
  auto bmr = *lb.ep(0).mrs.register_region(back.data(), back.size(), rc::kAccessLocalWrite);
  auto rmr = *lb.ep(1).mrs.register_region(remote.data(), remote.size(),
                                           rc::kAccessRemoteWrite | rc::kAccessRemoteRead | rc::kAccessLocalWrite);
  // 64 WRITEs of 4 KiB each (4 packets), then 16 READs of 16 KiB back.
  for (int i = 0; i < 64; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(local.data() + i * 4096), 4096, lmr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + i * 4096);
    w.rkey = rmr.rkey;
    REQUIRE(lb.qp(0).post_send(w).ok());
  }
  int ok = 0, bad = 0;
  auto drain = [&] {
    rc::Completion c;
    while (lb.qp(0).poll_cq(c)) (c.status == WcStatus::kSuccess ? ok : bad)++;
  };
  REQUIRE(lb.run(
      [&] {
        drain();
        return ok + bad == 64;
      },
      200000));
  CHECK(bad == 0);
  CHECK(remote == local);
  for (int i = 0; i < 16; ++i) {
    rc::SendWr w;
    w.wr_id = 100 + static_cast<std::uint64_t>(i);
    w.opcode = rc::WrOpcode::kRead;
    w.sge = {reinterpret_cast<std::uint64_t>(back.data() + i * 16384), 16384, bmr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + i * 16384);
    w.rkey = rmr.rkey;
    REQUIRE(lb.qp(0).post_send(w).ok());
  }
  REQUIRE(lb.run(
      [&] {
        drain();
        return ok + bad == 80;
      },
      200000));
  CHECK(bad == 0);
  CHECK(back == local);
  CHECK(lb.qp(0).counters().retransmitted_packets > 0);
}

TEST_CASE(
    "READ credits under 5 % loss, 2 % duplication and reordering: READs and WRITEs interleaved with 2 "
    "credits each way all complete intact, and the responder never runs out of resources",
    "[rc][e2e][loss][credits]") {
  auto a = attr(0x11, 0x12, 5, 6), b = attr(0x12, 0x11, 6, 5);
  a.max_rd_atomic = b.max_dest_rd_atomic = 2;
  a.max_dest_rd_atomic = b.max_rd_atomic = 2;
  Loopback lb(a, b, 21);
  connect(lb);
  for (int side = 0; side < 2; ++side) {
    lb.impair(side).loss = 0.05;
    lb.impair(side).duplicate = 0.02;
    lb.impair(side).reorder = 0.02;
  }
  std::vector<std::uint8_t> local(128 * 1024), remote(128 * 1024), back(128 * 1024);
  for (std::size_t i = 0; i < remote.size(); ++i) remote[i] = static_cast<std::uint8_t>(i * 7 + 3);
  auto lmr = *lb.ep(0).mrs.register_region(local.data(), local.size(), rc::kAccessLocalWrite);
  auto bmr = *lb.ep(0).mrs.register_region(back.data(), back.size(), rc::kAccessLocalWrite);
  auto rmr = *lb.ep(1).mrs.register_region(remote.data(), remote.size(),
                                           rc::kAccessRemoteWrite | rc::kAccessRemoteRead | rc::kAccessLocalWrite);
  // 32 READs of 3 packets over the first 96 KiB, each followed by a small WRITE past it.
  int posted = 0;
  for (int i = 0; i < 32; ++i) {
    rc::SendWr r;
    r.wr_id = static_cast<std::uint64_t>(posted++);
    r.opcode = rc::WrOpcode::kRead;
    r.sge = {reinterpret_cast<std::uint64_t>(back.data() + i * 3072), 3072, bmr.lkey};
    r.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + i * 3072);
    r.rkey = rmr.rkey;
    REQUIRE(lb.qp(0).post_send(r).ok());
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(posted++);
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(local.data()), 100, lmr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + 100 * 1024 + i * 128);
    w.rkey = rmr.rkey;
    REQUIRE(lb.qp(0).post_send(w).ok());
  }
  int ok = 0, bad = 0;
  auto drain = [&] {
    rc::Completion c;
    while (lb.qp(0).poll_cq(c)) (c.status == WcStatus::kSuccess ? ok : bad)++;
  };
  REQUIRE(lb.run(
      [&] {
        drain();
        return ok + bad == posted;
      },
      400000));
  CHECK(bad == 0);
  CHECK(std::equal(back.begin(), back.begin() + 96 * 1024, remote.begin()));
  CHECK(lb.qp(1).counters().resp_invalid_request == 0);
  CHECK(lb.qp(1).counters().duplicate_request > 0);  // duplicated and re-issued READs were replayed
  CHECK(lb.qp(1).state() == rc::QpState::kRts);
  CHECK(lb.qp(0).counters().retransmitted_packets > 0);
}

TEST_CASE("no receive posted -> RNR NAK, the requester waits and succeeds once one is posted", "[rc][rnr]") {
  Loopback lb(attr(0x11, 0x12, 1, 1), attr(0x12, 0x11, 1, 1));
  connect(lb);
  std::vector<std::uint8_t> src(100, 0xAB), dst(100);
  auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  auto dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
  rc::SendWr w;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 100, smr.lkey};
  REQUIRE(lb.qp(0).post_send(w).ok());
  for (int i = 0; i < 50; ++i) lb.step();
  CHECK(lb.qp(1).counters().rnr_naks_sent > 0);
  CHECK(lb.qp(0).counters().rnr_naks_received > 0);
  REQUIRE(lb.qp(1).post_recv({1, {reinterpret_cast<std::uint64_t>(dst.data()), 100, dmr.lkey}}).ok());
  rc::Completion c;
  REQUIRE(lb.run([&] { return lb.qp(1).poll_cq(c); }, 10000));
  CHECK(c.status == WcStatus::kSuccess);
  CHECK(dst == src);
}

TEST_CASE("rnr_retry exhausted -> RNR_RETRY_EXC_ERR, QP to Error, the rest flushed", "[rc][rnr]") {
  auto a = attr(0x11, 0x12, 1, 1);
  a.rnr_retry = 2;
  Loopback lb(a, attr(0x12, 0x11, 1, 1));
  connect(lb);
  std::vector<std::uint8_t> src(100);
  auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  for (int i = 0; i < 3; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 100, smr.lkey};
    REQUIRE(lb.qp(0).post_send(w).ok());
  }
  std::vector<rc::Completion> got;
  REQUIRE(lb.run(
      [&] {
        rc::Completion c;
        while (lb.qp(0).poll_cq(c)) got.push_back(c);
        return got.size() == 3;
      },
      20000));
  CHECK(got[0].status == WcStatus::kRnrRetryExcErr);
  CHECK(got[1].status == WcStatus::kWrFlushErr);
  CHECK(got[2].status == WcStatus::kWrFlushErr);
  CHECK(lb.qp(0).state() == rc::QpState::kError);
}

TEST_CASE("a dead link -> local ACK timeouts, retry_cnt exhausted -> RETRY_EXC_ERR and flush", "[rc][timeout]") {
  auto a = attr(0x11, 0x12, 1, 1);
  a.retry_cnt = 3;
  Loopback lb(a, attr(0x12, 0x11, 1, 1));
  connect(lb);
  lb.impair(0).drop_all = true;
  std::vector<std::uint8_t> src(5000);
  auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  for (int i = 0; i < 4; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 5000, smr.lkey};
    REQUIRE(lb.qp(0).post_send(w).ok());
  }
  std::vector<rc::Completion> got;
  REQUIRE(lb.run(
      [&] {
        rc::Completion c;
        while (lb.qp(0).poll_cq(c)) got.push_back(c);
        return got.size() == 4;
      },
      100000, 10000));
  CHECK(got[0].status == WcStatus::kRetryExcErr);
  for (int i = 1; i < 4; ++i) CHECK(got[i].status == WcStatus::kWrFlushErr);
  CHECK(lb.qp(0).counters().local_ack_timeout_err == 4);  // 3 retries, then the 4th expiry fails
  CHECK(lb.qp(0).state() == rc::QpState::kError);
}

TEST_CASE("a long RNR episode (receiver slow to post) never exhausts retry_cnt through ACK timeouts", "[rc][rnr]") {
  auto a = attr(0x11, 0x12, 1, 1);
  a.retry_cnt = 1;
  a.timeout = 4;  // 65 us: many timeouts would pass while the receiver is away
  Loopback lb(a, attr(0x12, 0x11, 1, 1));
  connect(lb);
  std::vector<std::uint8_t> src(100, 0x5A), dst(100);
  auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  auto dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
  rc::SendWr w;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 100, smr.lkey};
  REQUIRE(lb.qp(0).post_send(w).ok());
  for (int i = 0; i < 5000; ++i) lb.step();  // 5 ms without a receive posted
  CHECK(lb.qp(0).state() == rc::QpState::kRts);
  REQUIRE(lb.qp(1).post_recv({1, {reinterpret_cast<std::uint64_t>(dst.data()), 100, dmr.lkey}}).ok());
  rc::Completion c;
  REQUIRE(lb.run([&] { return lb.qp(0).poll_cq(c); }, 10000));
  CHECK(c.status == WcStatus::kSuccess);
  CHECK(dst == src);
}
