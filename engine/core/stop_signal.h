// Process-wide stop request set by SIGINT/SIGTERM and polled by every worker loop and wait.
#pragma once

#include <atomic>

namespace droce::engine {

// Installs SIGINT/SIGTERM handlers that set the stop flag (a second signal, a second or more after
// the first, exits at once with status 130; a repeat within that second is the same request, as
// timeout(1) and a terminal deliver one Ctrl-C twice), and ignores SIGPIPE (virtio_user and the OOB TCP channel see it
// when a peer exits).
void install_stop_signals();
[[nodiscard]] bool stop_requested();
void request_stop();
void clear_stop();

// While on, a stop signal also shuts down every TCP socket of the process (both directions), so a
// wait inside a TCP exchange that retries EINTR until its own deadline ends at once: it sees the
// connection closed, and its caller, seeing stop_requested(), reports "interrupted". The peer sees
// the connection close. Turn it on around exchanges whose waits the app cannot slice itself; turn
// it off where the app still needs the connection after a stop (an end-of-run report). Turning it
// on after a stop was requested shuts the sockets at once.
void set_stop_ends_tcp_waits(bool on);
// The same shutdown now, for a wait that must end for another reason (the caller saw a stall).
void end_tcp_waits_now();

}  // namespace droce::engine
