// One switch port's counters as droce-switch's JSON writes them (ports, the lab's bottleneck and
// ingresses, both directions of a leaf-spine link).
#pragma once

#include <droce/engine/lab/lab_switch.h>

#include <nlohmann/json.hpp>

namespace droce::sw {

[[nodiscard]] nlohmann::json port_json(const engine::SwitchPortCounters& c);

}  // namespace droce::sw
