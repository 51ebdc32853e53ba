// A sender whose mbuf pool runs dry while its frames are on the wire: the transmit turn stops
// before the QP gives up its next packet (tx_alloc_failures), and the packet leaves once mbufs
// come back. Nothing is lost at the sender, so nothing is resent: before the turn asked the pool
// first, each such packet took its PSN, was lost here and cost a go-back-N window.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "engine/core/mempool.h"
#include "engine/endpoint/message_view.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

TEST_CASE("endpoint TX: a sender pool that runs dry waits for mbufs, loses nothing and resends nothing",
          "[engine][txpool]") {
  // A's own pool: 64 mbufs (the least a pool takes), no per-lcore cache. A zero-copy frame takes 3
  // (headers, payload, pad and ICRC), and A's frames hold them until B has taken them off the
  // ring, so a window of 32 four-packet messages (128 frames) empties it within one poll.
  static MbufPool* small = new MbufPool();  // never freed: EAL shuts down after static destructors
  if (small->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"ttxdry_pool", 64, 0, 2176, -1}, *small).ok());
  LabOptions o{0, false, rc::RecvMode::kMessageViews, 256};
  o.tune_a = [](EndpointConfig& c) { c.queues.pool = small->get(); };
  // The test's clock, 1 µs a poll: no timer can expire while the pool is empty on a busy machine
  // (the ACK timer's floor is milliseconds of this clock), so a resend could only come from a loss.
  o.clock_step_ns = 1000;
  Lab lab("ttxdry", o);
  constexpr int kMsgs = 200;
  constexpr std::uint32_t kSize = 4000;  // four packets at PMTU 1024, sent zero-copy
  std::vector<std::uint8_t> src(kMsgs * kSize);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  SendStream tx{src.data(), kSize, kMsgs};
  int got = 0;
  bool in_order = true;
  const bool done = lab.run([&] {
    tx.step(lab);
    for (;;) {
      MessageView v;
      if (!lab.b->receive_message(lab.qpn_b, v)) break;
      std::vector<std::uint8_t> bytes(v.length);
      in_order = in_order && v.length == kSize && v.copy_to(bytes.data(), v.length) == kSize &&
                 v.imm == static_cast<std::uint32_t>(got) &&
                 std::equal(bytes.begin(), bytes.end(), src.begin() + static_cast<std::ptrdiff_t>(got) * kSize);
      ++got;
    }
    return tx.failed != 0 || (got == kMsgs && tx.acked == kMsgs);
  });
  CHECK(done);
  CHECK(in_order);
  CHECK(tx.failed == 0);
  CHECK(got == kMsgs);
  CHECK(lab.qa->state() == rc::QpState::kRts);
  const EndpointCounters& ca = lab.a->counters();
  CHECK(ca.tx_alloc_failures > 0);  // the pool did run dry
  CHECK(ca.tx_build_failures == 0);
  CHECK(ca.tx_backlog_drops == 0);
  CHECK(ca.tx_zero_copy_frames > 0);
  CHECK(lab.qa->counters().retransmitted_packets == 0);
  CHECK(lab.qa->counters().local_ack_timeout_err == 0);
  CHECK(lab.qa->counters().tail_probes == 0);
}
