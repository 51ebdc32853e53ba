// GroupCmQps: the port owner's CM reaching the QPs of every worker (docs/cm.md, "One CM per port").
// A move of the port owner's own QP is made at once; a move of another worker's QP is posted to
// that worker's control ring (QpCommandRing) and made in its poll, in the order posted, before it
// reads its next burst; a QP's first packet while it waits for the RTU comes back the same way.
#pragma once

#include <cstdint>

#include "engine/endpoint/cm_qp_control.h"
#include "engine/workers/qp_command_ring.h"

namespace droce::engine {

class WorkerGroup;

class GroupCmQps final : public CmQpControl, public CmTrafficNotice {
 public:
  explicit GroupCmQps(WorkerGroup& group) : group_(group) {}

  // Reads the QP where it is: the consumer hands a QP to the CM (cm_connect, cm_accept) after
  // creating it, and the creating thread and the port owner's are ordered by the consumer (the
  // apps create and connect before the workers run on their lcores). A QP in INIT that is not
  // connected is not written by its worker's poll.
  [[nodiscard]] Status attr_in_init(std::uint32_t qpn, rc::QpAttr& out) const override;
  [[nodiscard]] Status set_qp_recovery(std::uint32_t qpn, rc::Recovery recovery) override;
  // For another worker's QP: ok once posted (the worker makes the move; one it refuses, a QP
  // destroyed meanwhile, is counted as qp_commands_failed there). kQueueFull when the ring is full.
  [[nodiscard]] Status connect_agreed(std::uint32_t qpn, const wire::L2L3Address& peer,
                                      const cm::CmQpParams& agreed) override;
  [[nodiscard]] Status set_qp_error(std::uint32_t qpn) override;
  void set_waits_for_traffic(std::uint32_t qpn, bool waiting) override;
  [[nodiscard]] std::uint64_t clock_ns(std::uint64_t tsc) const override;
  // CmTrafficNotice, on the QP owner's thread: to the port owner's ring.
  void qp_traffic(std::uint32_t qpn) override;

 private:
  // The one rule of every move: the port owner's own QP through `local` (its CmQpControl), at
  // once; another worker's QP as command `c` (qpn filled in) on that worker's ring.
  template <typename Local>
  Status route(std::uint32_t qpn, QpCommand c, Local&& local);

  WorkerGroup& group_;
};

}  // namespace droce::engine
