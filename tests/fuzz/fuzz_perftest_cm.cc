// libFuzzer target: perftest -R's 56-byte key message (engine/exchange/perftest_cm_exchange.h,
// parse_perftest_dest) from a hostile peer: the input is one comm-QP message, of any length, as
// a heap copy of exactly that length (ASan sees a read past it). The session's other comm
// messages (version, MTU, BW report) go through perftest_exchange.h's parsers, which fuzz_perftest
// covers. Properties: a message is accepted exactly when it is 56 bytes with LID and out_reads
// within 16 bits and QPN and PSN within 24; an accepted one formats back to its bytes less what
// the reader ignores (the pad at 20, srqn at 48, gid_index at 52: zeros in ours) and parses
// again to the same keys.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/exchange/perftest_cm_exchange.h"

using namespace droce::engine;

namespace {

std::uint32_t be32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | p[3];
}

bool same(const PerftestKeys& a, const PerftestKeys& b) {
  return a.lid == b.lid && a.out_reads == b.out_reads && a.qpn == b.qpn && a.psn == b.psn && a.rkey == b.rkey &&
         a.vaddr == b.vaddr && std::memcmp(a.gid, b.gid, 16) == 0 && a.srqn == b.srqn;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 128) return 0;  // the comm QP's receives are 56 bytes; a little over is enough
  const std::vector<std::uint8_t> m(data, data + size);
  PerftestKeys k;
  const bool ok = parse_perftest_dest(m.data(), m.size(), k).ok();
  const bool valid = size == kPerftestDestBytes && be32(data) <= 0xFFFF && be32(data + 4) <= 0xFFFF &&
                     be32(data + 8) <= 0xFFFFFF && be32(data + 12) <= 0xFFFFFF;
  if (ok != valid) __builtin_trap();
  if (!ok) return 0;
  if (k.qpn > 0xFFFFFF || k.psn > 0xFFFFFF || k.srqn != 0) __builtin_trap();
  std::uint8_t out[kPerftestDestBytes];
  format_perftest_dest(k, out);
  std::uint8_t want[kPerftestDestBytes];
  std::memcpy(want, m.data(), kPerftestDestBytes);
  std::memset(want + 20, 0, 4);
  std::memset(want + 48, 0, 8);
  if (std::memcmp(out, want, kPerftestDestBytes) != 0) __builtin_trap();
  PerftestKeys again;
  if (!parse_perftest_dest(out, sizeof out, again).ok() || !same(again, k)) __builtin_trap();
  return 0;
}
