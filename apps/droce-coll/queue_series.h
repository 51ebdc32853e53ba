// QueueSeries: every egress queue of droce-coll's lab fabric over time — each rank's port (the
// switch's or its leaf's queue towards the rank) and, on a leaf-spine, both directions of every
// leaf-spine link — sampled on the thread that polls the switches every sample_ms of the timed
// run. Storage is reserved before the run (nothing allocates while it polls); a run longer than
// the reservation keeps its first samples and counts the rest as dropped.
#pragma once

#include <cstdint>
#include <vector>

namespace droce::engine {
class LabSwitch;
class LeafSpine;
}  // namespace droce::engine

namespace droce::coll {

class QueueSeries {
 public:
  // ranks' ports, and leaves x spines links (0 x 0: a star); off when sample_ms is 0.
  void init(std::uint32_t ranks, std::uint32_t leaves, std::uint32_t spines, double sample_ms, std::uint64_t tsc_hz);
  // The series' origin (the first timed iteration's start); samples before it are not taken.
  void start(std::uint64_t now_tsc);
  // Records one sample when due: a star's switch, or a leaf-spine's switches.
  void sample(std::uint64_t now_tsc, const engine::LabSwitch* star, const engine::LeafSpine* fabric);

  [[nodiscard]] bool on() const { return period_tsc_ != 0; }
  [[nodiscard]] double sample_ms() const { return sample_ms_; }
  [[nodiscard]] std::size_t samples() const { return time_ms_.size(); }
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }
  [[nodiscard]] const std::vector<double>& time_ms() const { return time_ms_; }
  // Column c of every sample: ranks first (rank r: column r), then per link leaf-major its up
  // (leaf to spine) and down (spine to leaf) queues.
  [[nodiscard]] std::vector<std::uint32_t> column(std::size_t c) const;
  [[nodiscard]] std::size_t rank_column(std::uint32_t r) const { return r; }
  [[nodiscard]] std::size_t link_column(std::uint32_t leaf, std::uint32_t spine, bool up) const {
    return ranks_ + 2 * (std::size_t{leaf} * spines_ + spine) + (up ? 0 : 1);
  }

 private:
  std::uint32_t ranks_ = 0, per_leaf_ = 0, leaves_ = 0, spines_ = 0;  // leaves_, spines_: the sampled links'
  std::size_t columns_ = 0, capacity_ = 0;
  double sample_ms_ = 0, tsc_per_ms_ = 1;
  std::uint64_t period_tsc_ = 0, origin_tsc_ = 0, next_tsc_ = 0;
  bool started_ = false;
  std::uint64_t dropped_ = 0;
  std::vector<double> time_ms_;
  std::vector<std::uint32_t> bytes_;  // samples x columns, queue bytes (saturated at 2^32 - 1)
};

}  // namespace droce::coll
