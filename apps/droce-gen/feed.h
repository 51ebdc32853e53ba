// droce-gen's live feed (--stats-json): one JSON object per line and --interval, from the figures
// the jobs publish, then a final line with the end-of-run report's figures. Written and flushed
// on the main lcore, where the console line is printed: the other workers never wait for it.
#pragma once

#include <droce/engine/core/status.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/droce-gen/options.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

// Runs of more QPs than this carry only the per-QP summary, not one entry per QP.
inline constexpr std::uint32_t kFeedQpList = 64;

class Feed {
 public:
  Feed() = default;
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;
  ~Feed();

  // Opens --stats-json (nothing when it is not given). "-": the stdout cli::parse() set aside for
  // the feed (apps::claim_stdout: descriptor 1 already points at stderr, so that the console
  // line, the text report and the EAL's lines never mix into it).
  // With --plot, every line also goes to the picture's data file, FILE.png.jsonl beside it.
  [[nodiscard]] engine::Status open(const Options& o);
  [[nodiscard]] bool on() const { return out_ != nullptr || plot_out_ != nullptr; }
  // --plot, after the final line: closes the data file and draws it (scripts/plot_gen.py).
  [[nodiscard]] engine::Status plot(const Options& o);
  // The run starts now: elapsed times count from here.
  void start();
  // One interval line: what the jobs published since the previous line, and the totals. `partial`:
  // the last one, which the run's end cut short (the final line follows it). `now` and `secs`: the
  // jobs' figures summed and the interval's length as the run read them for the console and --csv,
  // so that every output shows the same interval; `counted`: it is one of the full intervals after
  // the warm-up that the peak and minimum bandwidth cover.
  void interval(const Options& o, const Setup& st, const FigureTotals& now, bool partial, double secs, bool counted);
  // The final line: `report` is the end-of-run report's JSON (the --json document's keys).
  void final_line(const Options& o, const Setup& st, const nlohmann::json& report);

 private:
  using Totals = FigureTotals;
  [[nodiscard]] double elapsed() const;
  [[nodiscard]] nlohmann::json per_qp(const Options& o, const Setup& st) const;
  void write(const nlohmann::json& line);

  std::FILE* out_ = nullptr;
  bool own_ = false;
  std::FILE* plot_out_ = nullptr;  // --plot's copy of the feed
  std::string plot_data_;
  std::uint64_t seq_ = 0;
  std::chrono::steady_clock::time_point start_{};
  Totals prev_;
  std::vector<std::uint64_t> worker_msgs_, worker_bytes_;
};

}  // namespace droce::gen
