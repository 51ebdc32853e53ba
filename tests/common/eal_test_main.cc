// Catch2 runner for engine tests: initialises EAL once per test binary (DPDK cannot do it twice).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "engine/core/eal.h"
#include "engine/core/stop_signal.h"

int main(int argc, char** argv) {
  // Needs neither hugepages nor root: --no-huge with --no-shconf, no PCI scan, no telemetry socket.
  // Two lcores when the machine has them, so a worker lcore can be launched; tests that need
  // it say so and skip on a single-CPU machine.
  const auto cpus = droce::engine::Eal::allowed_cpus();
  const std::string lcores = cpus.size() >= 2 ? std::to_string(cpus[0]) + "," + std::to_string(cpus[1])
                                              : std::to_string(cpus.empty() ? 0 : cpus[0]);
  droce::engine::Status err;
  auto eal = droce::engine::Eal::init(
      "droce-test", {"-l", lcores, "--no-huge", "-m", "512", "--no-pci", "--no-telemetry", "--no-shconf"}, err,
      /*quiet=*/true);
  if (!eal) {
    std::fprintf(stderr, "droce-test: %s\n", err.message().c_str());
    return 2;
  }
  droce::engine::install_stop_signals();
  return Catch::Session().run(argc, argv);
}
