// The endpoint telemetry commands. They run on DPDK's telemetry thread while the workers write
// the counters: each value is read as one aligned 64-bit load (what DPDK's own ethdev statistics
// do), so a reader sees a recent value, never a torn one.
#include "engine/endpoint/endpoint_telemetry.h"

#include <rte_telemetry.h>

#include <iterator>
#include <mutex>
#include <span>
#include <string>

#include "engine/core/telemetry_params.h"
#include "engine/endpoint/endpoint_directory.h"
#include "engine/endpoint/qp_telemetry.h"
#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {
namespace {

struct Field {
  const char* name;
  std::uint64_t EndpointCounters::*member;
};
constexpr Field kFields[] = {
    {"rx_frames", &EndpointCounters::rx_frames},
    {"tx_frames", &EndpointCounters::tx_frames},
    {"tx_zero_copy_frames", &EndpointCounters::tx_zero_copy_frames},
    {"tx_inline_frames", &EndpointCounters::tx_inline_frames},
    {"tx_payload_bytes", &EndpointCounters::tx_payload_bytes},
    {"tx_payload_bytes_copied", &EndpointCounters::tx_payload_bytes_copied},
    {"tx_payload_bytes_inlined", &EndpointCounters::tx_payload_bytes_inlined},
    {"tx_alloc_failures", &EndpointCounters::tx_alloc_failures},
    {"tx_build_failures", &EndpointCounters::tx_build_failures},
    {"tx_backlog_drops", &EndpointCounters::tx_backlog_drops},
    {"rx_view_messages", &EndpointCounters::rx_view_messages},
    {"rx_view_bytes", &EndpointCounters::rx_view_bytes},
    {"rx_view_bytes_copied", &EndpointCounters::rx_view_bytes_copied},
    {"rx_view_drops", &EndpointCounters::rx_view_drops},
    {"rx_linearized", &EndpointCounters::rx_linearized},
    {"np_ecn_marked_roce_packets", &EndpointCounters::np_ecn_marked_roce_packets},
    {"np_cnp_sent", &EndpointCounters::np_cnp_sent},
    {"rp_cnp_handled", &EndpointCounters::rp_cnp_handled},
    {"rp_cnp_ignored", &EndpointCounters::rp_cnp_ignored},
    {"cnp_unknown_qp", &EndpointCounters::cnp_unknown_qp},
    {"cnp_tx_failures", &EndpointCounters::cnp_tx_failures},
    {"pacer_waits", &EndpointCounters::pacer_waits},
    {"pfc_pause_frames", &EndpointCounters::pfc_pause_frames},
    {"pfc_resume_frames", &EndpointCounters::pfc_resume_frames},
    {"pfc_other_frames", &EndpointCounters::pfc_other_frames},
    {"pfc_paused_ns", &EndpointCounters::pfc_paused_ns},
    {"pfc_watchdog_trips", &EndpointCounters::pfc_watchdog_trips},
    {"pfc_watchdog_restores", &EndpointCounters::pfc_watchdog_restores},
    {"pfc_watchdog_ignored", &EndpointCounters::pfc_watchdog_ignored},
    {"tx_qp_turns", &EndpointCounters::tx_qp_turns},
    {"timer_fires", &EndpointCounters::timer_fires},
    {"arp_requests_answered", &EndpointCounters::arp_requests_answered},
    {"arp_requests_learned", &EndpointCounters::arp_requests_learned},
    {"arp_replies_learned", &EndpointCounters::arp_replies_learned},
    {"arp_malformed", &EndpointCounters::arp_malformed},
    {"arp_ignored", &EndpointCounters::arp_ignored},
    {"arp_requests_sent", &EndpointCounters::arp_requests_sent},
    {"arp_announcements_sent", &EndpointCounters::arp_announcements_sent},
    {"arp_resolve_failures", &EndpointCounters::arp_resolve_failures},
    {"arp_tx_failures", &EndpointCounters::arp_tx_failures},
    {"nd_solicitations_answered", &EndpointCounters::nd_solicitations_answered},
    {"nd_solicitations_learned", &EndpointCounters::nd_solicitations_learned},
    {"nd_advertisements_learned", &EndpointCounters::nd_advertisements_learned},
    {"nd_malformed", &EndpointCounters::nd_malformed},
    {"nd_ignored", &EndpointCounters::nd_ignored},
    {"nd_solicitations_sent", &EndpointCounters::nd_solicitations_sent},
    {"nd_announcements_sent", &EndpointCounters::nd_announcements_sent},
    {"nd_resolve_failures", &EndpointCounters::nd_resolve_failures},
    {"nd_tx_failures", &EndpointCounters::nd_tx_failures},
};
// Every counter is exported: the struct is this table's fields plus the drops by reason (each
// exported as drop_<reason>), so a counter added without its row here fails to build.
static_assert(sizeof(EndpointCounters) == (std::size(kFields) + wire::kDropReasonCount) * sizeof(std::uint64_t),
              "an EndpointCounters member is missing from kFields");

std::uint64_t load(const std::uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_RELAXED); }

