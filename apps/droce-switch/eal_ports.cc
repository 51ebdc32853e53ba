// The switch's ports, from its EAL options (see eal_ports.h).
#include "apps/droce-switch/eal_ports.h"

#include <algorithm>
#include <string_view>

namespace droce::sw {
namespace {

// "-a X", "-aX", "--allow X" and "--allow=X" all count.
bool has_option(const std::vector<std::string>& eal, std::string_view shrt, std::string_view lng) {
  return std::any_of(eal.begin(), eal.end(), [&](const std::string& a) {
    if (!shrt.empty() && a.rfind(shrt, 0) == 0) return true;
    return a == lng || (a.rfind(lng, 0) == 0 && a.size() > lng.size() && a[lng.size()] == '=');
  });
}

}  // namespace

engine::Status name_switch_ports(std::vector<std::string>& eal) {
  const bool pci =
      has_option(eal, "-a", "--allow") || has_option(eal, "-b", "--block") || has_option(eal, "", "--no-pci");
  const bool vdev = has_option(eal, "", "--vdev");
  if (!pci && !vdev)
    return engine::Status::error(engine::StatusCode::kInvalidArgument,
                                 "no ports: name at least two in the EAL options before -- (--vdev "
                                 "net_memif0,role=server,socket=PATH ... or -a PCI_ADDRESS), or run the lab with "
                                 "--lab-senders N");
  if (!pci) eal.push_back("--no-pci");
  return {};
}

}  // namespace droce::sw
