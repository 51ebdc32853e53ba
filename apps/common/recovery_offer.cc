// The recovery offer's codec (see recovery_offer.h).
#include "apps/common/recovery_offer.h"

namespace droce::apps {

namespace {

constexpr std::uint8_t kWireGbn = 0;
constexpr std::uint8_t kWireSr = 1;

}  // namespace

const char* offer_refusal_name(OfferRefusal r) {
  switch (r) {
    case OfferRefusal::kNone:
      return "none";
    case OfferRefusal::kTooShort:
      return "too_short";
    case OfferRefusal::kNoMagic:
      return "no_magic";
    case OfferRefusal::kBadVersion:
      return "bad_version";
    case OfferRefusal::kBadRecovery:
      return "bad_recovery";
    case OfferRefusal::kBadCap:
      return "bad_cap";
  }
  return "?";
}

void encode_recovery_offer(const RecoveryOffer& o, std::uint8_t out[kRecoveryOfferBytes]) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(kRecoveryOfferMagic >> (24 - 8 * i));
  out[4] = kRecoveryOfferVersion;
  out[5] = o.recovery == rc::Recovery::kSelectiveRepeat ? kWireSr : kWireGbn;
  out[6] = static_cast<std::uint8_t>(o.sr_bdp_pkts >> 8);
  out[7] = static_cast<std::uint8_t>(o.sr_bdp_pkts);
}

OfferRefusal decode_recovery_offer(const std::uint8_t* in, std::size_t len, RecoveryOffer& out) {
  if (in == nullptr || len < kRecoveryOfferBytes) return OfferRefusal::kTooShort;
  std::uint32_t magic = 0;
  for (int i = 0; i < 4; ++i) magic = (magic << 8) | in[i];
  if (magic != kRecoveryOfferMagic) return OfferRefusal::kNoMagic;
  if (in[4] != kRecoveryOfferVersion) return OfferRefusal::kBadVersion;
  if (in[5] != kWireGbn && in[5] != kWireSr) return OfferRefusal::kBadRecovery;
  const auto cap = static_cast<std::uint16_t>((in[6] << 8) | in[7]);
  // The cap is a QP attribute's range (rc::QpAttr::sr_bdp_pkts): 0, or more than kSrMaxBdpPkts,
  // cannot be an offer.
  if (cap == 0 || cap > rc::kSrMaxBdpPkts) return OfferRefusal::kBadCap;
  out.recovery = in[5] == kWireSr ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN;
  out.sr_bdp_pkts = cap;
  return OfferRefusal::kNone;
}

}  // namespace droce::apps
