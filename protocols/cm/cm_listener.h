// The passive side's service table: which service IDs a REQ may ask for, and the REJ (Invalid
// Service ID, IBTA vol. 1 §12.6.7) for a REQ that asks for any other.
#pragma once

#include <cstdint>

#include "protocols/cm/cm_messages.h"

namespace droce::cm {

class CmListener {
 public:
  static constexpr std::uint32_t kMaxServices = 16;

  // False when the table is full (or the ID is there already: then nothing changes but true).
  bool listen(std::uint64_t service_id);
  void unlisten(std::uint64_t service_id);
  [[nodiscard]] bool listening(std::uint64_t service_id) const;

  // For a REQ no connection owns: true when a service takes it (the caller then makes a passive
  // CmConnection and hands it the REQ); false with the REJ to send in `rej_mad` (kMadBytes),
  // from `local_comm_id`, echoing the REQ's transaction ID.
  [[nodiscard]] bool take(const CmMessage& req, std::uint32_t local_comm_id, std::uint8_t* rej_mad) const;

 private:
  std::uint64_t services_[kMaxServices] = {};
  std::uint32_t count_ = 0;
};

// The REJ answering `msg` with `reason` (Message REJected: REQ), for a message no connection
// owns; its remote communication ID is the sender's.
void encode_rej_for(const CmMessage& msg, std::uint32_t local_comm_id, RejReason reason, std::uint8_t* out);

}  // namespace droce::cm
