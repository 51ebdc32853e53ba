// QpChannel: hands work requests from an application thread to the worker lcore that owns a QP,
// and completions back, through two Boost.Lockfree single-producer/single-consumer queues.
#pragma once

#include <cstdint>

#include <boost/lockfree/spsc_queue.hpp>

#include "engine/endpoint/message_view.h"
#include "engine/endpoint/rc_endpoint.h"
#include "protocols/rc/rc_qp.h"

namespace droce::engine {

// One application thread on one side, the QP's worker on the other: no locks, no allocation
// after construction, and the worker never blocks — when the QP's own queue is full the request
// waits in the channel; when the application is slow to poll, completions wait in the QP.
class QpChannel {
 public:
  explicit QpChannel(std::size_t capacity = 1024)
      : in_(capacity), out_(capacity), views_(capacity), released_(capacity) {}

  // ---- application thread ----
  // False when the channel is full: poll completions and retry.
  [[nodiscard]] bool post_send(const rc::SendWr& wr) { return in_.push(Request{true, wr, {}}); }
  [[nodiscard]] bool post_recv(const rc::RecvWr& wr) { return in_.push(Request{false, {}, wr}); }
  [[nodiscard]] bool poll(rc::Completion& out) { return out_.pop(out); }
  // Message-view QPs: the next received message, and giving it back. release() cannot fail
  // when the channel's capacity is at least the QP's rq_depth (credits bound the views out).
  [[nodiscard]] bool poll_message(MessageView& out) { return views_.pop(out); }
  [[nodiscard]] bool release(const MessageView& v) { return released_.push(v); }

  // ---- worker lcore, once per loop iteration ----
  // Moves posted requests into the QP (as many as it takes) and its completions out (as many as
  // fit). A request the QP refuses for good (bad key, wrong state) completes with an error
  // instead of being dropped, so the application always hears back.
  void service(RcEndpoint& ep, std::uint32_t qpn) {
    rc::RcQp* q = ep.qp(qpn);
    if (q == nullptr) return;
    rc::RcQp& qp = *q;
    MessageView v;
    while (released_.pop(v)) ep.release(v);
    for (int n = 0; n < kBatch; ++n) {
      if (!has_view_ && !ep.receive_message(qpn, view_)) break;
      has_view_ = true;
      if (!views_.push(view_)) break;
      has_view_ = false;
    }
    for (int n = 0; n < kBatch; ++n) {
      if (!has_pending_ && !in_.pop(pending_)) break;
      has_pending_ = true;
      const Status st = pending_.is_send ? qp.post_send(pending_.send)
                        : qp.attr().recv_mode == rc::RecvMode::kMessageViews
                            ? Status::fail(StatusCode::kInvalidArgument, "post_recv: this QP receives message views")
                            : qp.post_recv(pending_.recv);
      if (!st.ok()) {
        if (st.code() == StatusCode::kQueueFull) break;  // back-pressure: the request waits for the next turn
        rc::Completion c;
        c.wr_id = pending_.is_send ? pending_.send.wr_id : pending_.recv.wr_id;
        c.status = qp.state() == rc::QpState::kError ? rc::WcStatus::kWrFlushErr : rc::WcStatus::kLocProtErr;
        c.is_recv = !pending_.is_send;
        if (!out_.push(c)) break;  // application not polling: keep the request for later
        ++refused_;
      }
      has_pending_ = false;
    }
    for (int n = 0; n < kBatch; ++n) {
      if (!has_completion_ && ep.poll_cq(qpn, &completion_, 1) == 0) break;
      has_completion_ = true;
      if (!out_.push(completion_)) break;
      has_completion_ = false;
    }
  }
  // Frames of views still in the channel go back to their pool (call before EAL shuts down).
  ~QpChannel() {
    MessageView v;
    while (views_.pop(v))
      if (v.segments != nullptr) rte_pktmbuf_free(v.segments);
    while (released_.pop(v))
      if (v.segments != nullptr) rte_pktmbuf_free(v.segments);
    if (has_view_ && view_.segments != nullptr) rte_pktmbuf_free(view_.segments);
  }
  QpChannel(const QpChannel&) = delete;
  QpChannel& operator=(const QpChannel&) = delete;

  [[nodiscard]] std::uint64_t refused() const { return refused_; }

 private:
  static constexpr int kBatch = 64;
  struct Request {
    bool is_send = true;
    rc::SendWr send;
    rc::RecvWr recv;
  };
  boost::lockfree::spsc_queue<Request> in_;
  boost::lockfree::spsc_queue<rc::Completion> out_;
  boost::lockfree::spsc_queue<MessageView> views_;     // worker -> application
  boost::lockfree::spsc_queue<MessageView> released_;  // application -> worker
  MessageView view_;
  bool has_view_ = false;
  Request pending_;
  bool has_pending_ = false;
  rc::Completion completion_;
  bool has_completion_ = false;
  std::uint64_t refused_ = 0;  // worker-side counter
};

}  // namespace droce::engine
