// droce-gen --split K: how one message is cut into K parts, one per QP of its stripe.
#pragma once

#include <cstdint>

namespace droce::gen {

// --split: at most this many parts per message (each part a QP of the stripe; completing a part
// looks at every QP of its stripe, so K stays small).
inline constexpr std::uint32_t kMaxSplit = 64;

struct SplitPart {
  std::uint32_t offset = 0, length = 0;
};

// Part `j` of a `size`-byte message cut into `k` parts (size >= k, checked by the options). A
// message of at least k MTUs is cut on MTU boundaries: its whole MTUs shared out as evenly as
// they go (the first parts one MTU more) and the remainder on the last part, so every part's
// packets but the last part's last are full (IBTA §9.7.7: the middle packets of a message carry
// exactly the PMTU) and parts differ by at most one packet. A shorter message is cut into parts
// of (nearly) equal bytes, each one packet. Both ends compute the same; nothing is stored.
[[nodiscard]] constexpr SplitPart split_part(std::uint32_t size, std::uint32_t k, std::uint32_t j, std::uint32_t mtu) {
  const bool by_mtu = size / mtu >= k;
  const std::uint32_t unit = by_mtu ? mtu : 1;
  const std::uint32_t units = size / unit, base = units / k, extra = units % k;
  const std::uint32_t first = j * base + (j < extra ? j : extra);  // units before part j
  const std::uint32_t mine = base + (j < extra ? 1 : 0);
  SplitPart p{first * unit, mine * unit};
  if (j == k - 1) p.length += size - units * unit;  // by_mtu: the bytes past the last whole MTU
  return p;
}

// A 10000-byte message in 4 parts at MTU 1024: 3, 2, 2 MTUs and 2 MTUs + 784 bytes; 6 bytes in 4.
static_assert(split_part(10000, 4, 0, 1024).length == 3072 && split_part(10000, 4, 1, 1024).offset == 3072);
static_assert(split_part(10000, 4, 3, 1024).offset == 7168 && split_part(10000, 4, 3, 1024).length == 2832);
static_assert(split_part(6, 4, 1, 1024).offset == 2 && split_part(6, 4, 3, 1024).offset == 5 &&
              split_part(6, 4, 3, 1024).length == 1);

}  // namespace droce::gen
