// libFuzzer target: droce's recovery offer in RDMA-CM private data (apps/common/recovery_offer.h)
// from a hostile peer: the input is a REQ's or REP's user private data of any length (a heap copy
// of exactly that length, so that ASan sees a read past it). Properties: an offer is accepted only
// when its 8 bytes are exactly a valid one (magic, version, recovery 0/1, cap 1..128), a refusal
// leaves the output as it was, and an accepted offer encodes back to the same 8 bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "apps/common/recovery_offer.h"

using namespace droce;
using namespace droce::apps;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // a REP's private data is 196 bytes, a REQ's 56 after rdma_cm's header
  const std::vector<std::uint8_t> m(data, data + size);
  RecoveryOffer o{rc::Recovery::kSelectiveRepeat, 4242};  // a value no decode may leave on a refusal
  const OfferRefusal r = decode_recovery_offer(m.data(), m.size(), o);
  const bool valid = m.size() >= kRecoveryOfferBytes && m[0] == 'D' && m[1] == 'R' && m[2] == 'S' && m[3] == 'R' &&
                     m[4] == kRecoveryOfferVersion && m[5] <= 1 && ((m[6] << 8) | m[7]) >= 1 &&
                     ((m[6] << 8) | m[7]) <= static_cast<int>(rc::kSrMaxBdpPkts);
  if ((r == OfferRefusal::kNone) != valid) __builtin_trap();
  if (r != OfferRefusal::kNone) {
    if (o.recovery != rc::Recovery::kSelectiveRepeat || o.sr_bdp_pkts != 4242) __builtin_trap();
    return 0;
  }
  std::uint8_t out[kRecoveryOfferBytes];
  encode_recovery_offer(o, out);
  if (std::memcmp(out, m.data(), kRecoveryOfferBytes) != 0) __builtin_trap();
  return 0;
}
