// The clock an endpoint's QPs run their timers on (EndpointTransport::max_poll_gap_ns), and when
// after a stall of this process those timers may run again. A QP timer (the ACK timeout, the
// tail-loss probe) measures the network's silence (IBTA §9.7.6.1.3), not ours: while the process
// was descheduled the peer's answers piled up unread in the RX ring, and a timer run before they
// are read fires on a silence that never was (a needless probe, which backs the PTO off; a
// needless go-back-N round).
#pragma once

#include <cstdint>

namespace droce {

class QpClock {
 public:
  // A gap between two polls longer than this is a stall of the process, not a poll's own work
  // (a busy poll loop comes round in microseconds; a descheduled one in milliseconds).
  static constexpr std::uint64_t kStallNs = 200'000;
  // After a stall the QP timers wait for at most this many polls while every poll's RX burst comes
  // back full (the ring still holds answers): bounded, so that a peer that floods the port cannot
  // hold the timers off for ever. 64 bursts of 32 are twice the default RX ring (1024 descriptors).
  static constexpr std::uint32_t kMaxHeldPolls = 64;

  // `max_gap_ns`: the most one gap between polls advances the QPs' clock; 0: the poll's time
  // unchanged and no stall detection (EndpointTransport::max_poll_gap_ns).
  explicit QpClock(std::uint64_t max_gap_ns) : max_gap_ns_(max_gap_ns) {}

  // The QPs' time at a poll at `now_ns`: it follows the poll's, except that a gap longer than
  // max_gap_ns counts as max_gap_ns (this poll reads one burst of what piled up before the timers
  // run). A gap over kStallNs holds the QP timers until the RX ring is read (note_rx_burst).
  std::uint64_t advance(std::uint64_t now_ns) {
    if (!started_ || max_gap_ns_ == 0) {
      started_ = true;
      qp_now_ns_ = now_ns;
    } else if (now_ns > last_poll_ns_) {
      const std::uint64_t gap = now_ns - last_poll_ns_;
      qp_now_ns_ += gap < max_gap_ns_ ? gap : max_gap_ns_;
      // Never two polls held in a row for stalls alone: where every gap is a stall (an app that
      // polls slowly, a sanitizer build beside CPU hogs) the timers still run every other poll.
      if (gap > kStallNs && timers_ran_last_) {
        held_polls_ = kMaxHeldPolls;
        stall_poll_ = true;
        ++stalls_;
      }
    }
    last_poll_ns_ = now_ns;
    return qp_now_ns_;
  }

  // This poll read `n` frames of an RX burst of at most `burst`, before its timers. Returns whether
  // the QP timers may run in it. After a stall they skip the poll that ends it: a peer polled by
  // this same thread (loopback) was stalled too and answers what it finds queued only in its own
  // poll, after ours. Then they wait while the bursts come back full (more answers queued behind
  // them); a burst short of full means the ring was read to its end, and the timers run in that
  // poll, after the answers it read. At most kMaxHeldPolls polls held.
  [[nodiscard]] bool timers_may_run(std::uint16_t n, std::uint16_t burst) {
    timers_ran_last_ = true;
    if (held_polls_ == 0) return true;
    --held_polls_;
    if (!stall_poll_ && n < burst) held_polls_ = 0;
    stall_poll_ = false;
    if (held_polls_ == 0) return true;
    ++held_timer_polls_;
    timers_ran_last_ = false;
    return false;
  }

  [[nodiscard]] std::uint64_t now_ns() const { return qp_now_ns_; }
  [[nodiscard]] std::uint64_t stalls() const { return stalls_; }  // gaps over kStallNs that held the timers
  [[nodiscard]] std::uint64_t held_timer_polls() const { return held_timer_polls_; }  // polls that held them

 private:
  std::uint64_t max_gap_ns_;
  std::uint64_t qp_now_ns_ = 0;
  std::uint64_t last_poll_ns_ = 0;
  std::uint64_t stalls_ = 0;
  std::uint64_t held_timer_polls_ = 0;
  std::uint32_t held_polls_ = 0;
  bool started_ = false;
  bool stall_poll_ = false;      // the next timers_may_run is the poll that ended the stall
  bool timers_ran_last_ = true;  // the last timers_may_run let the timers run
};

}  // namespace droce
