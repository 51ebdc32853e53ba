// SharedRecvQueue: receive WQEs that several RC QPs consume as their SENDs arrive (the shared
// receive queue of IBTA Vol. 1 ch. 10, verbs' ibv_srq), with the limit event verbs calls
// IBV_EVENT_SRQ_LIMIT_REACHED.
#pragma once

#include <cstdint>
#include <vector>

#include "protocols/common/status.h"
#include "protocols/rc/mr_table.h"
#include "protocols/rc/types.h"

namespace droce::rc {

// A posted receive with its buffer resolved: what a QP's own receive queue and an SRQ both hold.
struct PostedRecv {
  RecvWr wr;
  std::uint8_t* local = nullptr;
};

// Pure protocol state, like RcQp: storage fixed at creation, nothing allocates when posting or
// taking. A QP attached to it (RcQp::attach_srq) takes the oldest WQE when a SEND (or a WRITE with
// immediate) needs one and answers RNR NAK when none is left (§9.7.5.1.5), exactly as with its
// own queue; the WQE is the QP's from then on (it completes, or is flushed, on that QP). All the
// QPs of one SRQ and the SRQ itself belong to one thread (one endpoint, one worker): there is no
// locking.
class SharedRecvQueue {
 public:
  // `depth` WQEs at most (1..65536); `mrs` checks the buffers posted, which must be regions of
  // protection domain `pd`. Only QPs of the same domain attach (RcQp::attach_srq).
  SharedRecvQueue(std::uint32_t depth, const MrTable& mrs, std::uint32_t pd = MrTable::kDefaultDomain);
  [[nodiscard]] std::uint32_t pd() const { return pd_; }

  // Errors (queue full, a buffer outside a locally writable region) are returned at once.
  [[nodiscard]] Status post_recv(const RecvWr& wr);
  // Arms the limit (verbs' ibv_modify_srq with IBV_SRQ_LIMIT): when a QP's take leaves fewer than
  // `limit` WQEs, the event fires once and the limit disarms; 0 disarms. A limit above the depth
  // is refused.
  [[nodiscard]] Status arm_limit(std::uint32_t limit);
  // Whether the limit event fired since the last call (and clears it): the owner's signal to post
  // more receives.
  [[nodiscard]] bool take_limit_event() {
    const bool fired = limit_fired_;
    limit_fired_ = false;
    return fired;
  }
  // The oldest WQE, for an attached QP; false when the queue is empty.
  bool take(PostedRecv& out);

  [[nodiscard]] std::uint32_t posted() const { return static_cast<std::uint32_t>(tail_ - head_); }
  [[nodiscard]] std::uint32_t depth() const { return cap_; }
  [[nodiscard]] std::uint32_t limit() const { return limit_; }
  [[nodiscard]] std::uint64_t limit_events() const { return limit_events_; }
  [[nodiscard]] std::uint64_t taken() const { return taken_; }
  [[nodiscard]] std::uint64_t empty_takes() const { return empty_takes_; }  // RNR NAKs it caused

 private:
  const MrTable& mrs_;
  std::uint32_t pd_;
  std::vector<PostedRecv> ring_;
  std::uint64_t mask_ = 0;
  std::uint32_t cap_ = 1;
  std::uint64_t head_ = 0, tail_ = 0;
  std::uint32_t limit_ = 0;  // 0: disarmed
  bool limit_fired_ = false;
  std::uint64_t limit_events_ = 0, taken_ = 0, empty_takes_ = 0;
};

}  // namespace droce::rc
