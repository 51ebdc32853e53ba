// DCQCN parameters from command-line style name=value pairs, shared by the apps that take them.
#pragma once

#include <string>

#include "protocols/dcqcn/params.h"

namespace droce::dcqcn {

// The settable parameters, one line each, for --help (names without the caller's prefix).
[[nodiscard]] const char* param_options_help();

// Sets one parameter by name (e.g. "g", "ai-mbps", "rate-increase-us"); returns an empty string
// or one message naming the parameter and what was wrong. Range checks beyond "is a number" are
// DcqcnParams::validate()'s, run after every override is applied.
[[nodiscard]] std::string set_param(DcqcnParams& p, const std::string& name, const std::string& value);

// "paper" or "mlx5" at `line_rate_bps`; false for another name.
[[nodiscard]] bool preset_by_name(const std::string& name, double line_rate_bps, DcqcnParams& out);

}  // namespace droce::dcqcn
