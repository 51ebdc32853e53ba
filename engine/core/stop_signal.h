// Process-wide stop request set by SIGINT/SIGTERM and polled by every worker loop.
#pragma once

#include <atomic>

namespace droce::engine {

// Installs SIGINT/SIGTERM handlers that set the stop flag (a second signal exits at once), and
// ignores SIGPIPE (virtio_user and the OOB TCP channel see it when a peer exits).
void install_stop_signals();
[[nodiscard]] bool stop_requested();
void request_stop();
void clear_stop();

}  // namespace droce::engine
