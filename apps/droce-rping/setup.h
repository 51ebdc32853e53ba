// droce-rping's set-up: the port (link up, one RX/TX queue pair per worker), one mbuf pool and one
// memory registry per worker, the engine's workers (engine/workers/worker_group.h; worker 0, the
// port owner, runs the CM of every connection) and the lab loss.
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/psn_source.h>
#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/workers/worker_group.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "apps/common/address_text.h"
#include "apps/common/lab_impairments.h"
#include "apps/droce-rping/options.h"

namespace droce::rping {

// Destroyed in reverse order: the workers before the memory they refer to, the port, the buffers,
// the pools.
struct Setup {
  std::vector<engine::MbufPool> pools;  // worker w's: its RX queue's and its TX mbufs
  std::vector<unsigned> lcores;         // the lcore that polls worker w (the server's: one each)
  // The pings' buffers (Session): they outlive the endpoints, whose frames may still point into them.
  std::unique_ptr<std::uint8_t[]> buffers;
  std::unique_ptr<engine::Port> port;
  // Worker w's registry: no two lcores share one's lookup cache (worker_group.h).
  std::vector<std::unique_ptr<engine::MemoryRegistry>> memories;
  std::unique_ptr<engine::WorkerGroup> group;
  apps::LabImpairments impairments;  // --loss where --impair-direction says; removed before the workers
  engine::IpAddress ip;              // our address: IPv4 or IPv6 (the endpoints' family)
  std::uint8_t mac[6] = {};          // our MAC
  // Every session's first PSN (docs/hardening.md, "First PSNs"): the OS's entropy, as rdma_cm's
  // random PSNs; the CM tells the peer. Drawn on the port owner's thread only (Session::draw_psn).
  engine::PsnSource psns;

  // The port owner's endpoint: its CM listens, connects, accepts and disconnects for every worker,
  // and its neighbour table answers ARP and ND (docs/cm.md, "One CM per port").
  [[nodiscard]] engine::RcEndpoint& cm() { return group->worker(engine::WorkerGroup::kPortOwner).endpoint(); }
  [[nodiscard]] const engine::RcEndpoint& cm() const {
    return group->worker(engine::WorkerGroup::kPortOwner).endpoint();
  }
  [[nodiscard]] std::uint32_t workers() const { return group->size(); }
  // Connection i's worker (i % workers, as droce-perf and droce-gen place QP i).
  [[nodiscard]] std::uint16_t worker_of(std::uint32_t i) const { return static_cast<std::uint16_t>(i % group->size()); }
  // One poll of every worker, on this thread (the client's loop; the server's before and after its
  // workers run on their lcores): QP1's frames may land on any queue, and the CM's commands for a
  // worker's QPs wait in its ring for its poll.
  void poll_all();
};

// `defaults`: no EAL options were given (the net_memif pair on /tmp/droce-rping.sock). `usage` is
// set when the failure is a --workers that EAL's lcores or the port cannot carry (a usage error).
[[nodiscard]] engine::Status set_up(const Options& o, bool defaults, Setup& st, bool& usage);
// Setup::buffers: `bytes` of zeros, not registered yet.
void allocate_buffers(Setup& st, std::size_t bytes);
// [region, region + bytes) of Setup::buffers registered for local write and remote read and write
// as `mr` in worker `w`'s registry, in its protection domain `pd` (rc::MrTable::kDefaultDomain,
// or one of create_domain).
[[nodiscard]] engine::Status register_region(Setup& st, std::uint16_t w, std::uint8_t* region, std::size_t bytes,
                                             std::uint32_t pd, rc::MemoryRegion& mr);

}  // namespace droce::rping
