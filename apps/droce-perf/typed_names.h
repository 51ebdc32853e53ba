// The spelling each option was given as, so that a message names it as typed ("-s: ...", or
// "--size: ..."), as droce-perf's users read perftest's flags; and the two mistakes CLI11 would
// take quietly or name by another spelling: a value on a flag ("--report-both=yes") and a last
// option without its value ("-s").
#pragma once

#include <droce/engine/core/status.h>

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

namespace droce::perf {

class TypedNames {
 public:
  // Walks `args` as CLI11 will (before a bare "--"; a value option's next argument is its value):
  // ok, or kInvalidArgument and the one-line message for the first of the two mistakes above.
  [[nodiscard]] engine::Status scan(const CLI::App& app, const std::vector<std::string>& args);
  // How the option that `name` names (any of its names) was typed last; `name` when it was not
  // typed (not given, or given in --config).
  [[nodiscard]] std::string operator()(const std::string& name) const;
  // How its `i`-th occurrence on the command line was typed (`name` past the last).
  [[nodiscard]] std::string nth(const std::string& name, std::size_t i) const;

 private:
  const CLI::App* app_ = nullptr;
  std::map<const CLI::Option*, std::vector<std::string>> typed_;  // each occurrence, in order
};

}  // namespace droce::perf
