// droce-sim options: everything the command line sets, parsed and checked before anything is simulated.
#pragma once

#include <string>
#include <vector>

#include "apps/common/scenario/scenario.h"
#include "apps/droce-sim/dumbbell.h"
#include "apps/droce-sim/fabric.h"
#include "apps/droce-sim/leaf_spine.h"

namespace droce::sim {

struct Options {
  SimConfig cfg;
  FabricConfig fabric = dumbbell_fabric();
  bool use_fabric = false;    // --pfc or --topology two-hop: the fabric model
  LeafSpineConfig leafspine;  // --topology leafspine: a collective on a leaf-spine fabric
  bool use_leafspine = false;
  std::string json_path, plot_path, preset = "paper";
  std::string scenario_file;  // --scenario FILE: the run's options below the command line's
  apps::Scenario scenario;    // what it named (name empty: none)

 private:
  // The fabric model's defaults, less its own (two-hop, PFC): those only when asked for.
  static FabricConfig dumbbell_fabric() {
    FabricConfig f;
    f.topology = Topology::kDumbbell;
    f.pfc = false;
    return f;
  }
};

// 0: run; 1: --help or --version printed (exit 0); -1: one line naming the option printed (exit 2).
// `args` are argv[1..]: droce-sim has no EAL part.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o);

}  // namespace droce::sim
