// Command-line values as users type them: strict numbers and printable quotes, shared by every app.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace droce::apps {

using engine::Status;
using engine::StatusCode;

// `text` made safe for a one-line message: control bytes become '?', long text is cut. A hostile
// argument must not break the "one error line" promise (a newline inside it would).
[[nodiscard]] std::string printable(std::string_view text);
// The same in single quotes, as messages show values.
[[nodiscard]] std::string quoted(std::string_view text);

// Suffixes a number may take. kKiloMega: perftest's -s 64K (K, M binary). kBinary: sizes, K/M/G =
// 2^10/2^20/2^30 (KiB, MiB, GiB). kDecimal: rates and counts, K/M/G = 10^3/10^6/10^9.
enum class Suffixes : std::uint8_t { kNone, kKiloMega, kBinary, kDecimal };

// A real number in [lo, hi]: the whole text, finite (nan, inf and overflow are refused, since NaN
// passes any `v < lo || v > hi` test), after any suffix's factor. Ok, or kInvalidArgument and one
// message naming `option`.
[[nodiscard]] Status parse_real(std::string_view option, std::string_view text, double lo, double hi, double& out,
                                Suffixes suffixes = Suffixes::kNone);

// An integer in [lo, hi]: decimal, 0x hex, or an exact integer in decimal notation such as 1e6;
// no sign, no fraction, no wrap. Ok, or kInvalidArgument and one message naming `option`.
[[nodiscard]] Status parse_uint(std::string_view option, std::string_view text, std::uint64_t lo, std::uint64_t hi,
                                std::uint64_t& out, Suffixes suffixes = Suffixes::kNone);

// The same into a narrower unsigned field; `hi` defaults to the field's maximum.
template <typename T>
[[nodiscard]] Status parse_uint(std::string_view option, std::string_view text, std::uint64_t lo, std::uint64_t hi,
                                T& out, Suffixes suffixes = Suffixes::kNone) {
  static_assert(std::numeric_limits<T>::is_integer && !std::numeric_limits<T>::is_signed);
  std::uint64_t v = 0;
  const std::uint64_t top = hi < std::numeric_limits<T>::max() ? hi : std::numeric_limits<T>::max();
  Status s = parse_uint(option, text, lo, top, v, suffixes);
  if (s.ok()) out = static_cast<T>(v);
  return s;
}

// RoCE's path MTU (IBTA 9.8: 256, 512, 1024, 2048 or 4096 payload bytes a packet), not an
// Ethernet MTU: Ok and `out`, or one message that says so and which Ethernet MTU carries which
// path MTU (users coming from `ip link` type 1500 or 9000).
[[nodiscard]] Status parse_ib_mtu(std::string_view option, std::string_view text, std::uint32_t& out);

}  // namespace droce::apps
