// droce-gen's --flow-group: one run carrying several workloads side by side (a bulk group and a
// latency-sensitive group), each on its own QPs with its own op or mix, sizes, offered load,
// DSCP and window, each reported on its own.
//
// A spec is KEY=VALUE items separated by ';' (quote it in a shell):
//   name=rpc;qps=2;op=send;size=64:90,4096:10;rate-gbps=0.2;dscp=46;start=0.5;stop=2.5
// ';' and '=' appear in no value, so a --size list, weighted sizes and a --mix (all ',' and ':')
// keep their own syntax inside a value, and a spec parses one way only.
#pragma once

#include <droce/engine/core/status.h>

#include <functional>
#include <string>

#include "apps/droce-gen/options.h"

namespace droce::gen {

// At most this many groups per run (each is a row of the report and a lane of every job).
inline constexpr std::size_t kMaxFlowGroups = 16;

// One spec into `g`: its keys (each at most once, every value checked as its option would be)
// into g.keys and g.workload (over Options' defaults), name, start and stop into g.
[[nodiscard]] engine::Status parse_flow_group(const std::string& spec, FlowGroup& g);

// After every option is parsed: the groups against the run (loopback only; none of the run-wide
// options a group sets given beside them: `given(name)` says whether one was), each group
// checked whole, its QPs placed after the previous group's, and its workload made the run's
// options with its keys applied. o.qps becomes the groups' sum and o.inflight the largest.
[[nodiscard]] engine::Status finish_flow_groups(Options& o, const std::function<bool(const std::string&)>& given);

// "name=..;qps=..": a group's keys as it runs (the defaults it took included).
[[nodiscard]] std::string flow_group_text(const FlowGroup& g);

}  // namespace droce::gen
