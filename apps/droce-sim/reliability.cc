// Reliability model: go-back-N as IBTA's RC defines it, and IRN-style selective repeat
// (Mittal et al., SIGCOMM 2018: SACKs, resend only what is missing, a BDP cap on outstanding packets).
#include "apps/droce-sim/reliability.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace droce::sim {

namespace {
constexpr std::uint64_t kNever = UINT64_MAX;
// IBTA keeps fewer than 2^23 PSNs outstanding (half the 24-bit space, §9.7.1): go-back-N's only cap.
constexpr std::uint64_t kPsnHalfSpace = 1ULL << 23;
}  // namespace

const char* recovery_name(Recovery r) {
  switch (r) {
    case Recovery::kNone:
      return "none";
    case Recovery::kGoBackN:
      return "gbn";
    case Recovery::kSelectiveRepeat:
      return "sr";
  }
  return "?";
}

Status RecoveryConfig::validate() const {
  if (bdp_packets > (1U << 20))
    return Status::fail(StatusCode::kInvalidArgument, "--bdp-packets: must be 0 (link rate x RTT) or 1..1048576");
  if (!(rto_us >= 1 && rto_us <= 1e7))
    return Status::fail(StatusCode::kInvalidArgument, "--rto-us: must be in [1, 10000000]");
  if (flow_bytes != 0 && mode == Recovery::kNone)
    return Status::fail(StatusCode::kInvalidArgument, "--flow-bytes: needs --recovery gbn or sr");
  if (rcqp && mode == Recovery::kNone)
    return Status::fail(StatusCode::kInvalidArgument, "--transport rcqp: needs --recovery gbn or sr");
  return {};
}

std::uint32_t bdp_packets(double rtt_ns, double bps, std::uint32_t packet_bytes) {
  const double n = std::ceil(rtt_ns * bps / 8e9 / packet_bytes);
  return static_cast<std::uint32_t>(std::clamp(n, 1.0, static_cast<double>(1U << 20)));
}

// ---- requester ----

void RcSender::reset(Recovery mode, std::uint32_t window, std::uint64_t total_packets, std::uint64_t rto_ns) {
  mode_ = mode;
  window_ = mode == Recovery::kSelectiveRepeat ? std::max<std::uint32_t>(1, window) : kPsnHalfSpace;
  total_ = total_packets;
  rto_ns_ = rto_ns;
  una_ = next_ = high_ = timer_from_ = tx_count_ = 0;
  slots_.assign(mode == Recovery::kSelectiveRepeat ? window_ : 0, Slot{});
  sent_order_.clear();
  resend_.clear();
  st_ = {};
}

bool RcSender::can_send() const {
  if (mode_ == Recovery::kSelectiveRepeat) {
    for (const std::uint64_t p : resend_)  // stale entries are skipped by next_psn
      if (p >= una_ && !slots_[p % slots_.size()].sacked) return true;
  }
  return next_ - una_ < window_ && (total_ == 0 || next_ < total_);
}

void RcSender::send_record(std::uint64_t psn, std::uint64_t now) {
  if (una_ == high_) timer_from_ = now;  // nothing was outstanding: the timer starts now
  ++st_.sent;
  if (psn < high_)
    ++st_.retransmitted;
  else
    high_ = psn + 1;
  if (mode_ == Recovery::kSelectiveRepeat) {
    Slot& s = slot(psn);
    s.last_tx = ++tx_count_;
    sent_order_.push_back(Sent{psn, s.last_tx});
  }
}

std::optional<std::uint64_t> RcSender::next_psn(std::uint64_t now) {
  if (mode_ == Recovery::kSelectiveRepeat) {
    // Resends first, oldest loss first; an entry since acknowledged (cumulatively or selectively)
    // is dropped here rather than searched for when its ACK came.
    while (!resend_.empty()) {
      const std::uint64_t p = resend_.front();
      resend_.pop_front();
      if (p < una_) continue;
      Slot& s = slot(p);
      s.queued = false;
      if (s.sacked) continue;
      send_record(p, now);
      return p;
    }
  }
  if (next_ - una_ >= window_ || (total_ != 0 && next_ >= total_)) return std::nullopt;
  const std::uint64_t p = next_++;
  if (mode_ == Recovery::kSelectiveRepeat) slot(p) = Slot{};
  send_record(p, now);
  return p;
}

std::uint64_t RcSender::deadline() const { return una_ < high_ ? timer_from_ + rto_ns_ : kNever; }

