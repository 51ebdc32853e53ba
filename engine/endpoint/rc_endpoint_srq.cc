// RcEndpoint's shared receive queues: creation, attaching QPs, posting and the limit event.
#include <string>

#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {

rc::SharedRecvQueue* RcEndpoint::srq_by_id(std::uint32_t srq_id) {
  return srq_id == 0 || srq_id > srqs_.size() ? nullptr : srqs_[srq_id - 1].get();
}

const rc::SharedRecvQueue* RcEndpoint::srq(std::uint32_t srq_id) const {
  return srq_id == 0 || srq_id > srqs_.size() ? nullptr : srqs_[srq_id - 1].get();
}

// Control path: the SRQ's ring is allocated here, once.
Status RcEndpoint::create_srq(std::uint32_t depth, std::uint32_t& srq_id) {
  return create_srq(depth, rc::MrTable::kDefaultDomain, srq_id);
}

Status RcEndpoint::create_srq(std::uint32_t depth, std::uint32_t pd, std::uint32_t& srq_id) {
  if (cfg_.queues.memory == nullptr)
    return Status::error(StatusCode::kInvalidArgument, "create_srq: endpoint has no memory registry");
  if (!cfg_.queues.memory->domain_exists(pd))
    return Status::error(StatusCode::kNotFound, "create_srq: no protection domain " + std::to_string(pd));
  if (depth == 0 || depth > 65536)
    return Status::error(StatusCode::kInvalidArgument,
                         "create_srq: depth " + std::to_string(depth) + " is not 1..65536");
  if (srqs_.size() >= kMaxSrqs)
    return Status::error(StatusCode::kNoMemory,
                         "create_srq: the endpoint has its " + std::to_string(kMaxSrqs) + " SRQs");
  srqs_.push_back(std::make_unique<rc::SharedRecvQueue>(depth, cfg_.queues.memory->table(), pd));
  srq_id = static_cast<std::uint32_t>(srqs_.size());
  return {};
}

Status RcEndpoint::attach_srq(std::uint32_t qpn, std::uint32_t srq_id) {
  QpSlot* s = slot(qpn);
  if (s == nullptr) return Status::error(StatusCode::kNotFound, "attach_srq: unknown QPN " + std::to_string(qpn));
  rc::SharedRecvQueue* q = srq_by_id(srq_id);
  if (q == nullptr) return Status::error(StatusCode::kNotFound, "attach_srq: unknown SRQ " + std::to_string(srq_id));
  if (s->connected)
    return Status::error(StatusCode::kBadState, "attach_srq: QP " + std::to_string(qpn) + " is already connected");
  return s->qp->attach_srq(q);
}

Status RcEndpoint::post_srq_recv(std::uint32_t srq_id, const rc::RecvWr& wr) {
  rc::SharedRecvQueue* q = srq_by_id(srq_id);
  if (q == nullptr) return Status::error(StatusCode::kNotFound, "post_srq_recv: unknown SRQ " + std::to_string(srq_id));
  return q->post_recv(wr);
}

Status RcEndpoint::arm_srq_limit(std::uint32_t srq_id, std::uint32_t limit) {
  rc::SharedRecvQueue* q = srq_by_id(srq_id);
  if (q == nullptr) return Status::error(StatusCode::kNotFound, "arm_srq_limit: unknown SRQ " + std::to_string(srq_id));
  return q->arm_limit(limit);
}

bool RcEndpoint::srq_limit_reached(std::uint32_t srq_id) {
  rc::SharedRecvQueue* q = srq_by_id(srq_id);
  return q != nullptr && q->take_limit_event();
}

}  // namespace droce::engine
