// A lab switch's failure switches as options (droce-switch, droce-coll's fabric): a deterministic
// drop rule, the PFC watchdog and (where a switch port means one peer) a stuck NIC's port and a
// slow receiver's. Each bad value is one line naming the option.
#pragma once

#include <droce/engine/lab/lab_switch.h>

#include <CLI/CLI.hpp>
#include <string>

namespace droce::apps::cli {

// --drop-rule and --pfc-watchdog-ms; --stuck-port, --slow-receiver and its buffer too when
// `stuck_port` is set.
void add_switch_failures(CLI::App& app, const std::string& group, engine::LabSwitchConfig& c, bool stuck_port);

}  // namespace droce::apps::cli
