// droce's recovery offer in RDMA-CM private data (apps/common/recovery_offer.h): offers round-trip,
// and anything that is not exactly one (a Linux peer's zeros, a foreign or damaged record) is no
// offer, with its reason, leaving the output untouched.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>

#include "apps/common/recovery_offer.h"

using namespace droce;
using namespace droce::apps;

TEST_CASE("recovery offer: SR and go-back-N offers round-trip in a REQ's 56 bytes", "[apps][rping]") {
  for (const RecoveryOffer in :
       {RecoveryOffer{rc::Recovery::kSelectiveRepeat, 128}, RecoveryOffer{rc::Recovery::kGoBackN, 1},
        RecoveryOffer{rc::Recovery::kSelectiveRepeat, 17}}) {
    std::uint8_t b[56] = {};
    encode_recovery_offer(in, b);
    CHECK(std::memcmp(b, "DRSR\x01", 5) == 0);
    RecoveryOffer out;
    REQUIRE(decode_recovery_offer(b, sizeof b, out) == OfferRefusal::kNone);
    CHECK(out.recovery == in.recovery);
    CHECK(out.sr_bdp_pkts == in.sr_bdp_pkts);
  }
}

TEST_CASE("recovery offer: the exact bytes", "[apps][rping]") {
  std::uint8_t b[kRecoveryOfferBytes];
  encode_recovery_offer(RecoveryOffer{rc::Recovery::kSelectiveRepeat, 0x80}, b);
  const std::uint8_t want[] = {'D', 'R', 'S', 'R', 1, 1, 0x00, 0x80};
  CHECK(std::memcmp(b, want, sizeof want) == 0);
}

TEST_CASE("recovery offer: what is not exactly an offer is refused with its reason", "[apps][rping]") {
  std::uint8_t good[56] = {};
  encode_recovery_offer(RecoveryOffer{rc::Recovery::kSelectiveRepeat, 64}, good);
  auto refused = [](const std::uint8_t* b, std::size_t len) {
    RecoveryOffer o{rc::Recovery::kSelectiveRepeat, 99};
    const OfferRefusal r = decode_recovery_offer(b, len, o);
    CHECK(o.recovery == rc::Recovery::kSelectiveRepeat);  // untouched
    CHECK(o.sr_bdp_pkts == 99);
    return r;
  };
  const std::uint8_t zeros[196] = {};  // Linux rping's REQ and REP
  CHECK(refused(zeros, 56) == OfferRefusal::kNoMagic);
  CHECK(refused(zeros, 196) == OfferRefusal::kNoMagic);
  CHECK(refused(good, 7) == OfferRefusal::kTooShort);
  CHECK(refused(nullptr, 0) == OfferRefusal::kTooShort);
  std::uint8_t b[56];
  std::memcpy(b, good, sizeof b);
  b[3] = 'N';  // droce-gen's "DRGN"
  CHECK(refused(b, sizeof b) == OfferRefusal::kNoMagic);
  std::memcpy(b, good, sizeof b);
  b[4] = 2;
  CHECK(refused(b, sizeof b) == OfferRefusal::kBadVersion);
  std::memcpy(b, good, sizeof b);
  b[5] = 2;
  CHECK(refused(b, sizeof b) == OfferRefusal::kBadRecovery);
  std::memcpy(b, good, sizeof b);
  b[6] = 0;
  b[7] = 0;
  CHECK(refused(b, sizeof b) == OfferRefusal::kBadCap);
  b[7] = 129;
  CHECK(refused(b, sizeof b) == OfferRefusal::kBadCap);
  b[6] = 1;
  b[7] = 0;
  CHECK(refused(b, sizeof b) == OfferRefusal::kBadCap);
  CHECK(std::string(offer_refusal_name(OfferRefusal::kBadCap)) == "bad_cap");
  CHECK(std::string(offer_refusal_name(OfferRefusal::kNoMagic)) == "no_magic");
}
