// What one direction of a leaf-spine link runs with, in the JSON of every app with a lab fabric
// (droce-coll, droce-switch): its own settings (--link), else its switch tier's.
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

}  // namespace droce::apps
