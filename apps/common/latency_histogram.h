// LatencyHistogram: HdrHistogram-style log-linear buckets (about 1 % relative error), exact min/max.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace droce::engine {

// Values (ns) land in one of 64 sub-buckets per power of two: constant-time record, fixed
// memory, percentiles within ~1.6 % of the true value; min and max are kept exactly.
class LatencyHistogram {
 public:
  void record(std::uint64_t v) {
    ++counts_[index(v)];
    ++total_;
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  // Adds another histogram's values (per-worker histograms into one report).
  void merge(const LatencyHistogram& o) {
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    total_ += o.total_;
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }
  [[nodiscard]] std::uint64_t count() const { return total_; }
  [[nodiscard]] std::uint64_t min() const { return total_ ? min_ : 0; }
  [[nodiscard]] std::uint64_t max() const { return max_; }
  // Value at quantile q in [0, 1] (upper edge of its bucket, capped at the exact max).
  [[nodiscard]] std::uint64_t percentile(double q) const {
    if (total_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total_ - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(upper(i), max_);
    }
    return max_;
  }
  // The distribution as (value ns, fraction of values <= it) steps, one per non-empty bucket, at
  // most max_points of them (neighbouring buckets merged evenly when there are more); the last
  // step is the exact max at 1.0. For plots and reports, not the datapath: it allocates.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, double>> cdf(std::size_t max_points = 200) const {
    std::vector<std::pair<std::uint64_t, double>> steps;
    if (total_ == 0 || max_points == 0) return steps;
    std::size_t used = 0;
    for (auto c : counts_) used += c != 0;
    const std::size_t stride = (used + max_points - 1) / max_points;
    std::uint64_t seen = 0;
    std::size_t in_stride = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i] == 0) continue;
      seen += counts_[i];
      if (++in_stride < stride && seen < total_) continue;
      in_stride = 0;
      steps.emplace_back(std::min(upper(i), max_), static_cast<double>(seen) / static_cast<double>(total_));
    }
    return steps;
  }

 private:
  static constexpr int kSubBits = 6;  // 64 sub-buckets
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) << kSubBits;
  static std::size_t index(std::uint64_t v) {
    if (v < (1u << kSubBits)) return static_cast<std::size_t>(v);
    const int msb = 63 - __builtin_clzll(v);
    const int shift = msb - kSubBits;
    return static_cast<std::size_t>(((shift + 1) << kSubBits) + ((v >> shift) & ((1u << kSubBits) - 1)));
  }
  static std::uint64_t upper(std::size_t i) {
    if (i < (1u << kSubBits)) return i;
    const std::size_t shift = (i >> kSubBits) - 1;
    const std::uint64_t sub = (i & ((1u << kSubBits) - 1)) | (1u << kSubBits);
    return ((sub + 1) << shift) - 1;
  }
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t total_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
};

}  // namespace droce::engine
