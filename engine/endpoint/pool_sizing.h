// How many mbufs an endpoint's pool needs, from what the endpoint will hold at its worst: the
// port's RX ring and one burst, the TX ring and the endpoint's TX backlog (three mbufs per
// zero-copy frame: header, attached payload, pad+ICRC trailer), the received messages its
// message-view QPs may hold (rq_depth views per QP, each up to max_message_bytes in PMTU-sized
// frames), and what sits in the mempool's per-lcore caches. A pool smaller than that does not
// fail at once: it fails under load, as RX drops counted no_rx_buffer and TX deferred (docs/api.md).
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"

namespace droce::engine {

struct EndpointPoolDemand {
  // The port queue (PortConfig's rx_desc/tx_desc) the endpoint polls.
  std::uint32_t rx_desc = 1024;
  std::uint32_t tx_desc = 1024;
  // Its QPs: how many receive as message views (RecvMode::kMessageViews; posted-buffer QPs copy
  // each frame out at once and hold none), their rq_depth, largest message and path MTU.
  std::uint32_t view_qps = 0;
  std::uint32_t rq_depth = 256;
  std::uint32_t max_message_bytes = 1u << 20;
  std::uint32_t pmtu = 1024;
  // How frames leave (EndpointTransport): zero-copy frames take three mbufs, inlined and copied ones one.
  bool zero_copy_tx = true;
  std::uint32_t tx_inline_bytes = 256;
  std::uint32_t largest_send_payload = 1u << 20;  // the largest message this endpoint sends
  // The pool's per-lcore cache (PoolConfig::cache) and how many lcores take from the pool.
  std::uint32_t cache = 256;
  std::uint32_t lcores = 1;
};

struct EndpointPoolSize {
  std::uint64_t rx = 0;                    // RX ring + one burst in hand
  std::uint64_t tx = 0;                    // TX ring + the endpoint's TX backlog, per frame's mbufs
  std::uint64_t views = 0;                 // received messages held as views
  std::uint64_t caches = 0;                // per-lcore caches (a cache holds up to 1.5 x its size)
  std::uint64_t needed = 0;                // the sum
  std::uint32_t mbufs = 0;                 // PoolConfig::mbufs: the sum rounded up to 2^n - 1 (the mempool's best size)
  std::uint16_t data_room = 0;             // PoolConfig::data_room: one whole frame of this PMTU, headroom included
  [[nodiscard]] std::string text() const;  // "16383 mbufs: RX 1056 + TX 6144 + views ... "
};

// Ok and `out`, or kInvalidArgument naming the field out of range; kNoMemory when the pool would
// need more than a mempool holds (2^32 - 1 mbufs): fewer view QPs, a smaller rq_depth or
// max_message_bytes, or posted-buffer QPs.
[[nodiscard]] Status size_endpoint_pool(const EndpointPoolDemand& d, EndpointPoolSize& out);

}  // namespace droce::engine
