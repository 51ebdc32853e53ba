// Default client/server port: net_memif between two processes, or the user's first port.
#include "apps/common/default_port.h"

#include <droce/engine/core/eal.h>
#include <rte_ethdev.h>

namespace droce::engine {

std::vector<std::string> default_pair_eal_args(bool server) {
  std::vector<std::string> args = {"--no-pci"};
  const std::vector<unsigned> cpus = Eal::allowed_cpus();
  if (server && !cpus.empty()) args.insert(args.end(), {"-l", std::to_string(cpus.back())});
  return args;
}

Status pair_port_devargs(bool defaults, bool server, const std::string& socket, std::string& devargs) {
  if (defaults) {
    // bsize: one memif buffer holds a whole frame up to PMTU 4096 with every header. DPDK 22.11's
    // memif copy-mode TX does not clear the chain flag of a packet's first descriptor, so once
    // chained (multi-buffer) frames have used the ring, a one-buffer frame landing on a stale slot
    // is glued to the next one and that frame is lost, at the same slots again and again: 64 KiB
    // messages at PMTU 4096 both ways ended in retry-count errors after ~25 messages (measured
    // with droce-echo). Frames that never chain never meet it.
    devargs = std::string("net_memif0,role=") + (server ? "server" : "client") + ",socket=" + socket + ",bsize=8192";
    return {};
  }
  if (rte_eth_dev_count_avail() == 0)
    return Status::error(StatusCode::kNotFound,
                         "no port: give one in the EAL options (--vdev net_memif0,... or a PCI address)");
  std::uint16_t first = 0;
  RTE_ETH_FOREACH_DEV(first) break;
  char name[RTE_ETH_NAME_MAX_LEN];
  if (rte_eth_dev_get_name_by_port(first, name) != 0)
    return Status::error(StatusCode::kError, "cannot name the first port");
  devargs = name;
  return {};
}

}  // namespace droce::engine
