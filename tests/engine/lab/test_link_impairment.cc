// LinkImpairment: loss, bursts, duplication and reordering at a port's RX, counted exactly.
#include <catch2/catch.hpp>
#include <vector>

#include "engine/core/mempool.h"
#include "engine/lab/link_impairment.h"
#include "tests/engine/frames.h"
#include "tests/engine/ring_pair.h"

using namespace droce;
using namespace droce::engine;

namespace {
MbufPool& pool() {
  static MbufPool* p = new MbufPool();  // never freed: EAL is gone when statics die
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_imp_pool", 8191, 64, 2176, -1}, *p).ok());
  return *p;
}

// Sends `frames` numbered frames A -> B and returns the sequence numbers B received.
std::vector<std::uint32_t> pass(test::RingPair& rp, int frames) {
  std::vector<std::uint32_t> got;
  int sent = 0;
  for (int round = 0; round < 100000 && (sent < frames || got.size() < static_cast<std::size_t>(frames) * 2); ++round) {
    if (sent < frames) {
      rte_mbuf* b[32];
      const int k = std::min(32, frames - sent);
      for (int i = 0; i < k; ++i) b[i] = test::make_frame(pool().get(), static_cast<std::uint32_t>(sent + i), 128);
      const std::uint16_t took = rp.a->tx_burst(0, b, static_cast<std::uint16_t>(k));
      for (int i = took; i < k; ++i) rte_pktmbuf_free(b[i]);
      sent += took;
    }
    rte_mbuf* rx[64];
    const std::uint16_t n = rp.b->rx_burst(0, rx, 64);
    for (std::uint16_t i = 0; i < n; ++i) {
      std::uint32_t seq = 0;
      REQUIRE(test::check_frame(rx[i], 128, seq));
      got.push_back(seq);
      rte_pktmbuf_free(rx[i]);
    }
    if (sent == frames && n == 0 && round > 1000) break;
  }
  return got;
}
}  // namespace

TEST_CASE("impairment: counted loss, bursts, duplicates and reordering; every frame accounted for",
          "[engine][impairment]") {
  test::RingPair rp("timp", pool().get());
  ImpairmentConfig cfg;
  cfg.loss = 0.05;
  cfg.burst_start = 0.002;
  cfg.burst_frames = 8;
  cfg.duplicate = 0.03;
  cfg.reorder = 0.03;
  cfg.seed = 7;
  Status err;
  const unsigned in_use = rte_mempool_in_use_count(pool().get());
  {
    auto imp = LinkImpairment::attach(rp.b->id(), 0, cfg, pool().get(), err);
    REQUIRE(imp != nullptr);
    constexpr int kFrames = 20000;
    const auto got = pass(rp, kFrames);
    const auto& c = imp->counters();
    CHECK(c.frames == kFrames);
    CHECK(c.dropped > 500);
    CHECK(c.burst_dropped > 0);
    CHECK(c.duplicated > 200);
    CHECK(c.reordered > 200);
    // Every frame is dropped, delivered, or (at most one) still held back.
    const std::uint64_t delivered = got.size();
    CHECK(delivered + c.dropped + c.burst_dropped <= kFrames + c.duplicated);
    CHECK(delivered + c.dropped + c.burst_dropped + 1 >= kFrames + c.duplicated);
    std::size_t inversions = 0;
    for (std::size_t i = 1; i < got.size(); ++i) inversions += got[i] < got[i - 1];
    CHECK(inversions > 0);
  }
  CHECK(rte_mempool_in_use_count(pool().get()) == in_use);  // the held frame was freed too
}

TEST_CASE("impairment: bad parameters are refused by name", "[engine][impairment]") {
  test::RingPair rp("timq", pool().get());
  Status err;
  ImpairmentConfig cfg;
  cfg.loss = 1.5;
  CHECK(LinkImpairment::attach(rp.b->id(), 0, cfg, pool().get(), err) == nullptr);
  CHECK(err.message().find("loss") != std::string::npos);
  cfg = {};
  cfg.burst_start = 0.1;
  CHECK(LinkImpairment::attach(rp.b->id(), 0, cfg, pool().get(), err) == nullptr);
  CHECK(err.message().find("burst_frames") != std::string::npos);
  cfg = {};
  cfg.duplicate = 0.1;
  CHECK(LinkImpairment::attach(rp.b->id(), 0, cfg, nullptr, err) == nullptr);
}
