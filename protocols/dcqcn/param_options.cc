// DCQCN parameter overrides by name: every parameter of DcqcnParams, units in every name.
#include "protocols/dcqcn/param_options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace droce::dcqcn {

const char* param_options_help() {
  return "g G                    alpha gain, (0, 1]\n"
         "initial-alpha A        alpha after a reset, [0, 1]\n"
         "alpha-period-us U      alpha decays once per U without a CNP\n"
         "rate-increase-us U     timer period T of rate-increase events\n"
         "byte-counter-bytes B   bytes sent per byte-counter increase event\n"
         "fast-recovery-steps F  increase events of fast recovery before additive/hyper\n"
         "ai-mbps R              additive increase step\n"
         "hai-mbps R             hyper increase step\n"
         "min-rate-mbps R        floor of any rate cut\n"
         "cut-monitor-us U       CNPs within U of the last cut are ignored (0: every CNP cuts)\n"
         "cnp-interval-us U      notification point: at most one CNP per QP per U\n"
         "cnp-dscp D             DSCP of the CNPs we send, 0..63\n";
}

std::string set_param(DcqcnParams& p, const std::string& name, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || errno != 0 || *end != '\0' || !std::isfinite(v))
    return name + ": '" + value + "' is not a number";
  if (v < 0) return name + ": must not be negative";
  const auto ns = [&](double us) { return static_cast<std::uint64_t>(std::llround(us * 1e3)); };
  if (name == "g") p.g = v;
  else if (name == "initial-alpha") p.initial_alpha = v;
  else if (name == "alpha-period-us") p.alpha_update_period_ns = ns(v);
  else if (name == "rate-increase-us") p.rate_increase_period_ns = ns(v);
  else if (name == "byte-counter-bytes") p.byte_counter_bytes = static_cast<std::uint64_t>(v);
  else if (name == "fast-recovery-steps") p.fast_recovery_steps = static_cast<std::uint32_t>(std::min(v, 1e6));
  else if (name == "ai-mbps") p.ai_rate_bps = v * 1e6;
  else if (name == "hai-mbps") p.hai_rate_bps = v * 1e6;
  else if (name == "min-rate-mbps") p.min_rate_bps = v * 1e6;
  else if (name == "cut-monitor-us") p.min_time_between_cuts_ns = ns(v);
  else if (name == "cnp-interval-us") p.np_min_time_between_cnps_ns = ns(v);
  else if (name == "cnp-dscp") {
    if (v > 63 || v != std::floor(v)) return name + ": must be an integer 0..63";
    p.cnp_dscp = static_cast<std::uint8_t>(v);
  } else {
    return "'" + name + "' is not a DCQCN parameter";
  }
  return {};
}

bool preset_by_name(const std::string& name, double line_rate_bps, DcqcnParams& out) {
  if (name == "paper") out = DcqcnParams::paper(line_rate_bps);
  else if (name == "mlx5") out = DcqcnParams::mlx5(line_rate_bps);
  else return false;
  out.line_rate_bps = line_rate_bps;
  return true;
}

}  // namespace droce::dcqcn
