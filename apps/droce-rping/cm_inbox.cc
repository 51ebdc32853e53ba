// CmInbox: CM events on an rte_ring (single producer, single consumer).
#include "apps/droce-rping/cm_inbox.h"

#include <droce/engine/workers/tsan_handover.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

namespace droce::rping {

using engine::Status;

std::unique_ptr<CmInbox> CmInbox::create(const std::string& tag, std::uint32_t size, Status& err) {
  std::unique_ptr<CmInbox> r(new CmInbox());
  r->ring_ = rte_ring_create_elem(tag.c_str(), sizeof(InboxEvent), size, rte_socket_id(),
                                  RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  if (r->ring_ == nullptr) {
    err = Status::error(StatusCode::kNoMemory, "cannot create the CM event ring " + tag + " of " +
                                                   std::to_string(size) + " events: " + rte_strerror(rte_errno));
    return nullptr;
  }
  err = Status();
  return r;
}

CmInbox::~CmInbox() { rte_ring_free(ring_); }

bool CmInbox::post(const InboxEvent& e) {
  engine::tsan_handing_over(ring_);  // the ring's order, declared to ThreadSanitizer
  InboxEvent copy = e;               // DPDK 22.11's rte_ring_enqueue_elem takes a non-const pointer
  return rte_ring_enqueue_elem(ring_, &copy, sizeof(InboxEvent)) == 0;
}

unsigned CmInbox::take(InboxEvent* out, unsigned max) {
  const unsigned got = rte_ring_dequeue_burst_elem(ring_, out, sizeof(InboxEvent), max, nullptr);
  if (got != 0) engine::tsan_taken_over(ring_);
  return got;
}

}  // namespace droce::rping
