// droce-gen's live feed (see feed.h).
#include "apps/droce-gen/feed.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <string>

#include "apps/common/counters_json.h"
#include "apps/common/output_file.h"
#include "apps/common/run_python.h"
#include "apps/droce-gen/job.h"

namespace droce::gen {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

double gbps(std::uint64_t bytes, double secs) { return secs > 0 ? static_cast<double>(bytes) * 8.0 / secs / 1e9 : 0.0; }
double per_s(std::uint64_t n, double secs) { return secs > 0 ? static_cast<double>(n) / secs : 0.0; }

}  // namespace

Feed::~Feed() {
  if (out_ != nullptr && own_) std::fclose(out_);
  if (plot_out_ != nullptr) std::fclose(plot_out_);
}

engine::Status Feed::open(const Options& o) {
  if (!o.plot.empty()) {
    plot_data_ = o.plot + ".jsonl";
    plot_out_ = std::fopen(plot_data_.c_str(), "w");
    if (plot_out_ == nullptr)
      return engine::Status::error(engine::StatusCode::kIo, "--plot: cannot write " + plot_data_);
    // A reader of the feed that goes away must not end the run (below); neither may this file.
    std::signal(SIGPIPE, SIG_IGN);
  }
  if (o.stats_json.empty()) return {};
  if (o.stats_json == "-") {
    // cli::parse() set the real stdout aside for the feed (descriptor 1 now goes to stderr).
    out_ = apps::claimed_stdout();
    if (out_ == nullptr)
      return engine::Status::error(engine::StatusCode::kBadState, "--stats-json -: stdout was not set aside");
    std::signal(SIGPIPE, SIG_IGN);
    return {};
  }
  out_ = std::fopen(o.stats_json.c_str(), "w");
  if (out_ == nullptr) return engine::Status::error(engine::StatusCode::kIo, "cannot write " + o.stats_json);
  own_ = true;
  // A reader that goes away makes writes fail (EPIPE), not the process die mid-run.
  std::signal(SIGPIPE, SIG_IGN);
  return {};
}

void Feed::start() {
  start_ = std::chrono::steady_clock::now();
  prev_ = Totals{};
}

double Feed::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

// Each QP's messages and bytes since the start (requesters' completions; a server: its
// responders' verified messages). Up to kFeedQpList QPs, one [messages, bytes] pair each in QP
// order; always a summary over the active QPs (the least and most loaded, the mean).
nlohmann::json Feed::per_qp(const Options& o, const Setup& st) const {
  nlohmann::json f;
  const std::uint32_t active = o.active();
  std::uint64_t min_m = UINT64_MAX, max_m = 0, sum_m = 0, sum_b = 0;
  std::uint32_t min_qp = 0, max_qp = 0;
  nlohmann::json list = nlohmann::json::array();
  for (std::uint32_t i = 0; i < o.qps; ++i) {
    const JobFigures& jf = st.jobs[job_of(i, o.workers)]->figures();
    const std::uint32_t k = slot_in_job(i, o.workers);
    const std::uint64_t m = k < jf.qp_entries ? jf.qp_messages[k].load(kRelaxed) : 0;
    const std::uint64_t b = k < jf.qp_entries ? jf.qp_bytes[k].load(kRelaxed) : 0;
    if (o.qps <= kFeedQpList) list.push_back({m, b});
    if (i >= active) continue;
    if (m < min_m) min_m = m, min_qp = i;
    if (m > max_m || i == 0) max_m = m, max_qp = i;
    sum_m += m;
    sum_b += b;
  }
  f["qp_summary"] = {{"active_qps", active},  {"messages_min", min_m}, {"min_qp", min_qp},
                     {"messages_max", max_m}, {"max_qp", max_qp},      {"messages_mean", per_s(sum_m, active)},
                     {"bytes_total", sum_b}};
  if (o.qps <= kFeedQpList) f["qps"] = list;
  return f;
}

