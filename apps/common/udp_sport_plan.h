// UdpSportPlan: which UDP source port each of a connection's K QPs sends from (--udp-sport), the
// RoCEv2 entropy ECMP hashes (IBTA Annex A17.3.3): derived from the QP pair as Linux does, or
// set by the user as BASE + k x STRIDE so that flows collide or spread on purpose.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "apps/common/cli_number.h"

namespace droce::apps {

struct UdpSportPlan {
  std::uint16_t base = 0;    // 0: derived from the QP pair (wire::roce_udp_src_port)
  std::uint16_t stride = 1;  // 0: every QP of a connection on one port (one flow)

  [[nodiscard]] bool derived() const { return base == 0; }
  // QP k's port (k < the QPs the plan was checked for); 0 when derived.
  [[nodiscard]] std::uint16_t port(std::uint32_t k) const {
    return derived() ? 0 : static_cast<std::uint16_t>(base + k * stride);
  }
  // "derived" or "BASE[,STRIDE]" (BASE 1..65535, STRIDE 0..65535, default 1). Ok, or
  // kInvalidArgument naming `option`.
  [[nodiscard]] static Status parse(std::string_view option, std::string_view text, UdpSportPlan& out);
  // Ok when K QPs' ports stay within 65535; else kInvalidArgument naming `option`.
  [[nodiscard]] Status check(std::string_view option, std::uint32_t qps) const;
  // The text parse() reads back (reports, JSON).
  [[nodiscard]] std::string describe() const;
};

}  // namespace droce::apps
