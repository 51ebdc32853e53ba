// Pacer: per-QP next-send time from the DCQCN rate (rate enforcement is separate from the rate law).
#pragma once

#include <cstdint>

namespace droce::dcqcn {

// Token-free inter-packet spacing: after sending `bytes` at `rate_bps`, the next packet may
// leave bytes*8/rate later. A QP idle for a while does not bank credit beyond `burst` ticks, so a
// long pause never turns into a line-rate burst that defeats the rate cut. Time is in ticks of
// `ticks_per_second`: ns in the simulator (the default), TSC cycles in the engine, so the
// datapath never converts a clock reading.
class Pacer {
 public:
  explicit Pacer(std::uint64_t burst = 0, double ticks_per_second = 1e9)
      : burst_ticks_(burst), bits_to_ticks_(ticks_per_second) {}

  [[nodiscard]] bool may_send(std::uint64_t now_ticks) const { return now_ticks >= next_send_ticks_; }
  [[nodiscard]] std::uint64_t next_send_ticks() const { return next_send_ticks_; }

  void on_send(std::uint64_t bytes, double rate_bps, std::uint64_t now_ticks) {
    const std::uint64_t floor = now_ticks > burst_ticks_ ? now_ticks - burst_ticks_ : 0;
    const std::uint64_t base = next_send_ticks_ > floor ? next_send_ticks_ : floor;
    const double gap = rate_bps > 0 ? static_cast<double>(bytes) * 8 * bits_to_ticks_ / rate_bps : 0.0;
    gap_remainder_ += gap;
    const auto whole = static_cast<std::uint64_t>(gap_remainder_);
    gap_remainder_ -= static_cast<double>(whole);  // keep sub-tick parts so long-run rates are exact
    next_send_ticks_ = base + whole;
  }

 private:
  std::uint64_t burst_ticks_;  // in ticks
  double bits_to_ticks_;
  std::uint64_t next_send_ticks_ = 0;
  double gap_remainder_ = 0;
};

}  // namespace droce::dcqcn
