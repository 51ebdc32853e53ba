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

// A server's wait for its client with no deadline (a wait option given as 0: perftest's server
// waits in accept() until a client comes). Only accept_stoppable and the apps' own waits for a
// first contact take it; a stop request still ends it at once.
inline constexpr std::uint32_t kWaitForever = UINT32_MAX;

// The waits of a client/server app from its one wait option (droce-gen --connect-timeout,
// droce-perf and droce-echo --timeout). `for_client_ms`: the server's wait for a client to connect
// (kWaitForever for 0). `bound_s`: every other wait (the client's connect, each exchange step once
// both ends are there, the peer's MAC, a peer silent during the run): the option, or for 0 the
// app's default. A server left waiting is what a person asks for with 0; a hang mid-exchange or
// mid-run is not (a dead peer is still found).
struct PeerWaits {
  std::uint32_t for_client_ms = 0;
  double bound_s = 0;
  [[nodiscard]] std::uint32_t bound_ms() const { return static_cast<std::uint32_t>(bound_s * 1000); }
  [[nodiscard]] bool forever() const { return for_client_ms == kWaitForever; }
};
[[nodiscard]] PeerWaits peer_waits(double option_s, double default_s);

// RcPingpongServer::accept / OobConnection::connect within `timeout_ms`; "interrupted" on a stop.
// accept_stoppable takes kWaitForever (no deadline); connect_stoppable does not.
// Once a client is accepted the listener is closed: later or queued connectors are reset at once
// instead of waiting out their own deadlines on a server that will not answer them.
// `keep_listening`: the listener stays open for more clients (a server of several, droce-gen --clients).
[[nodiscard]] Status accept_stoppable(RcPingpongServer& listener, std::uint32_t timeout_ms, OobConnection& out,
                                      bool keep_listening = false);
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
