// DPDK telemetry commands for droce's counters (readable with dpdk-telemetry.py).
#pragma once

namespace droce::engine {

// Registers /droce/ports and /droce/port_stats,<port_id> once per process. Safe to call again.
// Works whether or not the telemetry socket is enabled (--no-telemetry only hides the socket).
void register_telemetry();

}  // namespace droce::engine
