// Ports on in-process PMDs: net_ring pairs and loopback, net_null, bad devargs, TX batching.
#include <catch2/catch.hpp>

#include "engine/core/counters.h"
#include "engine/core/forwarder.h"
#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "engine/core/tx_batch.h"
#include "engine/core/worker.h"
#include "tests/engine/frames.h"
#include "tests/engine/ring_pair.h"

using namespace droce::engine;
using namespace droce::test;

namespace {

// Deliberately never freed: static destructors run after main() has shut EAL down.
MbufPool& pool() {
  static MbufPool* p = new MbufPool();
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_ports_pool", 4095, 64, 2176, -1}, *p).ok());
  return *p;
}

struct PoolRingPair : droce::test::RingPair {
  explicit PoolRingPair(const std::string& name, unsigned ring_size = 1024)
      : droce::test::RingPair(name, pool().get(), ring_size) {}
};

}  // namespace

TEST_CASE("net_ring pair: 1000 frames of mixed sizes arrive in order with every byte intact", "[engine][ring]") {
  PoolRingPair rp("tp1");
  const std::uint32_t sizes[] = {60, 64, 128, 1000, 1514};
  std::uint32_t sent = 0;
  for (std::uint32_t round = 0; round < 200; ++round) {
    rte_mbuf* burst[5];
    for (int i = 0; i < 5; ++i) burst[i] = make_frame(pool().get(), sent + i, sizes[i]);
    REQUIRE(rp.a->tx_burst(0, burst, 5) == 5);
    auto got = receive(rp.b->id(), 0, 5, 1000);
    REQUIRE(got.size() == 5);
    for (int i = 0; i < 5; ++i) {
      std::uint32_t seq = 0;
      REQUIRE(check_frame(got[i], sizes[i], seq));
      REQUIRE(seq == sent + i);
    }
    free_all(got);
    sent += 5;
  }
  CHECK(sent == 1000);
}

TEST_CASE("net_ring loopback port from devargs returns what it sends", "[engine][ring]") {
  Status err;
  PortConfig cfg;
  cfg.rx_pool = pool().get();
  // net_ring vdevs are named net_ring<N>; any suffix works with the driver prefix.
  cfg.devargs = "net_ring7";
  auto p = Port::open(cfg, err);
  REQUIRE(err.ok());
  CHECK(p->driver() == "net_ring");
  rte_mbuf* m = make_frame(pool().get(), 42, 256);
  REQUIRE(p->tx_burst(0, &m, 1) == 1);
  auto got = receive(p->id(), 0, 1, 1000);
  REQUIRE(got.size() == 1);
  std::uint32_t seq = 0;
  CHECK(check_frame(got[0], 256, seq));
  CHECK(seq == 42);
  free_all(got);
}

TEST_CASE("a port asked for multicast MACs opens on a PMD without a multicast list", "[engine][ring]") {
  // net_ring keeps no multicast list nor all-multicast switch: it takes every frame, and the
  // port opens all the same (an IPv6 endpoint's ND groups, docs/nd.md).
  Status err;
  PortConfig cfg;
  cfg.rx_pool = pool().get();
  cfg.devargs = "net_ring8";
  cfg.multicast_macs = {{0x33, 0x33, 0xff, 0, 0, 1}, {0x33, 0x33, 0, 0, 0, 1}};
  auto p = Port::open(cfg, err);
  REQUIRE(err.ok());
  CHECK(p != nullptr);
}

TEST_CASE("net_null: sink takes every frame, mbufs go back to the pool, RX generates sized frames", "[engine][null]") {
  Status err;
  PortConfig cfg;
  cfg.devargs = "net_null3,size=128";
  cfg.rx_pool = pool().get();
  auto p = Port::open(cfg, err);
  REQUIRE(err.ok());
  const auto before = pool().available();
  rte_mbuf* burst[32];
  for (int i = 0; i < 32; ++i) burst[i] = make_frame(pool().get(), i, 512);
  CHECK(p->tx_burst(0, burst, 32) == 32);
  CHECK(pool().available() == before);  // freed by the sink: nothing leaked
  rte_mbuf* rx[8];
  const auto n = p->rx_burst(0, rx, 8);
  REQUIRE(n == 8);
  for (int i = 0; i < n; ++i) {
    CHECK(rx[i]->pkt_len == 128);
    rte_pktmbuf_free(rx[i]);
  }
  CHECK(pool().available() == before);
}

