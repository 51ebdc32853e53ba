// Eal: the one owner of DPDK's Environment Abstraction Layer in a process (init once, cleanup at exit).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace droce::engine {

// Splits `app [EAL options] -- [app options]`. Without a `--`, everything is an app option and
// the EAL options are empty (the app then picks friendly defaults).
struct SplitArgs {
  std::vector<std::string> eal;
  std::vector<std::string> app;
  bool had_separator = false;
};
[[nodiscard]] SplitArgs split_args(int argc, char** argv);

struct EalReport {
  bool hugepages = false;   // false: running with --no-huge
  std::string file_prefix;  // empty with --no-shconf
  std::vector<std::string> final_args;
};

// Returns the EAL argument list droce will pass for the user's `eal` arguments, or an error:
// adds --no-huge (+ --no-shconf, -m) when no hugepages are usable, a per-process --file-prefix,
// --force-max-simd-bitwidth=512 (DPDK's run-time SIMD ceiling: a PMD's AVX-512 burst paths where
// the NIC has them, and rte_net_crc in bench_wire's CRC comparison; the ICRC no longer uses DPDK's
// CRC but ISA-L's or zlib's, protocols/wire/crc32.h, which pick their kernels themselves), a
// quiet log level; checks that
// every requested lcore exists; gives a net_memif --vdev without a bsize buffers that hold a
// whole frame (bsize=8192: DPDK 22.11's net_memif corrupts frames split over buffers, see
// eal.cc). Pure function of its inputs and the machine; used by Eal::init.
[[nodiscard]] Status build_eal_args(const std::vector<std::string>& eal, std::vector<std::string>& out,
                                    EalReport& report, bool quiet = false);

class Eal {
 public:
  // Initialises EAL (at most once per process: DPDK cannot re-initialise). Prints at most one
  // warning line (no hugepages). On failure returns nullptr and sets `err`.
  [[nodiscard]] static std::unique_ptr<Eal> init(const std::string& app_name, const std::vector<std::string>& eal_args,
                                                 Status& err, bool quiet = false);
  ~Eal();
  Eal(const Eal&) = delete;
  Eal& operator=(const Eal&) = delete;

  [[nodiscard]] const EalReport& report() const { return report_; }
  // The report of the EAL this process initialised (empty before Eal::init succeeds), for code
  // that has no Eal at hand (the apps' telemetry set-up). Written once, before any reader.
  [[nodiscard]] static const EalReport& current();

  // Hugepages usable now: a mounted hugetlbfs and at least kMinFreeHugepageBytes free (a droce
  // process with its default pools maps about 220 MiB: a loopback droce-gen, 108 pages of 2 MiB).
  static constexpr std::uint64_t kMinFreeHugepageBytes = std::uint64_t{256} << 20;
  [[nodiscard]] static bool hugepages_available();
  [[nodiscard]] static bool hugetlbfs_mounted();
  // Free hugepage memory of every size (2 MiB and 1 GiB pages), in bytes.
  [[nodiscard]] static std::uint64_t free_hugepage_bytes();
  // CPUs this process may run on (sched_getaffinity), used to validate lcore lists.
  [[nodiscard]] static std::vector<unsigned> allowed_cpus();

 private:
  Eal() = default;
  EalReport report_;
  bool initialised_ = false;
};

}  // namespace droce::engine
