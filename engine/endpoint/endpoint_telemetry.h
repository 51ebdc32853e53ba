// DPDK telemetry for every live RcEndpoint in the process — one per worker (and two per loopback
// lab): /droce/endpoints lists them, /droce/endpoint_stats,<id> gives one endpoint's counters
// (per worker), /droce/endpoint_totals their sums; with them the QP commands (qp_telemetry.h).
// Readable with dpdk-telemetry.py. The endpoints are found in EndpointDirectory.
#pragma once

namespace droce::engine {

// Registers the endpoint and QP commands, once per process (RcEndpoint::create calls it before
// the first endpoint enters the directory). Safe to call again.
void register_endpoint_telemetry();

}  // namespace droce::engine
