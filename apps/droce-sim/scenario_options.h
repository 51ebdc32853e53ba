// A scenario (docs/scenario.md) as droce-sim's options.
#pragma once

#include "apps/common/scenario/scenario_args.h"

namespace droce::sim {

// Fills `args` with droce-sim's options for `s`, or refuses a field droce-sim does not model.
[[nodiscard]] Status scenario_options(const apps::Scenario& s, apps::ScenarioArgs& args);

}  // namespace droce::sim
