// DCQCN parameter overrides by name: every parameter of DcqcnParams, units in every name.
#include "protocols/dcqcn/param_options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace droce::dcqcn {

namespace {

enum class Unit : std::uint8_t { kReal, kCount, kMicroseconds, kMbps };

// One settable parameter: its option name, the field it sets, what it may hold.
struct Param {
  const char* name;
  const char* field;  // as DcqcnParams::validate() names it
  Unit unit;
  double max;  // bounds every field far below where its integer type would overflow
};

constexpr Param kParams[] = {
    {"g", "g", Unit::kReal, 1},
    {"initial-alpha", "initial_alpha", Unit::kReal, 1},
    {"alpha-period-us", "alpha_update_period_ns", Unit::kMicroseconds, 1e9},
    {"rate-increase-us", "rate_increase_period_ns", Unit::kMicroseconds, 1e9},
    {"byte-counter-bytes", "byte_counter_bytes", Unit::kCount, 1e12},
    {"fast-recovery-steps", "fast_recovery_steps", Unit::kCount, 1e6},
    {"ai-mbps", "ai_rate_bps", Unit::kMbps, 1e7},
    {"hai-mbps", "hai_rate_bps", Unit::kMbps, 1e7},
    {"min-rate-mbps", "min_rate_bps", Unit::kMbps, 1e7},
    {"cut-monitor-us", "min_time_between_cuts_ns", Unit::kMicroseconds, 1e9},
    {"cnp-interval-us", "np_min_time_between_cnps_ns", Unit::kMicroseconds, 1e9},
    {"cnp-dscp", "cnp_dscp", Unit::kCount, 63},
};

const Param* find_param(const std::string& name) {
  for (const auto& p : kParams)
    if (name == p.name) return &p;
  return nullptr;
}

std::string range_text(const Param& p) {
  char b[64];
  if (p.unit == Unit::kCount)
    std::snprintf(b, sizeof b, "an integer in 0..%.0f", p.max);
  else
    std::snprintf(b, sizeof b, "a number in [0, %g]", p.max);
  return b;
}

// The whole text as a finite number in [0, max] (NaN fails every comparison, so test for inside).
bool parse_value(const std::string& text, const Param& p, double& out) {
  if (text.empty() || !((text[0] >= '0' && text[0] <= '9') || text[0] == '.')) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !(v >= 0 && v <= p.max)) return false;
  if (p.unit == Unit::kCount && v != std::floor(v)) return false;
  out = v;
  return true;
}

void apply(DcqcnParams& p, const std::string& name, double v) {
  const auto ns = [](double us) { return static_cast<std::uint64_t>(std::llround(us * 1e3)); };
  if (name == "g")
    p.g = v;
  else if (name == "initial-alpha")
    p.initial_alpha = v;
  else if (name == "alpha-period-us")
    p.alpha_update_period_ns = ns(v);
  else if (name == "rate-increase-us")
    p.rate_increase_period_ns = ns(v);
  else if (name == "byte-counter-bytes")
    p.byte_counter_bytes = static_cast<std::uint64_t>(v);
  else if (name == "fast-recovery-steps")
    p.fast_recovery_steps = static_cast<std::uint32_t>(v);
  else if (name == "ai-mbps")
    p.ai_rate_bps = v * 1e6;
  else if (name == "hai-mbps")
    p.hai_rate_bps = v * 1e6;
  else if (name == "min-rate-mbps")
    p.min_rate_bps = v * 1e6;
  else if (name == "cut-monitor-us")
    p.min_time_between_cuts_ns = ns(v);
  else if (name == "cnp-interval-us")
    p.np_min_time_between_cnps_ns = ns(v);
  else if (name == "cnp-dscp")
    p.cnp_dscp = static_cast<std::uint8_t>(v);
}

bool is_word_char(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }

}  // namespace

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
         "cut-monitor-us U       CNPs within U of the last cut are ignored, > 0\n"
         "cnp-interval-us U      notification point: at most one CNP per QP per U\n"
         "cnp-dscp D             DSCP of the CNPs we send, 0..63\n";
}

Status set_param(DcqcnParams& p, const std::string& name, const std::string& value) {
  const Param* param = find_param(name);
  if (param == nullptr) return Status::fail(StatusCode::kInvalidArgument, "is not a DCQCN parameter (see --help)");
  double v = 0;
  if (!parse_value(value, *param, v)) {
    std::string shown;
    for (std::size_t i = 0; i < value.size() && i < 40; ++i) shown += value[i] < 0x20 ? '?' : value[i];
    return Status::error(StatusCode::kInvalidArgument,
                         "'" + shown + (value.size() > 40 ? "...'" : "'") + " is not " + range_text(*param));
  }
  apply(p, name, v);
  return {};
}

Status validate_options(const DcqcnParams& p, const std::function<std::string(std::string_view)>& option_of,
                        std::string_view line_rate_option) {
  const Status st = p.validate();
  if (st.ok()) return st;
  const std::string e = st.message();
  // Replace every field name in the message, whole words only, by the option that sets it.
  std::string out;
  for (std::size_t i = 0; i < e.size();) {
    std::size_t j = i;
    while (j < e.size() && is_word_char(e[j])) ++j;
    if (j == i) {
      out += e[i++];
      continue;
    }
    const std::string word = e.substr(i, j - i);
    std::string option = word;
    if (word == "line_rate_bps") option = line_rate_option;
    for (const auto& param : kParams)
      if (word == param.field) option = option_of(param.name);
    out += option;
    i = j;
  }
  return Status::error(st.code(), out);
}

bool preset_by_name(const std::string& name, double line_rate_bps, DcqcnParams& out) {
  if (name == "paper")
    out = DcqcnParams::paper(line_rate_bps);
  else if (name == "mlx5")
    out = DcqcnParams::mlx5(line_rate_bps);
  else
    return false;
  out.line_rate_bps = line_rate_bps;
  return true;
}

}  // namespace droce::dcqcn
