// Which ports the switch takes: the ones its EAL options name, never whatever PCI NICs EAL finds.
#pragma once

#include <droce/engine/core/status.h>

#include <string>
#include <vector>

namespace droce::sw {

// For the switch between processes (not --lab-senders): its ports are the ethdevs EAL creates,
// so `eal` must name them (--vdev, or a NIC by -a/--allow). Without a PCI option (-a, --allow,
// -b, --block, --no-pci) EAL would probe and take every NIC bound to a DPDK driver on the host:
// --no-pci is added. Nothing naming a port at all is refused here, before EAL starts, in one line.
[[nodiscard]] engine::Status name_switch_ports(std::vector<std::string>& eal);

}  // namespace droce::sw
