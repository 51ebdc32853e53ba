// Default client/server port: net_memif between two processes, or the user's first port.
#include "engine/default_port.h"

#include <rte_ethdev.h>

#include "engine/eal.h"

namespace droce::engine {

std::vector<std::string> default_pair_eal_args(bool server) {
  std::vector<std::string> args = {"--no-pci"};
  const std::vector<unsigned> cpus = Eal::allowed_cpus();
  if (server && !cpus.empty()) args.insert(args.end(), {"-l", std::to_string(cpus.back())});
  return args;
}

Status pair_port_devargs(bool defaults, bool server, const std::string& socket, std::string& devargs) {
  if (defaults) {
    devargs = std::string("net_memif0,role=") + (server ? "server" : "client") + ",socket=" + socket;
    return {};
  }
  if (rte_eth_dev_count_avail() == 0)
    return Status::error("no port: give one in the EAL options (--vdev net_memif0,... or a PCI address)");
  std::uint16_t first = 0;
  RTE_ETH_FOREACH_DEV(first) break;
  char name[RTE_ETH_NAME_MAX_LEN];
  if (rte_eth_dev_get_name_by_port(first, name) != 0) return Status::error("cannot name the first port");
  devargs = name;
  return {};
}

}  // namespace droce::engine
