// Which long options before `--` are the app's: DPDK 22.11's EAL long options (lib/eal/common/
// eal_options.h, eal_common_options.c) against the app's CLI11 options.
#include "apps/common/cli/eal_side.h"

#include <algorithm>
#include <array>

namespace droce::apps::cli {

namespace {

// EAL's long options in DPDK 22.11 (`dpdk-testpmd --help` lists them), the removed aliases EAL
// still names in its errors included, so that none is ever reported as an app's.
constexpr std::array<std::string_view, 40> kEalLongOptions = {
    "--allow",
    "--base-virtaddr",
    "--block",
    "--create-uio-dev",
    "--file-prefix",
    "--force-max-simd-bitwidth",
    "--help",
    "--huge-dir",
    "--huge-unlink",
    "--huge-worker-stack",
    "--in-memory",
    "--iova-mode",
    "--lcores",
    "--legacy-mem",
    "--log-level",
    "--main-lcore",
    "--master-lcore",
    "--match-allocations",
    "--mbuf-pool-ops-name",
    "--no-hpet",
    "--no-huge",
    "--no-pci",
    "--no-shconf",
    "--no-telemetry",
    "--pci-blacklist",
    "--pci-whitelist",
    "--proc-type",
    "--single-file-segments",
    "--socket-limit",
    "--socket-mem",
    "--syslog",
    "--telemetry",
    "--trace",
    "--trace-bufsz",
    "--trace-dir",
    "--trace-mode",
    "--vdev",
    "--vfio-intr",
    "--vfio-vf-token",
    "--vmware-tsc-map",
};

}  // namespace

bool is_eal_long_option(std::string_view name) {
  return std::find(kEalLongOptions.begin(), kEalLongOptions.end(), name) != kEalLongOptions.end();
}

std::string app_option_among_eal(const CLI::App& app, const std::vector<std::string>& eal) {
  for (const std::string& arg : eal) {
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;  // a value, or one of EAL's letters
    const std::string name = arg.substr(0, arg.find('='));
    if (is_eal_long_option(name)) continue;
    if (app.get_option_no_throw(name) != nullptr) return name;
  }
  return {};
}

}  // namespace droce::apps::cli
