// Selective repeat end to end with RDMA READ and the atomics: two SR QPs over the impaired
// loopback link (real frames, built and parsed). WRITEs, READs of several PMTUs and atomics mixed;
// every READ byte verified, every atomic's original value checked against the order the
// responder must have executed them in, and each atomic executed exactly once.
#include <catch2/catch.hpp>
#include <cstdio>
#include <vector>

#include "tests/rc/sr_harness.h"

using namespace droce;
using namespace droce::test;
using rc::WcStatus;

namespace {

constexpr std::uint32_t kMax = 5 * 1024 + 17;  // the largest WRITE or READ: 6 packets
constexpr int kSlots = 64;

std::uint8_t pat(std::uint32_t msg, std::uint32_t i) {
  return static_cast<std::uint8_t>(msg * 29 + i * 11 + (i >> 10));
}

// Message m: a WRITE to slot m % kSlots; a READ of the slot the WRITE before it wrote (a READ
// after a WRITE to the same bytes must see them: it executes in PSN order); a FetchAdd of m + 1
// on one word; a CmpSwap expecting the number of CmpSwaps before it on another (each succeeds
// only if the atomics execute once each, in posting order).
enum class Kind { kWrite, kRead, kFetchAdd, kCmpSwap };
Kind kind_of(int m) {
  static constexpr Kind kKinds[] = {Kind::kWrite, Kind::kRead, Kind::kFetchAdd,
                                    Kind::kWrite, Kind::kRead, Kind::kCmpSwap};
  return kKinds[m % 6];
}
std::uint32_t size_of(int m) { return static_cast<std::uint32_t>((m * 1777) % (kMax + 1)); }

struct Run {
  int ok = 0, in_order = 0, corrupted = 0, errors = 0, atomics = 0;
  std::uint64_t steps = 0;
};

// The loopback attributes with remote atomics allowed; selective repeat where `sr`.
rc::QpAttr atomic_attr(bool sr, std::uint32_t qpn, std::uint32_t dest, std::uint32_t sq_psn, std::uint32_t rq_psn) {
  return with_atomics(pair_attr(sr, qpn, dest, sq_psn, rq_psn));
}

Run run_mixed(Loopback& lb, int count, int max_steps = 400000) {
  std::vector<std::uint8_t> src(kSlots * kMax), rbuf(kSlots * kMax), remote(kSlots * kMax);
  std::vector<std::uint64_t> words(2, 0), orig(kSlots, 0);
  const auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  const auto rmr = *lb.ep(0).mrs.register_region(rbuf.data(), rbuf.size(), rc::kAccessLocalWrite);
  const auto omr = *lb.ep(0).mrs.register_region(orig.data(), orig.size() * 8, rc::kAccessLocalWrite);
  const auto dmr =
      *lb.ep(1).mrs.register_region(remote.data(), remote.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteRead);
  const auto wmr = *lb.ep(1).mrs.register_region(words.data(), 16, rc::kAccessRemoteAtomic);
  // What each atomic must return: executed once each, in posting order.
  std::vector<std::uint64_t> want(count, 0);
  std::uint64_t sum = 0, swaps = 0;
  for (int m = 0; m < count; ++m) {
    if (kind_of(m) == Kind::kFetchAdd) {
      want[m] = sum;
      sum += static_cast<std::uint64_t>(m + 1);
    } else if (kind_of(m) == Kind::kCmpSwap) {
      want[m] = swaps++;
    }
  }
  Run r;
  int posted = 0;
  for (int s = 0; s < max_steps && r.ok + r.errors < count; ++s) {
    while (posted < count && posted - r.ok - r.errors < 32) {
      const int m = posted, slot = m % kSlots;
      rc::SendWr wr;
      wr.wr_id = static_cast<std::uint64_t>(m);
      switch (kind_of(m)) {
        case Kind::kWrite:
          for (std::uint32_t i = 0; i < size_of(m); ++i) src[slot * kMax + i] = pat(m, i);
          wr.opcode = rc::WrOpcode::kWrite;
          wr.sge = {reinterpret_cast<std::uint64_t>(src.data() + slot * kMax), size_of(m), smr.lkey};
          wr.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + slot * kMax);
          wr.rkey = dmr.rkey;
          break;
        case Kind::kRead:
          std::memset(rbuf.data() + slot * kMax, 0xEE, kMax);
          wr.opcode = rc::WrOpcode::kRead;
          wr.sge = {reinterpret_cast<std::uint64_t>(rbuf.data() + slot * kMax), size_of(m - 1), rmr.lkey};
          wr.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + ((m - 1) % kSlots) * kMax);
          wr.rkey = dmr.rkey;
          break;
        default:
          orig[slot] = ~std::uint64_t{0};
          wr.opcode = kind_of(m) == Kind::kFetchAdd ? rc::WrOpcode::kFetchAdd : rc::WrOpcode::kCmpSwap;
          wr.sge = {reinterpret_cast<std::uint64_t>(&orig[slot]), 8, omr.lkey};
          wr.remote_addr = reinterpret_cast<std::uint64_t>(&words[kind_of(m) == Kind::kFetchAdd ? 0 : 1]);
          wr.rkey = wmr.rkey;
          wr.compare_add = kind_of(m) == Kind::kFetchAdd ? static_cast<std::uint64_t>(m + 1) : want[m];
          wr.swap = want[m] + 1;
          break;
      }
      if (!lb.qp(0).post_send(wr).ok()) break;
      ++posted;
    }
    lb.step();
    ++r.steps;
    rc::Completion c;
    while (lb.qp(0).poll_cq(c)) {
      if (c.status != WcStatus::kSuccess) {
        ++r.errors;
        continue;
      }
      const int m = static_cast<int>(c.wr_id), slot = m % kSlots;
      if (m == r.ok) ++r.in_order;  // completions in posting order
      bool good = true;
      if (kind_of(m) == Kind::kRead) {
        good = c.opcode == rc::WcOpcode::kRead && c.byte_len == size_of(m - 1);
        for (std::uint32_t i = 0; good && i < size_of(m - 1); ++i) good = rbuf[slot * kMax + i] == pat(m - 1, i);
      } else if (kind_of(m) != Kind::kWrite) {
        good = orig[slot] == want[m];
        ++r.atomics;
      }
      if (!good) ++r.corrupted;
      ++r.ok;
    }
  }
  // Every atomic executed once: the words hold exactly the sum of the adds and the swap count.
  if (r.ok == count && (words[0] != sum || words[1] != swaps)) ++r.corrupted;
  return r;
}

