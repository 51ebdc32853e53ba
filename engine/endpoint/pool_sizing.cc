// Sizing an endpoint's mbuf pool (see pool_sizing.h).
#include "engine/endpoint/pool_sizing.h"

#include <rte_mbuf.h>

#include "engine/endpoint/control_frames.h"
#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {
namespace {

// The largest RoCEv2 headers before a payload: Ethernet + 802.1Q (18), IPv6 (40), UDP (8), BTH
// (12), RETH (16) and ImmDt (4) of a WRITE with immediate, or AtomicETH (28); then pad (3) and
// the ICRC (4). 128 covers them all.
constexpr std::uint32_t kFrameOverhead = 128;

std::uint32_t round_to_pow2_minus_1(std::uint64_t n) {
  std::uint64_t p = 1;
  while (p - 1 < n) p <<= 1;
  return static_cast<std::uint32_t>(p - 1);
}

}  // namespace

std::string EndpointPoolSize::text() const {
  return std::to_string(mbufs) + " mbufs of " + std::to_string(data_room) + " B: RX " + std::to_string(rx) + " + TX " +
         std::to_string(tx) + " + views " + std::to_string(views) + " + caches " + std::to_string(caches) + " = " +
         std::to_string(needed) + ", rounded up to 2^n - 1";
}

Status size_endpoint_pool(const EndpointPoolDemand& d, EndpointPoolSize& out) {
  if (d.pmtu != 256 && d.pmtu != 512 && d.pmtu != 1024 && d.pmtu != 2048 && d.pmtu != 4096)
    return Status::error(StatusCode::kInvalidArgument, "pmtu: must be 256, 512, 1024, 2048 or 4096");
  if (d.rx_desc == 0 || d.tx_desc == 0)
    return Status::error(StatusCode::kInvalidArgument, "rx_desc and tx_desc: must be at least 1");
  if (d.view_qps > kMaxEndpointQps)
    return Status::error(StatusCode::kInvalidArgument,
                         "view_qps: at most " + std::to_string(kMaxEndpointQps) + " QPs per endpoint");
  if (d.view_qps > 0 && (d.rq_depth == 0 || d.max_message_bytes == 0))
    return Status::error(StatusCode::kInvalidArgument, "rq_depth and max_message_bytes: must be at least 1");
  if (d.lcores == 0) return Status::error(StatusCode::kInvalidArgument, "lcores: at least the endpoint's own");
  EndpointPoolSize s;
  s.rx = std::uint64_t{d.rx_desc} + RcEndpoint::kRxBurst;
  // A frame whose payload is attached holds its header, the payload's mbuf and the trailer until
  // the PMD has sent it; a copied or inlined payload rides in the header mbuf.
  const bool attaches = d.zero_copy_tx && d.largest_send_payload > d.tx_inline_bytes;
  const std::uint64_t per_frame = attaches ? 3 : 1;
  s.tx = (std::uint64_t{d.tx_desc} + EndpointTxBatch::kSlots) * per_frame;
  const std::uint64_t frames_per_message = (std::uint64_t{d.max_message_bytes} + d.pmtu - 1) / d.pmtu;
  s.views = std::uint64_t{d.view_qps} * d.rq_depth * frames_per_message;
  s.caches = std::uint64_t{d.cache} * 3 / 2 * d.lcores;
  s.needed = s.rx + s.tx + s.views + s.caches;
  if (s.needed > UINT32_MAX - 1)
    return Status::error(StatusCode::kNoMemory,
                         "the pool would need " + std::to_string(s.needed) + " mbufs (views alone " +
                             std::to_string(s.views) + ": " + std::to_string(d.view_qps) + " QPs x rq_depth " +
                             std::to_string(d.rq_depth) + " x " + std::to_string(frames_per_message) +
                             " frames of a largest message); a mempool holds at most 2^32 - 1");
  s.mbufs = round_to_pow2_minus_1(s.needed);
  s.data_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + d.pmtu + kFrameOverhead);
  out = s;
  return {};
}

}  // namespace droce::engine
