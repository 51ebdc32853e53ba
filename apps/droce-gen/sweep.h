// droce-gen's size sweep (issue 40, item 2): nccl-tests' --minbytes/--maxbytes/--stepfactor (and
// --stepbytes), each size run in turn on the same QPs, each with its own warm-up and its own
// --duration or --count, one row and one results[] entry per size (docs/droce-gen.md, "Sweeps").
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <vector>

namespace droce::gen {

// The most sizes one sweep runs (a 1-byte to 1 GiB sweep by factor 2 has 31).
inline constexpr std::size_t kMaxSweepSizes = 64;

// The sizes from `min` to `max` (both 1..kMaxMessageBytes, min <= max): each the previous times
// `factor`, or plus `step_bytes` when that is given (factor then 0); as nccl-tests, `max` itself
// only where a step lands on it. kInvalidArgument naming the option when they make no sweep or
// more than kMaxSweepSizes sizes.
[[nodiscard]] engine::Status sweep_sizes(std::uint32_t min, std::uint32_t max, std::uint32_t factor,
                                         std::uint32_t step_bytes, std::vector<std::uint32_t>& out);

}  // namespace droce::gen
