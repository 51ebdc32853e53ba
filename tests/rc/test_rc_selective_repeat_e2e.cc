// Selective repeat end to end: two SR QPs over the impaired loopback link (real frames, built and
// parsed). Every message must arrive exactly once, in order, intact; and against go-back-N on the
// same lossy link, SR must resend less.
#include <catch2/catch.hpp>
#include <cstdio>
#include <vector>

#include "tests/rc/sr_harness.h"

using namespace droce;
using namespace droce::test;
using rc::WcStatus;

namespace {

constexpr std::uint32_t kMax = 3 * 1024 + 17;  // the largest message: 4 packets

std::uint8_t pat(std::uint32_t msg, std::uint32_t i) { return static_cast<std::uint8_t>(msg * 31 + i * 7 + (i >> 9)); }

enum class Kind { kSend, kSendImm, kWrite, kWriteImm };
Kind kind_of(int m) {
  static constexpr Kind kKinds[] = {Kind::kSendImm, Kind::kSend, Kind::kWrite, Kind::kWriteImm, Kind::kSend};
  return kKinds[m % 5];
}
bool consumes_recv(Kind k) { return k != Kind::kWrite; }

struct Run {
  int send_ok = 0;
  int delivered = 0;  // receive completions
  int in_order = 0;
  int corrupted = 0;
  int errors = 0;
  int recvs_expected = 0;
  std::uint64_t steps = 0;
};

// `count` messages A -> B of 0..kMax bytes: SENDs (some with immediate), WRITEs, WRITEs with
// immediate. Each is checked where it lands: a receive's buffer, length and immediate; a WRITE's
// target once the requester's completion says it is done.
// `recv_ahead` receives are kept posted beyond those completed (a slow receiver: RNR NAKs).
Run run_mixed(Loopback& lb, int count, int max_steps = 400000, int recv_ahead = 64) {
  std::vector<std::uint8_t> src(64 * kMax), dst(256 * kMax), wdst(64 * kMax);
  const rc::MemoryRegion smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  const rc::MemoryRegion dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
  const rc::MemoryRegion wmr =
      *lb.ep(1).mrs.register_region(wdst.data(), wdst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite);
  std::vector<std::uint32_t> sizes(count);
  std::vector<int> recv_msgs;  // the message each receive completes, in order
  for (int m = 0; m < count; ++m) {
    sizes[m] = static_cast<std::uint32_t>((m * 977) % (kMax + 1));
    if (consumes_recv(kind_of(m))) recv_msgs.push_back(m);
  }
  Run r;
  r.recvs_expected = static_cast<int>(recv_msgs.size());
  int posted = 0, recv_posted = 0;
  auto matches = [&](const std::uint8_t* p, int m) {
    for (std::uint32_t i = 0; i < sizes[m]; ++i)
      if (p[i] != pat(m, i)) return false;
    return true;
  };
  auto done = [&] { return r.send_ok + r.errors >= count && r.delivered + r.errors >= r.recvs_expected; };
  for (int s = 0; s < max_steps && !done(); ++s) {
    while (posted < count && posted - r.send_ok < 32) {
      const int slot = posted % 64;
      for (std::uint32_t i = 0; i < sizes[posted]; ++i) src[slot * kMax + i] = pat(posted, i);
      rc::SendWr wr;
      wr.wr_id = static_cast<std::uint64_t>(posted);
      const Kind k = kind_of(posted);
      wr.opcode = k == Kind::kSend      ? rc::WrOpcode::kSend
                  : k == Kind::kSendImm ? rc::WrOpcode::kSendWithImm
                  : k == Kind::kWrite   ? rc::WrOpcode::kWrite
                                        : rc::WrOpcode::kWriteWithImm;
      wr.imm = static_cast<std::uint32_t>(posted);
      wr.sge = {reinterpret_cast<std::uint64_t>(src.data() + slot * kMax), sizes[posted], smr.lkey};
      wr.remote_addr = reinterpret_cast<std::uint64_t>(wdst.data() + slot * kMax);
      wr.rkey = wmr.rkey;
      if (!lb.qp(0).post_send(wr).ok()) break;
      ++posted;
    }
    while (recv_posted < r.recvs_expected && recv_posted - r.delivered < recv_ahead) {
      const int slot = recv_posted % 256;
      rc::RecvWr rw{static_cast<std::uint64_t>(recv_posted),
                    {reinterpret_cast<std::uint64_t>(dst.data() + slot * kMax), kMax, dmr.lkey}};
      if (!lb.qp(1).post_recv(rw).ok()) break;
      ++recv_posted;
    }
    lb.step();
    ++r.steps;
    rc::Completion c;
    while (lb.qp(0).poll_cq(c)) {
      if (c.status != WcStatus::kSuccess) {
        ++r.errors;
        continue;
      }
      const int m = static_cast<int>(c.wr_id);
      if (m != r.send_ok) ++r.corrupted;  // requester completions in order
      if (kind_of(m) == Kind::kWrite || kind_of(m) == Kind::kWriteImm) {
        if (!matches(wdst.data() + (m % 64) * kMax, m)) ++r.corrupted;
      }
      ++r.send_ok;
    }
    while (lb.qp(1).poll_cq(c)) {
      if (c.status != WcStatus::kSuccess) {
        ++r.errors;
        continue;
      }
      const int k = static_cast<int>(c.wr_id);
      if (k == r.delivered) ++r.in_order;
      const int m = recv_msgs[static_cast<std::size_t>(k)];
      const Kind kind = kind_of(m);
      bool ok = c.has_imm == (kind != Kind::kSend) && (!c.has_imm || c.imm == static_cast<std::uint32_t>(m));
      if (kind == Kind::kWriteImm) {
        ok = ok && c.opcode == rc::WcOpcode::kRecvWithImm && c.byte_len == sizes[m] &&
             matches(wdst.data() + (m % 64) * kMax, m);
      } else {
        ok = ok && c.byte_len == sizes[m] && matches(dst.data() + (k % 256) * kMax, m);
      }
      if (!ok) ++r.corrupted;
      ++r.delivered;
    }
  }
  return r;
}

}  // namespace

