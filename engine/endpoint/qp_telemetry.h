// DPDK telemetry of the QPs and of the Linux-named counters, beside the endpoint commands
// (endpoint_telemetry.h), registered with them when the first endpoint is created:
//   /droce/qps,<endpoint>          the endpoint's QPs: QPN -> state (the first 256)
//   /droce/qp,<endpoint>,<qpn>     one QP: state, PSNs, outstanding work, retries, DCQCN rate, its
//                                  RC counters and their Linux names
//   /droce/hw_counters[,<endpoint>] the Linux hw_counters names (linux_counter_names.h) of one
//                                  endpoint, or of all of them summed
#pragma once

namespace droce::engine {

void register_qp_telemetry();

}  // namespace droce::engine
