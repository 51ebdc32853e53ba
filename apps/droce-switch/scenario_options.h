// A scenario (docs/scenario.md) as droce-switch's live-lab options.
#pragma once

#include "apps/common/scenario/scenario_args.h"

namespace droce::sw {

// Fills `args` with the lab's options for `s`, or refuses a field the live lab cannot honour.
[[nodiscard]] Status scenario_options(const apps::Scenario& s, apps::ScenarioArgs& args);

}  // namespace droce::sw
