// GroupCmQps: CmQpControl over a WorkerGroup: direct for the port owner's QPs, commands for others.
#include "engine/workers/group_cm_qps.h"

#include <string>

#include "engine/workers/worker_group.h"

namespace droce::engine {
namespace {

Status posted(bool ok, std::uint16_t worker) {
  if (ok) return {};
  return Status::error(StatusCode::kQueueFull,
                       "CM: worker " + std::to_string(worker) + "'s control ring is full (is it polled?)");
}

}  // namespace

Status GroupCmQps::attr_in_init(std::uint32_t qpn, rc::QpAttr& out) const {
  const WorkerGroup& g = group_;
  return g.worker(g.owner_of(qpn)).endpoint().cm_qps().attr_in_init(qpn, out);
}

template <typename Local>
Status GroupCmQps::route(std::uint32_t qpn, QpCommand c, Local&& local) {
  const std::uint16_t w = group_.owner_of(qpn);
  if (w == WorkerGroup::kPortOwner) return local(group_.worker(w).endpoint().cm_qps());
  c.qpn = qpn;
  return posted(group_.worker(WorkerGroup::kPortOwner).post_command(w, c), w);
}

Status GroupCmQps::set_qp_recovery(std::uint32_t qpn, rc::Recovery recovery) {
  QpCommand c;
  c.kind = QpCommand::Kind::kSetRecovery;
  c.recovery = recovery;
  return route(qpn, c, [&](CmQpControl& own) { return own.set_qp_recovery(qpn, recovery); });
}

Status GroupCmQps::connect_agreed(std::uint32_t qpn, const wire::L2L3Address& peer, const cm::CmQpParams& agreed) {
  QpCommand c;
  c.kind = QpCommand::Kind::kConnectAgreed;
  c.peer = peer;
  c.agreed = agreed;
  return route(qpn, c, [&](CmQpControl& own) { return own.connect_agreed(qpn, peer, agreed); });
}

Status GroupCmQps::set_qp_error(std::uint32_t qpn) {
  QpCommand c;
  c.kind = QpCommand::Kind::kSetError;
  return route(qpn, c, [&](CmQpControl& own) { return own.set_qp_error(qpn); });
}

void GroupCmQps::set_waits_for_traffic(std::uint32_t qpn, bool waiting) {
  QpCommand c;
  c.kind = QpCommand::Kind::kWaitForTraffic;
  c.waiting = waiting;
  // A full ring is counted there (qp_commands_refused); the flag only speeds up establishment
  // (without it the RTU, or its resend after the REP's, still establishes the connection).
  (void)route(qpn, c, [&](CmQpControl& own) {
    own.set_waits_for_traffic(qpn, waiting);
    return Status{};
  });
}

std::uint64_t GroupCmQps::clock_ns(std::uint64_t tsc) const {
  const WorkerGroup& g = group_;
  return g.worker(WorkerGroup::kPortOwner).endpoint().cm_qps().clock_ns(tsc);
}

void GroupCmQps::qp_traffic(std::uint32_t qpn) {
  QpCommand c;
  c.kind = QpCommand::Kind::kTrafficSeen;
  c.qpn = qpn;
  // Posted by the QP's worker (this runs on its thread), counted there when refused.
  (void)group_.worker(group_.owner_of(qpn)).post_command(WorkerGroup::kPortOwner, c);
}

}  // namespace droce::engine
