// LinkImpairment: an rte_eth_add_rx_callback() filter around FrameImpairment. RX callbacks see the
// burst and the caller's array size, so a held-back or duplicated frame can join a later burst.
#include "engine/lab/link_impairment.h"

#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {

Status LinkImpairment::check(const ImpairmentConfig& cfg, const rte_mempool* copy_pool) {
  if (Status s = cfg.validate(); !s.ok()) return s.context("impairment ");
  if (cfg.duplicate > 0 && copy_pool == nullptr)
    return Status::error(StatusCode::kInvalidArgument, "impairment: duplication needs a pool for the copies");
  return {};
}

std::unique_ptr<LinkImpairment> LinkImpairment::attach_send(RcEndpoint& ep, const ImpairmentConfig& cfg,
                                                            rte_mempool* copy_pool, Status& err) {
  if (err = check(cfg, copy_pool); !err.ok()) return nullptr;
  std::unique_ptr<LinkImpairment> li(new LinkImpairment(0, 0, cfg, copy_pool));
  if (err = li->imp_.arm_rule(); !err.ok()) return nullptr;
  li->ep_ = &ep;
  ep.set_tx_filter(&LinkImpairment::on_tx, li.get());
  return li;
}

std::unique_ptr<LinkImpairment> LinkImpairment::attach(std::uint16_t port, std::uint16_t queue,
                                                       const ImpairmentConfig& cfg, rte_mempool* copy_pool,
                                                       Status& err) {
  if (err = check(cfg, copy_pool); !err.ok()) return nullptr;
  std::unique_ptr<LinkImpairment> li(new LinkImpairment(port, queue, cfg, copy_pool));
  if (err = li->imp_.arm_rule(); !err.ok()) return nullptr;
  li->cb_ = rte_eth_add_rx_callback(port, queue, &LinkImpairment::on_rx, li.get());
  if (li->cb_ == nullptr) {
    err =
        Status::error(StatusCode::kError, "impairment: cannot add an RX callback on port " + std::to_string(port) +
                                              " queue " + std::to_string(queue) + " (" + rte_strerror(rte_errno) + ")");
    return nullptr;
  }
  return li;
}

LinkImpairment::~LinkImpairment() {
  if (cb_ != nullptr) rte_eth_remove_rx_callback(port_, queue_, cb_);
  if (ep_ != nullptr) ep_->set_tx_filter(nullptr, nullptr);
  // The callback record itself is freed by ethdev only when the application says no datapath
  // thread can be inside it; it is a few bytes per run, so it stays allocated (DPDK's own advice).
  // imp_ frees a frame still held back.
}

std::uint16_t LinkImpairment::on_rx(std::uint16_t, std::uint16_t, rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max,
                                    void* self) {
  return static_cast<LinkImpairment*>(self)->imp_.apply(pkts, n, max);
}

std::uint16_t LinkImpairment::on_tx(void* self, rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max) {
  return static_cast<LinkImpairment*>(self)->imp_.apply(pkts, n, max);
}

}  // namespace droce::engine
