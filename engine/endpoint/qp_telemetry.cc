// The QP and Linux-counter telemetry commands (see qp_telemetry.h). They run on DPDK's telemetry
// thread under the directory's lock (an endpoint cannot go away meanwhile) and read what the
// worker writes as aligned 64-bit loads: recent values, never torn ones.
#include "engine/endpoint/qp_telemetry.h"

#include <rte_telemetry.h>

#include <cstdio>
#include <span>
#include <string>

#include "engine/core/telemetry_params.h"
#include "engine/endpoint/endpoint_directory.h"
#include "engine/endpoint/linux_counter_names.h"
#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {
namespace {

const char* state_name(rc::QpState s) {
  switch (s) {
    case rc::QpState::kReset:
      return "RESET";
    case rc::QpState::kInit:
      return "INIT";
    case rc::QpState::kRtr:
      return "RTR";
    case rc::QpState::kRts:
      return "RTS";
    case rc::QpState::kError:
      return "ERROR";
  }
  return "unknown";
}

void add_linux_names(rte_tel_data* d, const CounterSums& s, bool qp_only) {
  for (const LinuxCounter& c : linux_counters())
    if (c.per_qp || !qp_only) rte_tel_data_add_dict_u64(d, c.name, c.value(s));
}

constexpr const char* kEndpointParam[] = {"endpoint id"};
constexpr const char* kQpParams[] = {"endpoint id", "QPN"};

std::string no_endpoint(std::uint32_t id) {
  return "no endpoint " + std::to_string(id) + " in this process (/droce/endpoints lists them)";
}

int cmd_qps(const char*, const char* params, rte_tel_data* d) {
  std::uint32_t id = 0;
  std::string reason;
  if (!parse_telemetry_ids(params, std::span(&id, 1), kEndpointParam, reason)) return telemetry_refuse(d, reason);
  bool found = EndpointDirectory::instance().with(id, [&](const RcEndpoint& ep) {
    rte_tel_data_start_dict(d);
    const std::uint32_t base = ep.config().transport.qpn_base;
    for (std::uint32_t i = 0; i < RTE_TEL_MAX_DICT_ENTRIES && i < ep.config().transport.max_qps; ++i) {
      const rc::RcQp* q = ep.qp_at(i);
      if (q == nullptr) break;
      rte_tel_data_add_dict_string(d, std::to_string(base + i).c_str(), state_name(q->state()));
    }
  });
  return found ? 0 : telemetry_refuse(d, no_endpoint(id));
}

int cmd_qp(const char*, const char* params, rte_tel_data* d) {
  std::uint32_t ids[2] = {};
  std::string reason;
  if (!parse_telemetry_ids(params, ids, kQpParams, reason)) return telemetry_refuse(d, reason);
  const std::uint32_t id = ids[0], qpn = ids[1];
  bool known = false;
  const bool found = EndpointDirectory::instance().with(id, [&](const RcEndpoint& ep) {
    const std::uint32_t index = qpn - ep.config().transport.qpn_base;  // wraps to a huge index below the base
    const rc::RcQp* q = ep.qp_at(index);
    if (q == nullptr) return;
    known = true;
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "qpn", qpn);
    rte_tel_data_add_dict_string(d, "state", state_name(q->state()));
    rte_tel_data_add_dict_u64(d, "dest_qpn", q->attr().dest_qpn);
    // The send queue's PSNs (sq.una: oldest unacknowledged, sq.nxt: next to send) and the
    // receive queue's (rq.epsn: next expected, rq.msn), as IBTA 9.7 names them.
    rte_tel_data_add_dict_u64(d, "sq_una", q->sq_una());
    rte_tel_data_add_dict_u64(d, "sq_nxt", q->sq_nxt());
    rte_tel_data_add_dict_u64(d, "rq_epsn", q->rq_epsn());
    rte_tel_data_add_dict_u64(d, "rq_msn", q->rq_msn());
    rte_tel_data_add_dict_u64(d, "outstanding_wrs", q->outstanding_wrs());
    // The requester's loss-recovery timer (docs/transport.md): the timeout the next expiry would
    // wait, backoff included, and the round trip it comes from (0 until measured).
    rte_tel_data_add_dict_string(d, "adaptive_rto", q->attr().adaptive_rto ? "on" : "off");
    rte_tel_data_add_dict_u64(d, "rto_us", q->rto_ns() / 1000);
    rte_tel_data_add_dict_u64(d, "pto_us", q->pto_ns() / 1000);  // the probe timeout, its backoff in (0: no probe)
    rte_tel_data_add_dict_u64(d, "srtt_us", q->srtt_ns() / 1000);
    rte_tel_data_add_dict_u64(d, "min_rtt_us", q->min_rtt_ns() / 1000);
    const dcqcn::DcqcnReactionPoint* rp = ep.dcqcn_at(index);
    const bool dcqcn = ep.config().dcqcn.reaction_point && rp != nullptr;
    rte_tel_data_add_dict_string(d, "dcqcn", dcqcn ? "on" : "off");
    if (dcqcn) {
      rte_tel_data_add_dict_u64(d, "dcqcn_rate_mbps", static_cast<std::uint64_t>(rp->rate_bps() / 1e6));
      rte_tel_data_add_dict_u64(d, "dcqcn_target_rate_mbps",
                                static_cast<std::uint64_t>(rp->state().target_rate_bps / 1e6));
      rte_tel_data_add_dict_u64(d, "dcqcn_rate_cuts", rp->state().rate_cuts);
    }
    rc::RcCounters c;
    add_rc_counters(c, q->counters());
    for (const RcCounterField& f : rc_counter_fields()) rte_tel_data_add_dict_u64(d, f.name, c.*f.member);
    // The Linux names of the same counters, prefixed: some differ in meaning from the field of
    // the same name (rnr_nak_retry_err, see docs/counters.md).
    CounterSums s;
    s.qps = c;
    for (const LinuxCounter& lc : linux_counters())
      if (lc.per_qp) rte_tel_data_add_dict_u64(d, (std::string("hw_") + lc.name).c_str(), lc.value(s));
  });
  if (!found) return telemetry_refuse(d, no_endpoint(id));
  if (!known) {
    char text[96];
    std::snprintf(text, sizeof text, "no QP 0x%06x (%u) on endpoint %u (/droce/qps,%u lists them)", qpn, qpn, id, id);
    return telemetry_refuse(d, text);
  }
  return 0;
}

