// DCQCN presets and validation.
#include "protocols/dcqcn/params.h"

#include <cmath>

namespace droce::dcqcn {

DcqcnParams DcqcnParams::paper(double line_rate_bps) {
  DcqcnParams p;
  p.line_rate_bps = line_rate_bps;
  p.min_rate_bps = line_rate_bps / 4000;  // 10 Mb/s at 40 Gb/s
  p.g = 1.0 / 256;
  p.initial_alpha = 1.0;
  p.alpha_update_period_ns = 55'000;
  p.rate_increase_period_ns = 55'000;
  p.byte_counter_bytes = 10'000'000;
  p.fast_recovery_steps = 5;
  p.ai_rate_bps = 40e6 * line_rate_bps / 40e9;
  p.hai_rate_bps = 5 * p.ai_rate_bps;
  p.min_time_between_cuts_ns = 50'000;  // = the CNP interval (see params.h)
  p.np_min_time_between_cnps_ns = 50'000;
  return p;
}

DcqcnParams DcqcnParams::mlx5(double line_rate_bps) {
  DcqcnParams p;
  p.line_rate_bps = line_rate_bps;
  p.min_rate_bps = 1e6;
  p.g = 5.0 / 1024;
  p.initial_alpha = 1.0;
  p.alpha_update_period_ns = 1'000;
  p.rate_increase_period_ns = 300'000;
  p.byte_counter_bytes = 32'767;
  p.fast_recovery_steps = 1;
  p.ai_rate_bps = 5e6;
  p.hai_rate_bps = 50e6;
  p.min_time_between_cuts_ns = 4'000;
  p.np_min_time_between_cnps_ns = 4'000;
  return p;
}

Status DcqcnParams::validate() const {
  auto bad = [](const char* name, const std::string& why) {
    return Status::error(StatusCode::kInvalidArgument, std::string(name) + ": " + why);
  };
  if (!std::isfinite(line_rate_bps) || line_rate_bps <= 0) return bad("line_rate_bps", "must be > 0");
  if (!std::isfinite(min_rate_bps) || min_rate_bps <= 0) return bad("min_rate_bps", "must be > 0");
  if (min_rate_bps > line_rate_bps) return bad("min_rate_bps", "must not exceed line_rate_bps");
  if (!(g > 0 && g <= 1)) return bad("g", "must be in (0, 1]");
  if (!(initial_alpha >= 0 && initial_alpha <= 1)) return bad("initial_alpha", "must be in [0, 1]");
  if (alpha_update_period_ns == 0) return bad("alpha_update_period_ns", "must be > 0");
  if (rate_increase_period_ns == 0) return bad("rate_increase_period_ns", "must be > 0");
  if (byte_counter_bytes == 0) return bad("byte_counter_bytes", "must be > 0");
  if (fast_recovery_steps == 0) return bad("fast_recovery_steps", "must be >= 1");
  if (!std::isfinite(ai_rate_bps) || ai_rate_bps <= 0) return bad("ai_rate_bps", "must be > 0");
  if (!std::isfinite(hai_rate_bps) || hai_rate_bps <= 0) return bad("hai_rate_bps", "must be > 0");
  if (min_time_between_cuts_ns == 0) return bad("min_time_between_cuts_ns", "must be > 0");
  if (np_min_time_between_cnps_ns == 0) return bad("np_min_time_between_cnps_ns", "must be > 0");
  if (cnp_dscp > 63) return bad("cnp_dscp", "must be 0..63");
  return {};
}

}  // namespace droce::dcqcn
