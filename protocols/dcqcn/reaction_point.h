// DCQCN reaction point: the sender's per-QP rate (Rc), target (Rt) and α (Zhu et al. §3.1, Alg. 1).
#pragma once

#include <cstdint>

#include "protocols/dcqcn/params.h"

namespace droce::dcqcn {

struct ReactionPointState {
  double rate_bps;         // Rc: the rate the pacer enforces
  double target_rate_bps;  // Rt
  double alpha;
  std::uint32_t timer_stage;  // rate-increase events from the timer since the last cut
  std::uint32_t byte_stage;   // ... from the byte counter
  std::uint64_t rp_cnp_handled;
  std::uint64_t rp_cnp_ignored;
  std::uint64_t rate_cuts;
  std::uint64_t rate_increases;
};

// One concrete class per QP, no virtuals, no clock reads: every input carries `now_ns`.
// Timers are deadlines checked by advance(), so the owner (engine loop or simulator) calls it
// whenever convenient; elapsed periods are applied in time order, and a long idle gap costs
// bounded work (α decay in closed form; increases stop once Rc and Rt reach line rate).
class DcqcnReactionPoint {
 public:
  DcqcnReactionPoint() = default;
  DcqcnReactionPoint(const DcqcnParams& p, std::uint64_t now_ns) { reset(p, now_ns); }
  void reset(const DcqcnParams& p, std::uint64_t now_ns);

  // A CNP for this QP arrived (§3.1: "cut rate").
  void on_cnp(std::uint64_t now_ns);
  // The QP transmitted `bytes`; drives the byte-counter increase stage.
  void on_bytes_sent(std::uint64_t bytes, std::uint64_t now_ns);
  // Applies every α-update and rate-increase timer that expired up to now_ns.
  void advance(std::uint64_t now_ns);

  [[nodiscard]] double rate_bps() const { return s_.rate_bps; }
  [[nodiscard]] const ReactionPointState& state() const { return s_; }
  [[nodiscard]] const DcqcnParams& params() const { return p_; }
  // Earliest time advance() has work to do (the owner may sleep until then).
  [[nodiscard]] std::uint64_t next_event_ns() const {
    return next_alpha_ns_ < next_increase_ns_ ? next_alpha_ns_ : next_increase_ns_;
  }

 private:
  void increase();  // one rate-increase event (fast recovery, additive or hyper)

  DcqcnParams p_;
  ReactionPointState s_{};
  std::uint64_t bytes_since_event_ = 0;
  std::uint64_t next_alpha_ns_ = 0;
  std::uint64_t next_increase_ns_ = 0;
  std::uint64_t last_cut_ns_ = 0;
  bool cut_once_ = false;
};

}  // namespace droce::dcqcn
