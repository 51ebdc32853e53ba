// What every app does once EAL is up so that DPDK's own tools can look at it while it runs.
#pragma once

namespace droce::apps {

// Registers droce's port telemetry commands (the endpoint and QP commands register themselves
// with the first endpoint), initialises rte_pdump so that dpdk-dumpcap can capture the ports, and
// prints one line on stderr naming the EAL file prefix the tools attach with:
//   <app>: EAL file prefix P: dpdk-telemetry.py -f P; dpdk-dumpcap --file-prefix=P -i PORT
// or, where dpdk-dumpcap cannot attach (no multi-process channel with --no-shconf or
// --in-memory; hugepage files unlinked with the prefix droce picks itself), what is missing.
void start_telemetry(const char* app);

}  // namespace droce::apps
