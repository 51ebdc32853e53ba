// --workers against EAL's lcores and the port's queues.
#include "apps/common/worker_limits.h"

#include <rte_ethdev.h>
#include <rte_lcore.h>

namespace droce::apps {

engine::Status workers_lcore_limit(unsigned workers) {
  const unsigned lcores = rte_lcore_count();
  if (workers <= lcores) return {};
  return engine::Status::error(engine::StatusCode::kInvalidArgument,
                               "--workers " + std::to_string(workers) + ": EAL gives " + std::to_string(lcores) +
                                   " lcore" + (lcores == 1 ? "" : "s") +
                                   " and each worker needs its own, the main lcore being worker 0 (give -l with " +
                                   std::to_string(workers) + " lcores, e.g. -l 0-" + std::to_string(workers - 1) + ")");
}

engine::Status workers_queue_limit(unsigned workers, const std::string& devargs) {
  const std::string name = devargs.substr(0, devargs.find(','));
  std::uint16_t port = 0;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &port) != 0) return {};
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port, &info) != 0) return {};
  const unsigned queues = std::min<unsigned>(info.max_rx_queues, info.max_tx_queues);
  if (workers <= queues) return {};
  return engine::Status::error(engine::StatusCode::kUnsupported, "--workers " + std::to_string(workers) + ": port " +
                                                                     name + " has at most " + std::to_string(queues) +
                                                                     " RX/TX queue pair" + (queues == 1 ? "" : "s") +
                                                                     " and each worker needs its own");
}

}  // namespace droce::apps
