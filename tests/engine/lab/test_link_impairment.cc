// LinkImpairment and FrameImpairment: loss, bursts, duplication, reordering and a drop rule, counted exactly.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
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

namespace {
// An IPv4/UDP frame of one flow whose IP Identification is `id` (the drop rules read the ID and
// the 5-tuple only).
rte_mbuf* ipv4_frame(std::uint16_t id) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, 64));
  REQUIRE(p != nullptr);
  std::memset(p, 0, 64);
  p[12] = 0x08;  // IPv4
  p[14] = 0x45;
  p[17] = 50;  // total length: 20 + 8 + 22
  p[18] = static_cast<std::uint8_t>(id >> 8);
  p[19] = static_cast<std::uint8_t>(id);
  p[22] = 64;
  p[23] = 17;  // UDP
  p[26] = 10, p[29] = 1, p[30] = 10, p[33] = 2;
  p[34] = 0xC3, p[35] = 0x50, p[36] = 0x12, p[37] = 0xB7;  // 50000 -> 4791
  return m;
}

// The IDs that survive `imp` for frames with IDs 0..n-1, in bursts of 32.
std::vector<std::uint16_t> survivors(FrameImpairment& imp, int n) {
  std::vector<std::uint16_t> kept;
  for (int at = 0; at < n; at += 32) {
    rte_mbuf* b[64];
    const int k = std::min(32, n - at);
    for (int i = 0; i < k; ++i) b[i] = ipv4_frame(static_cast<std::uint16_t>(at + i));
    const std::uint16_t left = imp.apply(b, static_cast<std::uint16_t>(k), 64);
    for (std::uint16_t i = 0; i < left; ++i) {
      const auto* f = rte_pktmbuf_mtod(b[i], const std::uint8_t*);
      kept.push_back(static_cast<std::uint16_t>(f[18] << 8 | f[19]));
      rte_pktmbuf_free(b[i]);
    }
  }
  return kept;
}
}  // namespace

// SIGCOMM'16 §5.1's switch on a link (droce-gen --drop-rule): exactly the frames the rule names are
// dropped, before and apart from the random loss, and counted as the rule's.
TEST_CASE("impairment: a drop rule drops exactly its frames, counted apart from random loss", "[engine][impairment]") {
  const unsigned in_use = rte_mempool_in_use_count(pool().get());
  SECTION("ip-id:0xff: 1 frame in 256") {
    ImpairmentConfig cfg;
    REQUIRE(DropRuleConfig::parse("ip-id:0xff", cfg.drop_rule).ok());
    REQUIRE(cfg.any());
    FrameImpairment imp(cfg, nullptr);
    REQUIRE(imp.arm_rule().ok());
    const std::vector<std::uint16_t> kept = survivors(imp, 1024);
    REQUIRE(kept.size() == 1020);
    for (std::uint16_t id : kept) CHECK((id & 0xFF) != 0xFF);
    CHECK(imp.counters().rule_dropped == 4);
    CHECK(imp.counters().dropped == 0);
    CHECK(imp.counters().frames == 1024);
  }
  SECTION("every:10 of the flow, beside 5 % random loss: the rule's drops are its own") {
    ImpairmentConfig cfg;
    cfg.loss = 0.05;
    cfg.seed = 3;
    REQUIRE(DropRuleConfig::parse("every:10", cfg.drop_rule).ok());
    FrameImpairment imp(cfg, nullptr);
    REQUIRE(imp.arm_rule().ok());
    const std::vector<std::uint16_t> kept = survivors(imp, 1000);
    CHECK(imp.counters().rule_dropped == 100);  // frames 10, 20, .. 1000 of the flow: IDs 9, 19, ..
    for (std::uint16_t id : kept) CHECK((id + 1) % 10 != 0);
    CHECK(imp.counters().dropped > 0);
    CHECK(kept.size() == 1000 - 100 - imp.counters().dropped);
  }
  CHECK(rte_mempool_in_use_count(pool().get()) == in_use);
}
