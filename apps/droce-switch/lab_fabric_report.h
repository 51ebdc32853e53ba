// The live lab's report on a leaf-spine (--fabric leafspine:L,S): where the endpoints sit, every
// leaf-spine link's counters (text and JSON's `fabric`) and its series (JSON's `series.links`).
// Nothing is added on one switch: that report stays as it was.
#pragma once

#include <droce/engine/lab/switch_experiment.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace droce::sw {

// The placement and the links table, after the senders' table.
void print_lab_fabric(const engine::SwitchExperimentConfig& cfg, const engine::SwitchExperimentResult& r);
// j["fabric"] (topology, hash, placement, failures, links by name) and j["series"]["links"].
void add_lab_fabric_json(nlohmann::json& j, const engine::SwitchExperimentConfig& cfg,
                         const engine::SwitchExperimentResult& r);

// The links table: per link both directions' bytes, ECN marks, drops and pauses received.
void print_links(const std::vector<engine::FabricLinkCounters>& links);
// Between real ports: the topology, the hash, the failures and every link (as the lab's `fabric`,
// without placement: port i is on leaf i / (ports / leaves)).
[[nodiscard]] nlohmann::json ports_fabric_json(const engine::SwitchExperimentFabric& fabric, std::size_t ports,
                                               const std::vector<engine::FabricLinkCounters>& links);

}  // namespace droce::sw