std::uint64_t atomics_in(int count) {
  std::uint64_t n = 0;
  for (int m = 0; m < count; ++m) n += kind_of(m) == Kind::kFetchAdd || kind_of(m) == Kind::kCmpSwap;
  return n;
}

// All `count` operations completed, in posting order, every byte and value right, and each atomic
// executed exactly once at the responder.
void check_every_op_right(const Run& r, Loopback& lb, int count) {
  CHECK(r.ok == count);
  CHECK(r.in_order == count);
  CHECK(r.corrupted == 0);
  CHECK(r.errors == 0);
  CHECK(lb.qp(1).counters().atomics_executed == atomics_in(count));
}

}  // namespace

TEST_CASE("SR READ and atomics on a clean link: every byte and value right, in order, no resends",
          "[rc][sr][read][e2e]") {
  Loopback lb(atomic_attr(true, 0x11, 0x12, 100, 200), atomic_attr(true, 0x12, 0x11, 200, 100));
  connect(lb);
  const auto r = run_mixed(lb, 600);
  check_every_op_right(r, lb, 600);
  check_clean_sr(lb);
}

TEST_CASE("SR READ and atomics across the 2^24 PSN wrap", "[rc][sr][read][e2e][wrap]") {
  Loopback lb(atomic_attr(true, 0x11, 0x12, 0xFFFF80, 0xFFFFE0), atomic_attr(true, 0x12, 0x11, 0xFFFFE0, 0xFFFF80), 3);
  connect(lb);
  impair_both(lb, 0.03, 0.01, 0.01);
  const auto r = run_mixed(lb, 300);
  check_every_op_right(r, lb, 300);
  CHECK(lb.qp(0).sq_nxt() < 0x1000);  // wrapped
}

