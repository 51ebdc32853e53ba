// LabSwitchConfig's checks: the whole configuration (validate), and one port's own settings
// resolved against the switch's (resolved, check_port).
#include <algorithm>
#include <string>

#include "engine/lab/lab_switch.h"

namespace droce::engine {

Status LabSwitchConfig::validate() const {
  if (port_count() < 2) return Status::fail(StatusCode::kInvalidArgument, "at least two ports are needed");
  if (port_count() > 64) return Status::fail(StatusCode::kInvalidArgument, "at most 64 ports");
  for (double g : egress_gbps)
    if (!(g >= 0 && g <= 1000))
      return Status::fail(StatusCode::kInvalidArgument, "--egress-gbps: must be in [0, 1000]");
  for (const auto& r : routes) {
    if (r.out >= port_count() && r.out != kEcmpRoute)
      return Status::error(StatusCode::kInvalidArgument,
                           "--route: port index " + std::to_string(r.out) + " does not exist");
    if (r.depth == 0 || r.depth > 32)
      return Status::fail(StatusCode::kInvalidArgument, "--route: prefix length must be 1..32");
  }
  bool any_ecmp = false;
  for (const auto& r : routes) any_ecmp = any_ecmp || r.out == kEcmpRoute;
  for (const auto& r : host_routes) {
    if (r.out >= port_count() && r.out != kEcmpRoute)
      return Status::error(StatusCode::kInvalidArgument,
                           "host route: port index " + std::to_string(r.out) + " does not exist");
    any_ecmp = any_ecmp || r.out == kEcmpRoute;
    if (r.ecmp_group >= kMaxEcmpGroups)
      return Status::error(StatusCode::kInvalidArgument,
                           "host route: ECMP group " + std::to_string(r.ecmp_group) + " beyond the limit");
  }
  if (host_routes.size() > 65536) return Status::fail(StatusCode::kInvalidArgument, "at most 65536 host routes");
  if (any_ecmp && ecmp_ports.empty())
    return Status::fail(StatusCode::kInvalidArgument, "an ECMP route needs at least one ECMP port");
  if (ecmp_ports.size() > 64) return Status::fail(StatusCode::kInvalidArgument, "at most 64 ECMP ports");
  for (std::uint16_t p : ecmp_ports)
    if (p >= port_count())
      return Status::error(StatusCode::kInvalidArgument, "ECMP port " + std::to_string(p) + " does not exist");
  if ((ecmp.fields & kEcmpAll) == 0)
    return Status::fail(StatusCode::kInvalidArgument, "--ecmp-hash: name at least one field to hash");
  for (std::uint64_t b : egress_buffer_bytes)
    if (b != 0 && b < 2048)
      return Status::fail(StatusCode::kInvalidArgument, "link buffer: must hold at least one jumbo RoCE frame (2048)");
  if (kmin_bytes > kmax_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--kmin-bytes: must not exceed --kmax-bytes");
  if (!(pmax >= 0 && pmax <= 1)) return Status::fail(StatusCode::kInvalidArgument, "--pmax: must be in [0, 1]");
  if (buffer_bytes < 2048)
    return Status::fail(StatusCode::kInvalidArgument, "--buffer-bytes: must hold at least one jumbo RoCE frame (2048)");
  if (!(delay_us >= 0 && delay_us <= 1e6))
    return Status::fail(StatusCode::kInvalidArgument, "--delay-us: must be in [0, 1e6]");
  if (!(shaper_burst_us >= 0 && shaper_burst_us <= 1e6))
    return Status::fail(StatusCode::kInvalidArgument, "--shaper-burst-us: must be in [0, 1e6]");
  if (pfc_priority > 7) return Status::fail(StatusCode::kInvalidArgument, "--pfc-priority: must be 0..7");
  for (std::uint8_t p : dscp_priority)
    if (p > 7) return Status::fail(StatusCode::kInvalidArgument, "--dscp-map: a priority must be 0..7");
  for (std::uint8_t q : priority_queue)
    if (q > 7) return Status::fail(StatusCode::kInvalidArgument, "--priority-queues: a queue must be 0..7");
  if (cnp_priority > 7 && cnp_priority != kCnpByDscp)
    return Status::fail(StatusCode::kInvalidArgument, "--cnp-priority: must be 0..7");
  if (scheduler == SwitchScheduler::kWeighted)
    for (std::uint32_t w : queue_weights)
      if (w == 0 || w > 1000)
        return Status::fail(StatusCode::kInvalidArgument, "--scheduler: a queue weight must be 1..1000");
  if (pfc && pfc_xon_bytes >= pfc_xoff_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--pfc-xon-bytes: must be below --pfc-xoff-bytes");
  if (pfc && pfc_xoff_bytes >= buffer_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "--pfc-xoff-bytes: must be below --buffer-bytes (headroom)");
  if (pfc && pfc_pause_quanta == 0) return Status::fail(StatusCode::kInvalidArgument, "--pfc-quanta: must be > 0");
  if (!(link_gbps_for_pfc > 0)) return Status::fail(StatusCode::kInvalidArgument, "--link-gbps: must be > 0");
  for (std::uint16_t p : stuck_ports)
    if (p >= port_count())
      return Status::error(StatusCode::kInvalidArgument,
                           "--stuck-port: port index " + std::to_string(p) + " does not exist");
  if (!stuck_ports.empty() && !pfc)
    return Status::fail(StatusCode::kInvalidArgument, "--stuck-port: a stuck NIC pauses lossless classes: give --pfc");
  if (Status s = check_slow_receivers(slow_receivers, stuck_ports, port_count(), pfc, slow_receiver_buffer_bytes);
      !s.ok())
    return s;
  if (!(pfc_watchdog_ms >= 0 && pfc_watchdog_ms <= 1e6))
    return Status::fail(StatusCode::kInvalidArgument, "--pfc-watchdog-ms: must be in [0, 1e6]");
  if (port_settings.size() > port_count())
    return Status::fail(StatusCode::kInvalidArgument, "port settings: more entries than ports");
  for (std::size_t i = 0; i < port_settings.size(); ++i)
    if (Status s = check_port(i); !s.ok()) return s.context("port " + std::to_string(i) + ": ");
  if (pool == nullptr) return Status::fail(StatusCode::kInvalidArgument, "no mbuf pool");
  return {};
}

SwitchPortSettings LabSwitchConfig::resolved(std::size_t port) const {
  const SwitchPortSettings own = port < port_settings.size() ? port_settings[port] : SwitchPortSettings{};
  SwitchPortSettings r;
  r.kmin_bytes = own.kmin_bytes.value_or(kmin_bytes);
  r.kmax_bytes = own.kmax_bytes.value_or(kmax_bytes);
  r.pmax = own.pmax.value_or(pmax);
  r.pfc = own.pfc.value_or(pfc);
  r.pfc_xoff_bytes = own.pfc_xoff_bytes.value_or(pfc_xoff_bytes);
  r.pfc_xon_bytes = own.pfc_xon_bytes.value_or(pfc_xon_bytes);
  r.delay_us = own.delay_us;
  return r;
}

Status LabSwitchConfig::check_port(std::size_t port) const {
  const SwitchPortSettings& own = port_settings[port];
  const SwitchPortSettings r = resolved(port);
  if (*r.kmin_bytes > *r.kmax_bytes) return Status::fail(StatusCode::kInvalidArgument, "kmin must not exceed kmax");
  if (!(*r.pmax >= 0 && *r.pmax <= 1)) return Status::fail(StatusCode::kInvalidArgument, "pmax must be in [0, 1]");
  if (*r.pfc && !pfc)
    return Status::fail(StatusCode::kInvalidArgument,
                        "PFC on a port of a switch without PFC (the switch names no lossless priority)");
  // Thresholds given for a port without PFC would never act: refused rather than ignored.
  if (!*r.pfc && (own.pfc_xoff_bytes || own.pfc_xon_bytes))
    return Status::fail(StatusCode::kInvalidArgument, "PFC thresholds on a port without PFC");
  if (*r.pfc && *r.pfc_xon_bytes >= *r.pfc_xoff_bytes)
    return Status::fail(StatusCode::kInvalidArgument, "PFC xon must be below xoff");
  const std::uint64_t buffer =
      port < egress_buffer_bytes.size() && egress_buffer_bytes[port] != 0 ? egress_buffer_bytes[port] : buffer_bytes;
  if (*r.pfc && *r.pfc_xoff_bytes >= buffer)
    return Status::fail(StatusCode::kInvalidArgument, "PFC xoff must be below the port's buffer (headroom)");
  if (!(r.delay_us >= 0 && r.delay_us <= 1e6))
    return Status::fail(StatusCode::kInvalidArgument, "delay must be in [0, 1e6] us");
  if (!*r.pfc) {
    // A stuck NIC or a slow receiver pauses the port: meaningless on a link without PFC.
    for (std::uint16_t p : stuck_ports)
      if (p == port) return Status::fail(StatusCode::kInvalidArgument, "a stuck port needs PFC on its link");
    for (const SlowReceiverConfig& sr : slow_receivers)
      if (sr.port == port) return Status::fail(StatusCode::kInvalidArgument, "a slow receiver needs PFC on its link");
  }
  return {};
}

}  // namespace droce::engine
