// RcEndpoint's completion queues: each QP's own, and the endpoint's one CQ over all of them (a
// list of the QPs with completions pending, so a poll costs what it returns, not the QP count).
#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {

unsigned RcEndpoint::drain_completions(QpSlot& s, rc::Completion* out, unsigned max) {
  const bool views = s.qp->attr().recv_mode == rc::RecvMode::kMessageViews;
  unsigned n = 0;
  rc::Completion c;
  while (n < max && s.qp->poll_cq(c)) {
    if (views && c.is_recv) continue;  // a receive credit flushed by ERROR: internal, not the application's
    out[n++] = c;
  }
  return n;
}

unsigned RcEndpoint::poll_cq(std::uint32_t qpn, rc::Completion* out, unsigned max) {
  QpSlot* s = slot(qpn);
  return s == nullptr ? 0 : drain_completions(*s, out, max);
}

// The list may hold QPs whose completions were already taken through the per-QP form (or the
// RcQp itself): they leave it here. A QP that still has completions when `max` is reached stays
// first, so its completions keep their order and the next call goes on from it.
unsigned RcEndpoint::poll_cq(rc::Completion* out, unsigned max) {
  unsigned n = 0;
  while (n < max && cq_.head != kNoSlot) {
    QpSlot& s = *qps_[cq_.head];
    n += drain_completions(s, out + n, max - n);
    if (s.qp->has_completions()) break;  // max reached
    pop_front(cq_).on_cq = false;
  }
  return n;
}

}  // namespace droce::engine
