// perftest-shaped results.
#include "apps/droce-perf/report.h"

#include <droce/engine/workers/worker_group.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "apps/common/counters_json.h"

namespace droce::perf {

void add_counter_names(nlohmann::json& j, engine::WorkerGroup& group, std::uint64_t injected_loss) {
  std::vector<const engine::RcEndpoint*> eps;
  for (std::uint16_t w = 0; w < group.size(); ++w) eps.push_back(&group.worker(w).endpoint());
  const engine::CounterSums sums = apps::counter_sums(eps);
  j["hw_counters"] = apps::hw_counters_json(sums);
  j["drop_reasons"] = apps::drop_reasons_json(sums, injected_loss);
  apps::stamp_report(j);
}

BwRow bw_row(std::uint64_t size, std::uint64_t iters, std::uint64_t first_post, std::uint64_t last_completion,
             const std::vector<std::uint64_t>& posted, const std::vector<std::uint64_t>& completed,
             std::uint32_t cq_mod, double tsc_hz, bool gbits) {
  BwRow r;
  r.size = size;
  r.iters = iters;
  // perftest: MB = 2^20 bytes; Gb = 125,000,000 bytes.
  const double unit = gbits ? 125e6 : 1048576.0;
  const double cycles = static_cast<double>(last_completion - first_post);
  if (cycles > 0 && iters > 0) {
    r.avg = static_cast<double>(size) * static_cast<double>(iters) * tsc_hz / (cycles * unit);
    r.msg_rate = static_cast<double>(iters) * tsc_hz / (cycles * 1e6);
  }
  const std::size_t n = std::min(posted.size(), completed.size());
  if (n > 0 && cq_mod > 0) {
    double best = cycles;
    for (std::size_t i = 0; i < n; ++i) {
      // First window end at or after i on a moderation boundary, then every cq_mod; and the last.
      for (std::size_t j = (i / cq_mod + 1) * cq_mod - 1; j < n; j += cq_mod)
        best = std::min(best, static_cast<double>(completed[j] - posted[i]) / static_cast<double>(j - i + 1));
      if (n % cq_mod != 0)
        best = std::min(best, static_cast<double>(completed[n - 1] - posted[i]) / static_cast<double>(n - i));
    }
    if (best > 0) r.peak = static_cast<double>(size) * tsc_hz / (best * unit);
  }
  return r;
}

LatRow lat_row(std::uint64_t size, const std::vector<std::uint64_t>& posted, int rtt_factor, double tsc_hz) {
  LatRow r;
  r.size = size;
  r.iters = posted.size();
  if (posted.size() < 5) return r;  // perftest's minimum: 4 samples, 2 dropped
  std::vector<double> us;
  us.reserve(posted.size() - 1);
  const double per = tsc_hz / 1e6 * rtt_factor;
  for (std::size_t i = 0; i + 1 < posted.size(); ++i)
    us.push_back(static_cast<double>(posted[i + 1] - posted[i]) / per);
  std::sort(us.begin(), us.end());
  // perftest keeps all but the two largest samples (LAT_MEASURE_TAIL) for the statistics; its
  // t_max is the first of the dropped ones.
  const std::size_t m = us.size() - 2;
  r.t_min = us.front();
  r.t_max = us[m];
  r.t_typical = (m - 1) % 2 != 0 ? (us[m / 2] + us[m / 2 - 1]) / 2 : us[m / 2];
  double sum = 0;
  for (std::size_t i = 0; i < m; ++i) sum += us[i];
  r.t_avg = sum / static_cast<double>(m);
  double var = 0;
  for (std::size_t i = 0; i < m; ++i) var += (us[i] - r.t_avg) * (us[i] - r.t_avg);
  r.t_stdev = std::sqrt(var / static_cast<double>(m));
  r.p99 = us[std::min(us.size() - 1, static_cast<std::size_t>(std::ceil(static_cast<double>(m) * 0.99)))];
  r.p999 = us[std::min(us.size() - 1, static_cast<std::size_t>(std::ceil(static_cast<double>(m) * 0.999)))];
  return r;
}

LatRow lat_duration_row(std::uint64_t size, std::uint64_t iters, double seconds, int rtt_factor) {
  LatRow r;
  r.size = size;
  r.iters = iters;
  r.duration = true;
  if (iters > 0 && seconds > 0) {
    r.t_avg = seconds * 1e6 / rtt_factor / static_cast<double>(iters);
    r.tps = static_cast<double>(iters) / seconds;
  }
  return r;
}

std::string bw_header(bool gbits) {
  return gbits ? " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
               : " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
}

std::string bw_line(const BwRow& r) {
  char b[160];
  std::snprintf(b, sizeof(b), " %-7llu    %-10llu       %-7.2f            %-7.2f\t\t   %-7.6f",
                static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.iters), r.peak, r.avg,
                r.msg_rate);
  return b;
}

std::string lat_header(bool duration) {
  return duration
             ? " #bytes        #iterations       t_avg[usec]    tps average"
             : " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
               "99% percentile[usec]   99.9% percentile[usec] ";
}

std::string lat_line(const LatRow& r) {
  char b[200];
  if (r.duration)
    std::snprintf(b, sizeof(b), " %-7llu       %-10llu        %-7.2f        %-7.2f",
                  static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.iters), r.t_avg, r.tps);
  else
    std::snprintf(b, sizeof(b),
                  " %-7llu %-10llu %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f",
                  static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.iters), r.t_min, r.t_max,
                  r.t_typical, r.t_avg, r.t_stdev, r.p99, r.p999);
  return b;
}

nlohmann::json to_json(const BwRow& r) {
  return {{"bytes", r.size},
          {"iterations", r.iters},
          {"bw_peak", r.peak},
          {"bw_average", r.avg},
          {"msg_rate_mpps", r.msg_rate}};
}

nlohmann::json to_json(const LatRow& r) {
  if (r.duration) return {{"bytes", r.size}, {"iterations", r.iters}, {"t_avg_us", r.t_avg}, {"tps_average", r.tps}};
  return {{"bytes", r.size},
          {"iterations", r.iters},
          {"t_min_us", r.t_min},
          {"t_max_us", r.t_max},
          {"t_typical_us", r.t_typical},
          {"t_avg_us", r.t_avg},
          {"t_stdev_us", r.t_stdev},
          {"p99_us", r.p99},
          {"p99_9_us", r.p999}};
}

}  // namespace droce::perf
