// LinkSpec: one leaf-spine link's own settings as a user writes them (--link), and how a list of
// them lands in a LeafSpineConfig. Grammar and meaning: docs/fabric-lab.md "Per-link settings".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/lab/lab_switch.h"

namespace droce::engine {

struct LeafSpineConfig;

// "leafL-spineS:KEY=VALUE[,KEY=VALUE...]", keys (each at most once):
//   dir=both|up|down   which direction the other keys set (up: leaf -> spine); default both
//   gbps=G             the egress rate, 0..1000 (0: unshaped)
//   buffer=BYTES       the egress buffer (K, M: binary multiples), at least 2048
//   delay-us=US        the link's propagation delay one way, 0..1e6
//   ecn=KMIN:KMAX:PMAX RED/ECN of the egress (KMIN, KMAX in bytes with K, M; PMAX in [0, 1])
//   pfc=on|off|XOFF:XON  PFC on the link (both ways only: dir=both); XOFF:XON turns it on with
//                        those ingress thresholds (bytes with K, M)
struct LinkSpec {
  std::uint32_t leaf = 0, spine = 0;
  bool up = true, down = true;  // the directions it sets
  std::optional<double> gbps;
  std::optional<std::uint64_t> buffer_bytes;
  SwitchPortSettings port;  // delay_us, RED/ECN and PFC (empty: the tier's)
  std::string text;         // as given, for messages and reports

  [[nodiscard]] std::string name() const { return "leaf" + std::to_string(leaf) + "-spine" + std::to_string(spine); }
  // Ok, or kInvalidArgument naming --link, the spec and what is wrong.
  [[nodiscard]] static Status parse(const std::string& spec, LinkSpec& out);
};

// Sets cfg's uplinks and downlinks from `specs` (every other link keeps cfg.uplink/downlink or its
// existing entry). kInvalidArgument naming --link when a spec names a link the fabric lacks or
// one direction of a link twice; cfg.validate() checks the values against the tiers afterwards.
[[nodiscard]] Status apply_link_specs(const std::vector<LinkSpec>& specs, LeafSpineConfig& cfg);

}  // namespace droce::engine
