// Memory registry: keys and bounds, and zero-copy payload attach carried through a real PMD.
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <numeric>
#include <thread>
#include <vector>

#include "engine/core/memory_region.h"
#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "tests/engine/frames.h"

using namespace droce::engine;
using droce::rc::kAccessLocalWrite;
using droce::rc::kAccessRemoteRead;
using droce::rc::kAccessRemoteWrite;

namespace {
// Deliberately never freed: static destructors run after main() has shut EAL down.
MbufPool& pool() {
  static MbufPool* p = new MbufPool();
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_mr_pool", 1023, 32, 2176, -1}, *p).ok());
  return *p;
}
}  // namespace

TEST_CASE("registered region: keys resolve, bounds and access are enforced", "[engine][mr]") {
  MemoryRegistry reg(16);
  std::vector<std::uint8_t> buf(8192);
  droce::rc::MemoryRegion mr;
  REQUIRE(reg.register_memory(buf.data(), buf.size(), kAccessLocalWrite | kAccessRemoteWrite, mr).ok());
  CHECK(mr.lkey != mr.rkey);
  std::uint8_t* p = nullptr;
  const auto base = reinterpret_cast<std::uint64_t>(buf.data());
  CHECK(reg.table().check_remote(mr.rkey, base + 100, 200, kAccessRemoteWrite, &p) == droce::rc::MrCheck::kOk);
  CHECK(p == buf.data() + 100);
  CHECK(reg.table().check_remote(mr.rkey, base + 8000, 200, kAccessRemoteWrite, &p) ==
        droce::rc::MrCheck::kOutOfBounds);
  CHECK(reg.table().check_remote(mr.rkey, base - 1, 1, kAccessRemoteWrite, &p) == droce::rc::MrCheck::kOutOfBounds);
  CHECK(reg.table().check_remote(mr.rkey, base, UINT64_MAX, kAccessRemoteWrite, &p) ==
        droce::rc::MrCheck::kOutOfBounds);
  CHECK(reg.table().check_remote(mr.rkey, base, 16, kAccessRemoteRead, &p) == droce::rc::MrCheck::kAccessDenied);
  CHECK(reg.table().check_remote(mr.lkey, base, 16, kAccessRemoteWrite, &p) == droce::rc::MrCheck::kBadKey);
  CHECK(reg.table().check_remote(mr.rkey ^ 0x01000000u, base, 16, kAccessRemoteWrite, &p) ==
        droce::rc::MrCheck::kBadKey);  // another key part
  CHECK(reg.deregister(mr.lkey).ok());
  CHECK(reg.table().check_remote(mr.rkey, base, 16, kAccessRemoteWrite, &p) == droce::rc::MrCheck::kBadKey);
  CHECK_FALSE(reg.deregister(mr.lkey).ok());
}

TEST_CASE("two identical runs get different R_Keys; seed_keys repeats a run's; a forced R_Key is exact",
          "[engine][mr][hardening]") {
  std::vector<std::uint8_t> buf(4096);
  droce::rc::MemoryRegion mr;
  // The same eight registrations in two registries (two runs of one program): each key part is
  // drawn from EAL's PRNG, so the sequences differ (all eight equal by chance: 255^-8).
  const auto run = [&](MemoryRegistry& reg) {
    std::vector<std::uint32_t> keys;
    for (int i = 0; i < 8; ++i) {
      REQUIRE(reg.register_memory(buf.data(), buf.size(), kAccessRemoteWrite, mr).ok());
      keys.push_back(mr.rkey);
    }
    return keys;
  };
  MemoryRegistry one(16), two(16);
  const auto k1 = run(one), k2 = run(two);
  CHECK(k1 != k2);
  for (std::size_t i = 0; i < k1.size(); ++i) CHECK((k1[i] & 0xFFFF) == (k2[i] & 0xFFFF));  // same slots
  // A deterministic run: seeded registries repeat each other.
  MemoryRegistry three(16), four(16);
  three.seed_keys(12345);
  four.seed_keys(12345);
  CHECK(run(three) == run(four));
  // Capture replays force the recorded key.
  MemoryRegistry replay(1024);
  REQUIRE(replay.register_memory_with_rkey(buf.data(), buf.size(), kAccessRemoteWrite, 0x00000305u, mr).ok());
  CHECK(mr.rkey == 0x00000305u);
  const auto base = reinterpret_cast<std::uint64_t>(buf.data());
  CHECK(replay.table().check_remote(0x305, base, 8, kAccessRemoteWrite, nullptr) == droce::rc::MrCheck::kOk);
  const droce::Status taken = replay.register_memory_with_rkey(buf.data(), buf.size(), kAccessRemoteWrite, 0x305, mr);
  CHECK(taken.code() == droce::StatusCode::kBadState);
  // ... in a protection domain: exact, and reached only by that domain's QPs.
  std::uint32_t pd = 0;
  REQUIRE(replay.create_domain(pd).ok());
  REQUIRE(replay.register_memory_with_rkey(buf.data(), buf.size(), kAccessRemoteWrite, 0x00000307u, pd, mr).ok());
  CHECK(mr.rkey == 0x00000307u);
  CHECK(replay.table().check_remote(0x307, base, 8, kAccessRemoteWrite, nullptr, pd) == droce::rc::MrCheck::kOk);
  CHECK(replay.table().check_remote(0x307, base, 8, kAccessRemoteWrite, nullptr) == droce::rc::MrCheck::kWrongDomain);
  const droce::Status no_pd =
      replay.register_memory_with_rkey(buf.data(), buf.size(), kAccessRemoteWrite, 0x309u, pd + 1000, mr);
  CHECK(no_pd.code() == droce::StatusCode::kNotFound);
}

