// droce-rping's set-up (see setup.h).
#include "apps/droce-rping/setup.h"

#include <rte_cycles.h>
#include <rte_lcore.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "apps/common/address_text.h"
#include "apps/common/default_port.h"
#include "apps/common/telemetry_setup.h"
#include "apps/common/worker_limits.h"

namespace droce::rping {

using engine::Status;

void Setup::poll_all() {
  const std::uint64_t now = rte_rdtsc();
  for (std::uint16_t w = 0; w < group->size(); ++w) group->worker(w).poll(now);
}

Status set_up(const Options& o, bool defaults, Setup& st, bool& usage) {
  usage = false;
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  // --workers: the server's each need an lcore (the main one is worker 0); every worker, the
  // client's included, its own queue pair.
  if (o.server)
    if (Status s = apps::workers_lcore_limit(o.workers); !s.ok()) return usage = true, s;
  for (unsigned l = rte_get_main_lcore(); st.lcores.size() < o.workers && l < RTE_MAX_LCORE;
       l = o.server ? rte_get_next_lcore(l, 1, 0) : l)
    st.lcores.push_back(l);
  // Whole 4 KiB frames and the QP1 MADs (UD SENDs of 256 bytes) in one buffer each; per worker
  // enough for its RX ring (1024 descriptors) and its lcore's cache.
  engine::PortConfig pc;
  if (Status s = engine::pair_port_devargs(defaults, o.server, "/tmp/droce-rping.sock", pc.devargs); !s.ok()) return s;
  const std::uint16_t room = engine::pool_data_room_for_port(pc.devargs, 2176 + 4096);
  const std::uint32_t mbufs = std::max<std::uint32_t>(2047, 4095 / o.workers);
  if (Status s =
          engine::create_worker_pools(engine::PoolConfig{"rping_pool", mbufs, 256, room, -1}, st.lcores, st.pools);
      !s.ok())
    return s;
  pc.rx_pool = st.pools[0].get();
  for (auto& p : st.pools) pc.rx_pools.push_back(p.get());
  pc.rx_queues = pc.tx_queues = static_cast<std::uint16_t>(o.workers);
  pc.promiscuous = true;
  if (Status s = apps::workers_queue_limit(o.workers, pc.devargs); !s.ok()) return usage = true, s;
  Status err;
  st.port = engine::Port::open(pc, err);
  if (!st.port) return err;
  if (Status s = st.port->wait_link_up(timeout_ms); !s.ok()) return s;
  // Before the first burst: a peer that ends (even killed) must not tear the rings down under us.
  if (Status s = st.port->hold_peer_events(5000); !s.ok())
    std::fprintf(stderr, "droce-rping: warning: %s\n", s.message().c_str());
  const std::uint8_t default_ip[4] = {10, 0, 0, static_cast<std::uint8_t>(o.server ? 2 : 1)};
  std::memcpy(st.ip.bytes, default_ip, 4);
  if (!o.local_ip.empty()) (void)engine::parse_ip(o.local_ip, st.ip);  // validated by the parser
  const rte_ether_addr port_mac = st.port->mac();
  if (o.local_mac.empty() || !engine::parse_mac(o.local_mac, st.mac)) std::memcpy(st.mac, port_mac.addr_bytes, 6);
  for (std::uint32_t w = 0; w < o.workers; ++w) st.memories.push_back(std::make_unique<engine::MemoryRegistry>());
  engine::WorkerGroupConfig wc;
  wc.workers = static_cast<std::uint16_t>(o.workers);
  // The QPs of a worker: its share of the server's clients (or the client's connections).
  const std::uint32_t conns = o.server ? o.clients : o.connections;
  wc.qps_per_worker = std::max<std::uint32_t>(4, (conns + o.workers - 1) / o.workers);
  for (auto& p : st.pools) wc.pools.push_back(p.get());
  for (auto& m : st.memories) wc.memories.push_back(m.get());
  wc.endpoint.queues.port_id = st.port->id();
  wc.endpoint.queues.pool = st.pools[0].get();
  wc.endpoint.queues.memory = st.memories[0].get();
  wc.endpoint.addresses.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
  wc.endpoint.addresses.local = engine::lab_address(st.ip, st.mac);
  wc.endpoint.addresses.ipv6 = st.ip.ipv6;  // RoCEv2 over IPv6: ND instead of ARP, the CM's addresses 16 bytes
  st.group = engine::WorkerGroup::create(wc, err);
  if (!st.group) return err;
  // Lab loss where --impair-direction says (every RX queue and/or every worker's sending, a seed
  // each), before the first poll; the CM's MADs are frames too.
  engine::ImpairmentConfig ic;
  ic.loss = o.loss;
  ic.seed = o.seed;
  apps::ImpairDirection dir = apps::ImpairDirection::kRx;
  if (Status s = apps::parse_impair_direction(o.impair_direction, dir); !s.ok()) return s;
  std::vector<rte_mempool*> pools;
  std::vector<engine::RcEndpoint*> eps;
  for (std::uint16_t q = 0; q < st.group->size(); ++q) {
    pools.push_back(st.pools[q].get());
    eps.push_back(&st.group->worker(q).endpoint());
  }
  if (Status s = st.impairments.install(ic, dir, st.port->id(), pools, eps); !s.ok()) return s;
  apps::start_telemetry("droce-rping");
  return {};
}

void allocate_buffers(Setup& st, std::size_t bytes) {
  st.buffers = std::make_unique<std::uint8_t[]>(bytes);
  std::memset(st.buffers.get(), 0, bytes);
}

Status register_region(Setup& st, std::uint16_t w, std::uint8_t* region, std::size_t bytes, std::uint32_t pd,
                       rc::MemoryRegion& mr) {
  return st.memories[w]->register_memory(
      region, bytes, rc::kAccessLocalWrite | rc::kAccessRemoteRead | rc::kAccessRemoteWrite, pd, mr);
}

}  // namespace droce::rping
