// SwitchCore: the leaf-spine from the ports and their /32 routes; the port's --egress-gbps is its
// leaf's port towards it, the failure switches' ports are endpoints.
#include "apps/droce-switch/switch_core.h"

#include <string>

namespace droce::sw {

namespace {

engine::Status bad(const std::string& m) { return engine::Status::error(engine::StatusCode::kInvalidArgument, m); }

}  // namespace

std::unique_ptr<SwitchCore> SwitchCore::create(const engine::LabSwitchConfig& sw,
                                               const engine::SwitchExperimentFabric& fabric, engine::Status& err) {
  std::unique_ptr<SwitchCore> c(new SwitchCore());
  c->ports_ = sw.ports.size();
  if (!fabric.on()) {
    c->star_ = engine::LabSwitch::create(sw, err);
    return c->star_ ? std::move(c) : nullptr;
  }
  const auto p = static_cast<std::uint32_t>(sw.ports.size());
  if (p % fabric.leaves != 0) {
    err = bad("--fabric: " + std::to_string(p) + " ports do not divide into " + std::to_string(fabric.leaves) +
              " leaves");
    return nullptr;
  }
  engine::LeafSpineConfig lc;
  lc.leaves = fabric.leaves;
  lc.spines = fabric.spines;
  lc.endpoints_per_leaf = p / fabric.leaves;
  // Each port's host: its one /32 route (the options allow no other kind on a leaf-spine).
  lc.ipv4.assign(p, 0);
  std::vector<bool> named(p, false);
  for (const engine::SwitchRoute& r : sw.routes) {
    if (r.out >= p) {
      err = bad("--route: no port " + std::to_string(r.out) + " (" + std::to_string(p) + " ports)");
      return nullptr;
    }
    lc.ipv4[r.out] = r.prefix;
    named[r.out] = true;
  }
  for (std::uint32_t i = 0; i < p; ++i)
    if (!named[i]) {
      err = bad("--fabric: port " + std::to_string(i) +
                " has no host: give each port its host's address, --route A.B.C.D/32=PORT");
      return nullptr;
    }
  for (std::uint32_t i = 0; i < p; ++i) {
    lc.endpoint_ports.push_back(engine::FramePort::ethdev(sw.ports[i]));
    lc.to_endpoints.push_back(engine::LinkQueueParams{i < sw.egress_gbps.size() ? sw.egress_gbps[i] : 0, 0, {}});
  }
  lc.leaf = sw;
  lc.spine = sw;
  lc.uplink.gbps = lc.downlink.gbps = fabric.uplink_gbps;
  lc.ecmp = fabric.ecmp;
  lc.link_failures = fabric.link_failures;
  if (err = engine::apply_link_specs(fabric.links, lc); !err.ok()) return nullptr;
  lc.stuck_endpoints.assign(sw.stuck_ports.begin(), sw.stuck_ports.end());
  lc.slow_endpoints = sw.slow_receivers;
  lc.pool = sw.pool;
  c->ls_ = engine::LeafSpine::create(lc, err);
  return c->ls_ ? std::move(c) : nullptr;
}

}  // namespace droce::sw
