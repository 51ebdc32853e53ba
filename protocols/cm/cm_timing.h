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

}  // namespace droce::cm
