// A sender whose mbuf pool runs dry while its frames are on the wire: the transmit turn stops
// before the QP gives up its next packet (tx_alloc_failures), and the packet leaves once mbufs
// come back. Nothing is lost at the sender, so nothing is resent: before the turn asked the pool
// first, each such packet took its PSN, was lost here and cost a go-back-N window. Both pool
// shapes: mbufs smaller than the largest frame, and mbufs that hold any frame.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/core/mempool.h"
#include "engine/endpoint/message_view.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

namespace {

// A streams to B from its own pool `pool` (64 mbufs, the least a pool takes, no per-lcore cache).
// A zero-copy frame takes 3 (headers, payload, pad and ICRC), and A's frames hold them until B has
// taken them off the ring, so a window of 32 four-packet messages (128 frames) empties it within
// one poll. Returns the payload bytes A copied instead of attaching.
std::uint64_t stream_through_a_dry_pool(MbufPool& pool, const std::string& name) {
  LabOptions o{0, false, rc::RecvMode::kMessageViews, 256};
  o.tune_a = [&pool](EndpointConfig& c) { c.queues.pool = pool.get(); };
  // The test's clock, 1 µs a poll: no timer can expire while the pool is empty on a busy machine
  // (the ACK timer's floor is milliseconds of this clock), so a resend could only come from a loss.
  o.clock_step_ns = 1000;
  Lab lab(name, o);
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
  return ca.tx_payload_bytes_copied;
}

}  // namespace

TEST_CASE("endpoint TX: a sender pool that runs dry waits for mbufs, loses nothing and resends nothing",
          "[engine][txpool]") {
  // Mbufs smaller than the largest frame: a turn holds all three of a zero-copy frame's mbufs
  // before the QP gives up its packet, and every data frame leaves zero-copy.
  static MbufPool* pool = new MbufPool();  // never freed: EAL shuts down after static destructors
  if (pool->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"ttxdry_small", 64, 0, 2176, -1}, *pool).ok());
  CHECK(stream_through_a_dry_pool(*pool, "ttxs") == 0);
}

TEST_CASE("endpoint TX: where one mbuf holds any frame, a frame short of its payload mbufs is copied",
          "[engine][txpool]") {
  // A turn holds only the first mbuf; a zero-copy frame that then finds none for its payload and
  // trailer is copied whole into that one instead (counted), never lost.
  static MbufPool* pool = new MbufPool();
  if (pool->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"ttxdry_large", 64, 0, 2176 + 4096, -1}, *pool).ok());
  CHECK(stream_through_a_dry_pool(*pool, "ttxl") > 0);
}
