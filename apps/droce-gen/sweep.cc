// droce-gen's sweep sizes (see sweep.h).
#include "apps/droce-gen/sweep.h"

#include <string>
#include <utility>

namespace droce::gen {

using engine::Status;
using engine::StatusCode;

Status sweep_sizes(std::uint32_t min, std::uint32_t max, std::uint32_t factor, std::uint32_t step_bytes,
                   std::vector<std::uint32_t>& out) {
  if (min == 0 || max == 0)
    return Status::error(StatusCode::kInvalidArgument, "a sweep needs both --minbytes and --maxbytes");
  if (min > max)
    return Status::error(StatusCode::kInvalidArgument,
                         "--minbytes " + std::to_string(min) + " is more than --maxbytes " + std::to_string(max));
  if ((factor == 0) == (step_bytes == 0))
    return Status::error(StatusCode::kInvalidArgument, "give one of --stepfactor and --stepbytes");
  std::vector<std::uint32_t> sizes;
  // 64-bit steps: max * factor may pass 2^32.
  for (std::uint64_t size = min; size <= max; size = factor != 0 ? size * factor : size + step_bytes) {
    if (sizes.size() == kMaxSweepSizes)
      return Status::error(StatusCode::kInvalidArgument, "the sweep --minbytes " + std::to_string(min) +
                                                             " to --maxbytes " + std::to_string(max) +
                                                             " has more than " + std::to_string(kMaxSweepSizes) +
                                                             " sizes: raise --stepfactor or --stepbytes");
    sizes.push_back(static_cast<std::uint32_t>(size));
  }
  out = std::move(sizes);
  return {};
}

}  // namespace droce::gen
