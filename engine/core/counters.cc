// Counter registry and its JSON form (nlohmann::json), including DPDK's own ethdev stats.
#include "engine/core/counters.h"

#include <rte_ethdev.h>

#include <nlohmann/json.hpp>

namespace droce::engine {

CounterRegistry& CounterRegistry::instance() {
  static CounterRegistry r;
  return r;
}

PortCounters& CounterRegistry::add_port(std::uint16_t port_id, const std::string& name, const std::string& driver,
                                        std::uint16_t queues) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : ports_) {
    if (p.port_id == port_id && p.queues.size() == queues) {
      p.name = name;
      p.driver = driver;
      p.queues.assign(queues, QueueCounters{});
      return p;
    }
  }
  ports_.push_back(PortCounters{port_id, name, driver, std::vector<QueueCounters>(queues)});
  return ports_.back();
}

void CounterRegistry::remove_port(std::uint16_t port_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : ports_)
    if (p.port_id == port_id) p.name.clear();  // storage stays: a worker may still hold a pointer
}

std::vector<std::uint16_t> CounterRegistry::port_ids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::uint16_t> ids;
  for (const auto& p : ports_)
    if (!p.name.empty()) ids.push_back(p.port_id);
  return ids;
}

bool CounterRegistry::snapshot(std::uint16_t port_id, PortCounters& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& p : ports_) {
    if (p.port_id == port_id && !p.name.empty()) {
      out = p;
      return true;
    }
  }
  return false;
}

std::string CounterRegistry::json(int only_port) const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : ports_) {
    if (p.name.empty() || (only_port >= 0 && p.port_id != only_port)) continue;
    nlohmann::json jp;
    jp["port_id"] = p.port_id;
    jp["name"] = p.name;
    jp["driver"] = p.driver;
    nlohmann::json qs = nlohmann::json::array();
    std::uint64_t totals[7] = {};
    for (const auto& q : p.queues) {
      nlohmann::json jq{{"rx_packets", q.rx_packets},
                        {"rx_bytes", q.rx_bytes},
                        {"rx_bursts", q.rx_bursts},
                        {"tx_packets", q.tx_packets},
                        {"tx_bytes", q.tx_bytes},
                        {"tx_deferred", q.tx_deferred},
                        {"tx_backlog_drops", q.tx_backlog_drops}};
      nlohmann::json drops = nlohmann::json::object();
      for (std::size_t r = 1; r < wire::kDropReasonCount; ++r)
        if (q.rx_drops[r] != 0)
          drops[std::string(wire::drop_reason_name(static_cast<wire::DropReason>(r)))] = q.rx_drops[r];
      jq["rx_drops"] = drops;
      qs.push_back(jq);
      totals[0] += q.rx_packets;
      totals[1] += q.rx_bytes;
      totals[2] += q.tx_packets;
      totals[3] += q.tx_bytes;
      totals[4] += q.tx_deferred;
      totals[5] += q.tx_backlog_drops;
    }
    jp["queues"] = qs;
    jp["rx_packets"] = totals[0];
    jp["rx_bytes"] = totals[1];
    jp["tx_packets"] = totals[2];
    jp["tx_bytes"] = totals[3];
    jp["tx_deferred"] = totals[4];
    jp["tx_backlog_drops"] = totals[5];
    rte_eth_stats st{};
    if (rte_eth_dev_is_valid_port(p.port_id) && rte_eth_stats_get(p.port_id, &st) == 0) {
      jp["ethdev"] = {{"ipackets", st.ipackets}, {"opackets", st.opackets},  {"ibytes", st.ibytes},
                      {"obytes", st.obytes},     {"imissed", st.imissed},    {"ierrors", st.ierrors},
                      {"oerrors", st.oerrors},   {"rx_nombuf", st.rx_nombuf}};
    }
    out.push_back(jp);
  }
  return out.dump(2);
}

}  // namespace droce::engine
