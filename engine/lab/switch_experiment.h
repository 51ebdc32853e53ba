// SwitchExperiment: N droce senders and one receiver around a LabSwitch, all in this process on net_ring
// links — the live DCQCN/PFC experiment: a shaped bottleneck towards the receiver, senders that
// start and stop on a schedule, and a time series of every sender's DCQCN rate, goodput and the
// bottleneck queue. Or the same endpoints on a leaf-spine (LeafSpine, rte_ring links; placement in
// SwitchExperimentFabric), with a series per leaf-spine link beside.
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
#include "engine/lab/leaf_spine.h"
#include "engine/lab/link_spec.h"
#include "engine/lab/ring_link.h"

namespace droce::engine {

// The lab on a leaf-spine (leaves 0: one switch). Each leaf has N / L + 1 endpoint ports: the
// receiver on the last leaf's port 0, sender i on leaf i % L at port i / L (one further on the
// last leaf); ports left over hold no endpoint. The receiver's leaf port is the bottleneck; every
// other endpoint port is unshaped, every leaf-spine link shaped to uplink_gbps both ways.
struct SwitchExperimentFabric {
  std::uint32_t leaves = 0, spines = 0;
  double uplink_gbps = 0;  // 0: unshaped
  EcmpHashConfig ecmp;
  std::vector<LinkFailure> link_failures;  // ms from the run's start
  std::vector<LinkSpec> links;             // links with their own settings (--link)

  [[nodiscard]] bool on() const { return leaves != 0; }
  [[nodiscard]] std::uint32_t ports_per_leaf(std::uint32_t senders) const { return senders / leaves + 1; }
  // The leaf-spine endpoint index of lab endpoint i (senders 0..N-1, the receiver N).
  [[nodiscard]] std::uint32_t slot(std::uint32_t i, std::uint32_t senders) const {
    const std::uint32_t e = ports_per_leaf(senders);
    if (i == senders) return (leaves - 1) * e;
    const std::uint32_t leaf = i % leaves;
    return leaf * e + i / leaves + (leaf == leaves - 1 ? 1 : 0);
  }
  [[nodiscard]] std::uint32_t leaf_of(std::uint32_t i, std::uint32_t senders) const {
    return slot(i, senders) / ports_per_leaf(senders);
  }
};

struct SwitchExperimentConfig {
  std::uint32_t senders = 2;
  double bottleneck_gbps = 2;  // the switch's egress towards the receiver
  bool dcqcn = true;           // senders' reaction point (the receiver always answers CE with CNPs)
  dcqcn::DcqcnParams params = dcqcn::DcqcnParams::paper(10e9);  // line_rate_bps: the senders' ceiling
  LabSwitchConfig sw;  // marking, buffer, PFC; ports, routes and pool are filled in
  std::uint32_t message_bytes = 16384;
  std::uint32_t inflight = 8;  // WRITEs outstanding per sender
  std::uint32_t mtu = 1024;
  // Loss recovery of every sender's QP and of the receiver's QP for it (both ends must agree,
  // protocols/rc/qp_attr.h): droce-switch's --recovery, as droce-coll's reaches its ranks' QPs.
  rc::Recovery recovery = rc::Recovery::kGoBackN;
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
  SwitchExperimentFabric fabric;
  rte_mempool* pool = nullptr;
};

// One direction of a leaf-spine link over a sample: its egress queue now, and what it did since
// the last sample.
struct LinkDirectionSample {
  std::uint64_t queue_bytes = 0;
  double tx_gbps = 0;            // bytes it sent
  std::uint64_t ecn_marked = 0;  // frames it marked CE
  std::uint64_t pfc_pauses = 0;  // pauses received that held it
  std::uint64_t drops = 0;       // tail drops and link-down drops
};

struct LinkSample {
  LinkDirectionSample up, down;  // leaf -> spine, spine -> leaf
};

struct SwitchExperimentSample {
  double t_ms = 0;
  std::vector<double> rate_gbps;     // DCQCN rate per sender (its ceiling when cc is off)
  std::vector<double> goodput_gbps;  // payload acknowledged per sender over the sample
  std::uint64_t queue_bytes = 0;     // bottleneck egress queue
  std::uint64_t tx_bytes = 0;        // bytes the bottleneck has sent since the start (a window's utilisation)
  std::uint64_t ecn_marked = 0;      // frames the bottleneck marked CE during the sample
  std::uint64_t cnps = 0;            // CNPs the receiver sent during the sample
  std::vector<LinkSample> links;     // leaf-spine: every link, leaf-major (none on one switch)
};

struct SwitchExperimentSender {
  std::uint64_t messages = 0, bytes = 0, errors = 0;
  std::uint64_t cnps_handled = 0, cnps_ignored = 0, rate_cuts = 0;
  std::uint64_t retransmitted = 0;
  std::uint64_t pfc_pauses = 0, pfc_paused_ns = 0;
  double final_rate_gbps = 0;
  // The QP's smallest and smoothed round trips (0: never measured): the lab's base RTT, which a
  // simulator of the same lab is calibrated with (bench/fidelity).
  double min_rtt_us = 0, srtt_us = 0;
};

struct SwitchExperimentResult {
  std::vector<SwitchExperimentSample> samples;
  std::vector<SwitchExperimentSender> senders;
  SwitchPortCounters bottleneck;            // the receiver's switch port
  std::vector<SwitchPortCounters> ingress;  // each sender's switch port
  std::uint64_t receiver_cnps_sent = 0, receiver_ecn_marked = 0;
  bool data_ok = false;                   // every WRITE completed and the target equals the source
  std::vector<FabricLinkCounters> links;  // leaf-spine: every link, leaf-major
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
  // The topology (switch_experiment.cc / switch_experiment_fabric.cc); endpoint i's port id and
  // tx ring follow from it.
  [[nodiscard]] static wire::L2L3Address host(std::uint8_t net, std::uint8_t h);
  [[nodiscard]] static std::uint32_t ip_host_order(const wire::L2L3Address& a);
  // Lab endpoint i's address: sender i 10.0.1.(i + 1), the receiver 10.0.2.1.
  [[nodiscard]] wire::L2L3Address address(std::uint32_t i) const;
  [[nodiscard]] Status build_star();
  [[nodiscard]] Status build_leafspine();
  void poll(std::uint64_t now_tsc);
  void poll_leafspine(std::uint64_t now_tsc);
  // Lab endpoint i's switch port (sender i, the receiver n): the star's port or its leaf's.
  [[nodiscard]] const SwitchPortCounters& port_of(std::uint32_t i) const;
  [[nodiscard]] std::vector<LinkSample> link_sample(std::vector<FabricLinkCounters>& last, double secs) const;

  SwitchExperimentConfig cfg_;
  std::vector<std::unique_ptr<RingLink>> links_;  // sender i: links_[i]; receiver: the last
  std::unique_ptr<LabSwitch> sw_;
  std::unique_ptr<LeafSpine> ls_;  // instead of links_ and sw_ on a leaf-spine
  std::vector<std::unique_ptr<MemoryRegistry>> mem_;
  std::vector<std::unique_ptr<RcEndpoint>> eps_;  // senders, then the receiver
  std::vector<std::uint32_t> sender_qpn_;
  std::vector<std::vector<std::uint8_t>> src_;  // per sender
  std::vector<std::uint8_t> dst_;               // the receiver's region: one slice per sender
  std::vector<rc::MemoryRegion> src_mr_;
  rc::MemoryRegion dst_mr_{};
};

}  // namespace droce::engine
