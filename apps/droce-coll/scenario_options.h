// A scenario (docs/scenario.md) as droce-coll's options.
#pragma once

#include "apps/common/scenario/scenario_args.h"

namespace droce::coll {

// Fills `args` with droce-coll's options for `s`, or refuses a field its lab cannot honour.
[[nodiscard]] Status scenario_options(const apps::Scenario& s, apps::ScenarioArgs& args);

}  // namespace droce::coll