TEST_CASE(
    "SR READ and atomics seed sweep: 30 seeds at 1 % and 5 % loss with duplication and reordering, "
    "every byte verified, every atomic executed once",
    "[rc][sr][read][e2e][loss]") {
  for (double loss : {0.01, 0.05}) {
    std::uint64_t reasked = 0, replays = 0, atomic_replays = 0;
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      Loopback lb(atomic_attr(true, 0x11, 0x12, 7, 9), atomic_attr(true, 0x12, 0x11, 9, 7), seed);
      connect(lb);
      impair_both(lb, loss, 0.01, 0.01);
      const auto r = run_mixed(lb, 300);
      INFO("loss " << loss << " seed " << seed);
      REQUIRE(r.ok + r.errors == 300);
      CHECK(r.in_order == 300);
      CHECK(r.corrupted == 0);
      CHECK(r.errors == 0);
      CHECK(lb.qp(1).counters().atomics_executed == atomics_in(300));  // duplicates never executed
      check_sr_healthy(lb);
      reasked += lb.qp(0).counters().sr_reasked_responses;
      replays += lb.qp(1).counters().duplicate_request;
      atomic_replays += lb.qp(1).counters().atomic_replays;
    }
    INFO("loss " << loss);
    CHECK(reasked > 0);  // lost responses were asked again
    CHECK(replays > 0);
    CHECK(atomic_replays > 0);  // and lost atomic acknowledgements answered from the saved result
  }
}

TEST_CASE("SR READ and atomics: a loss burst and heavy response loss are recovered", "[rc][sr][read][e2e][loss]") {
  Loopback lb(atomic_attr(true, 0x11, 0x12, 1, 1), atomic_attr(true, 0x12, 0x11, 1, 1), 7);
  connect(lb);
  impair_bursts_and_ack_loss(lb);
  const auto r = run_mixed(lb, 600);
  check_every_op_right(r, lb, 600);
}

namespace {

// 200 READs of 16 KiB (16 responses each) A <- B at `loss` on both directions, 16 outstanding.
BulkResult bulk_reads(bool sr, double loss, std::uint64_t seed) {
  return bulk_transfer(BulkOp::kRead, atomic_attr(sr, 0x11, 0x12, 1, 1), atomic_attr(sr, 0x12, 0x11, 1, 1), loss, seed);
}

}  // namespace

TEST_CASE("go-back-N against SR for READs: at 0 % loss the same, at 1 % and 5 % SR finishes sooner",
          "[rc][sr][read][e2e][compare]") {
  std::printf(
      "rc loopback, go-back-N vs selective repeat, 5 seeds x 200 READs of 16 KiB (16000 response\n"
      "packets), 16 outstanding, loss on both directions, 64 frames/step:\n");
  for (const double loss : {0.0, 0.01, 0.05}) {
    BulkResult g, r;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      g += bulk_reads(false, loss, seed);
      r += bulk_reads(true, loss, seed);
    }
    std::printf(
        "  loss %4.1f %%: go-back-N %6llu steps %5llu requests resent %6llu frames | SR %6llu steps %5llu "
        "requests resent %6llu frames | %.2fx\n",
        loss * 100, static_cast<unsigned long long>(g.steps), static_cast<unsigned long long>(g.resent),
        static_cast<unsigned long long>(g.frames), static_cast<unsigned long long>(r.steps),
        static_cast<unsigned long long>(r.resent), static_cast<unsigned long long>(r.frames),
        static_cast<double>(g.steps) / static_cast<double>(r.steps));
    INFO("loss " << loss);
    if (loss == 0.0) {
      CHECK(r.frames == g.frames);
      CHECK(r.resent == 0);
    } else {
      CHECK(r.frames < g.frames);
      CHECK(r.steps < g.steps);
    }
  }
}
