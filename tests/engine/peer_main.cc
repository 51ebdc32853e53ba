// Second process for two-process engine tests: opens a port from devargs and echoes frames back.
#include <rte_ethdev.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/core/eal.h"
#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "engine/core/stop_signal.h"

using namespace droce::engine;

// usage: droce-test-peer <devargs> <frames-to-echo> <timeout-ms>
int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <devargs> <frames> <timeout-ms>\n", argv[0]);
    return 2;
  }
  const std::string devargs = argv[1];
  const long want = std::strtol(argv[2], nullptr, 10);
  const long timeout_ms = std::strtol(argv[3], nullptr, 10);
  install_stop_signals();
  Status err;
  auto eal =
      Eal::init("droce-test-peer", {"-l", "0", "--no-huge", "-m", "512", "--no-pci", "--no-telemetry"}, err, true);
  if (!eal) {
    std::fprintf(stderr, "peer: %s\n", err.message().c_str());
    return 2;
  }
  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"peer_pool", 2047, 64, 2176, -1}, pool); !s.ok()) {
    std::fprintf(stderr, "peer: %s\n", s.message().c_str());
    return 2;
  }
  PortConfig cfg;
  cfg.devargs = devargs;
  cfg.rx_pool = pool.get();
  auto port = Port::open(cfg, err);
  if (!port) {
    std::fprintf(stderr, "peer: %s\n", err.message().c_str());
    return 2;
  }
  if (Status s = port->wait_link_up(static_cast<std::uint32_t>(timeout_ms)); !s.ok()) {
    std::fprintf(stderr, "peer: %s\n", s.message().c_str());
    return 3;
  }
  long echoed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (echoed < want && !stop_requested() && std::chrono::steady_clock::now() < deadline) {
    rte_mbuf* pkts[32];
    const std::uint16_t n = port->rx_burst(0, pkts, 32);
    std::uint16_t sent = 0;
    // Bounded retry: the parent drains its side, so a full ring clears quickly.
    for (int tries = 0; sent < n && tries < 100000; ++tries) sent += port->tx_burst(0, pkts + sent, n - sent);
    for (std::uint16_t i = sent; i < n; ++i) rte_pktmbuf_free(pkts[i]);
    echoed += sent;
  }
  // Give the parent time to drain before the port closes (memif peers dislike abrupt exits).
  const auto linger = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < linger) {
    rte_mbuf* pkts[32];
    const std::uint16_t n = port->rx_burst(0, pkts, 32);
    for (std::uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(pkts[i]);
  }
  port.reset();
  std::printf("peer: echoed %ld frames\n", echoed);
  return echoed == want ? 0 : 4;
}
