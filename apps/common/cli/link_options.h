// A leaf-spine link's own settings as an option (droce-coll's lab fabric, droce-switch's): the
// repeatable --link, and the check that the specs fit the fabric and its switch tiers, said before
// EAL. Grammar: engine/lab/link_spec.h, docs/fabric-lab.md "Per-link settings".
#pragma once

#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/link_spec.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace droce::apps::cli {

// --link leafL-spineS:KEY=VALUE,... (repeatable) into `links`.
void add_link_specs(CLI::App& app, const std::string& group, std::vector<engine::LinkSpec>& links);

// Ok when every spec names a link of a leaves x spines fabric, no direction twice, and its values
// hold against the tiers (both `tiers`, as droce-coll and droce-switch build every leaf and spine);
// else kInvalidArgument naming --link.
[[nodiscard]] Status check_link_specs(const std::vector<engine::LinkSpec>& links, std::uint32_t leaves,
                                      std::uint32_t spines, const engine::LabSwitchConfig& tiers);

}  // namespace droce::apps::cli
