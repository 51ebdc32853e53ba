// Strict command-line numbers: the whole text, finite, in range, or one message naming the option.
#include "apps/common/cli_number.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace droce::apps {

namespace {

constexpr std::size_t kMaxQuoted = 40;  // longer values are cut: the message stays one readable line

std::string real_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool all_of(std::string_view s, bool (*pred)(char)) {
  for (char c : s)
    if (!pred(c)) return false;
  return !s.empty();
}

// strtod over the whole text, which must start like a number (no blanks, which strtod skips).
bool whole_real(std::string_view text, double& out) {
  if (text.empty() || !(is_digit(text[0]) || text[0] == '-' || text[0] == '+' || text[0] == '.')) return false;
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

// Digits only (or 0x and hex digits): strtoull cannot be fooled by a sign or blanks here.
bool whole_integer(std::string_view text, std::uint64_t& out) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (!(hex ? all_of(text.substr(2), is_hex_digit) : all_of(text, is_digit))) return false;
  const std::string s(text);
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), nullptr, hex ? 16 : 10);
  if (errno != 0) return false;
  out = v;
  return true;
}

// 1e6 or 2.0: a whole number written as a real, below 2^64.
bool whole_number_as_real(std::string_view text, std::uint64_t& out) {
  double v = 0;
  if (text.empty() || !is_digit(text[0]) || !whole_real(text, v)) return false;
  if (v != std::floor(v) || !(v < 18446744073709551616.0)) return false;
  out = static_cast<std::uint64_t>(v);
  return true;
}

// The multiplier of a trailing suffix `suffixes` allows (1 and nothing removed for none).
std::uint64_t strip_suffix(std::string_view& digits, Suffixes suffixes) {
  if (digits.empty() || suffixes == Suffixes::kNone) return 1;
  const char s = digits.back();
  const bool giga = suffixes != Suffixes::kKiloMega;
  const std::uint64_t k = suffixes == Suffixes::kDecimal ? 1000 : 1024;
  const std::uint64_t factor = s == 'K' ? k : s == 'M' ? k * k : s == 'G' && giga ? k * k * k : 1;
  if (factor != 1) digits.remove_suffix(1);
  return factor;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string q;
  for (std::size_t i = 0; i < text.size() && i < kMaxQuoted; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    q += c < 0x20 || c == 0x7F ? '?' : static_cast<char>(c);
  }
  if (text.size() > kMaxQuoted) q += "...";
  return q;
}

std::string quoted(std::string_view text) { return "'" + printable(text) + "'"; }

Status parse_real(std::string_view option, std::string_view text, double lo, double hi, double& out,
                  Suffixes suffixes) {
  std::string_view digits = text;
  const double factor = static_cast<double>(strip_suffix(digits, suffixes));
  double v = 0;
  const bool parsed = whole_real(digits, v);
  v *= factor;
  if (!parsed || !std::isfinite(v) || !(v >= lo && v <= hi))
    return Status::error(StatusCode::kInvalidArgument, std::string(option) + ": " + quoted(text) +
                                                           " is not a number in [" + real_text(lo) + ", " +
                                                           real_text(hi) + "]");
  out = v;
  return {};
}

Status parse_uint(std::string_view option, std::string_view text, std::uint64_t lo, std::uint64_t hi,
                  std::uint64_t& out, Suffixes suffixes) {
  std::string_view digits = text;
  const std::uint64_t factor = strip_suffix(digits, suffixes);
  std::uint64_t v = 0;
  const bool parsed = whole_integer(digits, v) || whole_number_as_real(digits, v);
  if (!parsed || v > hi / factor || v * factor < lo)
    return Status::error(StatusCode::kInvalidArgument, std::string(option) + ": " + quoted(text) +
                                                           " is not an integer in " + std::to_string(lo) + ".." +
                                                           std::to_string(hi));
  out = v * factor;
  return {};
}

Status parse_ib_mtu(std::string_view option, std::string_view text, std::uint32_t& out) {
  std::uint32_t m = 0;
  if (Status s = parse_uint(option, text, 0, 1u << 20, m); !s.ok()) return s;
  if (m == 256 || m == 512 || m == 1024 || m == 2048 || m == 4096) {
    out = m;
    return {};
  }
  // An Ethernet MTU must hold the path MTU plus IP, UDP, BTH, RETH, ImmDt and ICRC: about 80
  // bytes over IPv4, 100 over IPv6.
  return Status::error(StatusCode::kInvalidArgument,
                       std::string(option) + ": " + std::to_string(m) +
                           " is not an IB MTU (256, 512, 1024, 2048 or 4096): it is RoCE's path MTU, the payload "
                           "of one packet, not the Ethernet MTU; an Ethernet MTU of 1500 carries 1024, one of "
                           "4200 or more (9000 jumbo frames) carries 4096");
}

}  // namespace droce::apps
