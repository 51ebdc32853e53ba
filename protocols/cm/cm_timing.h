// CM time encodings (the 5-bit timeout fields of the CM messages, IBTA vol. 1 §12.6): 4.096 us *
// 2^n, and the waits a CM derives from them.
#pragma once

#include <cstdint>

namespace droce::cm {

// A 5-bit CM timeout or packet lifetime exponent in nanoseconds: 4.096 us * 2^n (n 0..31;
// wider values are clamped to 31). 4096 ns * 2^31 is about 2.4 hours and fits 64 bits.
[[nodiscard]] constexpr std::uint64_t cm_time_ns(std::uint8_t n) {
  const std::uint8_t e = n > 31 ? 31 : n;
  return std::uint64_t{4096} << e;
}
static_assert(cm_time_ns(0) == 4096);
static_assert(cm_time_ns(20) == 4'294'967'296ull);  // about 4.3 s, rdma_cm's CM response timeout

// How long a side waits for the answer to a message it sent: the peer's CM response time plus
// the packet lifetime both ways (ch. 12's response-timeout rule; Linux's CM computes the same).
[[nodiscard]] constexpr std::uint64_t cm_wait_ns(std::uint8_t peer_response_timeout, std::uint8_t packet_life_time) {
  return cm_time_ns(peer_response_timeout) + 2 * cm_time_ns(packet_life_time);
}

// A peer's CM timeout fields are its own choice, up to 2.4 hours each (31): the passive side
// caps what it waits on them at rdma_cm's own CM response timeout (20, about 4.3 s), so a forged
// REQ cannot hold a connection slot for hours. A real peer asking for more gets an answer sooner
// (a resent REP is a harmless duplicate) and its own retries still run to their end.
inline constexpr std::uint8_t kMaxPeerCmResponseTimeout = 20;
[[nodiscard]] constexpr std::uint8_t capped_peer_timeout(std::uint8_t n) {
  return n > kMaxPeerCmResponseTimeout ? kMaxPeerCmResponseTimeout : n;
}

// How long the passive side keeps a REQ waiting for its consumer's accept or reject: as long
// as the active side can still be waiting for the answer (every try of the REQ, each waiting
// its remote CM response timeout plus the packet lifetime both ways), capped as above. Past it
// the active side has given up, so the slot goes (§12.9.7; the REJ says Timeout).
[[nodiscard]] constexpr std::uint64_t cm_consumer_wait_ns(std::uint8_t remote_cm_response_timeout,
                                                          std::uint8_t max_cm_retries, std::uint8_t packet_life_time) {
  const std::uint8_t tries = static_cast<std::uint8_t>((max_cm_retries > 15 ? 15 : max_cm_retries) + 1);
  return tries * cm_wait_ns(capped_peer_timeout(remote_cm_response_timeout), packet_life_time);
}

}  // namespace droce::cm
