// DPDK telemetry and packet capture for a running app (see telemetry_setup.h).
#include "apps/common/telemetry_setup.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_pdump.h>

#include <droce/engine/core/telemetry.h>

namespace droce::apps {

void start_telemetry(const char* app) {
  static std::once_flag once;
  std::call_once(once, [app] {
    engine::register_telemetry();
    // The runtime directory (<run dir>/dpdk/<prefix>) holds the telemetry socket and the
    // multi-process socket dpdk-dumpcap talks to; its last part is the file prefix.
    const std::string dir = rte_eal_get_runtime_dir();
    const std::size_t slash = dir.find_last_of('/');
    const std::string prefix = slash == std::string::npos ? dir : dir.substr(slash + 1);
    // rte_pdump needs EAL's multi-process channel: none with --no-shconf or --in-memory.
    if (rte_pdump_init() != 0) {
      std::fprintf(stderr,
                   "%s: EAL file prefix %s: dpdk-telemetry.py -f %s (no packet capture: %s; give --file-prefix "
                   "and hugepages for dpdk-dumpcap)\n",
                   app, prefix.c_str(), prefix.c_str(), rte_strerror(rte_errno));
      return;
    }
    std::fprintf(stderr, "%s: EAL file prefix %s: dpdk-telemetry.py -f %s; dpdk-dumpcap --file-prefix=%s -i PORT\n", app,
                 prefix.c_str(), prefix.c_str(), prefix.c_str());
  });
}

}  // namespace droce::apps
