// Telemetry callbacks: run on DPDK's telemetry thread, read counters through the registry.
#include "engine/core/telemetry.h"

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "engine/core/counters.h"

namespace droce::engine {
namespace {

int cmd_ports(const char*, const char*, rte_tel_data* d) {
  rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
  for (auto id : CounterRegistry::instance().port_ids()) rte_tel_data_add_array_int(d, id);
  return 0;
}

int cmd_port_stats(const char*, const char* params, rte_tel_data* d) {
  if (params == nullptr || *params == '\0') return -1;
  char* end = nullptr;
  const long id = std::strtol(params, &end, 10);
  if (*end != '\0' || id < 0 || id >= RTE_MAX_ETHPORTS) return -1;
  PortCounters pc;
  if (!CounterRegistry::instance().snapshot(static_cast<std::uint16_t>(id), pc)) return -1;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "name", pc.name.c_str());
  rte_tel_data_add_dict_string(d, "driver", pc.driver.c_str());
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
  rte_eth_stats st{};
  if (rte_eth_stats_get(static_cast<std::uint16_t>(id), &st) == 0) {
    rte_tel_data_add_dict_u64(d, "ethdev_ipackets", st.ipackets);
    rte_tel_data_add_dict_u64(d, "ethdev_opackets", st.opackets);
    rte_tel_data_add_dict_u64(d, "ethdev_ibytes", st.ibytes);
    rte_tel_data_add_dict_u64(d, "ethdev_obytes", st.obytes);
    rte_tel_data_add_dict_u64(d, "ethdev_imissed", st.imissed);
  }
  return 0;
}

}  // namespace

void register_telemetry() {
  static std::once_flag once;
  std::call_once(once, [] {
    rte_telemetry_register_cmd("/droce/ports", cmd_ports, "Ports droce drives. No parameters");
    rte_telemetry_register_cmd("/droce/port_stats", cmd_port_stats,
                               "droce per-queue counters and drop reasons of a port. Parameters: int port_id");
  });
}

}  // namespace droce::engine
