// A lab switch's failure switches as options (droce-switch, droce-coll's fabric): a deterministic
// drop rule, the PFC watchdog and (where a switch port means one peer) a stuck NIC's port and a
// slow receiver's. Each bad value is one line naming the option.
#pragma once

#include <droce/engine/lab/lab_switch.h>

#include <CLI/CLI.hpp>
#include <string>

namespace droce::apps::cli {

// What a switch port's peer is called on the command line: droce-switch's ports, droce-coll's
// ranks (rank r's port is port r), or neither (no per-peer options).
enum class FailurePeers { kNone, kPorts, kRanks };

// --drop-rule and --pfc-watchdog-ms; with peers, the stuck NIC (--stuck-port PORT or --stuck-rank
// RANK, into stuck_ports) and the slow receiver (--slow-receiver PORT:F or RANK:F) and its buffer.
void add_switch_failures(CLI::App& app, const std::string& group, engine::LabSwitchConfig& c, FailurePeers peers);

}  // namespace droce::apps::cli
