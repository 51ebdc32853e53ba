// droce-coll built without Open MPI (libopenmpi-dev absent at meson setup): under mpirun it refuses.
#include <cstdio>

#include "apps/droce-coll/mpi_mode.h"

namespace droce::coll {

int run_mpi_rank(Options&, engine::SplitArgs&) {
  std::fprintf(stderr,
               "droce-coll: started by mpirun, but this droce-coll was built without MPI: install libopenmpi-dev "
               "(scripts/setup.sh) and run meson setup again\n");
  return 2;
}

}  // namespace droce::coll
