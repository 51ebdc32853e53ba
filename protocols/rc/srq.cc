// SharedRecvQueue: posting, the limit event, and the take of an attached QP.
#include "protocols/rc/srq.h"

namespace droce::rc {

namespace {
constexpr std::uint32_t kMaxSrqDepth = 65536;
}  // namespace

SharedRecvQueue::SharedRecvQueue(std::uint32_t depth, const MrTable& mrs, std::uint32_t pd) : mrs_(mrs), pd_(pd) {
  cap_ = depth == 0 ? 1 : depth > kMaxSrqDepth ? kMaxSrqDepth : depth;
  std::uint64_t size = 1;
  while (size < cap_) size <<= 1;
  ring_.resize(size);
  mask_ = size - 1;
}

Status SharedRecvQueue::post_recv(const RecvWr& wr) {
  if (tail_ - head_ >= cap_) return Status::fail(StatusCode::kQueueFull, "post_srq_recv: shared receive queue full");
  std::uint8_t* local = nullptr;
  if (wr.sge.length != 0 &&
      mrs_.check_local(wr.sge.lkey, wr.sge.addr, wr.sge.length, kAccessLocalWrite, &local, pd_) != MrCheck::kOk)
    return Status::fail(StatusCode::kBadKey,
                        "post_srq_recv: buffer not in a registered, locally writable region of the SRQ's domain");
  PostedRecv& r = ring_[tail_ & mask_];
  r.wr = wr;
  r.local = local;
  ++tail_;
  return {};
}

Status SharedRecvQueue::arm_limit(std::uint32_t limit) {
  if (limit > cap_) return Status::fail(StatusCode::kInvalidArgument, "srq limit: more than the queue's depth");
  limit_ = limit;
  limit_fired_ = false;
  return {};
}

bool SharedRecvQueue::take(PostedRecv& out) {
  if (head_ == tail_) {
    ++empty_takes_;
    return false;
  }
  out = ring_[head_ & mask_];
  ++head_;
  ++taken_;
  if (limit_ != 0 && tail_ - head_ < limit_) {
    limit_fired_ = true;
    ++limit_events_;
    limit_ = 0;  // one event per arming, as verbs' SRQ limit
  }
  return true;
}

}  // namespace droce::rc
