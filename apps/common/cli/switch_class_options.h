// A lab switch's traffic classes as options (droce-switch, droce-coll's fabric): DSCP -> priority
// -> queue, the lossless priorities, the CNPs' class and the scheduler (engine/lab/switch_classes.h
// parses them). Each bad value is one line naming the option.
#pragma once

#include <droce/engine/lab/lab_switch.h>

#include <CLI/CLI.hpp>
#include <string>

namespace droce::apps::cli {

void add_switch_classes(CLI::App& app, const std::string& group, engine::LabSwitchConfig& c);

}  // namespace droce::apps::cli
