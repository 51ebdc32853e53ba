// A droce peer's loss-recovery offer in RDMA-CM user private data (docs/selective-repeat.md,
// "Negotiating over RDMA-CM"): the active side puts it in its REQ (the 56 bytes after the rdma_cm
// header), the passive side answers with its acceptance in the REP (the first bytes of its 196).
// 8 bytes, big-endian: 0 magic "DRSR" | 4 version | 5 recovery (0 gbn, 1 sr) | 6 SR cap u16.
// A Linux rping (or any other consumer) sends zeros there: anything that is not exactly a valid
// offer decodes as "no offer", which means go-back-N, with a reason for counters and messages.
#pragma once

#include <droce/protocols/rc/qp_attr.h>

#include <cstddef>
#include <cstdint>

namespace droce::apps {

inline constexpr std::uint32_t kRecoveryOfferMagic = 0x44525352;  // "DRSR"
inline constexpr std::uint8_t kRecoveryOfferVersion = 1;
inline constexpr std::size_t kRecoveryOfferBytes = 8;

struct RecoveryOffer {
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  std::uint16_t sr_bdp_pkts = 0;  // the sender's SR in-flight cap, 1..rc::kSrMaxBdpPkts
};

// Why bytes are no offer (kNone: they are one). The names are report/counter keys.
enum class OfferRefusal : std::uint8_t { kNone, kTooShort, kNoMagic, kBadVersion, kBadRecovery, kBadCap };
inline constexpr std::size_t kOfferRefusalCount = 6;
[[nodiscard]] const char* offer_refusal_name(OfferRefusal r);

void encode_recovery_offer(const RecoveryOffer& o, std::uint8_t out[kRecoveryOfferBytes]);
// Reads the first kRecoveryOfferBytes of `in` (what follows is the record's future, not read).
// On a refusal `out` is left as it was.
[[nodiscard]] OfferRefusal decode_recovery_offer(const std::uint8_t* in, std::size_t len, RecoveryOffer& out);

}  // namespace droce::apps
