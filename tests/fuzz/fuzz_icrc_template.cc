// libFuzzer target: the ICRC by a QP's template (icrc_template.h) against the full CRC. A frame A
// teaches the template; frame B is A with the input's edits (offset, XOR) applied, so B differs
// from A in a few bytes (per-frame fields, invariant ones, variant ones, payload) or many. Any
// difference from icrc_compute, or a template kept over a frame whose invariant bytes differ, traps.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "protocols/wire/icrc.h"
#include "protocols/wire/icrc_template.h"

using namespace droce::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const bool ipv6 = (data[0] & 1) != 0;
  const std::size_t header = ipv6 ? 60 : 40;
  // A: the input's next bytes up to a length the input picks (headers at least, up to 4 KiB more).
  const std::size_t len = header + (static_cast<std::size_t>(data[1]) << 4 | (data[2] & 0x0F));
  std::vector<std::uint8_t> a(len, 0);  // exact size: ASan sees any read past the covered bytes
  std::size_t i = 3;
  for (std::size_t k = 0; k < len && i < size; ++k) a[k] = data[i++];
  std::vector<std::uint8_t> b = a;
  // The rest: (offset, XOR) edits of B, each offset two bytes.
  for (; i + 3 <= size; i += 3) b[(static_cast<std::size_t>(data[i]) << 8 | data[i + 1]) % len] ^= data[i + 2];
  const auto n = static_cast<std::uint32_t>(len);
  IcrcTemplate t;
  if (icrc_by_template(t, a.data(), n, ipv6) != icrc_compute(a.data(), n, ipv6)) std::abort();
  const bool same_invariants = icrc_template_matches(t, b.data(), ipv6);
  const std::uint32_t misses = t.misses;
  if (icrc_by_template(t, b.data(), n, ipv6) != icrc_compute(b.data(), n, ipv6)) std::abort();
  if (t.misses != misses + (same_invariants ? 0 : 1)) std::abort();
  // The transmit form (no comparison) on the template it now holds, which B's headers match.
  if (icrc_from_template(t, b.data(), n) != icrc_compute(b.data(), n, ipv6)) std::abort();
  return 0;
}
