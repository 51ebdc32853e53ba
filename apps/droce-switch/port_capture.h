// droce-switch's --pcap: every frame a switch port receives, copied into one pcapng by an RX
// callback on that port (as LinkImpairment impairs it), the file's interface being the port.
#pragma once

#include <droce/engine/core/capture.h>
#include <droce/engine/core/status.h>
#include <rte_ethdev.h>

#include <cstdint>
#include <memory>

namespace droce::sw {

// Why ingress, once per port, and not egress: each frame the switch forwards entered through
// exactly one port, so it is in the file once, under the interface it came in on. An ethdev TX
// callback would record again a frame the PMD refused and the switch sends later (engine/core/
// tx_batch.h, TxFilter). The frames the switch makes itself (PFC pauses) and its ECN marks are
// in its counters, not in the file. Installed after the ingress impairment's callback, it records
// what reached the forwarding stage: a frame the impairment dropped is not in the file.
class PortCapture {
 public:
  // Installs the callback on (port, queue 0); `capture` is open and outlives this.
  [[nodiscard]] static std::unique_ptr<PortCapture> attach(std::uint16_t port, engine::PcapngCapture& capture,
                                                           engine::Status& err);
  // Removes the callback (the switch's thread, after its last poll).
  ~PortCapture();
  PortCapture(const PortCapture&) = delete;
  PortCapture& operator=(const PortCapture&) = delete;

 private:
  PortCapture(std::uint16_t port, engine::PcapngCapture& capture) : port_(port), capture_(capture) {}
  static std::uint16_t on_rx(std::uint16_t port, std::uint16_t queue, rte_mbuf* pkts[], std::uint16_t n,
                             std::uint16_t max, void* self);

  std::uint16_t port_;
  engine::PcapngCapture& capture_;
  const rte_eth_rxtx_callback* cb_ = nullptr;
};

}  // namespace droce::sw
