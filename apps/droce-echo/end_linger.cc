// droce-echo's end-of-run linger (see end_linger.h).
#include "apps/droce-echo/end_linger.h"

#include <string>

namespace droce::echo {

namespace {
constexpr char kFin[] = "FIN";
constexpr std::uint32_t kFinSendMs = 1000;  // a line into an empty socket buffer: never near it

std::uint64_t ns_to_tsc(std::uint64_t ns, std::uint64_t tsc_hz) {
  return static_cast<std::uint64_t>(static_cast<double>(ns) * 1e-9 * static_cast<double>(tsc_hz));
}
}  // namespace

EndLinger::EndLinger(engine::OobConnection& oob, std::uint64_t tsc_hz, double droce_bound_s)
    : oob_(oob),
      tsc_hz_(tsc_hz),
      droce_bound_tsc_(static_cast<std::uint64_t>(droce_bound_s * static_cast<double>(tsc_hz))),
      tool_bound_tsc_(ns_to_tsc(kToolLingerNs, tsc_hz)),
      look_every_tsc_(tsc_hz / 1000) {}

void EndLinger::start(std::uint64_t now) {
  if (started_) return;
  started_ = true;
  start_ = next_look_ = now;
  if (!oob_.is_open()) {
    peer_ = Peer::kClosed;
    return;
  }
  // The tool closed its end long ago: our line meets a reset, which the next look reads as closed.
  (void)oob_.send_line(kFin, kFinSendMs);
}

void EndLinger::look() {
  std::string line;
  bool closed = false;
  while (peer_ == Peer::kSilent && oob_.poll_line(line, closed)) {
    // Anything but FIN is not droce-echo's end: as good as a peer that closed.
    peer_ = line == kFin ? Peer::kFin : Peer::kClosed;
  }
  if (peer_ == Peer::kSilent && closed) peer_ = Peer::kClosed;
}

void EndLinger::end(std::uint64_t now) {
  ended_ = true;
  end_ = now;
}

bool EndLinger::lingering(std::uint64_t now) {
  if (!started_ || ended_) return false;
  if (peer_ == Peer::kSilent && now >= next_look_) {
    look();
    next_look_ = now + look_every_tsc_;
  }
  const std::uint64_t bound = peer_ == Peer::kClosed ? tool_bound_tsc_ : droce_bound_tsc_;
  if (peer_ == Peer::kFin || now - start_ >= bound) {
    end(now);
    return false;
  }
  return true;
}

double EndLinger::lingered_ms() const {
  return ended_ ? static_cast<double>(end_ - start_) * 1e3 / static_cast<double>(tsc_hz_) : 0.0;
}

}  // namespace droce::echo