TEST_CASE("bad devargs and a missing PMD give an error naming the device, not a crash", "[engine][errors]") {
  Status err;
  PortConfig cfg;
  cfg.rx_pool = pool().get();
  cfg.devargs = "net_nosuchpmd0";
  CHECK(Port::open(cfg, err) == nullptr);
  CHECK(err.message().find("net_nosuchpmd0") != std::string::npos);
  cfg.devargs = "net_null9,size=notanumber,bogus=1";
  CHECK(Port::open(cfg, err) == nullptr);
  CHECK_FALSE(err.ok());
  cfg.devargs = "";
  CHECK(Port::open(cfg, err) == nullptr);
  cfg.devargs = "net_null8";
  cfg.rx_pool = nullptr;
  CHECK(Port::open(cfg, err) == nullptr);
  CHECK(err.message().find("pool") != std::string::npos);
}

TEST_CASE("a link that never comes up times out with a clear error", "[engine][errors]") {
  Status err;
  PortConfig cfg;
  cfg.rx_pool = pool().get();
  // A memif server with no client: the link stays down.
  cfg.devargs = "net_memif5,role=server,socket=/tmp/droce-test-nolink-" + std::to_string(getpid()) + ".sock";
  auto p = Port::open(cfg, err);
  REQUIRE(err.ok());
  auto s = p->wait_link_up(100);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("did not come up") != std::string::npos);
}

TEST_CASE("MTU outside the device's range is refused with the range", "[engine][errors]") {
  // net_null reports ethdev's default range (68 .. 65535): the device is asked first, and an MTU
  // below its minimum is the one outside it whatever the PMD allows above.
  Status err;
  PortConfig cfg;
  cfg.rx_pool = pool().get();
  cfg.devargs = "net_null10";
  auto probe = Port::open(cfg, err);
  REQUIRE(probe != nullptr);
  const std::uint16_t min_mtu = probe->offloads().min_mtu, max_mtu = probe->offloads().max_mtu;
  REQUIRE(min_mtu > 1);  // ethdev's RTE_ETHER_MIN_MTU at least
  cfg.devargs = "net_null12";
  cfg.mtu = static_cast<std::uint16_t>(min_mtu - 1);
  auto p = Port::open(cfg, err);
  REQUIRE(p == nullptr);
  CHECK(err.code() == StatusCode::kUnsupported);
  CHECK(err.message().find("MTU " + std::to_string(min_mtu - 1) + " outside the device's " + std::to_string(min_mtu) +
                           ".." + std::to_string(max_mtu)) != std::string::npos);
}

TEST_CASE("TxBatch keeps what tx_burst did not take and sends it, in order, next time", "[engine][txbatch]") {
  PoolRingPair rp("tp2", 64);  // a ring of 64 slots (63 usable): a burst of 100 cannot fit
  TxBatch<512> batch;
  for (std::uint32_t i = 0; i < 100; ++i) REQUIRE(batch.push(make_frame(pool().get(), i, 100)));
  std::uint64_t bytes = 0;
  const auto first = batch.flush(rp.a->id(), 0, bytes);
  CHECK(first < 100);
  CHECK(batch.size() == 100 - first);
  CHECK(bytes == first * 100ull);
  std::vector<rte_mbuf*> got = receive(rp.b->id(), 0, first, 1000);
  REQUIRE(got.size() == first);
  std::uint32_t expect = 0;
  for (int round = 0; round < 10 && !batch.empty(); ++round) {
    batch.flush(rp.a->id(), 0, bytes);
    auto more = receive(rp.b->id(), 0, 64, 50);
    got.insert(got.end(), more.begin(), more.end());
  }
  auto rest = receive(rp.b->id(), 0, 100 - got.size(), 200);
  got.insert(got.end(), rest.begin(), rest.end());
  REQUIRE(got.size() == 100);
  for (auto* m : got) {
    std::uint32_t seq = 0;
    REQUIRE(check_frame(m, 100, seq));
    CHECK(seq == expect++);
  }
  CHECK(bytes == 100 * 100ull);
  free_all(got);
}

