// The class options: each value goes through engine/lab/switch_classes into the switch's config.
#include "apps/common/cli/switch_class_options.h"

#include <droce/engine/lab/switch_classes.h>

#include "apps/common/cli/values.h"

namespace droce::apps::cli {

void add_switch_classes(CLI::App& app, const std::string& group, engine::LabSwitchConfig& c) {
  add_value(app, group, "--dscp-map", "D=P,..",
            "DSCP D to priority P (a tagged frame's priority is its PCP); default DSCP/8",
            [&c](const std::string& v) { return engine::parse_dscp_map(v, c).message(); });
  add_value(app, group, "--priority-queues", "Q0,..,Q7",
            "egress queue of each priority, eight entries (default 0,1,2,3,4,5,6,7)",
            [&c](const std::string& v) { return engine::parse_priority_queues(v, c).message(); });
  add_value(app, group, "--lossless-priorities", "P,..",
            "with --pfc: the priorities PFC pauses and honours (default --pfc-priority alone);\n"
            "the others are lossy and tail-drop",
            [&c](const std::string& v) { return engine::parse_lossless_priorities(v, c).message(); });
  add_uint(app, group, "--cnp-priority", "P", c.cnp_priority, 0, 7,
           "RoCEv2 CNPs (BTH opcode 0x81) go to priority P whatever their DSCP (default: by DSCP)");
  add_value(app, group, "--scheduler", "strict|weighted[:W0,..,W7]",
            "which queue a port sends next: strict (7 first) or deficit round robin with\n"
            "quanta of W x 1024 bytes (default strict)",
            [&c](const std::string& v) { return engine::parse_scheduler(v, c).message(); });
}

}  // namespace droce::apps::cli
