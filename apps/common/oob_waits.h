// Waits on the client/server apps' TCP control connection that end at once on a stop request
// (SIGINT): the exchange layer's own waits run to their deadline (they retry EINTR), so these call
// it in short slices, or poll it, and check the stop flag between.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/engine/exchange/oob_exchange.h>

#include <cstdint>
#include <functional>
#include <string>

namespace droce::engine {

// RcPingpongServer::accept / OobConnection::connect within `timeout_ms`; "interrupted" on a stop.
// Once a client is accepted the listener is closed: later or queued connectors are reset at once
// instead of waiting out their own deadlines on a server that will not answer them.
[[nodiscard]] Status accept_stoppable(RcPingpongServer& listener, std::uint32_t timeout_ms, OobConnection& out);
[[nodiscard]] Status connect_stoppable(const std::string& host, std::uint16_t port, std::uint32_t timeout_ms,
                                       OobConnection& out);

enum class LineWait { kLine, kClosed, kTimedOut, kInterrupted };
// Waits up to `timeout_ms` for a whole line, calling `idle` between looks (the caller's transport
// keeps running; without one it sleeps a millisecond). With `stop_aware`, a stop request ends the
// wait (kInterrupted); without, the wait goes on (an end-of-run exchange after Ctrl-C).
// On kClosed, `why` (when given) says whether the peer hung up or sent what is not a line.
[[nodiscard]] LineWait wait_line(OobConnection& c, std::string& line, std::uint32_t timeout_ms,
                                 const std::function<void()>& idle, bool stop_aware, Status* why = nullptr);
// wait_line as a Status naming `what` was awaited; `idle` as there (none: it sleeps).
[[nodiscard]] Status recv_line_stoppable(OobConnection& c, std::string& line, std::uint32_t timeout_ms,
                                         const char* what, const std::function<void()>& idle = {});

}  // namespace droce::engine
