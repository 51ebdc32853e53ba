// MessageView: a received message handed to the application without a copy — the payload bytes
// stay in the frames they arrived in, chained as one mbuf chain whose segments hold payload only.
// A view owns its message: it is move-only, and when it goes out of scope (or reset()) the frames
// go back to where it came from — the endpoint, which also returns the QP's receive credit, or
// the QpChannel that carries it back to the worker. Like a verbs object it must not outlive that
// home: release views before the endpoint or channel goes away.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace droce::engine {

// The message itself, as plain data (what crosses a lock-free queue between threads).
struct MessageParts {
  std::uint32_t qpn = 0;
  std::uint32_t length = 0;            // payload bytes in `segments`
  std::uint32_t imm = 0;               // immediate data, valid when has_imm
  std::uint32_t invalidated_rkey = 0;  // valid when has_invalidate
  bool has_imm = false;
  bool has_invalidate = false;   // a SEND with Invalidate: invalidated_rkey is no longer usable remotely
  bool write_with_imm = false;   // RDMA WRITE with immediate: the data went to the region; no payload here
  rte_mbuf* segments = nullptr;  // nullptr for an empty message
};

// Where a view's message goes back (RcEndpoint, QpChannel).
class ViewHome {
 public:
  // Takes the message back: frames, and for an endpoint the QP's receive credit.
  virtual void give_back(MessageParts& parts) = 0;

 protected:
  ~ViewHome() = default;
};

class MessageView : public MessageParts {
 public:
  MessageView() = default;
  // A message of `home`'s, held from now on by this view.
  MessageView(const MessageParts& parts, ViewHome* home) : MessageParts(parts), home_(home) {}
  ~MessageView() { reset(); }
  MessageView(MessageView&& o) noexcept : MessageParts(o), home_(std::exchange(o.home_, nullptr)) { o.clear(); }
  MessageView& operator=(MessageView&& o) noexcept {
    if (this != &o) {
      reset();
      MessageParts::operator=(o);
      home_ = std::exchange(o.home_, nullptr);
      o.clear();
    }
    return *this;
  }
  MessageView(const MessageView&) = delete;
  MessageView& operator=(const MessageView&) = delete;

  // True while the view holds a message (an empty one included: it still holds a credit).
  [[nodiscard]] bool held() const { return home_ != nullptr; }
  // Gives the message back now — what going out of scope does.
  void reset() {
    if (ViewHome* h = std::exchange(home_, nullptr); h != nullptr)
      h->give_back(*this);
    else if (segments != nullptr)
      rte_pktmbuf_free(segments);
    clear();
  }
  // Hands the message to the caller as plain data, without giving it back: the caller must give
  // it to `home()` later (a channel carrying it across threads does this).
  [[nodiscard]] MessageParts detach() {
    const MessageParts p = *this;
    home_ = nullptr;
    clear();
    return p;
  }
  [[nodiscard]] ViewHome* home() const { return home_; }

  // Calls f(const std::uint8_t* data, std::uint32_t len) for each contiguous piece, in order.
  template <typename F>
  void for_each_fragment(F&& f) const {
    for (const rte_mbuf* s = segments; s != nullptr; s = s->next)
      if (s->data_len != 0) f(rte_pktmbuf_mtod(s, const std::uint8_t*), static_cast<std::uint32_t>(s->data_len));
  }
  // The first `cap` bytes copied out (for applications that want one flat buffer); returns the
  // number copied.
  std::uint32_t copy_to(void* dst, std::uint32_t cap) const {
    std::uint32_t done = 0;
    for_each_fragment([&](const std::uint8_t* p, std::uint32_t n) {
      const std::uint32_t k = n < cap - done ? n : cap - done;
      std::memcpy(static_cast<std::uint8_t*>(dst) + done, p, k);
      done += k;
    });
    return done;
  }

 private:
  void clear() { MessageParts::operator=(MessageParts{}); }
  ViewHome* home_ = nullptr;
};

}  // namespace droce::engine
