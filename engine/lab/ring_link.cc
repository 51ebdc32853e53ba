// RingLink: rte_eth_from_rings over two single-producer/single-consumer rings.
#include "engine/lab/ring_link.h"

#include <rte_eth_ring.h>
#include <unistd.h>

#include <atomic>

namespace droce::engine {

std::unique_ptr<RingLink> RingLink::create(const std::string& tag, rte_mempool* pool, Status& err) {
  if (pool == nullptr) {
    err = Status::error(StatusCode::kInvalidArgument, "ring link: no mbuf pool");
    return nullptr;
  }
  static std::atomic<unsigned> serial{0};
  // Ring and port names are process-global in DPDK: pid and a serial keep them unique.
  const std::string base = tag + std::to_string(getpid() % 100000) + "_" + std::to_string(serial.fetch_add(1));
  std::unique_ptr<RingLink> l(new RingLink());
  for (int i = 0; i < 2; ++i) {
    l->rings_[i] =
        rte_ring_create((base + "r" + std::to_string(i)).c_str(), 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (l->rings_[i] == nullptr) {
      err = Status::error(StatusCode::kNoMemory, "ring link: cannot create rings (out of memory?)");
      return nullptr;
    }
  }
  // End 0 sends on ring 0 and receives ring 1; end 1 the reverse.
  for (int i = 0; i < 2; ++i) {
    const std::string name = base + "p" + std::to_string(i);
    if (rte_eth_from_rings(name.c_str(), &l->rings_[1 - i], 1, &l->rings_[i], 1, SOCKET_ID_ANY) < 0) {
      err = Status::error(StatusCode::kError, "ring link: cannot create ring port " + name);
      return nullptr;
    }
    PortConfig pc;
    pc.devargs = name;
    pc.rx_pool = pool;
    l->ports_[i] = Port::open(pc, err);
    if (!l->ports_[i]) return nullptr;
  }
  err = Status();
  return l;
}

RingLink::~RingLink() {
  for (auto& p : ports_) p.reset();
  for (auto* r : rings_)
    if (r != nullptr) rte_ring_free(r);
}

}  // namespace droce::engine
