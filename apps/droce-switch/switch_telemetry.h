// DPDK telemetry of the running lab switch: /droce/switch (its ports) and
// /droce/switch_port,<i> (one port's counters and queue), as droce-switch prints them each second.
#pragma once

namespace droce::engine {
class LabSwitch;
}

namespace droce::sw {

// Publishes `sw` to the telemetry commands (registered once) for as long as it lives.
class SwitchTelemetry {
 public:
  explicit SwitchTelemetry(const engine::LabSwitch& sw);
  ~SwitchTelemetry();
  SwitchTelemetry(const SwitchTelemetry&) = delete;
  SwitchTelemetry& operator=(const SwitchTelemetry&) = delete;
};

}  // namespace droce::sw
