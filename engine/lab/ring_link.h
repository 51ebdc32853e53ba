// RingLink: two net_ring ports joined back to back in this process — a cable for in-process labs.
#pragma once

#include <rte_mempool.h>
#include <rte_ring.h>

#include <memory>
#include <string>

#include "engine/core/port.h"
#include "engine/core/status.h"

namespace droce::engine {

// What one end transmits the other receives. Frames cross as mbuf pointers (a chain stays a
// chain). The rings and ports live as long as the link.
class RingLink {
 public:
  [[nodiscard]] static std::unique_ptr<RingLink> create(const std::string& tag, rte_mempool* pool, Status& err);
  ~RingLink();
  RingLink(const RingLink&) = delete;
  RingLink& operator=(const RingLink&) = delete;

  [[nodiscard]] Port& end(int i) { return *ports_[i]; }
  [[nodiscard]] std::uint16_t id(int i) const { return ports_[i]->id(); }

 private:
  RingLink() = default;
  rte_ring* rings_[2] = {};
  std::unique_ptr<Port> ports_[2];
};

}  // namespace droce::engine
