// droce-echo's end of a --peer srq_pingpong run, as TCP's TIME_WAIT (RFC 793 §3.5): a side whose
// counts are reached keeps its QPs polled for as long as the peer may still retransmit, so that a
// request or reply whose ACK from us was lost is answered again (IBTA C9-105: a duplicate request
// is acknowledged again) instead of exhausting the peer's retries against a stopped port.
//  - droce-echo keeps the control connection open for the run: each side says "FIN" on it once
//    its own counts are reached (its sends acknowledged, what it awaited arrived) and lingers until
//    it has heard the peer's FIN. Then neither side waits for anything of the other. At most
//    --timeout: a peer that stopped answering says FIN when its own --timeout ends its run.
//  - ibv_srq_pingpong closes the control connection after the exchange and exits as soon as its
//    counts are reached: against it a side lingers twice the tool's whole retry span, as TIME_WAIT
//    lasts twice a segment's lifetime. Its own last ACK may still be lost after it has exited: that
//    race is the tool's (the report names it), not lost data.
#pragma once

#include <droce/engine/exchange/oob_exchange.h>

#include <cstdint>

namespace droce::echo {

// ibv_srq_pingpong's QP attributes (rdma-core libibverbs/examples/srq_pingpong.c, pp_connect_ctx):
// local ACK timeout 14 (4.096 us x 2^14 = 67.1 ms) and 7 retries, so it sends a request or reply
// at most 8 times within 8 x 67.1 ms of the first.
inline constexpr std::uint64_t kToolAckTimeoutNs = 4096ull << 14;
inline constexpr std::uint64_t kToolRetrySpanNs = 8 * kToolAckTimeoutNs;
inline constexpr std::uint64_t kToolLingerNs = 2 * kToolRetrySpanNs;  // 1.07 s
// ibv_rc_pingpong (rc_pingpong.c, pp_connect_ctx) sets the same timeout and retry count: a
// droce-echo end against it lingers as long, in TSC cycles at `tsc_hz`.
[[nodiscard]] inline std::uint64_t tool_linger_tsc(std::uint64_t tsc_hz) {
  return static_cast<std::uint64_t>(static_cast<double>(kToolLingerNs) * 1e-9 * static_cast<double>(tsc_hz));
}

class EndLinger {
 public:
  // What the control connection said about the peer by the end of the linger.
  enum class Peer {
    kSilent,  // open and quiet: a droce-echo peer still running (or stuck) when the linger ended
    kFin,     // a droce-echo peer that said FIN: it has finished
    kClosed,  // closed without FIN: ibv_srq_pingpong (closed after the exchange), or a peer that died
  };

  // `tsc_hz`: the clock `now` counts in; `droce_bound_s`: how long to wait for a droce-echo
  // peer's FIN (--timeout).
  EndLinger(engine::OobConnection& oob, std::uint64_t tsc_hz, double droce_bound_s);

  // Our run is over (counts reached, or it ended otherwise): FIN to the peer, and the linger's
  // clock starts at `now`. A peer that closed the connection makes the FIN fail: that is no error.
  void start(std::uint64_t now);
  // Whether to keep our QPs polled at `now`: until the peer's FIN, else until the bound that fits
  // what the connection says (kToolLingerNs once it is closed, droce_bound_s while it is open).
  // Looks at the connection at most once a millisecond (a syscall, beside a poll loop).
  [[nodiscard]] bool lingering(std::uint64_t now);

  [[nodiscard]] Peer peer() const { return peer_; }
  // How long the linger lasted (0 before it ended).
  [[nodiscard]] double lingered_ms() const;

 private:
  void look();
  void end(std::uint64_t now);

  engine::OobConnection& oob_;
  const std::uint64_t tsc_hz_;
  const std::uint64_t droce_bound_tsc_, tool_bound_tsc_, look_every_tsc_;
  std::uint64_t start_ = 0, next_look_ = 0, end_ = 0;
  bool started_ = false, ended_ = false;
  Peer peer_ = Peer::kSilent;
};

}  // namespace droce::echo
