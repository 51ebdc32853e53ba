// droce-echo's set-up: the loopback lab with its two connected QPs, or our port, one pool and one
// memory registry per worker, the engine's worker group and the lab loss (--impair-direction).
#pragma once

#include <droce/engine/core/capture.h>
#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/exchange/oob_exchange.h>
#include <droce/engine/lab/link_impairment.h>
#include <droce/engine/lab/loopback_lab.h>
#include <droce/engine/workers/worker_group.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "apps/common/address_text.h"
#include "apps/common/capture_report.h"
#include "apps/common/lab_impairments.h"
#include "apps/droce-echo/echo_server.h"
#include "apps/droce-echo/options.h"

namespace droce::echo {

// --pcap and its shape, as the shared capture report reads them.
inline apps::CaptureOptions capture_options(const Options& o) {
  return {o.pcap, o.pcap_snaplen, o.pcap_max_mb, o.pcap_files};
}

constexpr std::uint32_t kMaxQps = 64;  // --qps's limit: what a server takes from a client

// Where one of our QPs lives.
struct QpPlace {
  std::uint32_t worker = 0;
  std::uint32_t qpn = 0;
};

// Everything one run owns besides EAL. The members are destroyed in reverse order: the control
// connection before the workers, the workers before their memories and pools, the lab last.
struct Setup {
  engine::MbufPool pool;  // loopback's
  std::unique_ptr<engine::LoopbackLab> lab;
  engine::PcapngCapture capture;  // --pcap: outlives the workers that feed it
  // The worker pools outlive the port: closing it frees the mbufs its RX queues still hold
  // (net_tap's close did so into freed pools: a SIGSEGV in rte_eth_dev_close at every exit).
  std::vector<engine::MbufPool> pools;  // server/client: one per worker
  std::unique_ptr<engine::Port> port;
  std::vector<std::unique_ptr<engine::MemoryRegistry>> memories;  // one per worker
  std::unique_ptr<engine::WorkerGroup> group;
  // --loss where --impair-direction says: removed before the workers whose sending it filters
  // (a TX impairment resets its endpoint's filter) and before the port whose queues it watches.
  apps::LabImpairments impairments;
  std::vector<QpPlace> own_qps;  // QP i: its worker and QPN
  std::uint32_t srq_id = 0;      // --peer srq_pingpong: worker 0's shared receive queue, every QP's
  engine::RcEndpoint* client_ep = nullptr;
  engine::RcEndpoint* server_ep = nullptr;
  engine::MemoryRegistry* client_mem = nullptr;
  engine::MemoryRegistry* server_mem = nullptr;
  std::uint32_t client_qpn = 0, server_qpn = 0;
  engine::IpAddress ip;           // server/client: our address, IPv4 or IPv6 (the GID of the exchange)
  engine::IpAddress peer_ip;      // server/client: the first QP's peer's, from its GID
  std::uint8_t peer_mac[6] = {};  // server/client: the first QP's peer MAC, and where it came from
  bool mac_by_arp = false;
  // The control connection stays open to a droce-echo peer for the end of the run (ibv_rc_pingpong
  // closes it after the exchange).
  engine::OobConnection oob;
  engine::RcPingpongServer listener;
  std::unique_ptr<EchoWorker> lab_echo;  // loopback: the server's half of the lab
};

// An error for the user (exit 2: a limit of the lcores or the port) or of the run (exit 1).
struct SetupError {
  engine::Status status;
  bool usage = false;
};

// Our QPs' attributes; `psn` is the QP's first send PSN.
[[nodiscard]] rc::QpAttr echo_qp_attr(const Options& o, std::uint32_t psn);

// Loopback: the lab, its QPs connected to each other and the echo service on its server side.
// Server/client: the pools, the port (link up), the worker group and the lab loss; the QPs come
// with the connection (connect.h). `defaults`: no EAL options were given.
[[nodiscard]] SetupError set_up(const Options& o, bool defaults, Setup& st);

}  // namespace droce::echo
