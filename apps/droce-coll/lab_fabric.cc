// CollLab: RingFabric::star, a LabSwitch on the fabric's switch node with one /32 route per rank,
// and one RcEndpoint per rank transmitting into its link.
#include "apps/droce-coll/lab_fabric.h"

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

std::unique_ptr<CollLab> CollLab::create(const LabConfig& cfg, engine::Status& err) {
  std::unique_ptr<CollLab> lab(new CollLab());
  lab->cfg_ = cfg;
  engine::FabricSpec spec = engine::FabricSpec::star(cfg.ranks, cfg.toward_rank);
  spec.ring_slots = cfg.ring_slots;
  lab->fabric_ = engine::RingFabric::create(spec, cfg.pool, err);
  if (!lab->fabric_) return nullptr;
  engine::LabSwitchConfig sc = cfg.sw;
  sc.pool = cfg.pool;
  sc.ports.clear();
  sc.frame_ports.clear();
  sc.routes.clear();
  for (std::uint32_t r = 0; r < cfg.ranks; ++r) {
    engine::RingEnd& sw_end = lab->fabric_->end(r, 1);
    sw_end.tap = cfg.ingress_tap;
    sw_end.tap_ctx = r < cfg.ingress_ctx.size() ? cfg.ingress_ctx[r] : nullptr;
    engine::RingEnd& rank_end = lab->fabric_->end(r, 0);
    rank_end.tap = cfg.egress_tap;
    rank_end.tap_ctx = r < cfg.egress_ctx.size() ? cfg.egress_ctx[r] : nullptr;
    sc.frame_ports.push_back(engine::FramePort::ring(&sw_end));
    const wire::L2L3Address a = address(r);
    const std::uint32_t ip =
        std::uint32_t{a.ip[0]} << 24 | std::uint32_t{a.ip[1]} << 16 | std::uint32_t{a.ip[2]} << 8 | a.ip[3];
    sc.routes.push_back(engine::SwitchRoute{ip, 32, static_cast<std::uint16_t>(r)});
  }
  lab->sw_ = engine::LabSwitch::create(sc, err);
  if (!lab->sw_) return nullptr;
  for (std::uint32_t r = 0; r < cfg.ranks; ++r) {
    lab->mem_.push_back(std::make_unique<engine::MemoryRegistry>());
    engine::EndpointConfig ec;
    ec.queues.port_id = static_cast<std::uint16_t>(r);  // its number only: the link is a ring
    ec.queues.tx_ring = lab->fabric_->end(r, 0).tx;
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
  if (fabric_) fabric_->drain();
}

}  // namespace droce::coll