TEST_CASE("SR: mixed SEND/WRITE traffic on a clean link arrives exactly once, in order, with no resends",
          "[rc][sr][e2e]") {
  Loopback lb(pair_attr(true, 0x11, 0x12, 100, 200), pair_attr(true, 0x12, 0x11, 200, 100));
  connect(lb);
  const auto r = run_mixed(lb, 1000);
  CHECK(r.send_ok == 1000);
  CHECK(r.delivered == r.recvs_expected);
  CHECK(r.in_order == r.recvs_expected);
  CHECK(r.corrupted == 0);
  CHECK(r.errors == 0);
  check_clean_sr(lb);
}

TEST_CASE("SR across the 2^24 PSN wrap", "[rc][sr][e2e][wrap]") {
  Loopback lb(pair_attr(true, 0x11, 0x12, 0xFFFFF0, 0xFFFFE0), pair_attr(true, 0x12, 0x11, 0xFFFFE0, 0xFFFFF0), 3);
  connect(lb);
  impair_both(lb, 0.02, 0.01, 0.01);
  const auto r = run_mixed(lb, 300);
  CHECK(r.send_ok == 300);
  CHECK(r.in_order == r.recvs_expected);
  CHECK(r.corrupted == 0);
  CHECK(r.errors == 0);
  CHECK(lb.qp(0).sq_nxt() < 0x1000);  // wrapped
}

TEST_CASE(
    "SR seed sweep: 30 seeds at 1 % and 5 % loss with duplication and reordering, every message "
    "verified",
    "[rc][sr][e2e][loss]") {
  for (double loss : {0.01, 0.05}) {
    std::uint64_t resent = 0, out_of_order = 0;
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      Loopback lb(pair_attr(true, 0x11, 0x12, 7, 9), pair_attr(true, 0x12, 0x11, 9, 7), seed);
      connect(lb);
      impair_both(lb, loss, 0.01, 0.01);
      const auto r = run_mixed(lb, 300);
      INFO("loss " << loss << " seed " << seed);
      REQUIRE(r.send_ok == 300);
      REQUIRE(r.delivered == r.recvs_expected);
      CHECK(r.in_order == r.recvs_expected);
      CHECK(r.corrupted == 0);
      CHECK(r.errors == 0);
      check_sr_healthy(lb);
      resent += lb.qp(0).counters().retransmitted_packets;
      out_of_order += lb.qp(1).counters().out_of_sequence;
    }
    INFO("loss " << loss);
    CHECK(resent > 0);
    CHECK(out_of_order > 0);  // packets were held beyond a gap
  }
}

