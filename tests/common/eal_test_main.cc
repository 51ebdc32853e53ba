// Catch2 runner for engine tests: initialises EAL once per test binary (DPDK cannot do it twice).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "engine/eal.h"
#include "engine/stop_signal.h"

int main(int argc, char** argv) {
  // Needs neither hugepages nor root: --no-huge with --no-shconf, no PCI scan, no telemetry socket.
  droce::engine::Status err;
  auto eal = droce::engine::Eal::init(
      "droce-test", {"-l", "0", "--no-huge", "-m", "512", "--no-pci", "--no-telemetry", "--no-shconf"}, err,
      /*quiet=*/true);
  if (!eal) {
    std::fprintf(stderr, "droce-test: %s\n", err.message().c_str());
    return 2;
  }
  droce::engine::install_stop_signals();
  return Catch::Session().run(argc, argv);
}
