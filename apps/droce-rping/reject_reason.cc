// REJ reasons in words (see reject_reason.h).
#include "apps/droce-rping/reject_reason.h"

namespace droce::rping {

const char* reject_reason_text(std::uint16_t reason) {
  // IBTA vol. 1 table 112, by code (1..33).
  static constexpr const char* kTexts[] = {
      nullptr,
      "no QP available",
      "no EE context available",
      "no resources",
      "timeout",
      "unsupported request",
      "invalid communication ID",
      "invalid communication instance",
      // What a Linux or droce CM answers a REQ for a port nobody listens on.
      "invalid service ID: nobody listens on that port",
      "invalid transport type",
      "stale connection",
      "RDC does not exist",
      "invalid primary GID",
      "invalid primary LID",
      "invalid primary SL",
      "invalid primary traffic class",
      "invalid primary hop limit",
      "invalid primary packet rate",
      // Linux answers this to a REQ whose alternate path has a LID or GID but no usable GID.
      "invalid alternate GID",
      "invalid alternate LID",
      "invalid alternate SL",
      "invalid alternate traffic class",
      "invalid alternate hop limit",
      "invalid alternate packet rate",
      "port CM redirect",
      "port redirect",
      "invalid path MTU",
      "insufficient responder resources",
      "rejected by the server application",
      "invalid RNR retry count",
      "duplicate local communication ID",
      "invalid class version",
      "invalid primary flow label",
      "invalid alternate flow label",
  };
  constexpr std::uint16_t kCount = sizeof(kTexts) / sizeof(kTexts[0]);
  return reason > 0 && reason < kCount ? kTexts[reason] : "a reason IBTA table 112 does not list";
}

}  // namespace droce::rping
