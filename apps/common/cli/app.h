// The apps' command line on CLI11: one setup (help layout, --config, --version, the one-line error
// rule) and one parse call, shared by every app and bench tool.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace droce::apps::cli {

// The help's own sections. Sizes take binary suffixes, rates and counts decimal ones (the note below
// says so in every --help).
inline constexpr const char* kSuffixNote =
    "Sizes (bytes) take K, M or G = 2^10, 2^20, 2^30 (KiB, MiB, GiB); rates and counts take K, M or G\n"
    "= 10^3, 10^6, 10^9. Every option is --name VALUE or --name=VALUE; --config FILE reads the same\n"
    "names without the dashes, one \"name = value\" a line (INI/TOML), and the command line wins.";

// A CLI::App for `name` (e.g. "droce-gen"): --help and -h print `usage`, the option groups and the
// suffix note; --version prints version_line(name); --config FILE reads options; the same option
// given twice keeps the last value, as the hand-written parsers did.
[[nodiscard]] std::unique_ptr<CLI::App> make_app(const std::string& name, const std::string& usage);

// 0: parse and run; 1: --help or --version was printed (exit 0); -1: one line "NAME: message" naming
// the option was printed on stderr (exit 2). `args` are the app's own, after EAL's "--"; `eal` are
// those before it, where one of the app's long options is refused first ("--op is droce-gen's
// option: put it after --"), since EAL would answer it with its whole usage and exit 1.
[[nodiscard]] int parse(CLI::App& app, const std::vector<std::string>& args, const std::vector<std::string>& eal = {});

// The one-line message for a CLI11 error (control bytes shown as '?'), without the app's name.
[[nodiscard]] std::string error_text(const CLI::App& app, const CLI::Error& e);

// Prints "NAME: message" on stderr and returns -1: for checks between options, after parse().
int fail(const CLI::App& app, const std::string& message);

// True when the user gave `name` (on the command line or in --config).
[[nodiscard]] bool given(const CLI::App& app, const std::string& name);

}  // namespace droce::apps::cli
