// LoopbackLab: ring ports A <-> relay <-> B, all on the calling lcore.
#include "engine/loopback_lab.h"

#include <unistd.h>

#include <atomic>

#include <rte_eth_ring.h>
#include <rte_ring.h>

namespace droce::engine {

wire::L2L3Address LoopbackLab::address(int side) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[5] = static_cast<std::uint8_t>(side + 1);
  a.ip[0] = 10;
  a.ip[3] = static_cast<std::uint8_t>(side + 1);
  return a;
}

std::unique_ptr<LoopbackLab> LoopbackLab::create(const LoopbackLabConfig& cfg, Status& err) {
  if (cfg.pool == nullptr) {
    err = Status::error("loopback lab: no mbuf pool");
    return nullptr;
  }
  if (!(cfg.loss >= 0 && cfg.loss < 1)) {
    err = Status::error("loopback lab: loss must be in [0, 1)");
    return nullptr;
  }
  std::unique_ptr<LoopbackLab> lab(new LoopbackLab());
  lab->cfg_ = cfg;
  lab->rng_.seed(cfg.seed);
  static std::atomic<unsigned> serial{0};
  const std::string base = "lab" + std::to_string(getpid() % 100000) + "_" + std::to_string(serial.fetch_add(1));
  for (int i = 0; i < 4; ++i) {
    lab->rings_[i] = rte_ring_create((base + "r" + std::to_string(i)).c_str(), 4096, SOCKET_ID_ANY,
                                     RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (lab->rings_[i] == nullptr) {
      err = Status::error("loopback lab: cannot create rings (out of memory?)");
      return nullptr;
    }
  }
  // Ring 0: A -> relay, 1: relay -> A, 2: relay -> B, 3: B -> relay.
  const int rx_of[4] = {1, 0, 3, 2}, tx_of[4] = {0, 1, 2, 3};
  for (int i = 0; i < 4; ++i) {
    const std::string name = base + "p" + std::to_string(i);
    if (rte_eth_from_rings(name.c_str(), &lab->rings_[rx_of[i]], 1, &lab->rings_[tx_of[i]], 1, SOCKET_ID_ANY) < 0) {
      err = Status::error("loopback lab: cannot create ring port " + name);
      return nullptr;
    }
    PortConfig pc;
    pc.devargs = name;
    pc.rx_pool = cfg.pool;
    lab->ports_[i] = Port::open(pc, err);
    if (!lab->ports_[i]) return nullptr;
  }
  EndpointConfig ea;
  ea.port_id = lab->ports_[0]->id();
  ea.pool = cfg.pool;
  ea.memory = &lab->mem_a_;
  ea.local = address(0);
  ea.max_qps = cfg.max_qps;
  ea.capture = cfg.capture;
  EndpointConfig eb = ea;
  eb.port_id = lab->ports_[3]->id();
  eb.memory = &lab->mem_b_;
  eb.local = address(1);
  eb.capture = nullptr;
  lab->a_ = std::make_unique<RcEndpoint>(ea);
  lab->b_ = std::make_unique<RcEndpoint>(eb);
  err = Status();
  return lab;
}

void LoopbackLab::pump(std::uint16_t from, std::uint16_t to) {
  rte_mbuf* b[32];
  const std::uint16_t n = rte_eth_rx_burst(from, 0, b, 32);
  if (n == 0) return;
  rte_mbuf* keep[32];
  std::uint16_t k = 0;
  std::uniform_real_distribution<double> u(0, 1);
  for (std::uint16_t i = 0; i < n; ++i) {
    if (cfg_.loss > 0 && u(rng_) < cfg_.loss) {
      rte_pktmbuf_free(b[i]);
      ++dropped_;
    } else {
      keep[k++] = b[i];
    }
  }
  const std::uint16_t sent = rte_eth_tx_burst(to, 0, keep, k);
  forwarded_ += sent;
  for (std::uint16_t i = sent; i < k; ++i) rte_pktmbuf_free(keep[i]);
  dropped_ += k - sent;
}

void LoopbackLab::poll(std::uint64_t now_tsc) {
  a_->poll(now_tsc);
  pump(ports_[1]->id(), ports_[2]->id());
  b_->poll(now_tsc);
  pump(ports_[2]->id(), ports_[1]->id());
}

void LoopbackLab::finish() {
  if (a_) a_->finish();
  if (b_) b_->finish();
}

LoopbackLab::~LoopbackLab() {
  finish();
  a_.reset();
  b_.reset();
  for (auto& p : ports_) p.reset();
  for (auto* r : rings_)
    if (r != nullptr) rte_ring_free(r);
}

std::uint16_t LoopbackLab::port_id_a() const { return ports_[0]->id(); }
std::uint16_t LoopbackLab::port_id_b() const { return ports_[3]->id(); }

}  // namespace droce::engine
