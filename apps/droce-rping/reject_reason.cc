// REJ reasons in words (see reject_reason.h).
#include "apps/droce-rping/reject_reason.h"

#include <droce/protocols/cm/cm_messages.h>

namespace droce::rping {

const char* reject_reason_text(std::uint16_t reason) {
  using R = cm::RejReason;
  switch (static_cast<R>(reason)) {
    case R::kNoQp: return "no QP available";
    case R::kNoResources: return "no resources";
    case R::kTimeout: return "timeout";
    case R::kUnsupportedRequest: return "unsupported request";
    case R::kInvalidCommId: return "invalid communication ID";
    case R::kInvalidCommInstance: return "invalid communication instance";
    // What a Linux or droce CM answers a REQ for a port nobody listens on.
    case R::kInvalidServiceId: return "invalid service ID: nobody listens on that port";
    case R::kInvalidTransportType: return "invalid transport type";
    case R::kStaleConnection: return "stale connection";
    case R::kInvalidGid: return "invalid GID";
    case R::kInvalidMtu: return "invalid MTU";
    case R::kInsufficientResponderResources: return "insufficient responder resources";
    case R::kConsumerReject: return "rejected by the server application";
    case R::kInvalidRnrRetry: return "invalid RNR retry count";
    case R::kInvalidClassVersion: return "invalid class version";
  }
  return "see IBTA table 112";
}

}  // namespace droce::rping
