// EndpointConfig's checks: one line naming the field, its value and what it may be.
#include "engine/endpoint/endpoint_config.h"

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cmath>
#include <string>

namespace droce::engine {
namespace {

Status bad(const std::string& what) { return Status::error(StatusCode::kInvalidArgument, "endpoint config: " + what); }

Status check_queues(const EndpointQueues& q) {
  if (q.pool == nullptr) return bad("queues.pool is null (header and trailer mbufs come from it)");
  if (q.memory == nullptr) return bad("queues.memory is null (keys and payload buffers are looked up in it)");
  if (q.tx_ring != nullptr) return Status();  // a lab ring, no ethdev to check
  if (!rte_eth_dev_is_valid_port(q.port_id)) return bad("queues.port_id " + std::to_string(q.port_id) + " is no port");
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(q.port_id, &info) == 0 && info.nb_tx_queues != 0 &&
      (q.queue >= info.nb_tx_queues || q.queue >= info.nb_rx_queues))
    return bad("queues.queue " + std::to_string(q.queue) + " is beyond the port's " +
               std::to_string(info.nb_rx_queues) + " RX and " + std::to_string(info.nb_tx_queues) + " TX queues");
  return Status();
}

Status check_addresses(const EndpointAddresses& a) {
  // VLAN ID 4095 is reserved (IEEE 802.1Q §9.6); 0 means untagged here.
  if (a.vlan_id > 4094) return bad("addresses.vlan_id " + std::to_string(a.vlan_id) + " is not 0..4094");
  if (a.vlan_pcp > 7) return bad("addresses.vlan_pcp " + std::to_string(a.vlan_pcp) + " is not 0..7");
  if (a.dscp > 63) return bad("addresses.dscp " + std::to_string(a.dscp) + " is not 0..63");
  return Status();
}

Status check_transport(const EndpointTransport& t, const rte_mempool* pool) {
  // QPs 0 and 1 are the subnet and general service management QPs (IBTA §3.5.2, §13.5.1).
  if (t.qpn_base < 2)
    return bad("transport.qpn_base " + std::to_string(t.qpn_base) + " is below 2 (QPs 0 and 1 are reserved)");
  if (t.max_qps == 0 || t.max_qps > kMaxEndpointQps)
    return bad("transport.max_qps " + std::to_string(t.max_qps) + " is not 1.." + std::to_string(kMaxEndpointQps));
  if (static_cast<std::uint64_t>(t.qpn_base) + t.max_qps > (1u << 24))
    return bad("transport.qpn_base + max_qps (" + std::to_string(t.qpn_base) + " + " + std::to_string(t.max_qps) +
               ") leaves the 24-bit QPN space");
  // An inlined payload shares the header mbuf with the largest headers, 3 pad bytes and the ICRC.
  const std::uint32_t room = rte_pktmbuf_data_room_size(const_cast<rte_mempool*>(pool)) - RTE_PKTMBUF_HEADROOM;
  const std::uint32_t fits = room > wire::kMaxHeaderBytes + 3 + 4 ? room - wire::kMaxHeaderBytes - 3 - 4 : 0;
  if (t.tx_inline_bytes > fits)
    return bad("transport.tx_inline_bytes " + std::to_string(t.tx_inline_bytes) +
               " does not fit the pool's mbufs (at most " + std::to_string(fits) + ")");
  return Status();
}

}  // namespace

Status validate(const EndpointConfig& cfg) {
  if (Status s = check_queues(cfg.queues); !s.ok()) return s;
  if (Status s = check_addresses(cfg.addresses); !s.ok()) return s;
  if (Status s = check_transport(cfg.transport, cfg.queues.pool); !s.ok()) return s;
  if (Status s = cfg.dcqcn.params.validate(); !s.ok()) return bad("dcqcn.params: " + s.message());
  if (cfg.pfc.priority > 7) return bad("pfc.priority " + std::to_string(cfg.pfc.priority) + " is not 0..7");
  if (!std::isfinite(cfg.pfc.link_bps) || cfg.pfc.link_bps < 0)
    return bad("pfc.link_bps " + std::to_string(cfg.pfc.link_bps) + " is not a rate >= 0");
  if (!(cfg.pfc.watchdog_ms >= 0 && cfg.pfc.watchdog_ms <= 1e6))
    return bad("pfc.watchdog_ms " + std::to_string(cfg.pfc.watchdog_ms) + " is not 0..1000000");
  return Status();
}

}  // namespace droce::engine
