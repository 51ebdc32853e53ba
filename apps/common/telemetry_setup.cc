// DPDK telemetry and packet capture for a running app (see telemetry_setup.h).
#include "apps/common/telemetry_setup.h"

#include <droce/engine/core/eal.h>
#include <droce/engine/core/telemetry.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_pdump.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>

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
    // dpdk-dumpcap is a secondary process: it reaches us over EAL's multi-process channel (none
    // with --no-shconf or --in-memory; rte_pdump_init then does nothing and still succeeds) and
    // maps our hugepage files by name (none with --no-huge; removed once mapped with
    // --huge-unlink, droce's default with the prefix it picks itself).
    const auto& args = engine::Eal::current().final_args;
    const auto has = [&args](const char* opt) {
      return std::any_of(args.begin(), args.end(), [opt](const std::string& a) { return a.rfind(opt, 0) == 0; });
    };
    // Why dpdk-dumpcap cannot attach, in a few words (docs/hardening.md says the rest): the line
    // stays short enough to read at a glance beside the run's own output.
    std::string why;
    if (rte_pdump_init() != 0)
      why = std::string("rte_pdump: ") + rte_strerror(rte_errno);
    else if (has("--no-shconf") || has("--in-memory"))
      why = "--in-memory/--no-shconf";
    else if (has("--no-huge"))
      why = "--no-huge";
    else if (has("--huge-unlink"))
      why = "give --file-prefix";
    if (!why.empty()) {
      std::fprintf(stderr, "%s: EAL file prefix %s: dpdk-telemetry.py -f %s (no dpdk-dumpcap: %s)\n", app,
                   prefix.c_str(), prefix.c_str(), why.c_str());
      return;
    }
    std::fprintf(stderr, "%s: EAL file prefix %s: dpdk-telemetry.py -f %s; dpdk-dumpcap --file-prefix=%s -i PORT\n",
                 app, prefix.c_str(), prefix.c_str(), prefix.c_str());
  });
}

}  // namespace droce::apps
