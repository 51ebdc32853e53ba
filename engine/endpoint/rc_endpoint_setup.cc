// An RcEndpoint's birth and end: create() checks the configuration, the constructor reads what
// the port can do (chained mbufs, the memory its peer can read, its link rate) and works out the
// per-opcode transmit classes once, and the endpoint enters the telemetry directory until it is
// destroyed.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstring>

#include "engine/endpoint/endpoint_directory.h"
#include "engine/endpoint/endpoint_telemetry.h"
#include "engine/endpoint/rc_endpoint.h"
#include "protocols/rc/descriptor_fields.h"
#include "protocols/wire/build.h"
#include "protocols/wire/opcode.h"

namespace droce::engine {

std::unique_ptr<RcEndpoint> RcEndpoint::create(const EndpointConfig& cfg, Status& err) {
  err = validate(cfg);
  if (!err.ok()) return nullptr;
  std::unique_ptr<RcEndpoint> ep(new RcEndpoint(cfg));
  // Readable from DPDK's telemetry thread from now on (/droce/endpoint_stats,<id>).
  register_endpoint_telemetry();
  ep->telemetry_id_ = EndpointDirectory::instance().add(ep.get());
  return ep;
}

RcEndpoint::RcEndpoint(const EndpointConfig& cfg)
    : cfg_(cfg),
      qps_(cfg.transport.max_qps),
      scratch_(16384),
      wheel_(cfg.transport.max_qps, 1024, rte_get_tsc_hz() / 1'000'000 != 0 ? rte_get_tsc_hz() / 1'000'000 : 1),
      // ~1 µs buckets: 4096 cover 4 ms (ACK timeouts beyond wait in their bucket for their turn);
      // 1024 cover DCQCN's periods (tens of µs).
      timer_wheel_(cfg.transport.max_qps, 4096, 1024),
      rate_wheel_(cfg.transport.max_qps, 1024, 1024) {
  // Zero-copy TX sends chained mbufs, so the port must take them. net_ring advertises no
  // offloads but only moves mbuf pointers, so a chain crosses it untouched.
  rte_eth_dev_info info{};
  if (cfg.queues.tx_ring != nullptr) {
    tx_.sink_to(cfg.queues.tx_ring);  // a lab ring carries mbuf pointers: a chain crosses whole
    multi_seg_ok_ = true;
  } else if (rte_eth_dev_info_get(cfg.queues.port_id, &info) == 0) {
    multi_seg_ok_ = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0 ||
                    (info.driver_name != nullptr && std::strcmp(info.driver_name, "net_ring") == 0);
    // virtio_user's vhost-user peer reads our frames through the memory table we sent it (file
    // descriptors of DPDK's segments); a payload in heap memory is outside it and the peer drops
    // the whole frame, so such payloads are copied into the pool instead (still counted).
    dpdk_memory_tx_only_ = info.driver_name != nullptr && std::strcmp(info.driver_name, "net_virtio_user") == 0;
  }
  // What tx_reserve_frame holds before a QP gives up its next packet. A zero-copy frame takes 3
  // mbufs (headers, the payload attached, pad and ICRC); but where one mbuf holds the largest frame
  // (the headers, a 4096-byte payload, pad, ICRC: IBTA's largest PMTU), a frame whose other two
  // the pool cannot give is copied instead (transmit's fallback), so the first is enough.
  const std::uint32_t room = rte_pktmbuf_data_room_size(cfg.queues.pool) - RTE_PKTMBUF_HEADROOM;
  const bool one_holds_any = room >= wire::kMaxHeaderBytes + 4096 + 3 + wire::kIcrcBytes;
  tx_frame_mbufs_ = cfg.transport.zero_copy_tx && multi_seg_ok_ && !one_holds_any ? 3 : 1;
  for (std::uint32_t op = 0; op < tx_opcode_class_.size(); ++op) {
    rc::TxDescriptor d;
    d.opcode = static_cast<std::uint8_t>(op);
    tx_opcode_class_[op] =
        static_cast<std::uint8_t>((wire::tx_template_covers(wire::opcode_info(d.opcode)) ? kTxFromTemplate : 0) |
                                  (rc::packet_fields(d).ecn_override == wire::kEcnNotEct ? kTxNotEct : 0));
  }
  tsc_hz_ = rte_get_tsc_hz();
  ns_per_tsc_ = 1e9 / static_cast<double>(tsc_hz_);
  // Pause quanta are bit times of the link the PFC frame came over.
  pfc_link_bps_ = cfg.pfc.link_bps;
  pfc_watchdog_ns_ = static_cast<std::uint64_t>(cfg.pfc.watchdog_ms * 1e6);
  if (pfc_link_bps_ <= 0 && cfg.queues.tx_ring != nullptr) pfc_link_bps_ = 10e9;  // no link to ask
  if (pfc_link_bps_ <= 0) {
    rte_eth_link link{};
    pfc_link_bps_ = rte_eth_link_get_nowait(cfg.queues.port_id, &link) == 0 && link.link_speed != 0 &&
                            link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN
                        ? static_cast<double>(link.link_speed) * 1e6
                        : 10e9;
  }
}

RcEndpoint::~RcEndpoint() {
  EndpointDirectory::instance().remove(telemetry_id_);
  finish();
}

}  // namespace droce::engine
