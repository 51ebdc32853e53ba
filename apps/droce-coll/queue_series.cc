// The lab's queue series: reserved up front, filled on the switches' thread, read after the run.
#include "apps/droce-coll/queue_series.h"

#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/leaf_spine.h>

#include <algorithm>
#include <limits>

namespace droce::coll {

namespace {

// What the series may hold: 32 MiB of samples, and never more than 200,000 of them.
constexpr std::size_t kMaxBytes = 32u << 20;
constexpr std::size_t kMaxSamples = 200'000;

std::uint32_t saturate(std::uint64_t v) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

void QueueSeries::init(std::uint32_t ranks, std::uint32_t leaves, std::uint32_t spines, double sample_ms,
                       std::uint64_t tsc_hz) {
  ranks_ = ranks;
  per_leaf_ = leaves != 0 ? ranks / leaves : 0;
  // A one-leaf fabric has no spine switches (LeafSpine leaves them out), so no links to sample.
  leaves_ = leaves >= 2 ? leaves : 0;
  spines_ = leaves >= 2 ? spines : 0;
  sample_ms_ = sample_ms;
  columns_ = ranks + 2 * std::size_t{leaves_} * spines_;
  tsc_per_ms_ = static_cast<double>(tsc_hz) / 1e3;
  period_tsc_ = sample_ms > 0 ? std::max<std::uint64_t>(1, static_cast<std::uint64_t>(sample_ms * tsc_per_ms_)) : 0;
  if (period_tsc_ == 0) return;
  capacity_ = std::min(kMaxSamples, kMaxBytes / (sizeof(std::uint32_t) * columns_ + sizeof(double)));
  time_ms_.reserve(capacity_);
  bytes_.reserve(capacity_ * columns_);
}

void QueueSeries::start(std::uint64_t now_tsc) {
  if (started_) return;
  started_ = true;
  origin_tsc_ = now_tsc;
  next_tsc_ = now_tsc;
}

void QueueSeries::sample(std::uint64_t now_tsc, const engine::LabSwitch* star, const engine::LeafSpine* fabric) {
  if (period_tsc_ == 0 || !started_ || now_tsc < next_tsc_) return;
  // A late poll takes one sample, at its own time: the series never invents the missed ones.
  next_tsc_ += period_tsc_ * ((now_tsc - next_tsc_) / period_tsc_ + 1);
  if (time_ms_.size() == capacity_) {
    ++dropped_;
    return;
  }
  time_ms_.push_back(static_cast<double>(now_tsc - origin_tsc_) / tsc_per_ms_);
  for (std::uint32_t r = 0; r < ranks_; ++r)
    bytes_.push_back(
        saturate(fabric != nullptr ? fabric->endpoint_port(r).queue_bytes : star->counters(r).queue_bytes));
  for (std::uint32_t l = 0; l < leaves_; ++l)
    for (std::uint32_t s = 0; s < spines_; ++s) {
      bytes_.push_back(saturate(fabric->leaf(l).counters(per_leaf_ + s).queue_bytes));
      bytes_.push_back(saturate(fabric->spine(s).counters(l).queue_bytes));
    }
}

std::vector<std::uint32_t> QueueSeries::column(std::size_t c) const {
  std::vector<std::uint32_t> v;
  v.reserve(time_ms_.size());
  for (std::size_t i = 0; i < time_ms_.size(); ++i) v.push_back(bytes_[i * columns_ + c]);
  return v;
}

}  // namespace droce::coll
