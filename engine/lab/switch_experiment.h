// SwitchExperiment: N droce senders and one receiver around a LabSwitch, all in this process on net_ring
// links — the live DCQCN/PFC experiment: a shaped bottleneck towards the receiver, senders that
// start and stop on a schedule, and a time series of every sender's DCQCN rate, goodput and the
// bottleneck queue.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/memory_region.h"
#include "engine/core/status.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/lab/lab_switch.h"
#include "engine/lab/ring_link.h"

namespace droce::engine {

struct SwitchExperimentConfig {
  std::uint32_t senders = 2;
  double bottleneck_gbps = 2;  // the switch's egress towards the receiver
  bool dcqcn = true;           // senders' reaction point (the receiver always answers CE with CNPs)
  dcqcn::DcqcnParams params = dcqcn::DcqcnParams::paper(10e9);  // line_rate_bps: the senders' ceiling
  LabSwitchConfig sw;  // marking, buffer, PFC; ports, routes and pool are filled in
  std::uint32_t message_bytes = 16384;
  std::uint32_t inflight = 8;  // WRITEs outstanding per sender
  std::uint32_t mtu = 1024;
  double duration_ms = 200;
  std::vector<double> start_ms;  // per sender (default 0); a later start shows convergence
  std::vector<double> stop_ms;   // per sender (default: the end)
  // Each sender keeps sending past its stop (and the run's end, within the 5 s drain) until this
  // many of its WRITEs have completed: the schedule is wall time, and a process descheduled on a
  // busy machine may otherwise see a late starter's window pass with nothing sent. 0: none.
  std::uint32_t min_messages_per_sender = 0;
  double sample_us = 500;
  std::uint8_t dscp = 26;  // priority 3, the lossless class
  // The QPs' first PSNs are drawn (docs/hardening.md, "First PSNs"): from this seed when given
  // (droce-switch's --seed), else from the OS's entropy.
  std::optional<std::uint64_t> psn_seed;
  rte_mempool* pool = nullptr;
};

struct SwitchExperimentSample {
  double t_ms = 0;
  std::vector<double> rate_gbps;     // DCQCN rate per sender (its ceiling when cc is off)
  std::vector<double> goodput_gbps;  // payload acknowledged per sender over the sample
  std::uint64_t queue_bytes = 0;     // bottleneck egress queue
  std::uint64_t ecn_marked = 0;      // frames the bottleneck marked CE during the sample
  std::uint64_t cnps = 0;            // CNPs the receiver sent during the sample
};

struct SwitchExperimentSender {
  std::uint64_t messages = 0, bytes = 0, errors = 0;
  std::uint64_t cnps_handled = 0, cnps_ignored = 0, rate_cuts = 0;
  std::uint64_t retransmitted = 0;
  std::uint64_t pfc_pauses = 0, pfc_paused_ns = 0;
  double final_rate_gbps = 0;
};

struct SwitchExperimentResult {
  std::vector<SwitchExperimentSample> samples;
  std::vector<SwitchExperimentSender> senders;
  SwitchPortCounters bottleneck;            // the receiver's switch port
  std::vector<SwitchPortCounters> ingress;  // each sender's switch port
  std::uint64_t receiver_cnps_sent = 0, receiver_ecn_marked = 0;
  bool data_ok = false;  // every WRITE completed and the target equals the source
};

class SwitchExperiment {
 public:
  [[nodiscard]] static std::unique_ptr<SwitchExperiment> create(const SwitchExperimentConfig& cfg, Status& err);
  ~SwitchExperiment();
  // Runs the schedule (bounded by duration plus a drain of at most 5 s) and reports.
  [[nodiscard]] SwitchExperimentResult run();
  // The senders' endpoints, then the receiver's (their counters, for reports).
  [[nodiscard]] std::vector<const RcEndpoint*> endpoints() const {
    std::vector<const RcEndpoint*> v;
    for (const auto& e : eps_) v.push_back(e.get());
    return v;
  }

 private:
  SwitchExperiment() = default;
  void poll(std::uint64_t now_tsc);

  SwitchExperimentConfig cfg_;
  std::vector<std::unique_ptr<RingLink>> links_;  // sender i: links_[i]; receiver: the last
  std::unique_ptr<LabSwitch> sw_;
  std::vector<std::unique_ptr<MemoryRegistry>> mem_;
  std::vector<std::unique_ptr<RcEndpoint>> eps_;  // senders, then the receiver
  std::vector<std::uint32_t> sender_qpn_;
  std::vector<std::vector<std::uint8_t>> src_;  // per sender
  std::vector<std::uint8_t> dst_;               // the receiver's region: one slice per sender
  std::vector<rc::MemoryRegion> src_mr_;
  rc::MemoryRegion dst_mr_{};
};

}  // namespace droce::engine
