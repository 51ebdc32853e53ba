// droce-fwd options: the ports, the run and its output, with the defaults --help prints.
#pragma once

#include <string>
#include <vector>

namespace droce::fwd {

struct Options {
  int rx_port = 0;
  int tx_port = -1;        // -1: same as rx port
  double duration_s = 10;  // 0: until SIGINT
  unsigned tx_first = 0;   // frames injected before forwarding (for loop topologies)
  unsigned pkt_size = 64;
  double stats_period_s = 1;
  unsigned mbufs = 16383;
  std::string json;
};

// 0: run; 1: --help or --version was printed; -1: an error was printed (one line naming the option).
// `eal`: the arguments before `--`, where the app's own long options are refused by name.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o,
                                const std::vector<std::string>& eal = {});

}  // namespace droce::fwd
