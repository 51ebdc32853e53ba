// Catch2 runner for engine tests: initialises EAL once per test binary (DPDK cannot do it twice).
#include <cstdio>
#include <string>
#include <vector>

#include "engine/core/eal.h"
#include "engine/core/stop_signal.h"
#include "tests/common/catch_session.h"

int main(int argc, char** argv) {
  // Needs neither hugepages nor root: --no-huge with --no-shconf, no PCI scan, no telemetry socket.
  // Always two lcores, so that the tests that launch a worker lcore run everywhere: on two CPUs
  // when the machine has them, else both lcores on its one CPU (EAL's --lcores 0@C,1@C; the
  // threads then take turns, which the tests' timed waits allow for).
  const auto cpus = droce::engine::Eal::allowed_cpus();
  const std::string first = std::to_string(cpus.empty() ? 0 : cpus[0]);
  const std::vector<std::string> lcores = cpus.size() >= 2
                                              ? std::vector<std::string>{"-l", first + "," + std::to_string(cpus[1])}
                                              : std::vector<std::string>{"--lcores", "0@" + first + ",1@" + first};
  std::vector<std::string> args = lcores;
  for (const char* a : {"--no-huge", "-m", "512", "--no-pci", "--no-telemetry", "--no-shconf"}) args.emplace_back(a);
  droce::engine::Status err;
  auto eal = droce::engine::Eal::init("droce-test", args, err, /*quiet=*/true);
  if (!eal) {
    std::fprintf(stderr, "droce-test: %s\n", err.message().c_str());
    return 2;
  }
  droce::engine::install_stop_signals();
  return droce::test::run_catch_session(argc, argv);
}
