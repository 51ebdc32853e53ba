// A message-view receiver whose mbuf pool runs dry (the application holds its views): frames it
// cannot copy are dropped before the QP sees them (counted no_rx_buffer), the sender resends them,
// and once the views go back every message arrives whole, in order — no failed QP, no hole.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "engine/core/mempool.h"
#include "engine/endpoint/message_view.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

TEST_CASE("endpoint views: a receiver pool that runs dry drops and recovers, nothing lost or failed",
          "[engine][views]") {
  // B's own small pool: net_ring hands B the sender's zero-copy chains, whose payloads B copies
  // into its pool to keep them as views. 64 mbufs (the least a pool takes), no per-lcore cache: it
  // runs dry within the first 64 messages held.
  static MbufPool* small = new MbufPool();  // never freed: EAL shuts down after static destructors
  if (small->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"tdry_pool", 64, 0, 2176, -1}, *small).ok());
  LabOptions o{0, false, rc::RecvMode::kMessageViews, 128};
  o.tune_b = [](EndpointConfig& c) { c.queues.pool = small->get(); };
  Lab lab("tdry", o);
  constexpr int kMsgs = 120;
  constexpr std::uint32_t kSize = 1000;  // above the inline limit: sent zero-copy, as a chain
  std::vector<std::uint8_t> src(kMsgs * kSize);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 13 + 5);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  SendStream tx{src.data(), kSize, kMsgs};
  int got = 0;
  std::vector<MessageView> held;
  bool released = false;
  const bool done = lab.run([&] {
    tx.step(lab);
    for (;;) {
      MessageView v;
      if (!lab.b->receive_message(lab.qpn_b, v)) break;
      std::vector<std::uint8_t> bytes(v.length);
      CHECK(v.copy_to(bytes.data(), v.length) == kSize);
      CHECK(v.imm == static_cast<std::uint32_t>(got));
      CHECK(std::equal(bytes.begin(), bytes.end(), src.begin() + got * kSize));
      ++got;
      if (!released) held.push_back(std::move(v));  // the application keeps them: the pool empties
    }
    // Once frames were dropped for want of mbufs, the application gives everything back.
    if (!released && lab.b->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kNoRxBuffer)] > 0) {
      held.clear();
      released = true;
    }
    return tx.failed != 0 || (got == kMsgs && tx.acked == kMsgs);
  });
  CHECK(done);
  CHECK(released);
  CHECK(tx.failed == 0);
  CHECK(got == kMsgs);
  CHECK(lab.qa->state() == rc::QpState::kRts);
  CHECK(lab.qb->state() == rc::QpState::kRts);
  CHECK(lab.b->counters().rx_view_drops == 0);
  CHECK(lab.qa->counters().retransmitted_packets > 0);  // the dropped frames came again
}
