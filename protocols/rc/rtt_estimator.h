// A requester's round-trip estimate and the two timers derived from it: the adaptive
// retransmission timeout (RFC 6298's estimator, bounded as docs/transport.md says) and the
// tail-loss probe timeout (RFC 8985 §7.2's PTO, with a variance term and a floor of its own).
#pragma once

#include <cstdint>

namespace droce::rc {

// The adaptive timeout never fires sooner than this by default: a busy-polling process on this
// project's 2-vCPU machines is descheduled for 4-8 ms at a time, up to 32 ms with two CPU hogs
// beside it (docs/transport.md, "Loss recovery in round trips"), and a peer in another process
// that stalls looks exactly like a lost packet. A spurious expiry costs a go-back-N round, never a
// retry; the tail-loss probes, which cost one packet, run on the round trip alone.
inline constexpr std::uint32_t kDefaultRtoFloorUs = 20'000;
// What the probe timeout adds to its round-trip term by default (QpAttr::pto_floor_us). RFC 8985
// §7.2 adds WCDelAckT when one packet is in flight, and Linux's tcp_schedule_loss_probe adds
// TCP_TIMEOUT_MIN (2 jiffies, 2 ms at HZ=1000) to 2 x SRTT always: a round trip that a queue
// stretches (PFC pauses, a DCQCN bottleneck filling) or a peer that is descheduled for a moment
// must not look like a lost tail. 2 ms is above the 1 ms the endpoint's clock shows of this
// process's own stalls (max_poll_gap_ns) and well under the RTO floor, so a real tail loss is still
// recovered long before the RTO.
inline constexpr std::uint32_t kDefaultPtoFloorUs = 2'000;
// The probe timeout is never shorter than this whatever the attribute says: twice the timing
// wheel's bucket, so that a probe is never due before the poll that could have read its answer.
inline constexpr std::uint64_t kPtoMinNs = 2'000;
// kNeedlessProbesPerBackoff probes in a row answered with nothing lost (RFC 8985 §7.4 would call
// each a probe that repaired nothing) double the next PTO, up to 2^kMaxPtoBackoff times; each probe
// that found a loss halves it again and starts the count over.
// Like RACK's reordering window (RFC 8985 §6.2 step 4), the timer adapts to the path's measured
// behaviour instead of firing on it again and again. The PTO never passes the RTO (§7.2) anyway.
inline constexpr std::uint8_t kMaxPtoBackoff = 6;
inline constexpr std::uint8_t kNeedlessProbesPerBackoff = 2;
// Backoff doublings kept at most: 2^16 times any floor is past every IBTA timeout that leaves a
// QP usable (the RTO is capped by the QP's own timeout anyway).
inline constexpr std::uint8_t kMaxRtoBackoff = 16;

class RttEstimator {
 public:
  // One round trip measured (RFC 6298 §2.2/§2.3, gains 1/8 and 1/4, in integer nanoseconds).
  void sample(std::uint64_t rtt_ns) {
    if (!valid_) {
      srtt_ns_ = rtt_ns;
      rttvar_ns_ = rtt_ns / 2;
      min_rtt_ns_ = rtt_ns;
      valid_ = true;
      return;
    }
    const std::uint64_t err = rtt_ns > srtt_ns_ ? rtt_ns - srtt_ns_ : srtt_ns_ - rtt_ns;
    rttvar_ns_ = rttvar_ns_ - rttvar_ns_ / 4 + err / 4;
    srtt_ns_ = srtt_ns_ - srtt_ns_ / 8 + rtt_ns / 8;
    if (rtt_ns < min_rtt_ns_) min_rtt_ns_ = rtt_ns;
  }
  void reset() { *this = RttEstimator{}; }

  [[nodiscard]] bool valid() const { return valid_; }
  [[nodiscard]] std::uint64_t srtt_ns() const { return srtt_ns_; }
  [[nodiscard]] std::uint64_t rttvar_ns() const { return rttvar_ns_; }
  [[nodiscard]] std::uint64_t min_rtt_ns() const { return min_rtt_ns_; }

  // SRTT + 4 RTTVAR (RFC 6298 §2.3), raised to `floor_ns`, doubled `backoff` times (§5.5) and
  // never beyond `ceiling_ns` (the QP's IBTA local ACK timeout, §9.7.6.1.3). Without a sample:
  // the ceiling, the plain IBTA timer (RFC 6298 §2.1 starts from a conservative 1 s as well).
  [[nodiscard]] std::uint64_t rto_ns(std::uint64_t floor_ns, std::uint64_t ceiling_ns, std::uint8_t backoff) const {
    if (!valid_) return ceiling_ns;
    std::uint64_t rto = srtt_ns_ + 4 * rttvar_ns_;
    if (rto < floor_ns) rto = floor_ns;
    for (std::uint8_t i = 0; i < backoff && rto < ceiling_ns; ++i) rto <<= 1;
    return rto < ceiling_ns ? rto : ceiling_ns;
  }
  // RFC 8985 §7.2's PTO is 2 x SRTT; the variance term of RFC 6298 §2.3 joins it, so that a round
  // trip that has been varying (a queue building) widens the wait as it widens the RTO:
  // max(2 x SRTT, SRTT + 4 x RTTVAR), plus `floor_ns` (added, as Linux adds TCP_TIMEOUT_MIN, so a
  // round trip that suddenly doubles still arrives before the probe), doubled `backoff` times (a
  // probe that found nothing lost) and at least kPtoMinNs. The caller caps it at the RTO (§7.2:
  // "if RTO is earlier than PTO, use RTO"). 0 without a sample (no probe: the round trip is unknown).
  [[nodiscard]] std::uint64_t pto_ns(std::uint64_t floor_ns, std::uint8_t backoff) const {
    if (!valid_) return 0;
    const std::uint64_t two_srtt = 2 * srtt_ns_, var = srtt_ns_ + 4 * rttvar_ns_;
    const std::uint64_t pto = ((two_srtt > var ? two_srtt : var) + floor_ns) << backoff;
    return pto > kPtoMinNs ? pto : kPtoMinNs;
  }

 private:
  std::uint64_t srtt_ns_ = 0;
  std::uint64_t rttvar_ns_ = 0;
  std::uint64_t min_rtt_ns_ = 0;
  bool valid_ = false;
};

}  // namespace droce::rc
