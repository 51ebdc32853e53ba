// droce-coll under mpirun: one rank per process on its own DPDK port, bootstrapped and reported
// through MPI (mpi_run.cc; mpi_unavailable.cc in a build without Open MPI, which refuses).
#pragma once

#include <droce/engine/core/eal.h>

#include <cstdint>
#include <cstdlib>

#include "apps/droce-coll/options.h"

namespace droce::coll {

// Started by mpirun: Open MPI sets OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK.
[[nodiscard]] inline bool under_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}
// The job's size as mpirun says (0 when it does not): the option checks run at this many ranks.
[[nodiscard]] inline std::uint32_t mpirun_world_size() {
  const char* v = std::getenv("OMPI_COMM_WORLD_SIZE");
  return v == nullptr ? 0 : static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
}

// This process's rank, start to end; the exit status (rank 0's is the job's).
[[nodiscard]] int run_mpi_rank(Options& o, engine::SplitArgs& split);

}  // namespace droce::coll
