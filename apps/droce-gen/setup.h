// droce-gen's set-up: the mbuf pools, the loopback labs or the port and its endpoint(s), the lab
// impairment, one job per worker on its lcore, and every QP with its buffers.
#pragma once

#include <droce/engine/core/capture.h>
#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/lab/link_impairment.h>
#include <droce/engine/lab/loopback_lab.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/address_text.h"
#include "apps/droce-gen/job.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/workload.h"

namespace droce::engine {
class WorkerGroup;
}

namespace droce::gen {

// One worker's ends: where its requesters and responders live (loopback: A and B of its lab).
struct Shard {
  engine::RcEndpoint* req_ep = nullptr;
  engine::RcEndpoint* rsp_ep = nullptr;
  engine::MemoryRegistry* req_mem = nullptr;
  engine::MemoryRegistry* rsp_mem = nullptr;
};

// What the lab impairment did over the run: frames dropped (bursts and the drop rule's included)
// on each side, and of them the drop rule's.
struct LabImpairment {
  std::uint64_t dropped = 0, dropped_rx = 0, dropped_tx = 0, rule_dropped = 0;
  std::uint64_t duplicated = 0, reordered = 0;
};

// Everything one run owns besides EAL.
struct Setup {
  bool server = false;
  // As typed (or the defaults); the exchange fills peer_ip from the peer's GID when it was not given.
  std::string local_ip, peer_ip;
  engine::IpAddress local;              // local_ip parsed: its family is every frame's
  std::vector<engine::MbufPool> pools;  // one per worker
  engine::PcapngCapture capture;
  std::vector<std::unique_ptr<engine::LoopbackLab>> labs;  // loopback: one per worker
  std::unique_ptr<engine::Port> port;                      // client/server
  std::unique_ptr<engine::MemoryRegistry> memory;
  std::unique_ptr<engine::RcEndpoint> endpoint;                   // client/server, one worker
  std::vector<std::unique_ptr<engine::MemoryRegistry>> memories;  // client/server, several workers: one each
  std::unique_ptr<engine::WorkerGroup> group;                     // client/server, several workers
  std::vector<std::unique_ptr<engine::LinkImpairment>> impairments;
  std::vector<Shard> shards;               // per worker
  std::vector<std::unique_ptr<Job>> jobs;  // per worker
  std::unique_ptr<Pattern> pattern;
  rc::Recovery recovery = rc::Recovery::kGoBackN;  // in use on every QP (client/server: as agreed)
  // Wall-clock seconds of the set-up steps (issue 13's connection cost at thousands of QPs):
  // creating every QP with its buffers registered, and joining them to the peer.
  double create_qps_s = 0, connect_s = 0;

  Setup();
  ~Setup();
  Setup(const Setup&) = delete;
  Setup& operator=(const Setup&) = delete;

  [[nodiscard]] LabImpairment impaired() const;
  // Every endpoint of every job, each once (the Linux-named counters and drop reasons sum them).
  [[nodiscard]] std::vector<const engine::RcEndpoint*> endpoints() const;
  // The run's QP i (its requester or responder, whichever lives here).
  [[nodiscard]] Requester& requester(std::uint32_t i);
  [[nodiscard]] Responder& responder(std::uint32_t i);
  // Stops the port (nothing polls it any more: call after the jobs have stopped).
  void stop_port();
  // Frees what the endpoints hold (after stop_port).
  void finish();
};

// An error for the user (exit 2: a limit of the lcores or the port) or of the run (exit 1).
struct SetupError {
  engine::Status status;
  bool usage = false;
};

// The lcores of the workers: the main lcore for worker 0, then EAL's worker lcores in order.
// `--workers` beyond the lcores -l gave is a usage error naming the limit.
[[nodiscard]] SetupError assign_lcores(const Options& o, std::vector<unsigned>& lcores);
// Pools, labs or port and endpoints, impairment, jobs.
[[nodiscard]] SetupError open_transport(const Options& o, bool default_port, const std::vector<unsigned>& lcores,
                                        Setup& st);
// Every QP on both ends that live here, round-robin over the jobs, with its buffers registered.
[[nodiscard]] engine::Status create_qps(const Options& o, Setup& st);

}  // namespace droce::gen
