// droce-switch: a port's counters by their JSON names, the by-class arrays under by_class.
#include "apps/droce-switch/port_json.h"

namespace droce::sw {

nlohmann::json port_json(const engine::SwitchPortCounters& c) {
  return {{"rx_frames", c.rx_frames},
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
          {"pfc_pause_sent", c.pfc_pause_sent},
          {"pfc_resume_sent", c.pfc_resume_sent},
          {"pfc_pause_received", c.pfc_pause_received},
          {"pfc_paused_ns", c.pfc_paused_ns},
          {"rule_drops", c.rule_drops},
          {"pfc_watchdog_trips", c.pfc_watchdog_trips},
          {"pfc_watchdog_restores", c.pfc_watchdog_restores},
          {"pfc_watchdog_drops", c.pfc_watchdog_drops},
          {"slow_receiver_pauses", c.slow_receiver_pauses},
          {"slow_receiver_resumes", c.slow_receiver_resumes},
          {"slow_receiver_max_bytes", c.slow_receiver_max_bytes},
          {"by_class", nlohmann::json{{"queue_tx_frames", c.queue_tx_frames},
                                      {"queue_tail_drops", c.queue_tail_drops},
                                      {"prio_pause_sent", c.prio_pause_sent},
                                      {"prio_pause_received", c.prio_pause_received},
                                      {"prio_paused_ns", c.prio_paused_ns}}}};
}

}  // namespace droce::sw
