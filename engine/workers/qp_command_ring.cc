// QpCommandRing: fixed-size QP commands on an rte_ring (multi-producer, single consumer).
#include "engine/workers/qp_command_ring.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "engine/workers/tsan_handover.h"

namespace droce::engine {

std::unique_ptr<QpCommandRing> QpCommandRing::create(const std::string& tag, std::uint32_t size, Status& err) {
  std::unique_ptr<QpCommandRing> r(new QpCommandRing());
  r->ring_ =
      rte_ring_create_elem(tag.c_str(), sizeof(QpCommand), size, rte_socket_id(), RING_F_SC_DEQ | RING_F_EXACT_SZ);
  if (r->ring_ == nullptr) {
    err = Status::error(StatusCode::kNoMemory, "workers: cannot create the control ring " + tag + " of " +
                                                   std::to_string(size) + " commands: " + rte_strerror(rte_errno));
    return nullptr;
  }
  err = Status();
  return r;
}

QpCommandRing::~QpCommandRing() { rte_ring_free(ring_); }

bool QpCommandRing::post(const QpCommand& c) {
  tsan_handing_over(ring_);
  QpCommand copy = c;  // DPDK 22.11's rte_ring_enqueue_elem takes a non-const pointer
  return rte_ring_enqueue_elem(ring_, &copy, sizeof(QpCommand)) == 0;
}

unsigned QpCommandRing::take(QpCommand* out, unsigned max) {
  const unsigned got = rte_ring_dequeue_burst_elem(ring_, out, sizeof(QpCommand), max, nullptr);
  if (got != 0) tsan_taken_over(ring_);
  return got;
}

}  // namespace droce::engine
