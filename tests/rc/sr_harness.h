// Selective-repeat test helpers shared by the SR rules tests and the SR end-to-end tests (SEND/WRITE
// and READ/atomic): QP attributes, SACK decoding, link impairment and the go-back-N against SR bulk
// transfer whose figures the comparison tests print (docs/selective-repeat.md).
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/rc/loopback.h"

namespace droce::test {

constexpr std::uint32_t kPmtu = 1024;  // attr()'s path MTU

// An opcode as the byte a crafted packet carries.
inline std::uint8_t op(wire::Opcode o) { return static_cast<std::uint8_t>(o); }

// The loopback attributes, with selective repeat where `sr` (go-back-N otherwise).
inline rc::QpAttr pair_attr(bool sr, std::uint32_t qpn, std::uint32_t dest, std::uint32_t sq_psn,
                            std::uint32_t rq_psn) {
  auto a = attr(qpn, dest, sq_psn, rq_psn);
  if (sr) a.recovery = rc::Recovery::kSelectiveRepeat;
  return a;
}

inline rc::QpAttr sr_attr(std::uint32_t qpn, std::uint32_t dest, std::uint32_t sq_psn, std::uint32_t rq_psn) {
  return pair_attr(true, qpn, dest, sq_psn, rq_psn);
}

// The same attributes with remote atomics allowed (the READ/atomic tests).
inline rc::QpAttr with_atomics(rc::QpAttr a) {
  a.access |= rc::kAccessRemoteAtomic;
  return a;
}

// The held PSNs a SACK descriptor reports, as offsets from its ePSN (PSN + 1).
inline std::vector<std::uint32_t> sack_bits(const rc::TxDescriptor& d) {
  std::vector<std::uint32_t> v;
  REQUIRE(d.payload_len == wire::kSackBytes);
  for (std::uint32_t w = 0; w < 2; ++w) {
    std::uint64_t x;
    std::memcpy(&x, d.payload + 8 * w, 8);
    x = __builtin_bswap64(x);
    for (std::uint32_t b = 0; b < 64; ++b)
      if (x >> b & 1) v.push_back(64 * w + b);
  }
  return v;
}

// A crafted-packet fixture's QP, RESET -> INIT -> RTR -> RTS with the attributes it was made with.
inline void to_rts(rc::RcQp& qp) {
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  REQUIRE(qp.modify(rc::QpState::kRtr).ok());
  REQUIRE(qp.modify(rc::QpState::kRts).ok());
}

inline void impair_both(Loopback& lb, double loss, double dup, double reorder) {
  for (int s = 0; s < 2; ++s) {
    lb.impair(s).loss = loss;
    lb.impair(s).duplicate = dup;
    lb.impair(s).reorder = reorder;
  }
}

// A clean-link run resent nothing, and every packet either side saw used the recovery it expects.
inline void check_clean_sr(Loopback& lb) {
  CHECK(lb.qp(0).counters().retransmitted_packets == 0);
  CHECK(lb.qp(0).counters().recovery_mismatch == 0);
  CHECK(lb.qp(1).counters().recovery_mismatch == 0);
}

// A seed-sweep run left both SR QPs healthy: nothing beyond the window, both still in RTS.
inline void check_sr_healthy(Loopback& lb) {
  CHECK(lb.qp(1).counters().sr_beyond_window == 0);
  CHECK(lb.qp(0).state() == rc::QpState::kRts);
  CHECK(lb.qp(1).state() == rc::QpState::kRts);
}

// One bulk run's figures; summed over seeds with +=.
struct BulkResult {
  std::uint64_t frames = 0, resent = 0, replays = 0, steps = 0, timeouts = 0;
  BulkResult& operator+=(const BulkResult& o) {
    frames += o.frames;
    resent += o.resent;
    replays += o.replays;
    steps += o.steps;
    timeouts += o.timeouts;
    return *this;
  }
};

// The link a bulk run crosses: `rate` frames per step each way, each held `delay` steps more (a
// bandwidth-delay product of about rate * (2 * delay + 1) frames), and the QPs' ACK timeout.
struct Link {
  int rate = 64;
  std::uint32_t delay = 0;
  std::uint8_t timeout = 8;  // ~1 ms
};

enum class BulkOp { kWrite, kRead };

// 200 WRITEs (A -> B) or READs (A <- B) of 16 KiB (16 packets each) at `loss` on both directions,
// 128 PSNs in flight, 16 requests outstanding. Every transfer must complete and the bytes match.
inline BulkResult bulk_transfer(BulkOp op, rc::QpAttr a, rc::QpAttr b, double loss, std::uint64_t seed,
                                Link link = {}) {
  a.window_psns = b.window_psns = 128;
  a.sr_bdp_pkts = b.sr_bdp_pkts = 128;
  a.timeout = b.timeout = link.timeout;
  Loopback lb(a, b, seed);
  connect(lb);
  impair_both(lb, loss, 0, 0);
  lb.impair(0).delay_steps = lb.impair(1).delay_steps = link.delay;
  constexpr std::uint32_t kLen = 16 * 1024;
  constexpr int kCount = 200;
  const bool write = op == BulkOp::kWrite;
  // `local` is A's buffer, `remote` B's; the data starts on the side that sends it.
  std::vector<std::uint8_t> local(kLen * 8), remote(kLen * 8);
  std::vector<std::uint8_t>& src = write ? local : remote;
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 13 + 5);
  const auto lmr = *lb.ep(0).mrs.register_region(local.data(), local.size(), rc::kAccessLocalWrite);
  const auto rmr = *lb.ep(1).mrs.register_region(remote.data(), remote.size(),
                                                 write ? rc::kAccessRemoteWrite : rc::kAccessRemoteRead);
  int posted = 0, ok = 0, bad = 0;
  BulkResult res;
  for (int s = 0; s < 400000 && ok + bad < kCount; ++s) {
    while (posted < kCount && posted - ok - bad < 16) {
      rc::SendWr w;
      w.wr_id = static_cast<std::uint64_t>(posted);
      w.opcode = write ? rc::WrOpcode::kWrite : rc::WrOpcode::kRead;
      w.sge = {reinterpret_cast<std::uint64_t>(local.data() + (posted % 8) * kLen), kLen, lmr.lkey};
      w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + (posted % 8) * kLen);
      w.rkey = rmr.rkey;
      REQUIRE(lb.qp(0).post_send(w).ok());
      ++posted;
    }
    lb.step(1000, link.rate);
    ++res.steps;
    rc::Completion c;
    while (lb.qp(0).poll_cq(c)) (c.status == rc::WcStatus::kSuccess ? ok : bad)++;
  }
  REQUIRE(ok == kCount);
  CHECK(bad == 0);
  CHECK(remote == local);
  res.frames = lb.frames_sent;
  res.resent = lb.qp(0).counters().retransmitted_packets;
  res.replays = lb.qp(1).counters().duplicate_request;
  res.timeouts = lb.qp(0).counters().local_ack_timeout_err;
  return res;
}

}  // namespace droce::test
