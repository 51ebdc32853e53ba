// droce-switch's per-port capture callback (port_capture.h).
#include "apps/droce-switch/port_capture.h"

#include <rte_cycles.h>
#include <rte_errno.h>

#include <string>

namespace droce::sw {

std::unique_ptr<PortCapture> PortCapture::attach(std::uint16_t port, engine::PcapngCapture& capture,
                                                 engine::Status& err) {
  std::unique_ptr<PortCapture> pc(new PortCapture(port, capture));
  pc->cb_ = rte_eth_add_rx_callback(port, 0, &PortCapture::on_rx, pc.get());
  if (pc->cb_ == nullptr) {
    err = engine::Status::error(
        engine::StatusCode::kError,
        "--pcap: cannot add an RX callback on port " + std::to_string(port) + " (" + rte_strerror(rte_errno) + ")");
    return nullptr;
  }
  return pc;
}

PortCapture::~PortCapture() {
  // As LinkImpairment's: ethdev keeps the callback record itself (a few bytes a run).
  if (cb_ != nullptr) rte_eth_remove_rx_callback(port_, 0, cb_);
}

std::uint16_t PortCapture::on_rx(std::uint16_t port, std::uint16_t queue, rte_mbuf* pkts[], std::uint16_t n,
                                 std::uint16_t, void* self) {
  // The frames are only copied (rte_pcapng_copy): the burst goes on unchanged.
  if (n != 0)
    static_cast<PortCapture*>(self)->capture_.capture(port, queue, pkts, n, engine::CaptureDirection::kRx, rte_rdtsc());
  return n;
}

}  // namespace droce::sw
