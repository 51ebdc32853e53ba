// Reliability model for the simulator: per flow, one RC requester (PSNs, ACK timer, go-back-N or
// selective repeat) and one responder (ePSN, in-order delivery that verifies itself). Pure logic:
// the simulations carry its packets and acknowledgements over their links and call it at each end.
#pragma once

#include <droce/protocols/common/status.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace droce::sim {

enum class Recovery : std::uint8_t {
  kNone,             // no PSNs: packets lost stay lost (the open-loop model)
  kGoBackN,          // IBTA: out-of-sequence dropped, one NAK per gap, resend from the NAK'd PSN
  kSelectiveRepeat,  // IRN-style: out-of-order kept, SACKs, only missing packets resent, BDP cap
};

[[nodiscard]] const char* recovery_name(Recovery r);

struct RecoveryConfig {
  Recovery mode = Recovery::kNone;
  std::uint32_t bdp_packets = 0;  // sr: most packets past the cumulative ACK; 0 = link rate x base RTT
  double rto_us = 320;            // ACK timeout (the backstop in both modes)
  std::uint64_t flow_bytes = 0;   // payload each flow sends; 0 = an infinite backlog
  // --transport rcqp: droce's own RC transport (protocols/rc's RcQp, frames built and parsed as on
  // the wire) instead of the model; gbn or sr, in both simulations.
  bool rcqp = false;

  // Ok when valid; otherwise kInvalidArgument and a message naming the bad option.
  [[nodiscard]] Status validate() const;
};

// RoCEv2 framing around each packet's payload: Ethernet 14 + FCS 4, IPv4 20, UDP 8, BTH 12, ICRC 4.
inline constexpr std::uint32_t kRoceOverheadBytes = 62;

// Packets of `packet_bytes` that a link of `bps` holds over `rtt_ns` (at least 1): the default cap.
[[nodiscard]] std::uint32_t bdp_packets(double rtt_ns, double bps, std::uint32_t packet_bytes);

enum class AckKind : std::uint8_t { kAck, kNakSequence, kSack };

// An acknowledgement as the responder sends it. Every one names the PSN whose arrival caused it,
// so that the requester can order its evidence (IRN's NACK carries the same two numbers).
struct Ack {
  AckKind kind = AckKind::kAck;
  std::uint64_t psn = 0;      // ACK/SACK: the cumulative PSN (next expected); NAK: resend from here
  std::uint64_t arrived = 0;  // the PSN that arrived
};

struct SenderStats {
  std::uint64_t sent = 0;           // every data packet transmitted
  std::uint64_t retransmitted = 0;  // of which resends of a PSN sent before
  std::uint64_t timeouts = 0;
  std::uint64_t naks = 0;
  std::uint64_t sacks = 0;
};

// The requester. PSNs are modelled unbounded (the 24-bit wrap changes nothing the runs measure).
class RcSender {
 public:
  // `window`: sr's cap on packets past the cumulative ACK; `total_packets` 0 = endless.
  void reset(Recovery mode, std::uint32_t window, std::uint64_t total_packets, std::uint64_t rto_ns);

  // The PSN to transmit at `now` (recorded as sent), or none: the window is full or nothing is
  // left; an ACK or a timeout may open it again (can_send).
  std::optional<std::uint64_t> next_psn(std::uint64_t now);
  [[nodiscard]] bool can_send() const;
  void on_ack(const Ack& a, std::uint64_t now);
  // The ACK timer's deadline; UINT64_MAX when nothing is outstanding.
  [[nodiscard]] std::uint64_t deadline() const;
  // The timer fired at or after deadline(): resend (gbn: from the oldest unacknowledged PSN;
  // sr: every outstanding PSN not selectively acknowledged).
  void on_timeout(std::uint64_t now);

  [[nodiscard]] bool complete() const { return total_ != 0 && una_ >= total_; }
  [[nodiscard]] std::uint64_t una() const { return una_; }
  [[nodiscard]] const SenderStats& stats() const { return st_; }

 private:
  struct Slot {
    std::uint64_t last_tx = 0;  // transmission number of its latest send
    bool sacked = false;
    bool queued = false;  // waiting in resend_
  };
  struct Sent {
    std::uint64_t psn, tx;
  };
  Slot& slot(std::uint64_t psn) { return slots_[psn % slots_.size()]; }
  void send_record(std::uint64_t psn, std::uint64_t now);
  void on_sr_ack(const Ack& a, std::uint64_t now);

  Recovery mode_ = Recovery::kGoBackN;
  std::uint64_t window_ = 0, total_ = 0, rto_ns_ = 0;
  std::uint64_t una_ = 0;   // oldest unacknowledged PSN
  std::uint64_t next_ = 0;  // gbn: next PSN to send (rewinds); sr: next new PSN
  std::uint64_t high_ = 0;  // one past the highest PSN ever sent
  std::uint64_t timer_from_ = 0;
  std::uint64_t tx_count_ = 0;
  std::vector<Slot> slots_;      // sr: one per PSN in [una, una + window)
  std::deque<Sent> sent_order_;  // sr: transmissions not yet judged, oldest first
  std::deque<std::uint64_t> resend_;
  SenderStats st_;
};

struct ReceiverStats {
  std::uint64_t delivered = 0;        // packets handed on in order
  std::uint64_t duplicates = 0;       // arrived again, discarded
  std::uint64_t out_of_sequence = 0;  // gbn: dropped beyond a gap; sr: held out of order
  std::uint64_t beyond_window = 0;    // sr: dropped past the reorder window
  std::uint64_t order_errors = 0;     // the self-check: a delivery that was not the next PSN
};

// The responder: hands on PSN 0, 1, 2, ... exactly once each, and checks that it did.
class RcReceiver {
 public:
  void reset(Recovery mode, std::uint32_t window);
  // One data packet; the acknowledgement to send back, if any (gbn drops silently after its NAK).
  std::optional<Ack> on_packet(std::uint64_t psn);
  [[nodiscard]] std::uint64_t epsn() const { return epsn_; }
  [[nodiscard]] const ReceiverStats& stats() const { return st_; }

 private:
  void deliver(std::uint64_t psn);

  Recovery mode_ = Recovery::kGoBackN;
  std::uint64_t epsn_ = 0;
  std::uint64_t next_delivery_ = 0;
  bool nak_sent_ = false;
  std::vector<std::uint64_t> held_;  // sr: PSN + 1 of the packet held in each slot; 0 = empty
  ReceiverStats st_;
};

}  // namespace droce::sim
