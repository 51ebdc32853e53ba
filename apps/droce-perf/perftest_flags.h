// perftest's flags that droce-perf does not implement, each with its fate: ignored with one
// warning line where ignoring it changes neither what is measured nor what the peer sees (a
// perftest command line then runs as it is), refused where ignoring it would mislead (it changes
// the test, the exchange with the peer, or what the report means). The flags droce-perf does
// implement are parsed in options.cc; this table holds the rest of perftest's long_options
// (perftest_parameters.c parser) and its getopt letters. Each is declared on droce-perf's CLI11
// app, hidden from --help, so that a perftest command line parses as perftest's getopt reads it
// (a flag's value is not taken for the server name).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apps/droce-perf/typed_names.h"

namespace droce::perf {

enum class FlagFate { kIgnored, kRefused };

struct PerftestFlag {
  std::string_view long_name;  // without the dashes; empty: a letter only
  char letter;                 // 0: a long name only
  bool has_arg;
  FlagFate fate;
  std::string_view why;  // the warning's or the error's reason
};

// Declares every entry on `app`: a refused one, given, is the error "NAME: perftest's, not
// implemented by droce-perf: WHY", naming it as typed.
void add_perftest_flags(CLI::App& app, const TypedNames& typed);

// "NAME ignored: WHY" for each ignored entry given on the command line, in its order, then for
// each one --config gave.
[[nodiscard]] std::vector<std::string> perftest_flag_warnings(const CLI::App& app, const TypedNames& typed);

}  // namespace droce::perf
