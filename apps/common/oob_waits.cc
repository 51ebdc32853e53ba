// Stop-aware waits on the apps' control connection: slices of the exchange layer's waits.
#include "apps/common/oob_waits.h"

#include <droce/engine/core/stop_signal.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace droce::engine {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kSliceMs = 200;  // how late a stop request is noticed, at most

std::uint32_t ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0u : static_cast<std::uint32_t>(left);
}

}  // namespace

PeerWaits peer_waits(double option_s, double default_s) {
  if (option_s == 0) return PeerWaits{kWaitForever, default_s};
  return PeerWaits{static_cast<std::uint32_t>(option_s * 1000), option_s};
}

Status accept_stoppable(RcPingpongServer& listener, std::uint32_t timeout_ms, OobConnection& out, bool keep_listening) {
  const bool forever = timeout_ms == kWaitForever;
  const auto deadline = Clock::now() + std::chrono::milliseconds(forever ? 0 : timeout_ms);
  for (;;) {
    if (stop_requested()) return Status::error(StatusCode::kError, "interrupted while waiting for a client to connect");
    const std::uint32_t left = forever ? kSliceMs : ms_until(deadline);
    Status s = listener.accept(std::min(left, kSliceMs), out);
    if (s.ok()) {
      if (!keep_listening) listener.close();
      return s;
    }
    if (stop_requested()) return Status::error(StatusCode::kError, "interrupted while waiting for a client to connect");
    if (!forever && ms_until(deadline) == 0)
      return Status::error(StatusCode::kTimeout, "no client connected within " + std::to_string(timeout_ms) + " ms");
  }
}

// One connect over the whole deadline (it retries a refused connect itself and checks for a stop
// request every 50 ms). Not slices of separate connects: a slice that ran out while its
// handshake completed would close a connection the server had already accepted as its client.
Status connect_stoppable(const std::string& host, std::uint16_t port, std::uint32_t timeout_ms, OobConnection& out) {
  Status s = OobConnection::connect(host, port, timeout_ms, out, [] { return stop_requested(); });
  if (!s.ok() && stop_requested())
    return Status::error(StatusCode::kError, "interrupted while connecting to " + host + ":" + std::to_string(port));
  return s;
}

LineWait wait_line(OobConnection& c, std::string& line, std::uint32_t timeout_ms, const std::function<void()>& idle,
                   bool stop_aware, Status* why) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool closed = false;
    if (c.poll_line(line, closed, why)) return LineWait::kLine;
    if (closed) return LineWait::kClosed;
    if (stop_aware && stop_requested()) return LineWait::kInterrupted;
    if (Clock::now() >= deadline) return LineWait::kTimedOut;
    if (idle) {
      for (int i = 0; i < 256; ++i) idle();  // a syscall per 256 rounds of the caller's loop
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

Status recv_line_stoppable(OobConnection& c, std::string& line, std::uint32_t timeout_ms, const char* what,
                           const std::function<void()>& idle) {
  Status why;
  switch (wait_line(c, line, timeout_ms, idle, true, &why)) {
    case LineWait::kLine:
      return {};
    case LineWait::kClosed:
      if (!why.ok()) return Status::error(why.code(), why.message() + " (while we waited for " + what + ")");
      return Status::error(StatusCode::kPeer,
                           std::string("the peer closed the control connection while we waited for ") + what);
    case LineWait::kInterrupted:
      return Status::error(StatusCode::kError, std::string("interrupted while waiting for ") + what);
    case LineWait::kTimedOut:
      break;
  }
  return Status::error(StatusCode::kTimeout,
                       std::string("timed out waiting for ") + what + " (" + std::to_string(timeout_ms) + " ms)");
}

}  // namespace droce::engine
