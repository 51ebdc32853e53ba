// --fabric's value: strict numbers through parse_uint, one message naming the option.
#include "apps/common/fabric_topology.h"

namespace droce::apps {

Status FabricTopology::parse(std::string_view text, FabricTopology& out) {
  const std::string v(text);
  if (v == "star") {
    out = FabricTopology{};
    return {};
  }
  const std::string pre = "leafspine:";
  const std::size_t comma = v.find(',');
  if (v.rfind(pre, 0) != 0 || comma == std::string::npos)
    return Status::error(engine::StatusCode::kInvalidArgument,
                         "--fabric: '" + v + "' is neither star nor leafspine:L,S");
  FabricTopology t;
  if (Status s = parse_uint("--fabric leaves", v.substr(pre.size(), comma - pre.size()), 1, 32, t.leaves); !s.ok())
    return s;
  if (Status s = parse_uint("--fabric spines", v.substr(comma + 1), 1, 32, t.spines); !s.ok()) return s;
  out = t;
  return {};
}

}  // namespace droce::apps
