// A leaf-spine link in the JSON of every app with a lab fabric (droce-coll, droce-switch): its
// counters, failures and what each direction runs with (its own settings, --link, else its
// switch tier's).
#pragma once

#include <droce/engine/lab/leaf_spine.h>
#include <droce/engine/lab/link_spec.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace droce::apps {

// {gbps, buffer_bytes, delay_us, kmin_bytes, kmax_bytes, pmax, pfc, pfc_xoff_bytes, pfc_xon_bytes};
// the PFC thresholds null where the link runs no PFC.
[[nodiscard]] nlohmann::json link_settings_json(const engine::LinkQueueParams& p);
// The --link specs as given.
[[nodiscard]] nlohmann::json link_specs_json(const std::vector<engine::LinkSpec>& specs);
// One leaf-spine link's entry: its name and ends, each direction's counters as the app words them
// (`up`: the leaf's queue towards the spine), whether it is up, its failures' times in ms (null:
// never) and its settings.
[[nodiscard]] nlohmann::json fabric_link_json(const engine::FabricLinkCounters& l, nlohmann::json up,
                                              nlohmann::json down);
// The --link-down schedule: [{link, down_ms, up_ms (null: never)}].
[[nodiscard]] nlohmann::json link_failures_json(const std::vector<engine::LinkFailure>& failures);

}  // namespace droce::apps
