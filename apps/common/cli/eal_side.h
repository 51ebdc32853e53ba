// An app's own long option given before `--`, among the EAL options: named in one line before EAL
// starts, instead of DPDK's whole usage and exit 1 (`app [EAL options] -- [app options]`).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace droce::apps::cli {

// True when `name` ("--vdev", "--file-prefix") is one of DPDK 22.11 EAL's long options: those stay
// EAL's even where an app has an option of the same name (--help).
[[nodiscard]] bool is_eal_long_option(std::string_view name);

// The first argument before `--` that is one of `app`'s long options and not EAL's ("--op" in
// `droce-gen -l 0 --op send -- ...`), spelt as the app knows it; empty when there is none. EAL's
// one-letter options (-a -b -c -d -l -m -n -s -v) cannot be told from an app's letters and stay EAL's.
[[nodiscard]] std::string app_option_among_eal(const CLI::App& app, const std::vector<std::string>& eal);

}  // namespace droce::apps::cli
