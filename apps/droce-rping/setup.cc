// droce-rping's set-up (see setup.h).
#include "apps/droce-rping/setup.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "apps/common/address_text.h"
#include "apps/common/default_port.h"
#include "apps/common/telemetry_setup.h"

namespace droce::rping {

using engine::Status;

Status set_up(const Options& o, bool defaults, Setup& st) {
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  // Whole 4 KiB frames and the QP1 MADs (UD SENDs of 256 bytes) in one buffer each.
  engine::PortConfig pc;
  if (Status s = engine::pair_port_devargs(defaults, o.server, "/tmp/droce-rping.sock", pc.devargs); !s.ok()) return s;
  const std::uint16_t room = engine::pool_data_room_for_port(pc.devargs, 2176 + 4096);
  if (Status s = engine::MbufPool::create(engine::PoolConfig{"rping_pool", 4095, 256, room, -1}, st.pool); !s.ok())
    return s;
  pc.rx_pool = st.pool.get();
  pc.promiscuous = true;
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
  st.memory = std::make_unique<engine::MemoryRegistry>();
  engine::EndpointConfig ec;
  ec.queues.port_id = st.port->id();
  ec.queues.pool = st.pool.get();
  ec.queues.memory = st.memory.get();
  ec.addresses.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
  ec.addresses.local = engine::lab_address(st.ip, st.mac);
  ec.addresses.ipv6 = st.ip.ipv6;  // RoCEv2 over IPv6: ND instead of ARP, the CM's addresses 16 bytes
  ec.transport.max_qps = std::max<std::uint32_t>(4, o.clients);  // the server's QP per client
  st.ep = engine::RcEndpoint::create(ec, err);
  if (!st.ep) return err;
  // Lab loss where --impair-direction says, before the first poll; the CM's MADs are frames too.
  engine::ImpairmentConfig ic;
  ic.loss = o.loss;
  ic.seed = o.seed;
  apps::ImpairDirection dir = apps::ImpairDirection::kRx;
  if (Status s = apps::parse_impair_direction(o.impair_direction, dir); !s.ok()) return s;
  rte_mempool* const pools[] = {st.pool.get()};
  engine::RcEndpoint* const eps[] = {st.ep.get()};
  if (Status s = st.impairments.install(ic, dir, st.port->id(), pools, eps); !s.ok()) return s;
  apps::start_telemetry("droce-rping");
  return {};
}

void allocate_buffers(Setup& st, std::size_t bytes) {
  st.buffers = std::make_unique<std::uint8_t[]>(bytes);
  std::memset(st.buffers.get(), 0, bytes);
}

Status register_region(Setup& st, std::uint8_t* region, std::size_t bytes, std::uint32_t pd, rc::MemoryRegion& mr) {
  return st.memory->register_memory(region, bytes,
                                    rc::kAccessLocalWrite | rc::kAccessRemoteRead | rc::kAccessRemoteWrite, pd, mr);
}

}  // namespace droce::rping
