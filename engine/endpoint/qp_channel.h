// QpChannel: hands work requests from an application thread to the worker lcore that owns a QP,
// and completions and message views back, through Boost.Lockfree single-producer/single-consumer
// queues.
#pragma once

#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <cstdint>

#include "engine/endpoint/message_view.h"
#include "engine/endpoint/rc_endpoint.h"
#include "protocols/rc/rc_qp.h"

namespace droce::engine {

// One application thread on one side, the QP's worker on the other: no locks, no allocation
// after construction, and the worker never blocks — when the QP's own queue is full the request
// waits in the channel; when the application is slow to poll, completions wait in the QP.
class QpChannel final : public ViewHome {
 public:
  explicit QpChannel(std::size_t capacity = 1024)
      : in_(capacity), out_(capacity), views_(capacity), released_(capacity) {}

  // ---- application thread ----
  // False when the channel is full: poll completions and retry.
  [[nodiscard]] bool post_send(const rc::SendWr& wr) { return in_.push(Request{true, wr, {}}); }
  [[nodiscard]] bool post_recv(const rc::RecvWr& wr) { return in_.push(Request{false, {}, wr}); }
  [[nodiscard]] bool poll(rc::Completion& out) { return out_.pop(out); }
  // Message-view QPs: the next received message (a view held in `out` before is given back
  // first). The view owns it; when it goes out of scope (or reset()) the message goes back to the
  // worker through this channel, which must outlive it. Giving back cannot fail when the
  // channel's capacity is at least the QP's rq_depth (credits bound the views out); else the
  // frames are freed, the QP's credit is lost and lost_releases() counts it.
  [[nodiscard]] bool poll_message(MessageView& out) {
    MessageParts p;
    if (!views_.pop(p)) return false;
    out = MessageView(p, this);
    return true;
  }
  // Gives a view back now (the same as v.reset()); false if the channel could not take it.
  bool release(MessageView& v) {
    if (v.home() != this) {  // not one of ours (or empty): its own home takes it
      v.reset();
      return true;
    }
    MessageParts p = v.detach();
    return hand_back(p);
  }
  // ViewHome, application thread: the message goes back to the worker.
  void give_back(MessageParts& parts) override { (void)hand_back(parts); }
  [[nodiscard]] std::uint64_t lost_releases() const { return lost_releases_.load(std::memory_order_relaxed); }

  // ---- worker lcore, once per loop iteration ----
  // Moves posted requests into the QP (as many as it takes) and its completions out (as many as
  // fit). A request the QP refuses for good (bad key, wrong state) completes with an error
  // instead of being dropped, so the application always hears back.
  void service(RcEndpoint& ep, std::uint32_t qpn) {
    rc::RcQp* q = ep.qp(qpn);
    if (q == nullptr) return;
    rc::RcQp& qp = *q;
    MessageParts back;
    while (released_.pop(back)) ep.give_back(back);
    for (int n = 0; n < kBatch; ++n) {
      if (!view_.held() && !ep.receive_message(qpn, view_)) break;
      // Across the queue as plain data; it comes back through released_ to ep.give_back.
      const MessageParts p = view_;
      if (!views_.push(p)) break;
      (void)view_.detach();
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
  // Frames of views still in the channel go back to their pool (call before EAL shuts down,
  // after the application thread has given its views back). The endpoint's credits for them
  // are not returned: a channel goes away with its QP.
  ~QpChannel() {
    MessageParts p;
    while (views_.pop(p))
      if (p.segments != nullptr) rte_pktmbuf_free(p.segments);
    while (released_.pop(p))
      if (p.segments != nullptr) rte_pktmbuf_free(p.segments);
    if (view_.held()) {
      MessageParts mine = view_.detach();
      if (mine.segments != nullptr) rte_pktmbuf_free(mine.segments);
    }
  }
  QpChannel(const QpChannel&) = delete;
  QpChannel& operator=(const QpChannel&) = delete;

  [[nodiscard]] std::uint64_t refused() const { return refused_; }

 private:
  static constexpr int kBatch = 64;
  // Into released_ for the worker; when it is full the frames are freed and the loss counted.
  bool hand_back(MessageParts& parts) {
    if (released_.push(parts)) return true;
    if (parts.segments != nullptr) rte_pktmbuf_free(parts.segments);
    lost_releases_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  struct Request {
    bool is_send = true;
    rc::SendWr send;
    rc::RecvWr recv;
  };
  boost::lockfree::spsc_queue<Request> in_;
  boost::lockfree::spsc_queue<rc::Completion> out_;
  boost::lockfree::spsc_queue<MessageParts> views_;     // worker -> application
  boost::lockfree::spsc_queue<MessageParts> released_;  // application -> worker
  MessageView view_;                                    // taken from the endpoint, waiting for room in views_
  std::atomic<std::uint64_t> lost_releases_{0};         // application-side
  Request pending_;
  bool has_pending_ = false;
  rc::Completion completion_;
  bool has_completion_ = false;
  std::uint64_t refused_ = 0;  // worker-side counter
};

}  // namespace droce::engine
