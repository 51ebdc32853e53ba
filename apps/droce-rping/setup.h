// droce-rping's set-up: the port (link up), one mbuf pool, one memory registry and one endpoint,
// polled by this thread alone (one thread serves every connection: no worker group), and the lab loss.
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/psn_source.h>
#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "apps/common/address_text.h"
#include "apps/common/lab_impairments.h"
#include "apps/droce-rping/options.h"

namespace droce::rping {

// Destroyed in reverse order: the endpoint before the memory it refers to, the port, the buffers,
// the pool.
struct Setup {
  engine::MbufPool pool;
  // The pings' buffers (Session): they outlive the endpoint, whose frames may still point into them.
  std::unique_ptr<std::uint8_t[]> buffers;
  std::unique_ptr<engine::Port> port;
  std::unique_ptr<engine::MemoryRegistry> memory;
  std::unique_ptr<engine::RcEndpoint> ep;
  apps::LabImpairments impairments;  // --loss where --impair-direction says; removed before the endpoint
  engine::IpAddress ip;              // our address: IPv4 or IPv6 (the endpoint's family)
  std::uint8_t mac[6] = {};          // our MAC
  // Every session's first PSN (docs/hardening.md, "First PSNs"): the OS's entropy, as rdma_cm's
  // random PSNs; the CM tells the peer.
  engine::PsnSource psns;
};

// `defaults`: no EAL options were given (the net_memif pair on /tmp/droce-rping.sock).
[[nodiscard]] engine::Status set_up(const Options& o, bool defaults, Setup& st);
// Setup::buffers: `bytes` of zeros, not registered yet.
void allocate_buffers(Setup& st, std::size_t bytes);
// [region, region + bytes) of Setup::buffers registered for local write and remote read and write
// as `mr`, in protection domain `pd` (rc::MrTable::kDefaultDomain, or one of create_domain).
[[nodiscard]] engine::Status register_region(Setup& st, std::uint8_t* region, std::size_t bytes, std::uint32_t pd,
                                             rc::MemoryRegion& mr);

}  // namespace droce::rping
