// droce-echo's set-up (see setup.h).
#include "apps/droce-echo/setup.h"

#include <droce/engine/core/psn_source.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/address_text.h"
#include "apps/common/default_port.h"
#include "apps/common/telemetry_setup.h"
#include "apps/common/worker_limits.h"

namespace droce::echo {

using engine::Status;

namespace {

SetupError run_error(const Status& s) { return {s, false}; }
SetupError usage_error(const std::string& m) { return {Status::error(StatusCode::kInvalidArgument, m), true}; }

// Both ends in this process: the lab's A is the client, its B the server.
SetupError set_up_loopback(const Options& o, Setup& st) {
  if (Status s = engine::MbufPool::create(engine::PoolConfig{"echo_pool", 16383, 256, 2176 + 4096, -1}, st.pool);
      !s.ok())
    return run_error(s);
  engine::LoopbackLabConfig lc;
  lc.pool = st.pool.get();
  lc.max_qps = 1;
  Status err;
  st.lab = engine::LoopbackLab::create(lc, err);
  if (!st.lab) return run_error(err);
  st.client_ep = &st.lab->a();
  st.server_ep = &st.lab->b();
  st.client_mem = &st.lab->memory_a();
  st.server_mem = &st.lab->memory_b();
  // Both first PSNs drawn (docs/hardening.md, "First PSNs"); each side is told the other's.
  engine::PsnSource psns = engine::PsnSource::from(o.psn_seed);
  const std::uint32_t client_psn = psns.next(), server_psn = psns.next();
  if (!st.client_ep->create_qp(echo_qp_attr(o, client_psn), st.client_qpn).ok() ||
      !st.server_ep->create_qp(echo_qp_attr(o, server_psn), st.server_qpn).ok() ||
      !st.client_ep
           ->connect(st.client_qpn, engine::RemoteQp{engine::LoopbackLab::address(1), st.server_qpn, server_psn})
           .ok() ||
      !st.server_ep
           ->connect(st.server_qpn, engine::RemoteQp{engine::LoopbackLab::address(0), st.client_qpn, client_psn})
           .ok())
    return run_error(Status::error(StatusCode::kError, "cannot connect the loopback QPs"));
  st.lab_echo = std::make_unique<EchoWorker>(*st.server_ep, *st.server_mem, o.rc_pingpong());
  st.lab_echo->add_qp(st.server_qpn);
  return {};
}

SetupError set_up_port(const Options& o, bool defaults, Setup& st) {
  const bool server = o.mode == "server";
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  // --workers: the server's each need an lcore (the main one is worker 0); every worker, the
  // client's included, its own queue pair.
  if (server)
    if (Status s = apps::workers_lcore_limit(o.workers); !s.ok()) return usage_error(s.message());
  std::vector<unsigned> lcores;  // the lcore that polls each worker
  for (unsigned l = rte_get_main_lcore(); lcores.size() < o.workers && l < RTE_MAX_LCORE;
       l = server ? rte_get_next_lcore(l, 1, 0) : l)
    lcores.push_back(l);
  engine::PortConfig pc;
  if (Status s = engine::pair_port_devargs(defaults, server, "/tmp/droce-echo.sock", pc.devargs); !s.ok())
    return run_error(s);
  const std::uint16_t room = engine::pool_data_room_for_port(pc.devargs, 2176 + 4096);
  if (Status s = engine::create_worker_pools(engine::PoolConfig{"echo_pool", 16384 / o.workers - 1, 256, room, -1},
                                             lcores, st.pools);
      !s.ok())
    return run_error(s);
  pc.rx_pool = st.pools[0].get();
  for (auto& p : st.pools) pc.rx_pools.push_back(p.get());
  pc.rx_queues = pc.tx_queues = static_cast<std::uint16_t>(o.workers);
  pc.promiscuous = true;
  if (Status s = apps::workers_queue_limit(o.workers, pc.devargs); !s.ok()) return usage_error(s.message());
  Status err;
  st.port = engine::Port::open(pc, err);
  if (!st.port) return run_error(err);
  if (Status s = st.port->wait_link_up(timeout_ms); !s.ok()) return run_error(s);
  // Before the first burst: a peer that ends (even killed) must not tear the rings down under us.
  if (Status s = st.port->hold_peer_events(5000); !s.ok())
    std::fprintf(stderr, "droce-echo: warning: %s\n", s.message().c_str());
  const std::uint8_t default_ip[4] = {10, 0, 0, static_cast<std::uint8_t>(server ? 2 : 1)};
  std::memcpy(st.ip.bytes, default_ip, 4);
  if (!o.local_ip.empty()) (void)engine::parse_ip(o.local_ip, st.ip);  // validated by the parser
  const rte_ether_addr port_mac = st.port->mac();
  std::uint8_t mac[6];
  if (o.local_mac.empty() || !engine::parse_mac(o.local_mac, mac)) std::memcpy(mac, port_mac.addr_bytes, 6);
  // The engine's workers, each with its own registry (no two lcores share a lookup cache).
  for (std::uint32_t w = 0; w < o.workers; ++w) st.memories.push_back(std::make_unique<engine::MemoryRegistry>());
  engine::WorkerGroupConfig wc;
  wc.workers = static_cast<std::uint16_t>(o.workers);
  wc.qps_per_worker = (kMaxQps + o.workers - 1) / o.workers;  // the server learns the client's count later
  for (auto& p : st.pools) wc.pools.push_back(p.get());
  for (auto& m : st.memories) wc.memories.push_back(m.get());
  wc.endpoint.queues.port_id = st.port->id();
  wc.endpoint.queues.pool = st.pools[0].get();
  wc.endpoint.queues.memory = st.memories[0].get();
  wc.endpoint.addresses.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
  wc.endpoint.addresses.local = engine::lab_address(st.ip, mac);
  wc.endpoint.addresses.ipv6 = st.ip.ipv6;  // RoCEv2 over IPv6: 40-byte headers, ND instead of ARP
  wc.endpoint.addresses.dscp = o.dscp;
  wc.endpoint.addresses.vlan_id = o.vlan_id;
  wc.endpoint.addresses.vlan_pcp = o.vlan_pcp;
  if (!o.pcap.empty()) {
    // One file for every worker's queue (the capture serialises its writers).
    if (Status s = st.capture.open(o.pcap, o.pcap_snaplen, 4095, apps::capture_limits(capture_options(o))); !s.ok())
      return run_error(s);
    wc.endpoint.recording.capture = &st.capture;
  }
  st.group = engine::WorkerGroup::create(wc, err);
  if (!st.group) return run_error(err);
  // Lab loss where --impair-direction says: every RX queue and/or every worker's sending (a seed
  // each), before any worker polls; the transport sees only the gaps.
  std::vector<rte_mempool*> pools;
  std::vector<engine::RcEndpoint*> eps;
  for (std::uint16_t q = 0; q < st.group->size(); ++q) {
    pools.push_back(st.pools[q].get());
    eps.push_back(&st.group->worker(q).endpoint());
  }
  engine::ImpairmentConfig ic;
  ic.loss = o.loss;
  ic.seed = o.seed;
  apps::ImpairDirection dir = apps::ImpairDirection::kRx;
  if (Status s = apps::parse_impair_direction(o.impair_direction, dir); !s.ok()) return run_error(s);
  if (Status s = st.impairments.install(ic, dir, st.port->id(), pools, eps); !s.ok()) return run_error(s);
  return {};
}

}  // namespace

rc::QpAttr echo_qp_attr(const Options& o, std::uint32_t psn) {
  rc::QpAttr a;
  a.pmtu = o.mtu;
  a.sq_psn = psn;
  a.timeout = o.qp_timeout;
  a.adaptive_rto = o.adaptive_rto;
  a.rnr_retry = 7;
  a.min_rnr_timer = 1;
  a.recv_mode = rc::RecvMode::kMessageViews;  // requests and replies arrive as zero-copy views
  a.max_message_bytes = 65536;
  a.rq_depth = 64;
  return a;
}

SetupError set_up(const Options& o, bool defaults, Setup& st) {
  SetupError e = o.mode == "loopback" ? set_up_loopback(o, st) : set_up_port(o, defaults, st);
  // Set up (the usage checks passed): DPDK's tools may attach from here.
  if (e.status.ok()) apps::start_telemetry("droce-echo");
  return e;
}

}  // namespace droce::echo
