// 24-bit packet sequence number arithmetic (IBTA vol. 1 §9.7.1): the only place PSNs are compared.
#pragma once

#include <cstdint>

namespace droce::wire {

inline constexpr std::uint32_t kPsnMask = 0xFFFFFF;
// Half the PSN space: a PSN more than this ahead is treated as behind (the spec's
// "valid PSN region" for duplicates is the 2^23 PSNs before ePSN, §9.7.5.1.2).
inline constexpr std::int32_t kPsnHalfSpace = 1 << 23;

[[nodiscard]] constexpr std::uint32_t psn_add(std::uint32_t psn, std::int64_t n) {
  return static_cast<std::uint32_t>(static_cast<std::int64_t>(psn) + n) & kPsnMask;
}
[[nodiscard]] constexpr std::uint32_t psn_next(std::uint32_t psn) { return psn_add(psn, 1); }

// Signed distance a - b in the circular 24-bit space, in [-2^23, 2^23).
// Shifting into the top 24 bits of an int32 makes the wrap fall out of two's complement.
[[nodiscard]] constexpr std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>((a - b) << 8) >> 8;
}
[[nodiscard]] constexpr bool psn_lt(std::uint32_t a, std::uint32_t b) { return psn_diff(a, b) < 0; }
[[nodiscard]] constexpr bool psn_le(std::uint32_t a, std::uint32_t b) { return psn_diff(a, b) <= 0; }
[[nodiscard]] constexpr bool psn_gt(std::uint32_t a, std::uint32_t b) { return psn_diff(a, b) > 0; }
[[nodiscard]] constexpr bool psn_ge(std::uint32_t a, std::uint32_t b) { return psn_diff(a, b) >= 0; }

static_assert(psn_diff(0x000001, 0xFFFFFF) == 2);
static_assert(psn_lt(0xFFFFFF, 0x000000));
static_assert(psn_add(0xFFFFFF, 1) == 0);
static_assert(psn_add(0, -1) == 0xFFFFFF);

}  // namespace droce::wire
