// Telemetry callbacks: run on DPDK's telemetry thread, read counters through the registry.
#include "engine/core/telemetry.h"

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include <mutex>
#include <span>
#include <string>

#include "engine/core/counters.h"
#include "engine/core/telemetry_params.h"

namespace droce::engine {
namespace {

// Every ethdev port of this process: droce's apps probe only the ports they drive (their vdevs,
// the NICs given with -a), so these are droce's ports whether an endpoint, a worker group, the
// lab switch or the forwarder polls them.
int cmd_ports(const char*, const char*, rte_tel_data* d) {
  rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
  std::uint16_t id = 0;
  RTE_ETH_FOREACH_DEV(id) rte_tel_data_add_array_int(d, id);
  return 0;
}

// droce's own per-queue counters, where the port's loop keeps them in the registry (droce-fwd).
void add_queue_counters(rte_tel_data* d, const PortCounters& pc) {
  QueueCounters total;
  for (std::size_t q = 0; q < pc.queues.size(); ++q) {
    const QueueCounters& c = pc.queues[q];
    total.rx_packets += c.rx_packets;
    total.rx_bytes += c.rx_bytes;
    total.tx_packets += c.tx_packets;
    total.tx_bytes += c.tx_bytes;
    total.tx_deferred += c.tx_deferred;
    total.tx_backlog_drops += c.tx_backlog_drops;
    for (std::size_t r = 0; r < wire::kDropReasonCount; ++r) total.rx_drops[r] += c.rx_drops[r];
  }
  rte_tel_data_add_dict_u64(d, "queues", pc.queues.size());
  rte_tel_data_add_dict_u64(d, "rx_packets", total.rx_packets);
  rte_tel_data_add_dict_u64(d, "rx_bytes", total.rx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_packets", total.tx_packets);
  rte_tel_data_add_dict_u64(d, "tx_bytes", total.tx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_deferred", total.tx_deferred);
  rte_tel_data_add_dict_u64(d, "tx_backlog_drops", total.tx_backlog_drops);
  for (std::size_t r = 1; r < wire::kDropReasonCount; ++r) {
    const std::string key = "drop_" + std::string(wire::drop_reason_name(static_cast<wire::DropReason>(r)));
    rte_tel_data_add_dict_u64(d, key.c_str(), total.rx_drops[r]);
  }
}

int cmd_port_stats(const char*, const char* params, rte_tel_data* d) {
  std::uint32_t id = 0;
  std::string reason;
  static constexpr const char* kNames[] = {"port_id"};
  if (!parse_telemetry_ids(params, std::span(&id, 1), kNames, reason)) return telemetry_refuse(d, reason);
  if (id >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port(static_cast<std::uint16_t>(id)))
    return telemetry_refuse(d, "no port " + std::to_string(id) + " in this process (/droce/ports lists them)");
  const auto port = static_cast<std::uint16_t>(id);
  rte_tel_data_start_dict(d);
  char name[RTE_ETH_NAME_MAX_LEN] = {};
  if (rte_eth_dev_get_name_by_port(port, name) == 0) rte_tel_data_add_dict_string(d, "name", name);
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port, &info) == 0 && info.driver_name != nullptr)
    rte_tel_data_add_dict_string(d, "driver", info.driver_name);
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port, &link) == 0) {
    rte_tel_data_add_dict_string(d, "link", link.link_status == RTE_ETH_LINK_UP ? "up" : "down");
    rte_tel_data_add_dict_u64(d, "link_speed_mbps", link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed);
  }
  rte_eth_stats st{};
  if (rte_eth_stats_get(port, &st) == 0) {
    rte_tel_data_add_dict_u64(d, "ethdev_ipackets", st.ipackets);
    rte_tel_data_add_dict_u64(d, "ethdev_opackets", st.opackets);
    rte_tel_data_add_dict_u64(d, "ethdev_ibytes", st.ibytes);
    rte_tel_data_add_dict_u64(d, "ethdev_obytes", st.obytes);
    rte_tel_data_add_dict_u64(d, "ethdev_imissed", st.imissed);
    rte_tel_data_add_dict_u64(d, "ethdev_ierrors", st.ierrors);
    rte_tel_data_add_dict_u64(d, "ethdev_oerrors", st.oerrors);
    rte_tel_data_add_dict_u64(d, "ethdev_rx_nombuf", st.rx_nombuf);
  }
  PortCounters pc;
  if (CounterRegistry::instance().snapshot(port, pc)) add_queue_counters(d, pc);
  return 0;
}

}  // namespace

void register_telemetry() {
  static std::once_flag once;
  std::call_once(once, [] {
    rte_telemetry_register_cmd("/droce/ports", cmd_ports,
                               "Ports droce drives (every ethdev port of this process). No parameters");
    rte_telemetry_register_cmd(
        "/droce/port_stats", cmd_port_stats,
        "A port: name, driver, link, ethdev counters; droce's queue counters where kept. Parameters: int "
        "port_id");
  });
}

}  // namespace droce::engine