TEST_CASE("SR: a loss burst and heavy ACK loss are recovered", "[rc][sr][e2e][loss]") {
  Loopback lb(pair_attr(true, 0x11, 0x12, 1, 1), pair_attr(true, 0x12, 0x11, 1, 1), 7);
  connect(lb);
  impair_bursts_and_ack_loss(lb);
  const auto r = run_mixed(lb, 800);
  CHECK(r.send_ok == 800);
  CHECK(r.in_order == r.recvs_expected);
  CHECK(r.corrupted == 0);
  CHECK(r.errors == 0);
}

TEST_CASE(
    "SR: a slow receiver (one receive posted ahead) under 2 % loss: RNR NAKs pace the requester, every "
    "message arrives once, in order",
    "[rc][sr][e2e][rnr]") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Loopback lb(pair_attr(true, 0x11, 0x12, 1, 1), pair_attr(true, 0x12, 0x11, 1, 1), seed);
    connect(lb);
    impair_both(lb, 0.02, 0.01, 0.01);
    const auto r = run_mixed(lb, 200, 400000, 1);
    INFO("seed " << seed);
    CHECK(r.send_ok == 200);
    CHECK(r.delivered == r.recvs_expected);
    CHECK(r.in_order == r.recvs_expected);
    CHECK(r.corrupted == 0);
    CHECK(r.errors == 0);
    CHECK(lb.qp(1).counters().rnr_naks_sent > 0);
  }
}

namespace {

// 200 WRITEs of 16 KiB (16 packets each) A -> B at `loss` on both directions, 128 PSNs in flight.
BulkResult bulk_writes(bool sr, double loss, std::uint64_t seed, Link link) {
  return bulk_transfer(BulkOp::kWrite, pair_attr(sr, 0x11, 0x12, 1, 1), pair_attr(sr, 0x12, 0x11, 1, 1), loss, seed,
                       link);
}

}  // namespace

TEST_CASE(
    "go-back-N against SR, 128 PSNs in flight: SR resends only what was lost; at 0 % loss they are "
    "the same, at 1 % and 5 % SR finishes sooner",
    "[rc][sr][e2e][compare]") {
  // Two links: the loopback's own (64 frames a step, no delay) and one whose bandwidth-delay
  // product (8 frames a step, 8 steps each way: ~136 frames) is about the 128 PSNs in flight.
  // Virtual steps to move 5 x 200 x 16 KiB; frames counted both ways, ACKs included.
  std::printf(
      "rc loopback, go-back-N (window_psns 128) vs selective repeat (sr_bdp_pkts 128),\n"
      "5 seeds x 200 WRITEs of 16 KiB (16000 data packets), loss on both directions:\n");
  for (const Link link : {Link{64, 0, 8}, Link{8, 8, 5}}) {
    for (const double loss : {0.0, 0.01, 0.05}) {
      BulkResult g, r;
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        g += bulk_writes(false, loss, seed, link);
        r += bulk_writes(true, loss, seed, link);
      }
      std::printf(
          "  %2d frames/step, delay %2u, loss %4.1f %%: go-back-N %6llu steps %6llu resent %6llu frames "
          "%3llu timeouts | SR %6llu steps %5llu resent %6llu frames %3llu timeouts | %.2fx\n",
          link.rate, link.delay, loss * 100, static_cast<unsigned long long>(g.steps),
          static_cast<unsigned long long>(g.resent), static_cast<unsigned long long>(g.frames),
          static_cast<unsigned long long>(g.timeouts), static_cast<unsigned long long>(r.steps),
          static_cast<unsigned long long>(r.resent), static_cast<unsigned long long>(r.frames),
          static_cast<unsigned long long>(r.timeouts), static_cast<double>(g.steps) / static_cast<double>(r.steps));
      INFO("rate " << link.rate << " delay " << link.delay << " loss " << loss);
      if (loss == 0.0) {
        CHECK(r.steps == g.steps);  // no loss: the same packets at the same times
        CHECK(r.frames == g.frames);
        CHECK(r.resent == 0);
      } else {
        CHECK(r.resent * 10 < g.resent);
        CHECK(r.frames < g.frames);
        CHECK(r.steps < g.steps);
      }
      if (loss == 0.05) CHECK(r.steps * 3 < g.steps);
    }
  }
}
