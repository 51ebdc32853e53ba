// CmInbox: the CM's events for one server worker's connections. The port owner's CM reports every
// connection's events to the thread that runs it (worker 0's, docs/cm.md "One CM per port"); a
// connection whose QP lives on another worker is served by that worker's lcore, so the server hands
// it its REQ (the worker creates the QP) and its later events (established, disconnected, rejected,
// timed out) here. A DPDK rte_ring of fixed-size elements, one producer (the port owner's thread),
// one consumer (the worker's), so that no session is written by two threads.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/endpoint_cm.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

struct rte_ring;

namespace droce::rping {

struct alignas(8) InboxEvent {
  std::uint32_t slot = 0;  // the server's session
  std::uint32_t psn = 0;   // kConnectRequest: the QP's first PSN (Setup::psns, drawn by the port owner)
  engine::CmEndpointEvent event;
};
// rte_ring copies elements as 4-byte words.
static_assert(std::is_trivially_copyable_v<InboxEvent> && sizeof(InboxEvent) % 4 == 0);

class CmInbox {
 public:
  // `tag` names the ring (rte_ring names are global to the EAL instance); `size` events.
  [[nodiscard]] static std::unique_ptr<CmInbox> create(const std::string& tag, std::uint32_t size, engine::Status& err);
  ~CmInbox();
  CmInbox(const CmInbox&) = delete;
  CmInbox& operator=(const CmInbox&) = delete;

  // The port owner's thread. False when the ring is full.
  [[nodiscard]] bool post(const InboxEvent& e);
  // The worker's thread: up to `max` events, in the order they were posted.
  [[nodiscard]] unsigned take(InboxEvent* out, unsigned max);

 private:
  CmInbox() = default;
  rte_ring* ring_ = nullptr;
};

}  // namespace droce::rping
