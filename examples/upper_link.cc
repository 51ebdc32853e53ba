// One end of the example's memif link (see upper_link.h).
#include "upper_link.h"

#include <rte_cycles.h>

#include <chrono>
#include <cstring>

namespace upper {

using droce::engine::Status;

namespace {

constexpr std::uint32_t kQpnBase = 0x11;  // each end's first (and only) QP gets this QPN
constexpr std::uint32_t kServicePsn = 0x200, kClientPsn = 0x100;

// The plan: 10.0.0.2 is the service, 10.0.0.1 the client; MACs 02:00:<IPv4>. The ports run
// promiscuous, so the memif MACs do not matter.
droce::wire::L2L3Address address(bool service) {
  droce::wire::L2L3Address a;
  const std::uint8_t ip[4] = {10, 0, 0, static_cast<std::uint8_t>(service ? 2 : 1)};
  std::memcpy(a.ip, ip, 4);
  a.mac[0] = 0x02;
  std::memcpy(a.mac + 2, ip, 4);
  return a;
}

droce::rc::QpAttr qp_attr(bool service) {
  droce::rc::QpAttr a;
  a.pmtu = 1024;
  a.sq_psn = service ? kServicePsn : kClientPsn;
  a.timeout = 14;  // 67 ms local ACK timeout: a busy machine may deschedule the other end
  a.recv_mode = droce::rc::RecvMode::kMessageViews;  // messages arrive as zero-copy views
  a.max_message_bytes = kMaxMessage;
  a.rq_depth = 64;
  return a;
}

}  // namespace

void Link::poll() { endpoint->poll(rte_rdtsc()); }

void Link::close() {
  if (endpoint) endpoint->finish();
  if (port) port->stop();
}

Status open_link(bool service, const std::vector<std::string>& eal_args, const std::string& socket,
                 std::uint32_t timeout_ms, Link& out) {
  Status err;
  out.eal = droce::engine::Eal::init(service ? "upper-service" : "upper-client", eal_args, err);
  if (!out.eal) return err;
  if (Status s = droce::engine::MbufPool::create({"upper_pool", 8191, 256, 2048 + 128, -1}, out.pool); !s.ok())
    return s;

  droce::engine::PortConfig pc;
  pc.devargs = std::string("net_memif0,role=") + (service ? "server" : "client") + ",socket=" + socket;
  pc.rx_pool = out.pool.get();
  pc.promiscuous = true;
  out.port = droce::engine::Port::open(pc, err);
  if (!out.port) return err;

  droce::engine::EndpointConfig ec;
  ec.queues.port_id = out.port->id();
  ec.queues.pool = out.pool.get();
  ec.queues.memory = &out.memory;
  ec.transport.qpn_base = kQpnBase;
  ec.transport.max_qps = 1;
  ec.addresses.local = address(service);
  ec.addresses.promiscuous = true;
  out.endpoint = droce::engine::RcEndpoint::create(ec, err);
  if (!out.endpoint) return err;
  if (Status s = out.endpoint->create_qp(qp_attr(service), out.qpn); !s.ok()) return s;
  const droce::engine::RemoteQp peer{address(!service), kQpnBase, service ? kClientPsn : kServicePsn};
  if (Status s = out.endpoint->connect(out.qpn, peer); !s.ok()) return s;

  // The QP is ready before the link is: frames that arrive first find it.
  if (Status s = out.port->wait_link_up(timeout_ms); !s.ok()) return s;
  // Before the first burst: the other end exiting must not tear the rings down under our polling.
  if (Status s = out.port->hold_peer_events(5000); !s.ok()) return s;
  return {};
}

void linger(Link& link, std::uint32_t ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) link.poll();
}

}  // namespace upper
