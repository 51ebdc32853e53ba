// --udp-sport: "derived" or BASE[,STRIDE], checked against the QPs of a connection.
#include "apps/common/udp_sport_plan.h"

namespace droce::apps {

Status UdpSportPlan::parse(std::string_view option, std::string_view text, UdpSportPlan& out) {
  UdpSportPlan p;
  if (text == "derived") {
    out = p;
    return {};
  }
  const std::size_t comma = text.find(',');
  if (Status s = parse_uint(option, text.substr(0, comma), 1, 65535, p.base); !s.ok()) return s;
  if (comma != std::string_view::npos)
    if (Status s = parse_uint(std::string(option) + " stride", text.substr(comma + 1), 0, 65535, p.stride); !s.ok())
      return s;
  out = p;
  return {};
}

Status UdpSportPlan::check(std::string_view option, std::uint32_t qps) const {
  if (derived() || qps == 0) return {};
  const std::uint64_t last = base + std::uint64_t{qps - 1} * stride;
  if (last > 65535)
    return Status::error(StatusCode::kInvalidArgument, std::string(option) + ": " + describe() + " gives " +
                                                           std::to_string(qps) + " QPs ports up to " +
                                                           std::to_string(last) + ", past 65535");
  return {};
}

std::string UdpSportPlan::describe() const {
  return derived() ? "derived" : std::to_string(base) + "," + std::to_string(stride);
}

}  // namespace droce::apps
