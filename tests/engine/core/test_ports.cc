// Ports on in-process PMDs: net_ring pairs and loopback, net_null (and its RSS redirection table),
// bad devargs, TX batching.
#include <rte_ethdev.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "engine/core/counters.h"
#include "engine/core/forwarder.h"
#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "engine/core/tx_batch.h"
#include "engine/core/worker.h"
#include "engine/workers/rss_placement.h"
#include "engine/workers/worker_group.h"
#include "protocols/wire/build.h"
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

namespace {

droce::wire::L2L3Address null_host(std::uint8_t host) {
  droce::wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[5] = host;
  a.ip[0] = 10;
  a.ip[1] = 43;
  a.ip[3] = host;
  return a;
}

// The port's whole redirection table, entry by entry (rte_eth_dev_rss_reta_query, 64 per group).
std::vector<std::uint16_t> read_reta(std::uint16_t port_id) {
  rte_eth_dev_info info{};
  REQUIRE(rte_eth_dev_info_get(port_id, &info) == 0);
  std::vector<rte_eth_rss_reta_entry64> groups((info.reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) /
                                               RTE_ETH_RETA_GROUP_SIZE);
  for (auto& g : groups) g.mask = ~0ULL;
  REQUIRE(rte_eth_dev_rss_reta_query(port_id, groups.data(), info.reta_size) == 0);
  std::vector<std::uint16_t> t(info.reta_size);
  for (std::size_t i = 0; i < t.size(); ++i)
    t[i] = groups[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
  return t;
}

}  // namespace

// net_null is the one PMD here with a redirection table to write (DPDK 22.11 rte_eth_null.c:
// reta_update / reta_query / rss_hash_conf_get over a 128-entry table and a 40-byte key; it hashes
// nothing itself). net_tap and net_af_xdp expose no table in 22.11; net_ring and net_memif neither
// (docs/workers.md). So the table write of WorkerGroup::place_flows_by_rss runs here: 4 workers,
// 8 QPs each, and the table read back must send each QP's inbound 4-tuple (the peer's address and
// its UDP source port for the pair, hashed with the key the port reports) to its owner's queue.
TEST_CASE("net_null, 4 queues: place_flows_by_rss writes the RSS table so each QP's flow reaches its owner's queue",
          "[engine][null][rss]") {
  constexpr std::uint16_t kWorkers = 4;
  constexpr std::uint32_t kQpsPerWorker = 8;
  Status err;
  PortConfig cfg;
  cfg.devargs = "net_null12";
  cfg.rx_pool = pool().get();
  cfg.rx_queues = cfg.tx_queues = kWorkers;
  auto port = Port::open(cfg, err);
  INFO(err.message());
  REQUIRE(port);
  REQUIRE(port->offloads().rss);  // net_null offers the UDP hash types, so Port::open asked for RSS
  std::vector<std::unique_ptr<MemoryRegistry>> memories;
  WorkerGroupConfig wc;
  wc.workers = kWorkers;
  wc.endpoint.queues.port_id = port->id();
  wc.endpoint.addresses.local = null_host(1);
  wc.endpoint.transport.qpn_base = 0x200;
  wc.qps_per_worker = kQpsPerWorker;
  for (std::uint16_t w = 0; w < kWorkers; ++w) {
    wc.pools.push_back(pool().get());
    memories.push_back(std::make_unique<MemoryRegistry>());
    wc.memories.push_back(memories.back().get());
  }
  auto group = WorkerGroup::create(wc, err);
  INFO(err.message());
  REQUIRE(group);
  const std::vector<std::uint16_t> before = read_reta(port->id());
  REQUIRE(before.size() >= 64);

  // Each worker's QPs connected to a peer's QPs 0x900.. (nothing is sent: net_null's RX is not polled).
  std::vector<InboundFlow> flows;
  for (std::uint16_t w = 0; w < kWorkers; ++w) {
    for (std::uint32_t i = 0; i < kQpsPerWorker; ++i) {
      std::uint32_t qpn = 0;
      REQUIRE(group->worker(w).endpoint().create_qp(droce::rc::QpAttr{}, qpn).ok());
      REQUIRE(group->owner_of(qpn) == w);
      const std::uint32_t remote_qpn = 0x900 + w * kQpsPerWorker + i;
      REQUIRE(group->worker(w).endpoint().connect(qpn, RemoteQp{null_host(2), remote_qpn, 0}).ok());
      InboundFlow f;  // as the peer's frames carry it, worked out here rather than read from the group
      std::memcpy(f.src_ip, null_host(2).ip, sizeof(f.src_ip));
      std::memcpy(f.dst_ip, null_host(1).ip, sizeof(f.dst_ip));
      f.src_port = droce::wire::roce_udp_src_port(remote_qpn, qpn);
      f.owner = w;
      flows.push_back(f);
    }
  }
  RssPlacement placed;
  REQUIRE(group->place_flows_by_rss(placed).ok());
  INFO(placed.why);
  CHECK(placed.applied);
  CHECK(placed.why.empty());
  CHECK(placed.flows == kWorkers * kQpsPerWorker);
  CHECK(placed.reta_size == before.size());
  CHECK(placed.placed + placed.conflicts == placed.flows);

  // The table as the PMD now reports it, and its key.
  const std::vector<std::uint16_t> after = read_reta(port->id());
  std::uint8_t key[64] = {};
  rte_eth_rss_conf rss{};
  rss.rss_key = key;
  rss.rss_key_len = sizeof(key);
  REQUIRE(rte_eth_dev_rss_hash_conf_get(port->id(), &rss) == 0);
  REQUIRE(rss.rss_key_len >= 40);
  // The first flow on an entry claims it; a later flow of another owner shares it (a conflict).
  std::map<std::size_t, std::uint16_t> claimed;
  std::uint32_t conflicts = 0;
  for (const InboundFlow& f : flows) {
    const std::size_t entry = inbound_rss_hash(f, std::span<const std::uint8_t>(key, rss.rss_key_len)) % after.size();
    const auto [it, first] = claimed.emplace(entry, f.owner);
    if (!first && it->second != f.owner) ++conflicts;
    CHECK(after[entry] == it->second);
  }
  CHECK(placed.conflicts == conflicts);
  CHECK(placed.placed == placed.flows - conflicts);
  // Entries no flow uses keep the queue they had; used entries changed where the table the PMD
  // started from sent a flow elsewhere (net_null's starts with every entry on queue 0, so the
  // flows of workers 1..3 moved some).
  std::size_t changed = 0;
  for (std::size_t e = 0; e < after.size(); ++e) {
    if (claimed.count(e) == 0) CHECK(after[e] == before[e]);
    changed += after[e] != before[e];
  }
  CHECK(changed > 0);
  // A second placement finds the table right: nothing to change, the same counts.
  RssPlacement again;
  REQUIRE(group->place_flows_by_rss(again).ok());
  CHECK(again.applied);
  CHECK(again.conflicts == conflicts);
  CHECK(read_reta(port->id()) == after);
  port->stop();
  group->finish();
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
