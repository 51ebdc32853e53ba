// libFuzzer target: steer_peek on arbitrary bytes must never read past the frame; what it calls
// RoCEv2 must agree with the full parser's DestQP whenever the parser accepts the frame.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "protocols/wire/parse.h"
#include "protocols/wire/steer.h"

using namespace droce::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  // An exact-size heap copy so ASan sees any read past the end.
  const std::vector<std::uint8_t> frame(data, data + size);
  const auto len = static_cast<std::uint32_t>(frame.size());
  const SteerPeek p = steer_peek(frame.data(), len);
  PacketInfo pi;
  ParseOptions lax;
  lax.verify_icrc = false;
  lax.verify_ip_checksum = false;
  if (parse_frame(frame.data(), len, pi, lax) == DropReason::kNone) {
    // Every frame the endpoint would accept is steered by its QPN.
    if (p.cls != SteerClass::kRoceV2 || p.dest_qpn != pi.dest_qpn) std::abort();
  }
  return 0;
}
