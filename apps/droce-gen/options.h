// droce-gen options: one struct with defaults that --help prints, and a strict parser.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace droce::gen {

enum class Op { kSend, kWrite, kRead };

struct Options {
  std::string mode = "loopback";
  Op op = Op::kWrite;
  std::uint32_t size = 4096;
  std::uint32_t mtu = 1024;
  std::uint32_t qps = 1;
  std::uint32_t inflight = 16;     // outstanding messages per QP
  double duration_s = 2;
  std::uint64_t count = 0;         // total messages; 0 = run for --duration
  double warmup_s = 0;
  double loss = 0;                 // lab impairment: fraction of frames dropped by the relay
  std::uint64_t seed = 1;
  std::string json;
  std::string pcap;
  bool quiet = false;
};

[[nodiscard]] const char* op_name(Op op);
// Returns 0 to run, 1 after printing --help, -1 after printing an error.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o);

}  // namespace droce::gen
