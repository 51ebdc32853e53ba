// perftest's flags that droce-perf does not implement, each with its fate: ignored with one
// warning line where ignoring it changes neither what is measured nor what the peer sees (a
// perftest command line then runs as it is), refused where ignoring it would mislead (it changes
// the test, the exchange with the peer, or what the report means). The flags droce-perf does
// implement are parsed in options.cc; this table holds the rest of perftest's long_options
// (perftest_parameters.c parser) and its getopt letters.
#pragma once

#include <string_view>

namespace droce::perf {

enum class FlagFate { kIgnored, kRefused };

struct PerftestFlag {
  std::string_view long_name;  // without the dashes; empty: a letter only
  char letter;                 // 0: a long name only
  bool has_arg;
  FlagFate fate;
  std::string_view why;        // the warning's or the error's reason
};

// The entry for an argument as typed ("-e", "--events"; a "--name=value" is looked up by its
// name); nullptr when the argument is none of perftest's flags that droce-perf leaves out.
[[nodiscard]] const PerftestFlag* find_perftest_flag(std::string_view arg);

}  // namespace droce::perf
