// DPDK telemetry of the running lab switch: /droce/switch (its state and ports) and
// /droce/switch_port,<i> (one port's counters and queue), as droce-switch prints them each second.
#pragma once

namespace droce::engine {
class LabSwitch;
}

namespace droce::sw {

// Registers the commands. Called before EAL starts: the telemetry socket appears inside
// rte_eal_init, and a client that finds it then must get an answer, not DPDK's null for an
// unknown command. Until a switch is published /droce/switch says {"state": "starting",
// "ports": 0}; after it is gone, "stopped"; /droce/switch_port,<i> answers only while it runs.
void register_switch_telemetry();

// Publishes `sw` to the commands ("running") for as long as it lives.
class SwitchTelemetry {
 public:
  explicit SwitchTelemetry(const engine::LabSwitch& sw);
  ~SwitchTelemetry();
  SwitchTelemetry(const SwitchTelemetry&) = delete;
  SwitchTelemetry& operator=(const SwitchTelemetry&) = delete;
};

}  // namespace droce::sw
