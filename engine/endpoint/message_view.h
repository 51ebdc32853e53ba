// MessageView: a received message handed to the application without a copy — the payload bytes
// stay in the frames they arrived in, chained as one mbuf chain whose segments hold payload only.
#pragma once

#include <cstdint>
#include <cstring>

#include <rte_mbuf.h>

namespace droce::engine {

struct MessageView {
  std::uint32_t qpn = 0;
  std::uint32_t length = 0;        // payload bytes in `segments`
  std::uint32_t imm = 0;           // immediate data, valid when has_imm
  bool has_imm = false;
  bool write_with_imm = false;     // RDMA WRITE with immediate: the data went to the region; no payload here
  rte_mbuf* segments = nullptr;    // nullptr for an empty message; released with RcEndpoint::release()

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
};

}  // namespace droce::engine
