// The parameters of droce's telemetry commands, and the answer a bad one gets.
#pragma once

#include <cstdint>
#include <span>
#include <string>

struct rte_tel_data;

namespace droce::engine {

// Parses params as exactly out.size() comma-separated unsigned 32-bit numbers, each decimal or
// 0x-prefixed hex (reports print QPNs as perftest does, 0x0011). On failure, reason names the
// field at fault by its entry in names (same size as out).
[[nodiscard]] bool parse_telemetry_ids(const char* params, std::span<std::uint32_t> out,
                                       std::span<const char* const> names, std::string& reason);

// Answers a command with a reason instead of DPDK's bare null (what a callback's -1 gives): the
// reply is the string "error: REASON", so a user of dpdk-telemetry.py reads what was wrong.
int telemetry_refuse(rte_tel_data* d, const std::string& reason);

}  // namespace droce::engine
