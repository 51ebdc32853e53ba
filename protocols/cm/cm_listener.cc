// Service table and the stateless REJ for REQs nobody listens for.
#include "protocols/cm/cm_listener.h"

namespace droce::cm {

bool CmListener::listen(std::uint64_t service_id) {
  if (listening(service_id)) return true;
  if (count_ >= kMaxServices) return false;
  services_[count_++] = service_id;
  return true;
}

void CmListener::unlisten(std::uint64_t service_id) {
  for (std::uint32_t i = 0; i < count_; ++i) {
    if (services_[i] == service_id) {
      services_[i] = services_[--count_];
      return;
    }
  }
}

bool CmListener::listening(std::uint64_t service_id) const {
  for (std::uint32_t i = 0; i < count_; ++i)
    if (services_[i] == service_id) return true;
  return false;
}

bool CmListener::take(const CmMessage& req, std::uint32_t local_comm_id, std::uint8_t* rej_mad) const {
  const auto* r = std::get_if<CmReq>(&req.body);
  if (r != nullptr && listening(r->service_id)) return true;
  encode_rej_for(req, local_comm_id, RejReason::kInvalidServiceId, rej_mad);
  return false;
}

void encode_rej_for(const CmMessage& msg, std::uint32_t local_comm_id, RejReason reason, std::uint8_t* out) {
  CmRej rej;
  rej.local_comm_id = local_comm_id;
  rej.remote_comm_id = cm_sender_comm_id(msg.body);
  rej.message = std::holds_alternative<CmRep>(msg.body) ? RejTarget::kRep : RejTarget::kReq;
  rej.reason = static_cast<std::uint16_t>(reason);
  encode_cm(rej, msg.header.tid, out);
}

}  // namespace droce::cm
