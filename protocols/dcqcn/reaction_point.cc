// Reaction point rules; the comments quote the step of the DCQCN paper's Algorithm 1.
#include "protocols/dcqcn/reaction_point.h"

#include <algorithm>
#include <cmath>

namespace droce::dcqcn {

void DcqcnReactionPoint::reset(const DcqcnParams& p, std::uint64_t now_ns) {
  p_ = p;
  s_ = ReactionPointState{};
  s_.rate_bps = p.line_rate_bps;  // a new flow starts at line rate (no slow start in DCQCN)
  s_.target_rate_bps = p.line_rate_bps;
  s_.alpha = p.initial_alpha;
  bytes_since_event_ = 0;
  next_alpha_ns_ = now_ns + p.alpha_update_period_ns;
  next_increase_ns_ = now_ns + p.rate_increase_period_ns;
  last_cut_ns_ = 0;
  cut_once_ = false;
}

void DcqcnReactionPoint::on_cnp(std::uint64_t now_ns) {
  advance(now_ns);
  if (cut_once_ && now_ns - last_cut_ns_ < p_.min_time_between_cuts_ns) {
    ++s_.rp_cnp_ignored;
    return;
  }
  ++s_.rp_cnp_handled;
  ++s_.rate_cuts;
  // Rt <- Rc; Rc <- Rc (1 - α/2); α <- (1 - g) α + g
  s_.target_rate_bps = s_.rate_bps;
  s_.rate_bps = std::max(p_.min_rate_bps, s_.rate_bps * (1 - s_.alpha / 2));
  s_.alpha = (1 - p_.g) * s_.alpha + p_.g;
  // Both increase stages and the byte counter restart; timers restart from the cut.
  s_.timer_stage = 0;
  s_.byte_stage = 0;
  bytes_since_event_ = 0;
  next_alpha_ns_ = now_ns + p_.alpha_update_period_ns;
  next_increase_ns_ = now_ns + p_.rate_increase_period_ns;
  last_cut_ns_ = now_ns;
  cut_once_ = true;
}

void DcqcnReactionPoint::on_bytes_sent(std::uint64_t bytes, std::uint64_t now_ns) {
  advance(now_ns);
  bytes_since_event_ += bytes;
  // Bounded: once at line rate, extra byte events change nothing but the stage count.
  int guard = 0;
  while (bytes_since_event_ >= p_.byte_counter_bytes && guard++ < 1024) {
    bytes_since_event_ -= p_.byte_counter_bytes;
    ++s_.byte_stage;
    increase();
  }
  if (bytes_since_event_ >= p_.byte_counter_bytes) bytes_since_event_ %= p_.byte_counter_bytes;
}

void DcqcnReactionPoint::advance(std::uint64_t now_ns) {
  // α decays once per period without a CNP: α <- (1 - g) α. k periods at once in closed form.
  if (now_ns >= next_alpha_ns_) {
    const std::uint64_t k = (now_ns - next_alpha_ns_) / p_.alpha_update_period_ns + 1;
    s_.alpha *= std::pow(1 - p_.g, static_cast<double>(k));
    next_alpha_ns_ += k * p_.alpha_update_period_ns;
  }
  // Rate-increase timer events, each with its own stage increment.
  while (now_ns >= next_increase_ns_) {
    if (s_.rate_bps >= p_.line_rate_bps && s_.target_rate_bps >= p_.line_rate_bps) {
      // Nothing left to recover: skip the remaining periods in one step.
      const std::uint64_t k = (now_ns - next_increase_ns_) / p_.rate_increase_period_ns + 1;
      s_.timer_stage += static_cast<std::uint32_t>(std::min<std::uint64_t>(k, 1u << 20));
      next_increase_ns_ += k * p_.rate_increase_period_ns;
      break;
    }
    ++s_.timer_stage;
    next_increase_ns_ += p_.rate_increase_period_ns;
    increase();
  }
}

void DcqcnReactionPoint::increase() {
  ++s_.rate_increases;
  const std::uint32_t f = p_.fast_recovery_steps;
  const std::uint32_t hi = std::max(s_.timer_stage, s_.byte_stage);
  const std::uint32_t lo = std::min(s_.timer_stage, s_.byte_stage);
  if (hi < f) {
    // Fast recovery: Rc <- (Rt + Rc) / 2, Rt unchanged.
  } else if (lo >= f) {
    // Hyper increase: Rt <- Rt + i R_HAI, i = events past F on the slower counter.
    s_.target_rate_bps += static_cast<double>(lo - f + 1) * p_.hai_rate_bps;
  } else {
    // Additive increase: Rt <- Rt + R_AI.
    s_.target_rate_bps += p_.ai_rate_bps;
  }
  s_.target_rate_bps = std::min(s_.target_rate_bps, p_.line_rate_bps);
  s_.rate_bps = std::min(p_.line_rate_bps, (s_.target_rate_bps + s_.rate_bps) / 2);
}

}  // namespace droce::dcqcn