TEST_CASE("TxBatch refuses pushes past its capacity (caller counts the drop)", "[engine][txbatch]") {
  TxBatch<32> batch;
  std::vector<rte_mbuf*> extra;
  for (int i = 0; i < 32; ++i) REQUIRE(batch.push(make_frame(pool().get(), i, 64)));
  rte_mbuf* m = make_frame(pool().get(), 99, 64);
  CHECK_FALSE(batch.push(m));
  rte_pktmbuf_free(m);
  CHECK(batch.drop_all() == 32);
  CHECK(batch.empty());
}

TEST_CASE("Forwarder moves frames rx -> tx intact and counts them", "[engine][forwarder]") {
  PoolRingPair in("tp3"), out("tp4");
  auto& pc = CounterRegistry::instance().add_port(in.b->id(), "tp3B", "net_ring", 1);
  auto& oc = CounterRegistry::instance().add_port(out.a->id(), "tp4A", "net_ring", 1);
  Forwarder fwd(in.b->id(), 0, out.a->id(), 0, pc.queues[0], oc.queues[0]);
  for (std::uint32_t i = 0; i < 64; ++i) {
    rte_mbuf* m = make_frame(pool().get(), i, 200);
    REQUIRE(in.a->tx_burst(0, &m, 1) == 1);
  }
  for (int i = 0; i < 20; ++i) fwd.poll(0);
  auto got = receive(out.b->id(), 0, 64, 1000);
  REQUIRE(got.size() == 64);
  for (std::uint32_t i = 0; i < 64; ++i) {
    std::uint32_t seq = 0;
    REQUIRE(check_frame(got[i], 200, seq));
    CHECK(seq == i);
  }
  free_all(got);
  fwd.finish();
  CHECK(pc.queues[0].rx_packets == 64);
  CHECK(oc.queues[0].tx_packets == 64);
  const std::string json = CounterRegistry::instance().json(out.a->id());
  CHECK(json.find("\"tx_packets\": 64") != std::string::npos);
}

TEST_CASE("a worker lcore runs the forwarding loop until stop is requested, then finishes cleanly",
          "[engine][worker]") {
  // The test runner always gives EAL two lcores (tests/common/eal_test_main.cc), on one CPU if need be.
  REQUIRE(rte_lcore_count() >= 2);
  PoolRingPair in("tw1"), out("tw2");
  auto& pc = CounterRegistry::instance().add_port(in.b->id(), "tw1B", "net_ring", 1);
  auto& oc = CounterRegistry::instance().add_port(out.a->id(), "tw2A", "net_ring", 1);
  Forwarder fwd(in.b->id(), 0, out.a->id(), 0, pc.queues[0], oc.queues[0]);
  const unsigned worker = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
  clear_stop();
  REQUIRE(launch_worker(worker, fwd).ok());
  for (std::uint32_t i = 0; i < 256; ++i) {
    rte_mbuf* m = make_frame(pool().get(), i, 128);
    while (in.a->tx_burst(0, &m, 1) == 0) {
    }
  }
  auto got = receive(out.b->id(), 0, 256, 5000);
  request_stop();
  CHECK(wait_worker(worker) == 0);
  clear_stop();
  REQUIRE(got.size() == 256);
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t seq = 0;
    REQUIRE(check_frame(got[i], 128, seq));
    CHECK(seq == i);
  }
  free_all(got);
  CHECK(oc.queues[0].tx_packets == 256);
  // A second launch on the main lcore is refused with a message, not a crash.
  CHECK_FALSE(launch_worker(rte_get_main_lcore(), fwd).ok());
}