void RcSender::on_ack(const Ack& a, std::uint64_t now) {
  if (mode_ == Recovery::kSelectiveRepeat) return on_sr_ack(a, now);
  // Go-back-N. An ACK acknowledges every PSN before its own (§9.7.5.1.2 coalescing); a NAK
  // sequence error does as well and asks for a resend from its PSN (§9.7.5.2.4).
  if (a.kind == AckKind::kNakSequence) ++st_.naks;
  if (a.psn > una_) {
    una_ = std::min(a.psn, high_);
    timer_from_ = now;  // progress restarts the transport timer (§9.7.6.1.3)
  }
  if (a.kind == AckKind::kNakSequence && a.psn >= una_) next_ = a.psn;
  next_ = std::max(next_, una_);
}

// Selective repeat. The modelled paths never reorder, so a packet still unacknowledged whose
// latest transmission went out before one that has now arrived was lost: every ACK and SACK
// judges, in transmission order, the sends before the one it reports.
void RcSender::on_sr_ack(const Ack& a, std::uint64_t now) {
  std::uint64_t evidence = 0;  // the arrived packet's transmission number
  if (a.arrived >= una_ && a.arrived < high_) evidence = slot(a.arrived).last_tx;
  if (a.kind == AckKind::kSack) ++st_.sacks;
  if (a.psn > una_) {
    const std::uint64_t to = std::min(a.psn, high_);
    for (std::uint64_t p = una_; p < to; ++p) slot(p) = Slot{};  // free for PSN p + window
    una_ = to;
    timer_from_ = now;
  }
  next_ = std::max(next_, una_);
  if (a.kind == AckKind::kSack && a.arrived >= una_ && a.arrived < high_) slot(a.arrived).sacked = true;
  while (!sent_order_.empty() && sent_order_.front().tx <= evidence) {
    const Sent s = sent_order_.front();
    sent_order_.pop_front();
    if (s.psn < una_) continue;
    Slot& sl = slot(s.psn);
    if (sl.sacked || sl.queued || sl.last_tx != s.tx) continue;  // arrived, already queued, or sent again since
    sl.queued = true;
    resend_.push_back(s.psn);
  }
}

void RcSender::on_timeout(std::uint64_t now) {
  ++st_.timeouts;
  timer_from_ = now;
  if (mode_ != Recovery::kSelectiveRepeat) {
    next_ = una_;  // go-back-N from the oldest unacknowledged PSN (§9.7.6.1.3)
    return;
  }
  for (std::uint64_t p = una_; p < high_; ++p) {
    Slot& s = slot(p);
    if (s.sacked || s.queued) continue;
    s.queued = true;
    resend_.push_back(p);
  }
}

// ---- responder ----

void RcReceiver::reset(Recovery mode, std::uint32_t window) {
  mode_ = mode;
  epsn_ = next_delivery_ = 0;
  nak_sent_ = false;
  held_.assign(mode == Recovery::kSelectiveRepeat ? std::max<std::uint32_t>(1, window) : 0, 0);
  st_ = {};
}

void RcReceiver::deliver(std::uint64_t psn) {
  if (psn != next_delivery_) ++st_.order_errors;
  next_delivery_ = psn + 1;
  ++st_.delivered;
}

std::optional<Ack> RcReceiver::on_packet(std::uint64_t psn) {
  if (psn < epsn_) {
    // A duplicate is acknowledged again and not executed again (§9.7.5.1.1, C9-105).
    ++st_.duplicates;
    return Ack{AckKind::kAck, epsn_, psn};
  }
  if (mode_ != Recovery::kSelectiveRepeat) {
    if (psn > epsn_) {
      // Out of sequence: dropped; one NAK sequence error per gap, none again until ePSN arrives.
      ++st_.out_of_sequence;
      if (nak_sent_) return std::nullopt;
      nak_sent_ = true;
      return Ack{AckKind::kNakSequence, epsn_, psn};
    }
    deliver(psn);
    ++epsn_;
    nak_sent_ = false;
    return Ack{AckKind::kAck, epsn_, psn};
  }
  const std::uint64_t w = held_.size();
  if (psn >= epsn_ + w) {
    ++st_.beyond_window;  // the sender's cap keeps this from happening; dropped if it does
    return std::nullopt;
  }
  if (psn > epsn_) {
    std::uint64_t& h = held_[psn % w];
    if (h == psn + 1)
      ++st_.duplicates;
    else {
      h = psn + 1;
      ++st_.out_of_sequence;
    }
    return Ack{AckKind::kSack, epsn_, psn};
  }
  // The expected PSN: hand it on with every held packet that now follows in order. The slot's
  // content is checked against the PSN expected there (a misplaced packet is an order error).
  deliver(psn);
  ++epsn_;
  for (std::uint64_t n = 0; n < w; ++n) {
    std::uint64_t& h = held_[epsn_ % w];
    if (h == 0) break;
    deliver(h - 1);
    h = 0;
    ++epsn_;
  }
  return Ack{AckKind::kAck, epsn_, psn};
}

}  // namespace droce::sim