// Adds ep's counters into `sum` (and its QPs and views into qps/views).
void accumulate(const RcEndpoint& ep, EndpointCounters& sum, std::uint64_t& qps, std::uint64_t& views) {
  const EndpointCounters& c = ep.counters();
  for (const Field& f : kFields) sum.*f.member += load(c.*f.member);
  for (std::size_t r = 0; r < wire::kDropReasonCount; ++r) sum.rx_drops[r] += load(c.rx_drops[r]);
  qps += ep.qp_count();
  views += ep.views_held();
}

// QP1's counters (RDMA-CM), zeros included, refusals by rule.
void add_cm_counters(rte_tel_data* d, const CmCounters& c) {
  for (const CmCounterField& f : kCmCounterFields) rte_tel_data_add_dict_u64(d, f.name, load(c.*f.member));
  for (std::size_t r = 1; r < wire::kUdRefusalCount; ++r) {
    const std::string key = "cm_ud_" + std::string(wire::ud_refusal_name(static_cast<wire::UdRefusal>(r)));
    rte_tel_data_add_dict_u64(d, key.c_str(), load(c.ud_refused[r]));
  }
  for (std::size_t r = 1; r < cm::kMadRefusalCount; ++r) {
    const std::string key = "cm_mad_" + std::string(cm::mad_refusal_name(static_cast<cm::MadRefusal>(r)));
    rte_tel_data_add_dict_u64(d, key.c_str(), load(c.mad_refused[r]));
  }
}

void add_counters(rte_tel_data* d, const EndpointCounters& c) {
  for (const Field& f : kFields) rte_tel_data_add_dict_u64(d, f.name, c.*f.member);
  for (std::size_t r = 1; r < wire::kDropReasonCount; ++r) {
    const std::string key = "drop_" + std::string(wire::drop_reason_name(static_cast<wire::DropReason>(r)));
    rte_tel_data_add_dict_u64(d, key.c_str(), c.rx_drops[r]);
  }
}

int cmd_endpoints(const char*, const char*, rte_tel_data* d) {
  rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
  for (std::uint32_t id : EndpointDirectory::instance().ids()) rte_tel_data_add_array_int(d, static_cast<int>(id));
  return 0;
}

int cmd_endpoint_stats(const char*, const char* params, rte_tel_data* d) {
  std::uint32_t id = 0;
  std::string reason;
  static constexpr const char* kNames[] = {"endpoint id"};
  if (!parse_telemetry_ids(params, std::span(&id, 1), kNames, reason)) return telemetry_refuse(d, reason);
  EndpointCounters c;
  std::uint64_t qps = 0, views = 0;
  std::uint16_t port = 0, queue = 0;
  std::uint32_t qpn_base = 0;
  CmCounters cm;
  if (!EndpointDirectory::instance().with(id, [&](const RcEndpoint& ep) {
        accumulate(ep, c, qps, views);
        cm = ep.cm_counters();
        port = ep.config().queues.port_id;
        queue = ep.config().queues.queue;
        qpn_base = ep.config().transport.qpn_base;
      }))
    return telemetry_refuse(d, "no endpoint " + std::to_string(id) + " in this process (/droce/endpoints lists them)");
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "port", port);
  rte_tel_data_add_dict_u64(d, "queue", queue);
  rte_tel_data_add_dict_u64(d, "qpn_base", qpn_base);
  rte_tel_data_add_dict_u64(d, "qps", qps);
  rte_tel_data_add_dict_u64(d, "views_held", views);
  add_counters(d, c);
  add_cm_counters(d, cm);
  return 0;
}

int cmd_endpoint_totals(const char*, const char*, rte_tel_data* d) {
  EndpointCounters c;
  std::uint64_t qps = 0, views = 0, n = 0;
  EndpointDirectory::instance().for_each([&](const RcEndpoint& ep) {
    accumulate(ep, c, qps, views);
    ++n;
  });
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "endpoints", n);
  rte_tel_data_add_dict_u64(d, "qps", qps);
  rte_tel_data_add_dict_u64(d, "views_held", views);
  add_counters(d, c);
  return 0;
}

}  // namespace

void register_endpoint_telemetry() {
  static std::once_flag once;
  std::call_once(once, [] {
    rte_telemetry_register_cmd("/droce/endpoints", cmd_endpoints,
                               "droce's RC endpoints (one per worker). No parameters");
    rte_telemetry_register_cmd("/droce/endpoint_stats", cmd_endpoint_stats,
                               "One endpoint's counters and drop reasons. Parameters: int endpoint id");
    rte_telemetry_register_cmd("/droce/endpoint_totals", cmd_endpoint_totals,
                               "Every endpoint's counters summed. No parameters");
    register_qp_telemetry();
  });
}

}  // namespace droce::engine
