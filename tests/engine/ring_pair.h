// Test helper: two ethdev ports joined back to back by a pair of rte_rings, opened as droce Ports.
#pragma once

#include <rte_eth_ring.h>
#include <rte_ring.h>

#include <memory>
#include <string>

#include "engine/core/port.h"

namespace droce::test {

struct RingPair {
  std::unique_ptr<engine::Port> a, b;
  rte_ring* ab = nullptr;
  rte_ring* ba = nullptr;
  RingPair(const std::string& name, rte_mempool* pool, unsigned ring_size = 1024) {
    ab = rte_ring_create((name + "_ab").c_str(), ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    ba = rte_ring_create((name + "_ba").c_str(), ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    REQUIRE(ab != nullptr);
    REQUIRE(ba != nullptr);
    REQUIRE(rte_eth_from_rings((name + "A").c_str(), &ba, 1, &ab, 1, SOCKET_ID_ANY) >= 0);
    REQUIRE(rte_eth_from_rings((name + "B").c_str(), &ab, 1, &ba, 1, SOCKET_ID_ANY) >= 0);
    engine::Status err;
    engine::PortConfig cfg;
    cfg.rx_pool = pool;
    cfg.devargs = name + "A";
    a = engine::Port::open(cfg, err);
    REQUIRE(err.ok());
    cfg.devargs = name + "B";
    b = engine::Port::open(cfg, err);
    REQUIRE(err.ok());
    REQUIRE(a->wait_link_up(1000).ok());
    REQUIRE(b->wait_link_up(1000).ok());
  }
  ~RingPair() {
    a.reset();
    b.reset();
    rte_ring_free(ab);
    rte_ring_free(ba);
  }
};

}  // namespace droce::test
