// perftest's result rows and how they are computed and printed (perftest_parameters.c
// print_report_bw, print_report_lat, print_report_lat_duration), from droce's timestamps.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace droce::engine {
class WorkerGroup;
}

namespace droce::perf {

struct BwRow {
  std::uint64_t size = 0, iters = 0;
  double peak = 0, avg = 0, msg_rate = 0;  // MB/sec or Gb/sec (as asked), Mpps
};

struct LatRow {
  std::uint64_t size = 0, iters = 0;
  bool duration = false;  // -D: only t_avg and tps
  double t_min = 0, t_max = 0, t_typical = 0, t_avg = 0, t_stdev = 0, p99 = 0, p999 = 0, tps = 0;  // usec
};

// Bandwidth from per-message post and completion times (TSC): the average over the run, and the
// peak as perftest finds it, the best (completion[j] - post[i]) / (j - i + 1) over windows that
// end at a completion-moderation boundary; empty `completed` = no peak (perftest's noPeak).
[[nodiscard]] BwRow bw_row(std::uint64_t size, std::uint64_t iters, std::uint64_t first_post,
                           std::uint64_t last_completion, const std::vector<std::uint64_t>& posted,
                           const std::vector<std::uint64_t>& completed, std::uint32_t cq_mod, double tsc_hz,
                           bool gbits);
// Latency from the times consecutive iterations started (ping-pong: half a round trip per
// iteration, rtt_factor 2; READ: 1): the two largest samples dropped, median, mean, stdev, 99th
// and 99.9th percentiles as perftest reports them.
[[nodiscard]] LatRow lat_row(std::uint64_t size, const std::vector<std::uint64_t>& posted, int rtt_factor,
                             double tsc_hz);
[[nodiscard]] LatRow lat_duration_row(std::uint64_t size, std::uint64_t iters, double seconds, int rtt_factor);

[[nodiscard]] std::string bw_header(bool gbits);
[[nodiscard]] std::string bw_line(const BwRow& r);
[[nodiscard]] std::string lat_header(bool duration);
[[nodiscard]] std::string lat_line(const LatRow& r);
[[nodiscard]] nlohmann::json to_json(const BwRow& r);
[[nodiscard]] nlohmann::json to_json(const LatRow& r);
// Adds droce's counters by their Linux names ("hw_counters"), the drop reasons, the version and
// the time to the --json report, summed over the group's endpoints; `injected_loss`: the frames
// the lab impairment dropped (drop reason injected_loss, counted where no endpoint saw them).
void add_counter_names(nlohmann::json& j, engine::WorkerGroup& group, std::uint64_t injected_loss = 0);

}  // namespace droce::perf
