// Catch2 runner for the workers tests: EAL with three lcores on any machine (main + two workers),
// each free to run on every allowed CPU, so a two-CPU machine runs the threaded case too.
#include <cstdio>
#include <string>

#include "engine/core/eal.h"
#include "engine/core/stop_signal.h"
#include "tests/common/catch_session.h"

int main(int argc, char** argv) {
  const auto cpus = droce::engine::Eal::allowed_cpus();
  std::string set;
  for (unsigned c : cpus) set += (set.empty() ? "" : ",") + std::to_string(c);
  if (set.empty()) set = "0";
  // Lcores 0-2 on the whole CPU set (the kernel spreads them; a busy machine slows, never blocks, them).
  const std::string lcores = "0@(" + set + "),1@(" + set + "),2@(" + set + ")";
  droce::engine::Status err;
  auto eal = droce::engine::Eal::init(
      "droce-workers-test", {"--lcores", lcores, "--no-huge", "-m", "512", "--no-pci", "--no-telemetry", "--no-shconf"},
      err, /*quiet=*/true);
  if (!eal) {
    std::fprintf(stderr, "droce-workers-test: %s\n", err.message().c_str());
    return 2;
  }
  droce::engine::install_stop_signals();
  return droce::test::run_catch_session(argc, argv);
}
