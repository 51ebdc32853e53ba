// One simulated flow carried by droce's own transport (--transport rcqp): a requester RcQp and a
// responder RcQp of protocols/rc on the simulator's clock, their frames built and parsed as on the
// wire (protocols/wire) at each end. The simulations move frames as opaque ids; this class keeps
// what each id stands for and turns an arrival into the QP's on_packet().
#pragma once

#include <droce/protocols/rc/mr_table.h>
#include <droce/protocols/rc/rc_qp.h>
#include <droce/protocols/wire/build.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "apps/droce-sim/reliability.h"

namespace droce::sim {

// The transport's knobs as the simulator derives them from its own options.
struct QpFlowConfig {
  Recovery mode = Recovery::kGoBackN;  // kGoBackN or kSelectiveRepeat (kNone has no QPs)
  std::uint32_t pmtu = 512;            // payload per packet: 256..4096, a power of two
  std::uint32_t sr_window = 128;       // selective repeat: PSNs in flight (the BDP cap)
  double rto_us = 320;                 // the adaptive RTO's floor; the IBTA timeout is >= 16x it
  std::uint64_t flow_bytes = 0;        // payload to deliver; 0 = endless
  std::uint64_t seed = 1;              // first PSNs and keys
  std::uint32_t index = 0;             // the flow's number: QPNs and addresses
  // The requester's and the responder's QPNs; 0: 0x100 + 2 x index and the next. The leaf-spine
  // gives each rank pair the QPNs its ECMP hash assumes (leaf_spine.h's spine_of).
  std::uint32_t req_qpn = 0, resp_qpn = 0;
  // false: the flow posts its own WRITEs (flow_bytes, or endless); true: the caller posts messages
  // with post_message (a collective's transfers), none at first.
  bool posted_by_caller = false;
};

// Largest PMTU (256..4096) whose packets fit `packet_bytes` on the wire with `overhead` bytes of
// headers and ICRC; 0 when none does.
[[nodiscard]] std::uint32_t pmtu_for(std::uint32_t packet_bytes, std::uint32_t overhead);

// Frames the transport sent that the simulation still carries: each id names a slot of a ring.
// An arrival whose slot was reused since (more frames in flight than the ring holds) is counted
// and dropped, as a frame lost; the ring is sized so that this does not happen (a test checks).
class FrameRing {
 public:
  explicit FrameRing(std::uint32_t slots);
  std::uint64_t put(const rc::TxDescriptor& d);
  // The descriptor `id` stands for, or nullptr when its slot was reused.
  [[nodiscard]] const rc::TxDescriptor* get(std::uint64_t id) const;

 private:
  struct Slot {
    std::uint64_t id = UINT64_MAX;
    rc::TxDescriptor d;
  };
  std::vector<Slot> slots_;
  std::uint64_t next_ = 0;
};

struct QpFlowStats {
  std::uint64_t delivered = 0;  // payload bytes the responder placed (in order, once)
  std::uint64_t messages = 0;   // WRITEs completed at the requester
  std::uint64_t ring_overruns = 0;
  std::uint64_t parse_drops = 0;  // frames that did not parse (never, unless the builder and parser disagree)
};

class QpFlow {
 public:
  explicit QpFlow(const QpFlowConfig& c);
  QpFlow(const QpFlow&) = delete;
  QpFlow& operator=(const QpFlow&) = delete;

  // The next data frame the requester sends at `now`, as an id, and its bytes on the wire (FCS
  // included); none when the window is closed or nothing is posted.
  struct Out {
    std::uint64_t id;
    std::uint32_t wire_bytes;
  };
  std::optional<Out> next_data(std::uint64_t now);
  // A data frame reached the responder: it is executed; the responder's answers (ACKs, NAKs) are
  // appended to `answers` as ids. Returns the payload bytes newly placed.
  std::uint64_t on_data(std::uint64_t id, std::uint64_t now, std::vector<std::uint64_t>& answers);
  // An answer reached the requester: completions are taken and new WRITEs posted.
  void on_answer(std::uint64_t id, std::uint64_t now);
  void on_timer(std::uint64_t now) { req_->on_timer(now); }
  // posted_by_caller only: `bytes` more to deliver, as WRITEs of at most 64 KiB that never span two
  // messages. Returns the count of packets the responder must have taken in order, since the
  // start, for this message's last byte to have been placed (compare with in_order_packets()).
  std::uint64_t post_message(std::uint64_t bytes);
  // PSNs the responder has taken in order since the start (its ePSN's advance, IBTA §9.7.5.1):
  // every packet below it was placed once, whatever the recovery mode.
  [[nodiscard]] std::uint64_t in_order_packets() const { return in_order_; }
  // Nothing posted is left unacknowledged: the requester has nothing to send or resend.
  [[nodiscard]] bool idle() const { return req_->outstanding_wrs() == 0 && pending_.empty(); }
  // The UDP source port its frames carry (from the QPN pair, as droce's endpoints derive it).
  [[nodiscard]] std::uint16_t udp_src_port() const { return udp_src_port_; }
  [[nodiscard]] std::uint64_t next_timer_ns() const { return req_->next_timer_ns(); }
  // The requester's QP failed (its retries spent), or the flow could not be set up at all.
  [[nodiscard]] bool failed() const { return broken_ || req_->state() == rc::QpState::kError; }
  [[nodiscard]] const rc::RcCounters& requester() const { return req_->counters(); }
  [[nodiscard]] const rc::RcCounters& responder() const { return resp_->counters(); }
  [[nodiscard]] const QpFlowStats& stats() const { return st_; }

 private:
  static constexpr std::uint32_t kMessageBytes = 64 * 1024;  // each WRITE
  static constexpr std::uint32_t kMessagesPosted = 4;        // WRITEs kept posted
  std::uint32_t build_and_parse(const wire::HeaderTemplate& t, const rc::TxDescriptor& d, wire::PacketInfo& pi);
  void post_writes();

  QpFlowConfig cfg_;
  std::unique_ptr<rc::RcQp> req_, resp_;
  wire::HeaderTemplate req_tmpl_, resp_tmpl_;
  std::uint32_t lkey_ = 0, rkey_ = 0;
  std::uint64_t remote_va_ = 0;
  FrameRing data_, answers_;
  std::uint64_t posted_bytes_ = 0;
  std::deque<std::uint64_t> pending_;  // posted_by_caller: bytes of each message not yet posted as WRITEs
  std::uint64_t packets_posted_ = 0, in_order_ = 0;
  std::uint32_t resp_epsn_ = 0;
  std::uint16_t udp_src_port_ = 0;
  std::vector<std::uint8_t> frame_;  // one frame built and parsed at a time
  QpFlowStats st_;
  bool broken_ = false;
};

}  // namespace droce::sim
