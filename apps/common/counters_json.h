// The apps' JSON outputs share these: counters by their Linux names, the drop reasons, and the
// version and time of the report.
#pragma once

#include <droce/engine/endpoint/linux_counter_names.h>

#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace droce::engine {
class RcEndpoint;
}

namespace droce::apps {

// The sums over `eps` (each endpoint once) and every QP they created. Safe while their workers
// run (engine::add_endpoint_and_qps).
[[nodiscard]] engine::CounterSums counter_sums(std::span<const engine::RcEndpoint* const> eps);
// {"out_of_sequence": n, ...}: every Linux name droce has (engine::linux_counters()).
[[nodiscard]] nlohmann::json hw_counters_json(const engine::CounterSums& s);
// {"bad_icrc": n, ...}: every drop reason by name (wire::drop_reason_name), zeros included.
// `injected_loss`: the frames a lab impairment dropped before any endpoint saw them, received or
// sent (they are in no endpoint's rx_drops, so hw_counters' rcvd_pkts stays rx_frames - rx_drops).
[[nodiscard]] nlohmann::json drop_reasons_json(const engine::CounterSums& s, std::uint64_t injected_loss = 0);
// {"cm_mads_received": n, ..., "cm_ud_bad_icrc": n, "cm_mad_not_cm": n, ...}: QP1's (RDMA-CM)
// counters of one endpoint (engine::kCmCounterFields and the refusals by rule), zeros included.
[[nodiscard]] nlohmann::json cm_counters_json(const engine::RcEndpoint& ep);
// Sets j["version"] (droce's and DPDK's) and j["timestamp"] (now, UTC, ISO 8601).
void stamp_report(nlohmann::json& j);
[[nodiscard]] std::string utc_timestamp();

}  // namespace droce::apps
