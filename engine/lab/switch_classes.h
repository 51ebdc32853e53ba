// The text forms of a lab switch's classes (LabSwitchConfig: DSCP -> priority -> queue, the
// lossless priorities, the CNP class and the scheduler), as droce-switch and droce-coll take them.
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/lab/lab_switch.h"

namespace droce::engine {

// "D=P,D=P..": DSCP D (0..63) to priority P (0..7); DSCPs not named keep DSCP / 8.
[[nodiscard]] Status parse_dscp_map(const std::string& text, LabSwitchConfig& c);
// "Q0,Q1,..,Q7": the egress queue of each priority, eight entries.
[[nodiscard]] Status parse_priority_queues(const std::string& text, LabSwitchConfig& c);
// "P,P..": the lossless priorities (PFC pauses and is honoured for these only).
[[nodiscard]] Status parse_lossless_priorities(const std::string& text, LabSwitchConfig& c);
// "strict", or "weighted" (every weight 1), or "weighted:W0,..,W7" (eight weights, 1..1000).
[[nodiscard]] Status parse_scheduler(const std::string& text, LabSwitchConfig& c);

}  // namespace droce::engine
