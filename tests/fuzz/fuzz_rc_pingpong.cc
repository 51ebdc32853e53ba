// libFuzzer target: ibv_rc_pingpong's 52-byte exchange message (engine/exchange/oob_exchange.h)
// on arbitrary bytes. The parser must never read outside the message, and what it accepts must
// format back to the same message (hex case aside) and parse again to the same fields.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/exchange/oob_exchange.h"

using namespace droce::engine;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;
  // An exact-size heap copy so ASan sees any read past the end.
  const std::vector<std::uint8_t> msg(data, data + size);
  ConnInfo c;
  if (!parse_rc_pingpong(msg.data(), msg.size(), c).ok()) return 0;
  std::uint8_t ip[4];
  (void)ipv4_from_gid(c.gid, ip);
  const std::string again = format_rc_pingpong(c);
  if (again.size() != kRcPingpongMsgBytes) __builtin_trap();
  for (std::size_t i = 0; i < kRcPingpongMsgBytes; ++i)
    if (std::tolower(msg[i]) != static_cast<unsigned char>(again[i])) __builtin_trap();
  ConnInfo d;
  if (!parse_rc_pingpong(reinterpret_cast<const std::uint8_t*>(again.data()), again.size(), d).ok()) __builtin_trap();
  if (d.lid != c.lid || d.qpn != c.qpn || d.psn != c.psn || std::memcmp(d.gid, c.gid, 16) != 0) __builtin_trap();
  if (c.qpn == 0 || c.qpn > 0xFFFFFF || c.psn > 0xFFFFFF) __builtin_trap();
  return 0;
}