TEST_CASE("empty or null regions are refused", "[engine][mr]") {
  MemoryRegistry reg(4);
  droce::rc::MemoryRegion mr;
  std::uint8_t b[16];
  CHECK_FALSE(reg.register_memory(nullptr, 16, 0, mr).ok());
  CHECK_FALSE(reg.register_memory(b, 0, 0, mr).ok());
}

TEST_CASE("zero-copy: header mbuf + application payload as extbuf crosses net_ring intact, no copy made",
          "[engine][mr][zerocopy]") {
  rte_ring* r = rte_ring_create("tmr_loop", 256, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
  REQUIRE(r != nullptr);
  REQUIRE(rte_eth_from_rings("tmr_loopA", &r, 1, &r, 1, SOCKET_ID_ANY) >= 0);
  Status err;
  PortConfig cfg;
  cfg.devargs = "tmr_loopA";
  cfg.rx_pool = pool().get();
  auto port = Port::open(cfg, err);
  REQUIRE(err.ok());

  MemoryRegistry reg(16);
  std::vector<std::uint8_t> app(64 * 1024);
  std::iota(app.begin(), app.end(), 0);
  droce::rc::MemoryRegion mr;
  REQUIRE(reg.register_memory(app.data(), app.size(), kAccessLocalWrite, mr).ok());

  rte_mbuf* hdr = droce::test::make_frame(pool().get(), 7, 18);  // Ethernet + seq only
  rte_mbuf* payload = rte_pktmbuf_alloc(pool().get());
  REQUIRE(hdr != nullptr);
  REQUIRE(payload != nullptr);
  REQUIRE(reg.attach_payload(payload, mr.lkey, 1000, 1400));
  CHECK(reg.outstanding(mr.lkey) == 1);
  CHECK(rte_pktmbuf_mtod(payload, std::uint8_t*) == app.data() + 1000);  // points into the app buffer
  REQUIRE(rte_pktmbuf_chain(hdr, payload) == 0);
  CHECK(hdr->nb_segs == 2);
  CHECK(hdr->pkt_len == 18 + 1400);
  CHECK_FALSE(reg.deregister(mr.lkey).ok());  // still referenced by a frame in flight

  REQUIRE(port->tx_burst(0, &hdr, 1) == 1);
  auto got = droce::test::receive(port->id(), 0, 1, 1000);
  REQUIRE(got.size() == 1);
  std::vector<std::uint8_t> copy(got[0]->pkt_len);
  const auto* bytes = static_cast<const std::uint8_t*>(rte_pktmbuf_read(got[0], 0, got[0]->pkt_len, copy.data()));
  REQUIRE(bytes != nullptr);
  CHECK(std::equal(bytes + 18, bytes + got[0]->pkt_len, app.begin() + 1000));
  droce::test::free_all(got);
  CHECK(reg.outstanding(mr.lkey) == 0);  // freeing the frame released the application memory
  CHECK(reg.deregister(mr.lkey).ok());

  // Bad attaches are refused: unknown key, out of bounds, over 64 KiB.
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  CHECK_FALSE(reg.attach_payload(m, 12345, 0, 10));
  rte_pktmbuf_free(m);
  port.reset();
  rte_ring_free(r);
}

// Worker threads sharing one registry look up their own buffers at once: each keeps its own
// hint, so a lookup writes nothing shared (a shared last-hit cache was a data race, and under
// TSan a report) and every thread gets the key of the region that holds its pointer.
TEST_CASE("pointer lookups from several threads at once -> each gets the key of its own region", "[engine][mr]") {
  MemoryRegistry reg(16);
  constexpr int kRegions = 4;
  std::vector<std::vector<std::uint8_t>> bufs(kRegions, std::vector<std::uint8_t>(4096));
  std::uint32_t lkeys[kRegions] = {};
  for (int r = 0; r < kRegions; ++r) {
    droce::rc::MemoryRegion mr;
    REQUIRE(reg.register_memory(bufs[r].data(), bufs[r].size(), kAccessLocalWrite, mr).ok());
    lkeys[r] = mr.lkey;
  }
  const MemoryRegistry& shared = reg;
  std::atomic<std::uint64_t> wrong{0}, found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kRegions; ++t) {
    threads.emplace_back([&, t] {
      MemoryRegistry::LookupHint hint;
      for (int k = 0; k < 20'000; ++k) {
        // Alternate between two regions so the hint misses, scans and moves every other lookup.
        const int r = (k & 1) != 0 ? t : (t + 1) % kRegions;
        std::uint32_t lkey = 0;
        if (!shared.find_lkey(bufs[r].data() + (k % 4000), 64, lkey, &hint) || lkey != lkeys[r])
          wrong.fetch_add(1, std::memory_order_relaxed);
        else
          found.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
  CHECK(found.load() == kRegions * 20'000u);
  // Outside every region: not found, from any thread.
  std::uint8_t stray[64];
  std::uint32_t lkey = 0;
  CHECK_FALSE(shared.find_lkey(stray, sizeof(stray), lkey));
}