void Feed::interval(const Options& o, const Setup& st, const FigureTotals& now, bool partial, double secs,
                    bool counted) {
  if (!on()) return;
  const double dt = secs;
  const double el = elapsed();
  const Totals& s = now;
  const Totals& p = prev_;
  const std::uint64_t im = s.all_messages - p.all_messages, ib = s.all_bytes - p.all_bytes;
  nlohmann::json line;
  line["seq"] = seq_++;
  line["final"] = false;
  // The run's end cuts the last interval short: its line comes too, marked, with its own length.
  line["partial"] = partial;
  // Whether the report's peak and minimum interval goodput cover this line (interval_bandwidth.h).
  line["counted"] = counted;
  line["elapsed_s"] = el;
  line["interval_s"] = dt;
  line["interval"] = {{"messages", im},
                      {"bytes", ib},
                      {"goodput_gbps", gbps(ib, dt)},
                      {"msg_rate_mps", per_s(im, dt) / 1e6},
                      {"retransmitted_packets", s.retx - p.retx},
                      {"naks_sent", s.naks_sent - p.naks_sent},
                      {"naks_received", s.naks_received - p.naks_received},
                      {"rnr_naks", s.rnr - p.rnr},
                      {"cnps_sent", s.cnps_sent - p.cnps_sent},
                      {"cnps_received", s.cnps_received - p.cnps_received},
                      {"ack_timeouts", s.ack_timeouts - p.ack_timeouts}};
  // Totals count from the end of --warmup, as the --json report does.
  const double measured = std::max(0.0, el - o.warmup_s);
  line["total"] = {{"messages", s.messages},
                   {"bytes", s.bytes},
                   {"goodput_gbps", gbps(s.bytes, measured)},
                   {"msg_rate_mps", per_s(s.messages, measured) / 1e6},
                   {"retransmitted_packets", s.retx},
                   {"naks_sent", s.naks_sent},
                   {"naks_received", s.naks_received},
                   {"rnr_naks", s.rnr},
                   {"cnps_sent", s.cnps_sent},
                   {"cnps_received", s.cnps_received},
                   {"ack_timeouts", s.ack_timeouts}};
  if (o.offered_msg_rate() > 0 && !st.server) {
    const double offered = per_s(s.scheduled - p.scheduled, dt);
    line["load"] = {{"configured_msg_rate", o.offered_msg_rate()},
                    {"offered_msg_rate", offered},
                    {"offered_gbps", offered * o.mean_size() * 8 / 1e9},
                    {"achieved_msg_rate", per_s(im, dt)},
                    {"achieved_gbps", gbps(ib, dt)},
                    {"scheduled", s.scheduled},
                    {"posted", s.posted},
                    {"late", s.late},
                    {"shed", s.shed}};
  }
  // Counters by their Linux names and the drop reasons, since the start (read while the workers
  // count: recent values).
  const engine::CounterSums sums = apps::counter_sums(st.endpoints());
  line["hw_counters"] = apps::hw_counters_json(sums);
  line["drop_reasons"] = apps::drop_reasons_json(sums, st.impaired().dropped);
  line["timestamp"] = apps::utc_timestamp();
  line.update(per_qp(o, st));
  if (st.jobs.size() > 1) {
    worker_msgs_.resize(st.jobs.size(), 0);
    worker_bytes_.resize(st.jobs.size(), 0);
    nlohmann::json ws = nlohmann::json::array();
    for (std::size_t w = 0; w < st.jobs.size(); ++w) {
      const JobFigures& f = st.jobs[w]->figures();
      const std::uint64_t m = f.all_messages.load(kRelaxed), b = f.all_bytes.load(kRelaxed);
      ws.push_back({{"index", w},
                    {"messages", m - worker_msgs_[w]},
                    {"bytes", b - worker_bytes_[w]},
                    {"goodput_gbps", gbps(b - worker_bytes_[w], dt)},
                    {"total_messages", m},
                    {"total_bytes", b},
                    {"retransmitted_packets", f.retransmitted.load(kRelaxed)}});
      worker_msgs_[w] = m;
      worker_bytes_[w] = b;
    }
    line["workers"] = ws;
  }
  prev_ = s;
  write(line);
}

void Feed::final_line(const Options& o, const Setup& st, const nlohmann::json& report) {
  if (!on()) return;
  nlohmann::json line;
  line["seq"] = seq_++;
  line["final"] = true;
  line["elapsed_s"] = elapsed();
  nlohmann::json total;
  for (const char* k : {"messages", "bytes", "duration_s", "goodput_gbps", "msg_rate_mps", "retransmitted_packets",
                        "naks_sent", "naks_received", "rnr_naks", "cnps_sent", "cnps_received", "ack_timeouts", "lost",
                        "duplicated", "out_of_order", "corrupted", "errors"})
    total[k] = report.at(k);
  line["total"] = total;
  line["interval_goodput_gbps"] = report.at("interval_goodput_gbps");
  if (o.offered_msg_rate() > 0 && !st.server) line["load"] = report.at("load");
  line["latency_ns"] = report.at("latency_ns");
  line["latency_cdf_ns"] = report.at("latency_cdf_ns");
  line["hw_counters"] = report.at("hw_counters");
  line["drop_reasons"] = report.at("drop_reasons");
  line["timestamp"] = report.at("timestamp");
  line["version"] = report.at("version");
  line["problem"] = report.at("problem");
  line.update(per_qp(o, st));
  if (st.jobs.size() > 1) line["workers"] = report.at("workers");
  write(line);
}

void Feed::write(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  if (plot_out_ != nullptr && std::fwrite(text.data(), 1, text.size(), plot_out_) != text.size()) {
    std::fprintf(stderr, "droce-gen: --plot: cannot write %s any more; there will be no picture\n", plot_data_.c_str());
    std::fclose(plot_out_);
    plot_out_ = nullptr;
    plot_data_.clear();
  }
  if (out_ == nullptr) return;
  // A reader sees each line as it is written. One that went away ends the feed, not the run.
  if (std::fwrite(text.data(), 1, text.size(), out_) != text.size() || std::fflush(out_) != 0) {
    std::fprintf(stderr, "droce-gen: --stats-json: cannot write the feed any more; the run goes on without it\n");
    std::fclose(out_);
    out_ = nullptr;
  }
}

engine::Status Feed::plot(const Options& o) {
  if (o.plot.empty()) return {};
  if (plot_out_ == nullptr)
    return engine::Status::error(engine::StatusCode::kError, "--plot: no data for the picture (" + o.plot + ")");
  const bool flushed = std::fclose(plot_out_) == 0;
  plot_out_ = nullptr;
  if (!flushed) return engine::Status::error(engine::StatusCode::kIo, "--plot: cannot write " + plot_data_);
  // The drawing is Python's (matplotlib, as droce-sim's): the script installed beside droce-gen,
  // else the source tree's; the failure's own cause is in the message.
  if (engine::Status s = apps::run_script("plot_gen.py", {plot_data_, o.plot}); !s.ok())
    return engine::Status::error(
        s.code(), "--plot: drawing " + o.plot + " failed: " + s.message() + " (the data is in " + plot_data_ + ")");
  return {};
}

}  // namespace droce::gen
