// FabricTopology: the lab's --fabric value, shared by droce-coll and droce-switch: "star" (one
// switch) or "leafspine:L,S" (engine/lab/leaf_spine.h: L leaves, S spines, docs/fabric-lab.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "apps/common/cli_number.h"

namespace droce::apps {

struct FabricTopology {
  std::uint32_t leaves = 0, spines = 0;  // 0 x 0: the star

  [[nodiscard]] bool leafspine() const { return leaves != 0; }
  // "star" or "leafspine:L,S" (L and S 1..32). Ok, or kInvalidArgument naming --fabric.
  [[nodiscard]] static Status parse(std::string_view text, FabricTopology& out);
};

}  // namespace droce::apps
