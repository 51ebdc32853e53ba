// The thresholds' verdict (--expect-gbps, --expect-p99-us): a verified run judged against what
// the user expects of it, so a script acts on the exit status (kExitBelowThreshold) alone.
#pragma once

#include <cstdint>
#include <string>

#include "apps/droce-gen/options.h"

namespace droce::gen {

struct Verdict {
  bool judged = false;  // a threshold was given
  bool pass = true;
  std::string reason;  // why it failed, naming the figure and its threshold ("" when it passed)
};

// One measurement (a run, or one size of a sweep) against the thresholds; `what` prefixes the
// reason (e.g. "size 65536: "). p99_ns counts only where latency is measured (not a server's).
[[nodiscard]] Verdict judge(const Options& o, double goodput_gbps, std::uint64_t p99_ns, const std::string& what = "");
// Both must pass; the reasons joined with "; ".
void combine(Verdict& into, const Verdict& v);
[[nodiscard]] const char* verdict_name(const Verdict& v);  // "none", "pass" or "fail"

}  // namespace droce::gen
