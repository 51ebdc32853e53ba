// What the example's two programs share: one end of a net_memif link carrying one RC queue pair,
// set up with droce's installed API (<droce/...>), and the fixed plan of both ends' addresses.
//
// The "upper" service answers every request with its text in upper case; the client sends
// requests, checks every reply, and ends the run with the request "BYE".
#pragma once

#include <droce/engine/core/eal.h>
#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/endpoint/rc_endpoint.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace upper {

inline constexpr std::uint32_t kMaxMessage = 4096;  // the largest request (and reply)
inline constexpr const char* kBye = "BYE";          // the client's last request

// One end: EAL, its mbuf pool, the memif port, the registry of its buffers, the RC endpoint and
// the one QP connected to the other end. Members are destroyed in reverse order: the endpoint
// before the port, the port before EAL.
struct Link {
  std::unique_ptr<droce::engine::Eal> eal;
  droce::engine::MbufPool pool;
  std::unique_ptr<droce::engine::Port> port;
  droce::engine::MemoryRegistry memory;
  std::unique_ptr<droce::engine::RcEndpoint> endpoint;
  std::uint32_t qpn = 0;

  // One poll of the endpoint: receive, timers, transmit.
  void poll();
  // The end: pending frames freed, the port stopped (the other end sees the link go down).
  void close();
};

// Starts EAL with `eal_args`, opens net_memif in the service's or the client's role on `socket`,
// waits up to `timeout_ms` for the link, and connects one QP to the other end's (both ends know
// each other's address, QPN and first PSN from the plan; a service that meets peers it does not
// know exchanges them over TCP: <droce/engine/exchange/oob_exchange.h>). Ok, or the Status of the
// step that failed (its code, and one line saying what failed).
[[nodiscard]] droce::engine::Status open_link(bool service, const std::vector<std::string>& eal_args,
                                              const std::string& socket, std::uint32_t timeout_ms, Link& out);

// Keeps polling for `ms` milliseconds: our last ACKs leave, and a retransmission from the other
// end (our ACK lost) is still answered before the port closes.
void linger(Link& link, std::uint32_t ms);

}  // namespace upper
