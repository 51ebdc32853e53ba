// RcEndpoint: the RC transport on one port queue — RX parse -> QP dispatch, QP output -> frames
// with zero-copy payloads -> TxBatch, ACK timers; the engine side of protocols/rc.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <rte_mbuf.h>

#include "engine/capture.h"
#include "engine/counters.h"
#include "engine/memory_region.h"
#include "engine/status.h"
#include "engine/tx_batch.h"
#include "protocols/rc/rc_qp.h"
#include "protocols/wire/build.h"

namespace droce::engine {

struct EndpointConfig {
  std::uint16_t port_id = 0;
  std::uint16_t queue = 0;
  rte_mempool* pool = nullptr;        // header and trailer mbufs (and copies when not zero-copy)
  MemoryRegistry* memory = nullptr;   // application memory: keys, bounds, extbuf attach
  bool zero_copy_tx = true;           // attach payloads as external buffers (needs multi-seg TX)
  std::uint32_t qpn_base = 0x11;      // QPNs are base + index: the lookup is an array index
  std::uint32_t max_qps = 64;
  wire::L2L3Address local;
  QueueCounters* counters = nullptr;  // optional: RX drops by reason, TX packets/bytes
  PcapngCapture* capture = nullptr;   // optional: every frame sent and received, as on the wire
};

// Per-endpoint transport counters beyond the per-QP RC counters.
struct EndpointCounters {
  std::uint64_t tx_frames = 0;
  std::uint64_t tx_zero_copy_frames = 0;  // payload attached, not copied
  std::uint64_t tx_payload_bytes_copied = 0;
  std::uint64_t tx_payload_bytes = 0;
  std::uint64_t tx_alloc_failures = 0;    // pool empty: packet stays queued in the QP (retried)
  std::uint64_t tx_backlog_drops = 0;
  std::uint64_t rx_frames = 0;
  std::uint64_t rx_linearized = 0;        // multi-segment frames copied to parse them
  std::uint64_t rx_drops[wire::kDropReasonCount] = {};
};

class RcEndpoint {
 public:
  explicit RcEndpoint(const EndpointConfig& cfg);
  ~RcEndpoint();
  RcEndpoint(const RcEndpoint&) = delete;
  RcEndpoint& operator=(const RcEndpoint&) = delete;

  // Creates a QP and connects it statically (peer MAC/IP, dest QPN and PSNs in `attr`): RESET ->
  // INIT -> RTR -> RTS. Returns the QP; `attr.qpn` is assigned here.
  [[nodiscard]] Status create_qp(rc::QpAttr attr, const wire::L2L3Address& remote, rc::RcQp*& out);
  [[nodiscard]] rc::RcQp* qp(std::uint32_t qpn);

  // One iteration: RX burst, timers, TX (as many packets as the backlog takes), flush.
  void poll(std::uint64_t now_tsc);
  // Frees everything pending (shutdown).
  void finish();

  [[nodiscard]] const EndpointCounters& counters() const { return c_; }
  [[nodiscard]] std::uint64_t now_ns(std::uint64_t tsc) const;

 private:
  struct QpSlot {
    std::unique_ptr<rc::RcQp> qp;
    wire::HeaderTemplate tmpl;
    std::uint16_t ip_id = 0;
  };
  void receive(rte_mbuf* m, std::uint64_t now_ns);
  bool transmit(QpSlot& s, const rc::TxDescriptor& d, std::uint64_t now_tsc);
  void drop(wire::DropReason r);

  EndpointConfig cfg_;
  bool multi_seg_ok_ = false;
  std::vector<QpSlot> qps_;
  TxBatch<1024> tx_;
  EndpointCounters c_;
  std::vector<std::uint8_t> scratch_;  // linearised multi-segment RX frames
  double ns_per_tsc_ = 1.0;
};

}  // namespace droce::engine
