// --workers against what EAL and the port give: each worker needs its own EAL lcore (the main
// lcore is worker 0) and its own RX and TX queue on the port.
#pragma once

#include <droce/engine/core/status.h>

#include <string>

namespace droce::apps {

// After EAL init: ok when EAL's lcores can carry `workers`, else kInvalidArgument and one line
// naming the limit.
[[nodiscard]] engine::Status workers_lcore_limit(unsigned workers);
// Before the port opens: ok when the port named by `devargs` can have `workers` RX and TX queues,
// or is not probed yet (opening it then says why it cannot); else kUnsupported and one line naming
// the limit.
[[nodiscard]] engine::Status workers_queue_limit(unsigned workers, const std::string& devargs);

}  // namespace droce::apps
