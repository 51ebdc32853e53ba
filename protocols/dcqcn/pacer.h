// Pacer: per-QP next-send time from the DCQCN rate (rate enforcement is separate from the rate law).
#pragma once

#include <cstdint>

namespace droce::dcqcn {

// Token-free inter-packet spacing: after sending `bytes` at `rate_bps`, the next packet may
// leave bytes*8/rate later. A QP idle for a while does not bank credit beyond `burst_ns`, so a
// long pause never turns into a line-rate burst that defeats the rate cut.
class Pacer {
 public:
  explicit Pacer(std::uint64_t burst_ns = 0) : burst_ns_(burst_ns) {}

  [[nodiscard]] bool may_send(std::uint64_t now_ns) const { return now_ns >= next_send_ns_; }
  [[nodiscard]] std::uint64_t next_send_ns() const { return next_send_ns_; }

  void on_send(std::uint64_t bytes, double rate_bps, std::uint64_t now_ns) {
    const std::uint64_t floor = now_ns > burst_ns_ ? now_ns - burst_ns_ : 0;
    const std::uint64_t base = next_send_ns_ > floor ? next_send_ns_ : floor;
    const double gap = rate_bps > 0 ? static_cast<double>(bytes) * 8e9 / rate_bps : 0.0;
    gap_remainder_ += gap;
    const auto whole = static_cast<std::uint64_t>(gap_remainder_);
    gap_remainder_ -= static_cast<double>(whole);  // keep sub-ns parts so long-run rates are exact
    next_send_ns_ = base + whole;
  }

 private:
  std::uint64_t burst_ns_;
  std::uint64_t next_send_ns_ = 0;
  double gap_remainder_ = 0;
};

}  // namespace droce::dcqcn
