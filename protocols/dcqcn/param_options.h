// DCQCN parameters from command-line style name=value pairs, shared by the apps that take them.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "protocols/common/status.h"
#include "protocols/dcqcn/params.h"

namespace droce::dcqcn {

// The settable parameters, one line each, for --help (names without the caller's prefix).
[[nodiscard]] const char* param_options_help();

// Sets one parameter by name (e.g. "g", "ai-mbps", "rate-increase-us"): ok, or kInvalidArgument and
// the reason `value` was refused (the caller prefixes the option as the user typed it). The value
// must be the whole text, finite, within the parameter's range, and whole for counts: the fields
// are integers that a cast of NaN, a fraction or 1e30 would corrupt. Checks between parameters
// are validate_options()'s, run after every override is applied.
[[nodiscard]] Status set_param(DcqcnParams& p, const std::string& name, const std::string& value);

// DcqcnParams::validate() in the user's words: every field named by the option that sets it.
// `option_of` turns a set_param name into the option as typed ("ai-mbps" -> "--dcqcn-ai-mbps");
// `line_rate_option` is the app's option that sets line_rate_bps. Ok, or kInvalidArgument.
[[nodiscard]] Status validate_options(const DcqcnParams& p,
                                      const std::function<std::string(std::string_view)>& option_of,
                                      std::string_view line_rate_option);

// "paper" or "mlx5" at `line_rate_bps`; false for another name.
[[nodiscard]] bool preset_by_name(const std::string& name, double line_rate_bps, DcqcnParams& out);

}  // namespace droce::dcqcn
