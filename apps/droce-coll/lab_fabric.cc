// CollLab: RingFabric::star and a LabSwitch on its switch node with one /32 route per rank, or a
// LeafSpine built from the ranks' addresses; one RcEndpoint per rank transmitting into its link.
#include "apps/droce-coll/lab_fabric.h"

#include <rte_cycles.h>

namespace droce::coll {

wire::L2L3Address CollLab::address(std::uint32_t rank) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[4] = static_cast<std::uint8_t>(rank / 200);
  a.mac[5] = static_cast<std::uint8_t>(rank % 200 + 1);
  a.ip[0] = 10;
  a.ip[2] = static_cast<std::uint8_t>(rank / 200);
  a.ip[3] = static_cast<std::uint8_t>(rank % 200 + 1);
  return a;
}

namespace {

std::uint32_t ipv4_of(const wire::L2L3Address& a) {
  return std::uint32_t{a.ip[0]} << 24 | std::uint32_t{a.ip[1]} << 16 | std::uint32_t{a.ip[2]} << 8 | a.ip[3];
}

}  // namespace

engine::Status CollLab::build_star() {
  engine::Status err;
  engine::FabricSpec spec = engine::FabricSpec::star(cfg_.ranks, cfg_.toward_rank);
  spec.ring_slots = cfg_.ring_slots;
  fabric_ = engine::RingFabric::create(spec, cfg_.pool, err);
  if (!fabric_) return err;
  rings_ = fabric_.get();
  engine::LabSwitchConfig sc = cfg_.sw;
  sc.pool = cfg_.pool;
  sc.ports.clear();
  sc.frame_ports.clear();
  sc.routes.clear();
  for (std::uint32_t r = 0; r < cfg_.ranks; ++r) {
    sc.frame_ports.push_back(engine::FramePort::ring(&fabric_->end(r, 1)));
    sc.routes.push_back(engine::SwitchRoute{ipv4_of(address(r)), 32, static_cast<std::uint16_t>(r)});
  }
  sw_ = engine::LabSwitch::create(sc, err);
  return sw_ ? engine::Status() : err;
}

engine::Status CollLab::build_leafspine() {
  if (cfg_.ranks % cfg_.leaves != 0)
    return engine::Status::error(engine::StatusCode::kInvalidArgument, "--fabric: " + std::to_string(cfg_.ranks) +
                                                                           " ranks do not divide into " +
                                                                           std::to_string(cfg_.leaves) + " leaves");
  engine::LeafSpineConfig lc;
  lc.leaves = cfg_.leaves;
  lc.spines = cfg_.spines;
  lc.endpoints_per_leaf = cfg_.ranks / cfg_.leaves;
  for (std::uint32_t r = 0; r < cfg_.ranks; ++r) lc.ipv4.push_back(ipv4_of(address(r)));
  lc.leaf = cfg_.sw;
  lc.spine = cfg_.sw;
  lc.to_endpoint.gbps = cfg_.sw.egress_gbps.empty() ? 0 : cfg_.sw.egress_gbps[0];
  lc.uplink.gbps = cfg_.uplink_gbps;
  lc.downlink.gbps = cfg_.uplink_gbps;
  lc.ecmp = cfg_.ecmp;
  lc.link_failures = cfg_.link_failures;
  if (engine::Status s = engine::apply_link_specs(cfg_.links, lc); !s.ok()) return s;
  // The switch template's stuck and slow ports are ranks: on the leaf-spine, endpoints.
  lc.stuck_endpoints.assign(cfg_.sw.stuck_ports.begin(), cfg_.sw.stuck_ports.end());
  lc.slow_endpoints = cfg_.sw.slow_receivers;
  lc.toward_endpoints = cfg_.toward_rank;
  lc.ring_slots = cfg_.ring_slots;
  lc.pool = cfg_.pool;
  engine::Status err;
  leafspine_ = engine::LeafSpine::create(lc, err);
  if (!leafspine_) return err;
  rings_ = &leafspine_->links();
  return {};
}

std::unique_ptr<CollLab> CollLab::create(const LabConfig& cfg, engine::Status& err) {
  std::unique_ptr<CollLab> lab(new CollLab());
  lab->cfg_ = cfg;
  err = cfg.leaves == 0 ? lab->build_star() : lab->build_leafspine();
  if (!err.ok()) return nullptr;
  lab->series_.init(cfg.ranks, cfg.leaves, cfg.spines, cfg.sample_ms, rte_get_tsc_hz());
  // Taps on both ends of each rank's link (link r in either topology).
  for (std::uint32_t r = 0; r < cfg.ranks; ++r) {
    engine::RingEnd& sw_end = lab->rings_->end(r, 1);
    sw_end.tap = cfg.ingress_tap;
    sw_end.tap_ctx = r < cfg.ingress_ctx.size() ? cfg.ingress_ctx[r] : nullptr;
    engine::RingEnd& rank_end = lab->rings_->end(r, 0);
    rank_end.tap = cfg.egress_tap;
    rank_end.tap_ctx = r < cfg.egress_ctx.size() ? cfg.egress_ctx[r] : nullptr;
  }
  for (std::uint32_t r = 0; r < cfg.ranks; ++r) {
    lab->mem_.push_back(std::make_unique<engine::MemoryRegistry>());
    engine::EndpointConfig ec;
    ec.queues.port_id = static_cast<std::uint16_t>(r);  // its number only: the link is a ring
    ec.queues.tx_ring = lab->rings_->end(r, 0).tx;
    ec.queues.pool = cfg.pool;
    ec.queues.memory = lab->mem_.back().get();
    ec.addresses.local = address(r);
    ec.addresses.dscp = cfg.dscp;
    ec.transport.max_qps = cfg.qps_per_rank;
    ec.dcqcn = cfg.dcqcn;
    ec.pfc = cfg.pfc;
    lab->eps_.push_back(engine::RcEndpoint::create(ec, err));
    if (!lab->eps_.back()) return nullptr;
  }
  err = engine::Status();
  return lab;
}

CollLab::~CollLab() { finish(); }

void CollLab::finish() {
  for (auto& e : eps_)
    if (e) e->finish();
  if (sw_) sw_->finish();
  if (leafspine_) leafspine_->finish();
  if (fabric_) fabric_->drain();
}

}  // namespace droce::coll
