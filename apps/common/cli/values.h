// Option adders: each value is parsed strictly (apps/common/cli_number.h) when given, straight
// into its field; a bad one throws the one message naming the option that parse() prints.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/common/cli_number.h"

namespace droce::apps::cli {

// `parse` turns the text into the field: empty on success, else the message naming the option.
using ValueParser = std::function<std::string(const std::string& text)>;

// An option with one value, shown in --help as "NAME TYPE  help", in `group`. Given again, each
// value is parsed in order (so the last one wins and a bad earlier one is still refused).
CLI::Option* add_value(CLI::App& app, const std::string& group, const std::string& name, const std::string& type,
                       const std::string& help, ValueParser parse);

// The same for an option meant to be given again (--route): `parse` runs on each value, in order.
CLI::Option* add_repeatable(CLI::App& app, const std::string& group, const std::string& name, const std::string& type,
                            const std::string& help, ValueParser parse);

template <typename T>
CLI::Option* add_uint(CLI::App& app, const std::string& group, const std::string& name, const std::string& type,
                      T& field, std::uint64_t lo, std::uint64_t hi, const std::string& help,
                      Suffixes suffixes = Suffixes::kNone) {
  return add_value(app, group, name, type, help, [&field, name, lo, hi, suffixes](const std::string& v) {
    return parse_uint(name, v, lo, hi, field, suffixes).message();
  });
}

CLI::Option* add_real(CLI::App& app, const std::string& group, const std::string& name, const std::string& type,
                      double& field, double lo, double hi, const std::string& help,
                      Suffixes suffixes = Suffixes::kNone);

// One of `choices` (shown as a|b|c); `set` gets the index of the one given.
CLI::Option* add_choice(CLI::App& app, const std::string& group, const std::string& name,
                        const std::vector<std::string>& choices, const std::string& help,
                        std::function<void(std::size_t)> set);
// The same into a string field that holds the choice's name.
CLI::Option* add_choice(CLI::App& app, const std::string& group, const std::string& name,
                        const std::vector<std::string>& choices, std::string& field, const std::string& help);

// The type name of an output that takes "-": cli::parse() has such an option claim stdout.
inline constexpr const char* kDashOutput = "FILE|-";
// A file written at the end, checked now (check_output_path); `dash` also takes "-" (stdout).
CLI::Option* add_output(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                        const std::string& help, bool dash = false);
// A non-empty host name.
CLI::Option* add_host(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                      const std::string& help);
// A flag without a value.
CLI::Option* add_flag(CLI::App& app, const std::string& group, const std::string& name, bool& field,
                      const std::string& help);

// Numbers as the help shows defaults: %g, and 0x%x.
[[nodiscard]] std::string num(double v);
[[nodiscard]] std::string hex(std::uint64_t v);

}  // namespace droce::apps::cli
