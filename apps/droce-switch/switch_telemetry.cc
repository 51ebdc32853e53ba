// The lab switch's telemetry commands (see switch_telemetry.h). They run on DPDK's telemetry
// thread under a lock that keeps the switch from going away meanwhile, and read what the polling
// thread counts as aligned 64-bit loads: recent values, never torn ones.
#include "apps/droce-switch/switch_telemetry.h"

#include <droce/engine/core/telemetry_params.h>
#include <droce/engine/lab/lab_switch.h>
#include <rte_telemetry.h>

#include <mutex>
#include <span>
#include <string>

namespace droce::sw {
namespace {

std::mutex g_mu;
const engine::LabSwitch* g_sw = nullptr;
const char* g_state = "starting";  // "running" while g_sw is set, then "stopped"

std::uint64_t load(const std::uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_RELAXED); }

int cmd_switch(const char*, const char*, rte_tel_data* d) {
  std::lock_guard<std::mutex> lock(g_mu);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "state", g_state);
  rte_tel_data_add_dict_u64(d, "ports", g_sw == nullptr ? 0 : g_sw->ports());
  return 0;
}

int cmd_switch_port(const char*, const char* params, rte_tel_data* d) {
  std::uint32_t i = 0;
  std::string reason;
  static constexpr const char* kNames[] = {"port index"};
  if (!engine::parse_telemetry_ids(params, std::span(&i, 1), kNames, reason))
    return engine::telemetry_refuse(d, reason);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_sw == nullptr) return engine::telemetry_refuse(d, std::string("the switch is ") + g_state);
  if (i >= g_sw->ports())
    return engine::telemetry_refuse(d, "no port " + std::to_string(i) + ": the switch has " +
                                           std::to_string(g_sw->ports()) + " (0 to " +
                                           std::to_string(g_sw->ports() - 1) + ")");
  const engine::SwitchPortCounters& c = g_sw->counters(i);
  rte_tel_data_start_dict(d);
  const struct {
    const char* name;
    const std::uint64_t& v;
  } fields[] = {{"rx_frames", c.rx_frames},
                {"rx_bytes", c.rx_bytes},
                {"tx_frames", c.tx_frames},
                {"tx_bytes", c.tx_bytes},
                {"flooded", c.flooded},
                {"tail_drops", c.tail_drops},
                {"tx_drops", c.tx_drops},
                {"ecn_marked", c.ecn_marked},
                {"queue_bytes", c.queue_bytes},
                {"queue_frames", c.queue_frames},
                {"queue_max_bytes", c.queue_max_bytes},
                {"ingress_bytes", c.ingress_bytes},
                {"pfc_pause_sent", c.pfc_pause_sent},
                {"pfc_resume_sent", c.pfc_resume_sent},
                {"pfc_pause_received", c.pfc_pause_received},
                {"pfc_paused_ns", c.pfc_paused_ns}};
  for (const auto& f : fields) rte_tel_data_add_dict_u64(d, f.name, load(f.v));
  return 0;
}

}  // namespace

void register_switch_telemetry() {
  static std::once_flag once;
  std::call_once(once, [] {
    rte_telemetry_register_cmd("/droce/switch", cmd_switch,
                               "The lab switch: its state (starting, running, stopped) and number of ports. No "
                               "parameters");
    rte_telemetry_register_cmd("/droce/switch_port", cmd_switch_port,
                               "One switch port's counters and egress queue, while the switch runs. Parameters: int "
                               "port index");
  });
}

SwitchTelemetry::SwitchTelemetry(const engine::LabSwitch& sw) {
  register_switch_telemetry();
  std::lock_guard<std::mutex> lock(g_mu);
  g_sw = &sw;
  g_state = "running";
}

SwitchTelemetry::~SwitchTelemetry() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_sw = nullptr;
  g_state = "stopped";
}

}  // namespace droce::sw
