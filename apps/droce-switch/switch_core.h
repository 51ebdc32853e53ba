// SwitchCore: what droce-switch runs between the process's ports — one LabSwitch, or (--fabric
// leafspine:L,S) a LeafSpine whose endpoints are the ports: P ports over L leaves, P / L each in
// port order, every port's host named by its /32 --route (the fabric routes on host addresses and
// floods nothing).
#pragma once

#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/leaf_spine.h>
#include <droce/engine/lab/switch_experiment.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace droce::sw {

class SwitchCore {
 public:
  // `sw`: ports, egress rates, routes and pool filled in; `fabric` off: one switch.
  [[nodiscard]] static std::unique_ptr<SwitchCore> create(const engine::LabSwitchConfig& sw,
                                                          const engine::SwitchExperimentFabric& fabric,
                                                          engine::Status& err);
  [[nodiscard]] std::size_t ports() const { return ports_; }
  // The switch port facing process port i (the star's, or its leaf's).
  [[nodiscard]] const engine::SwitchPortCounters& counters(std::size_t i) const {
    return ls_ ? ls_->endpoint_port(static_cast<std::uint32_t>(i)) : star_->counters(i);
  }
  // The one switch (telemetry publishes it); null on a leaf-spine.
  [[nodiscard]] const engine::LabSwitch* star() const { return star_.get(); }
  // Every leaf-spine link (none on one switch).
  [[nodiscard]] std::vector<engine::FabricLinkCounters> links() const {
    return ls_ ? ls_->fabric_links() : std::vector<engine::FabricLinkCounters>{};
  }
  // The origin of the link failures' times.
  void start_clock(std::uint64_t now_tsc) {
    if (ls_) ls_->start_clock(now_tsc);
  }
  void poll(std::uint64_t now_tsc) {
    if (ls_)
      ls_->poll(now_tsc);
    else
      star_->poll(now_tsc);
  }
  void finish() {
    if (ls_) ls_->finish();
    if (star_) star_->finish();
  }

 private:
  SwitchCore() = default;
  std::size_t ports_ = 0;
  std::unique_ptr<engine::LabSwitch> star_;
  std::unique_ptr<engine::LeafSpine> ls_;
};

}  // namespace droce::sw