int cmd_hw_counters(const char*, const char* params, rte_tel_data* d) {
  CounterSums s;
  if (params != nullptr && *params != '\0') {
    std::uint32_t id = 0;
    std::string reason;
    if (!parse_telemetry_ids(params, std::span(&id, 1), kEndpointParam, reason)) return telemetry_refuse(d, reason);
    if (!EndpointDirectory::instance().with(id, [&](const RcEndpoint& ep) { add_endpoint_and_qps(s, ep); }))
      return telemetry_refuse(d, no_endpoint(id));
  } else {
    EndpointDirectory::instance().for_each([&](const RcEndpoint& ep) { add_endpoint_and_qps(s, ep); });
  }
  rte_tel_data_start_dict(d);
  add_linux_names(d, s, false);
  return 0;
}

}  // namespace

void register_qp_telemetry() {
  // Called once, with the endpoint commands (register_endpoint_telemetry).
  rte_telemetry_register_cmd("/droce/qps", cmd_qps,
                             "An endpoint's QPs: QPN -> state (the first 256). Parameters: int endpoint id");
  // DPDK refuses a help text of 128 characters or more (RTE_TEL_MAX_STRING_LEN).
  rte_telemetry_register_cmd("/droce/qp", cmd_qp,
                             "One QP: state, PSNs, outstanding WRs, DCQCN rate, counters. Parameters: int endpoint id, "
                             "QPN (decimal or 0x hex)");
  rte_telemetry_register_cmd("/droce/hw_counters", cmd_hw_counters,
                             "Counters by their Linux hw_counters names (mlx5, rxe), of one endpoint or of all. "
                             "Parameters: [int endpoint id]");
}

}  // namespace droce::engine
