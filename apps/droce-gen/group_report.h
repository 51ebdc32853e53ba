// droce-gen's figures of each --flow-group: its goodput per interval while the run goes, its
// share of the run at the end, and its rows of the text report and the JSON ("groups").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/droce-gen/interval_bandwidth.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/run.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

// Each group's goodput per --interval, from its QPs' completed bytes (JobFigures::qp_bytes): an
// interval counts for a group when the run counts it (whole, after the warm-up) and it lies
// within the group's start and stop, so a group's minimum is not the silence outside its window.
class GroupIntervals {
 public:
  void start(const Options& o, std::uint64_t run_start_tsc, double hz);
  // The interval [from, at) ended; `counted`: the run counts it.
  void interval(const Options& o, const Setup& st, std::uint64_t from, std::uint64_t at, bool counted);
  [[nodiscard]] const IntervalBandwidth& bw(std::size_t group) const { return bw_[group]; }

 private:
  [[nodiscard]] std::uint64_t bytes_of(const Options& o, const Setup& st, std::size_t group) const;
  std::vector<std::uint64_t> seen_;
  std::vector<IntervalBandwidth> bw_;
  std::uint64_t run_start_ = 0;
  double hz_ = 0;
};

// Each group's figures into out.groups, after the drain (the jobs' workload state is the main
// lcore's): its lane of every job, its responders' verification, its measured window within
// [measured_start, end_tsc], and its interval goodput.
void collect_groups(const Options& o, Setup& st, const GroupIntervals& intervals, std::uint64_t run_start_tsc,
                    std::uint64_t measured_start_tsc, std::uint64_t end_tsc, double hz, RunOutcome& out);

// One row per group (nothing without groups), with its QPs' retransmissions.
void print_groups(const Options& o, Setup& st, const RunOutcome& r);
// [{"name", "spec", "qps": [first, last], "op", "sizes", "dscp", "start_s", "stop_s", "messages", "bytes",
// "duration_s", "goodput_gbps", "msg_rate_mps", "interval_goodput_gbps", "latency_ns", "retransmitted_packets",
// "lost", "duplicated", "out_of_order", "corrupted", "errors"}].
[[nodiscard]] nlohmann::json groups_json(const Options& o, Setup& st, const RunOutcome& r);

}  // namespace droce::gen
