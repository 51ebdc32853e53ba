// Strong big-endian integer types for wire headers (network byte order, IBTA vol. 1 §5.2).
#pragma once

#include <cstddef>
#include <cstdint>

namespace droce::wire {

// Each type is a byte array, so it has alignment 1: headers built from them are packed
// without compiler attributes and can be read at any offset of a frame without UB.
// Construction from a host value is explicit and reading back is `.value()`, so a host
// integer can never be stored into a wire field by accident.
template <std::size_t N, typename Host>
class BeInt {
 public:
  static_assert(N >= 1 && N <= sizeof(Host));
  static constexpr Host kMax =
      N == sizeof(Host) ? static_cast<Host>(~Host{0}) : static_cast<Host>((Host{1} << (8 * N)) - 1);

  constexpr BeInt() = default;
  constexpr explicit BeInt(Host v) { set(v); }

  [[nodiscard]] constexpr Host value() const {
    Host v = 0;
    for (std::size_t i = 0; i < N; ++i) v = static_cast<Host>((v << 8) | bytes_[i]);
    return v;
  }
  // Values wider than the field are truncated to its low N bytes (24-bit QPNs and PSNs).
  constexpr void set(Host v) {
    for (std::size_t i = 0; i < N; ++i) bytes_[N - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  constexpr bool operator==(const BeInt&) const = default;

 private:
  std::uint8_t bytes_[N] = {};
};

using Be16 = BeInt<2, std::uint16_t>;
using Be24 = BeInt<3, std::uint32_t>;
using Be32 = BeInt<4, std::uint32_t>;
using Be64 = BeInt<8, std::uint64_t>;

static_assert(sizeof(Be16) == 2 && alignof(Be16) == 1);
static_assert(sizeof(Be24) == 3 && alignof(Be24) == 1);
static_assert(sizeof(Be32) == 4 && alignof(Be32) == 1);
static_assert(sizeof(Be64) == 8 && alignof(Be64) == 1);
static_assert(Be24(0x123456).value() == 0x123456);
static_assert(Be24(0xFF123456).value() == 0x123456);

}  // namespace droce::wire
