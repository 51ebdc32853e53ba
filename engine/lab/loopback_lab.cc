// LoopbackLab: ring ports A <-> relay <-> B, all on the calling lcore.
#include "engine/lab/loopback_lab.h"

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
    err = Status::error(StatusCode::kInvalidArgument, "loopback lab: no mbuf pool");
    return nullptr;
  }
  if (!(cfg.loss >= 0 && cfg.loss < 1)) {
    err = Status::error(StatusCode::kInvalidArgument, "loopback lab: loss must be in [0, 1)");
    return nullptr;
  }
  std::unique_ptr<LoopbackLab> lab(new LoopbackLab());
  lab->cfg_ = cfg;
  lab->rng_.seed(cfg.seed);
  // A -> link 0 -> relay -> link 1 -> B.
  for (int i = 0; i < 2; ++i) {
    lab->links_[i] = RingLink::create("lab", cfg.pool, err);
    if (!lab->links_[i]) return nullptr;
  }
  EndpointConfig ea;
  ea.queues.port_id = lab->links_[0]->id(0);
  ea.queues.pool = cfg.pool;
  ea.queues.memory = &lab->mem_a_;
  ea.addresses.local = address(0);
  ea.transport.max_qps = cfg.max_qps;
  ea.recording.capture = cfg.capture;
  ea.dcqcn = cfg.dcqcn;
  ea.pfc = cfg.pfc;
  EndpointConfig eb = ea;
  eb.queues.port_id = lab->links_[1]->id(1);
  eb.queues.memory = &lab->mem_b_;
  eb.addresses.local = address(1);
  eb.recording.capture = nullptr;
  lab->a_ = RcEndpoint::create(ea, err);
  if (!lab->a_) return nullptr;
  lab->b_ = RcEndpoint::create(eb, err);
  if (!lab->b_) return nullptr;
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
  pump(links_[0]->id(1), links_[1]->id(0));
  b_->poll(now_tsc);
  pump(links_[1]->id(0), links_[0]->id(1));
}

void LoopbackLab::finish() {
  if (a_) a_->finish();
  if (b_) b_->finish();
}

LoopbackLab::~LoopbackLab() {
  finish();
  a_.reset();
  b_.reset();
  for (auto& l : links_) l.reset();
}

std::uint16_t LoopbackLab::port_id_a() const { return links_[0]->id(0); }
std::uint16_t LoopbackLab::port_id_b() const { return links_[1]->id(1); }

}  // namespace droce::engine
