// TxBatch's filter (TxFilter, the send side of a lab impairment): each frame judged once before
// its first send, dropped frames freed and counted, kept frames sent in order, and a batch whose
// filter is off sends exactly what it was given. The batch drains into an rte_ring (sink_to), so
// back-pressure is a small ring, and every frame carries its sequence number.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/mempool.h"
#include "engine/core/tx_batch.h"
#include "engine/lab/frame_impairment.h"

using namespace droce::engine;

namespace {

// Deliberately never freed: static destructors run after main() has shut EAL down.
MbufPool& pool() {
  static MbufPool* p = new MbufPool();
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_txf_pool", 1023, 0, 2176, -1}, *p).ok());
  return *p;
}

rte_mbuf* frame(std::uint32_t seq) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  auto* p = rte_pktmbuf_append(m, 64);
  REQUIRE(p != nullptr);
  std::memset(p, 0, 64);
  std::memcpy(p, &seq, sizeof(seq));
  return m;
}

std::uint32_t seq_of(const rte_mbuf* m) {
  std::uint32_t s = 0;
  std::memcpy(&s, rte_pktmbuf_mtod(m, const void*), sizeof(s));
  return s;
}

// The impairment the apps install (LinkImpairment::on_tx does exactly this), and a count of the
// frames it was shown, to prove each is judged once.
struct Judge {
  FrameImpairment imp;
  std::uint64_t seen = 0;
  Judge(double loss, std::uint64_t seed) : imp(config(loss, seed), nullptr) {}
  static ImpairmentConfig config(double loss, std::uint64_t seed) {
    ImpairmentConfig c;
    c.loss = loss;
    c.seed = seed;
    return c;
  }
  static std::uint16_t filter(void* self, rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max) {
    auto* j = static_cast<Judge*>(self);
    j->seen += n;
    return j->imp.apply(pkts, n, max);
  }
};

// Drains `ring` into `out` (sequence numbers) and frees the frames.
void drain(rte_ring* ring, std::vector<std::uint32_t>& out) {
  void* objs[64];
  unsigned n;
  while ((n = rte_ring_dequeue_burst(ring, objs, 64, nullptr)) != 0)
    for (unsigned i = 0; i < n; ++i) {
      auto* m = static_cast<rte_mbuf*>(objs[i]);
      out.push_back(seq_of(m));
      rte_pktmbuf_free(m);
    }
}

// Pushes `total` frames in pushes of `per_flush`, flushing after each into a ring of `ring_size`
// drained only every other flush (back-pressure keeps frames in the batch across flushes).
std::vector<std::uint32_t> run(TxBatch<128>& batch, rte_ring* ring, std::uint32_t total, std::uint32_t per_flush) {
  std::vector<std::uint32_t> got;
  std::uint32_t next = 0;
  for (int round = 0; next < total || !batch.empty(); ++round) {
    REQUIRE(round < 100000);  // bounded: every round drains the ring at least every other time
    for (std::uint32_t i = 0; i < per_flush && next < total && batch.room() != 0; ++i)
      REQUIRE(batch.push(frame(next++)));
    (void)batch.flush(0, 0);
    if (round % 2 == 1 || next == total) drain(ring, got);
  }
  drain(ring, got);
  return got;
}

}  // namespace

TEST_CASE("TxFilter: dropped frames freed and counted, kept frames sent once, in order", "[engine][txbatch]") {
  rte_ring* ring = rte_ring_create("test_txf_ring", 32, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
  REQUIRE(ring != nullptr);
  const unsigned in_use_before = rte_mempool_in_use_count(pool().get());
  constexpr std::uint32_t kFrames = 3000;
  TxBatch<128> batch;
  batch.sink_to(ring);
  Judge judge(0.2, 7);
  batch.set_filter(&Judge::filter, &judge);
  const std::vector<std::uint32_t> got = run(batch, ring, kFrames, 48);
  // Every frame judged exactly once, though a ring of 32 sent bursts of 48 in parts.
  CHECK(judge.seen == kFrames);
  CHECK(judge.imp.counters().frames == kFrames);
  CHECK(judge.imp.counters().dropped > kFrames / 10);
  // Kept and dropped add up, the kept ones in the order pushed, none twice.
  CHECK(got.size() + judge.imp.counters().dropped == kFrames);
  bool ordered = true;
  for (std::size_t i = 1; i < got.size(); ++i) ordered = ordered && got[i - 1] < got[i];
  CHECK(ordered);
  // The dropped frames went back to the pool: nothing in use beyond what was there before.
  CHECK(rte_mempool_in_use_count(pool().get()) == in_use_before);
  rte_ring_free(ring);
}

TEST_CASE("TxFilter off: the batch sends exactly what it was given, as a batch that never had one",
          "[engine][txbatch]") {
  rte_ring* ring = rte_ring_create("test_txf_ring_off", 32, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
  REQUIRE(ring != nullptr);
  constexpr std::uint32_t kFrames = 1000;
  std::vector<std::uint32_t> want(kFrames);
  for (std::uint32_t i = 0; i < kFrames; ++i) want[i] = i;
  SECTION("never set") {
    TxBatch<128> batch;
    batch.sink_to(ring);
    CHECK(run(batch, ring, kFrames, 48) == want);
  }
  SECTION("set, then removed: the judge sees nothing more") {
    TxBatch<128> batch;
    batch.sink_to(ring);
    Judge judge(0.5, 3);
    batch.set_filter(&Judge::filter, &judge);
    batch.set_filter(nullptr, nullptr);
    CHECK(run(batch, ring, kFrames, 48) == want);
    CHECK(judge.seen == 0);
  }
  SECTION("loss 0: the filter runs, keeps everything in order") {
    TxBatch<128> batch;
    batch.sink_to(ring);
    Judge judge(0, 3);
    batch.set_filter(&Judge::filter, &judge);
    CHECK(run(batch, ring, kFrames, 48) == want);
    CHECK(judge.seen == kFrames);
    CHECK(judge.imp.counters().dropped == 0);
  }
  rte_ring_free(ring);
}
