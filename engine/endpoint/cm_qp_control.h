// CmQpControl: what the endpoint's CM (EndpointCm) may ask of the endpoint about its RC QPs, and
// nothing more: read a QP that waits in INIT for a connection, choose its loss recovery, move it
// to RTR and RTS with what REQ and REP agreed, move it to ERROR, say whether its first packet
// stands for the RTU, and read the endpoint's clock. The RcEndpoint implements it privately and
// hands it to its EndpointCm; control path only (no call per packet but the RTU's stand-in).
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "protocols/cm/cm_connection.h"
#include "protocols/rc/qp_attr.h"
#include "protocols/wire/build.h"

namespace droce::engine {

class CmQpControl {
 public:
  // The attributes of QP `qpn` while it is in INIT and not connected (what REQ and REP offer);
  // kNotFound when there is no such QP, kBadState when it is past INIT.
  [[nodiscard]] virtual Status attr_in_init(std::uint32_t qpn, rc::QpAttr& out) const = 0;
  // RcEndpoint::set_recovery, for a QP still in INIT (the active side at the REP).
  [[nodiscard]] virtual Status set_qp_recovery(std::uint32_t qpn, rc::Recovery recovery) = 0;
  // INIT -> RTR -> RTS towards `peer` with the parameters REQ and REP settled (IBTA §12.7): they
  // override the QP's own (remote QPN and PSN, path MTU, READ credits, retries, timeout, P_Key).
  [[nodiscard]] virtual Status connect_agreed(std::uint32_t qpn, const wire::L2L3Address& peer,
                                              const cm::CmQpParams& agreed) = 0;
  // RcEndpoint::set_error: the QP goes to ERROR (a disconnect, a reject, a timeout).
  [[nodiscard]] virtual Status set_qp_error(std::uint32_t qpn) = 0;
  // While `waiting`, the QP's next received packet is handed to EndpointCm::on_qp_traffic: on a
  // QP the CM accepted, the peer's first packet stands for an RTU it may have lost (§12.9.7).
  virtual void set_waits_for_traffic(std::uint32_t qpn, bool waiting) = 0;
  // The endpoint's clock (ns) at TSC reading `tsc`.
  [[nodiscard]] virtual std::uint64_t clock_ns(std::uint64_t tsc) const = 0;

 protected:
  ~CmQpControl() = default;
};

// With several workers (engine/workers), one CM per port holds every connection, and a QP of
// another worker waits for its RTU there: that worker's endpoint tells the port owner's CM, through
// this, that the QP received its first packet (§12.9.7: it stands for the RTU). Called on the QP
// owner's thread; the implementation hands it over (engine/workers/group_cm_qps.h).
class CmTrafficNotice {
 public:
  virtual void qp_traffic(std::uint32_t qpn) = 0;

 protected:
  ~CmTrafficNotice() = default;
};

}  // namespace droce::engine
