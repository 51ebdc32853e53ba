// LeafSpine: FabricSpec::leafspine's rings, one LabSwitch per leaf and per spine, routes from the
// endpoints' addresses.
#include "engine/lab/leaf_spine.h"

namespace droce::engine {

Status LeafSpineConfig::validate() const {
  if (leaves < 1 || leaves > 32) return Status::fail(StatusCode::kInvalidArgument, "--fabric: leaves must be 1..32");
  if (spines < 1 || spines > 32) return Status::fail(StatusCode::kInvalidArgument, "--fabric: spines must be 1..32");
  if (endpoints_per_leaf < 1 || endpoints_per_leaf + spines > 64)
    return Status::fail(StatusCode::kInvalidArgument, "--fabric: a leaf has at most 64 ports (endpoints + spines)");
  if (leaves * endpoints_per_leaf > 1024)
    return Status::fail(StatusCode::kInvalidArgument, "--fabric: at most 1024 endpoints");
  if (ipv4.size() != endpoints())
    return Status::error(StatusCode::kInvalidArgument, "leaf-spine: " + std::to_string(endpoints()) +
                                                           " IPv4 addresses needed, " + std::to_string(ipv4.size()) +
                                                           " given");
  if (!ipv6.empty() && ipv6.size() != endpoints())
    return Status::error(StatusCode::kInvalidArgument, "leaf-spine: " + std::to_string(endpoints()) +
                                                           " IPv6 addresses needed, " + std::to_string(ipv6.size()) +
                                                           " given");
  const std::size_t links = std::size_t{leaves} * spines;
  if ((!uplinks.empty() && uplinks.size() != links) || (!downlinks.empty() && downlinks.size() != links))
    return Status::fail(StatusCode::kInvalidArgument, "leaf-spine: per-link parameters need one per leaf-spine link");
  for (std::size_t i = 0; i < ipv4.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (ipv4[i] == ipv4[j])
        return Status::error(StatusCode::kInvalidArgument, "leaf-spine: endpoints " + std::to_string(j) + " and " +
                                                               std::to_string(i) + " share an IPv4 address");
  if (pool == nullptr) return Status::fail(StatusCode::kInvalidArgument, "leaf-spine: no mbuf pool");
  return {};
}

namespace {

// A leaf's or a spine's switch: the tier's settings (queues, RED/ECN, PFC) with what the fabric
// decides per switch (its ports, routes, egress rates and buffers) left for the caller to fill,
// and no flooding: every endpoint has a host route.
LabSwitchConfig fabric_switch(const LabSwitchConfig& tier, rte_mempool* pool) {
  LabSwitchConfig sc = tier;
  sc.pool = pool;
  sc.ports.clear();
  sc.frame_ports.clear();
  sc.routes.clear();
  sc.host_routes.clear();
  sc.ecmp_ports.clear();
  sc.egress_gbps.clear();
  sc.egress_buffer_bytes.clear();
  sc.flood = false;
  return sc;
}

}  // namespace

LeafSpine::~LeafSpine() { finish(); }

std::unique_ptr<LeafSpine> LeafSpine::create(const LeafSpineConfig& cfg, Status& err) {
  if (Status s = cfg.validate(); !s.ok()) {
    err = s;
    return nullptr;
  }
  std::unique_ptr<LeafSpine> f(new LeafSpine());
  f->cfg_ = cfg;
  FabricSpec spec = FabricSpec::leafspine(cfg.leaves, cfg.spines, cfg.endpoints_per_leaf, cfg.toward_endpoints,
                                          cfg.toward_leaves, cfg.toward_spines);
  spec.ring_slots = cfg.ring_slots;
  f->fabric_ = RingFabric::create(spec, cfg.pool, err);
  if (!f->fabric_) return nullptr;
  const std::uint32_t n = cfg.endpoints(), e = cfg.endpoints_per_leaf;
  auto link_params = [&](const std::vector<LinkQueueParams>& per_link, const LinkQueueParams& all, std::uint32_t leaf,
                         std::uint32_t spine) { return per_link.empty() ? all : per_link[leaf * cfg.spines + spine]; };
  auto add_route = [&](LabSwitchConfig& sc, std::uint32_t endpoint, std::uint16_t out) {
    sc.host_routes.push_back(HostRoute::ipv4(cfg.ipv4[endpoint], out));
    if (!cfg.ipv6.empty()) sc.host_routes.push_back(HostRoute::ipv6(cfg.ipv6[endpoint].data(), out));
  };
  for (std::uint32_t leaf = 0; leaf < cfg.leaves; ++leaf) {
    LabSwitchConfig sc = fabric_switch(cfg.leaf, cfg.pool);
    sc.ecmp = cfg.ecmp;
    // Ports in link order (FabricSpec::leafspine): endpoints, then uplinks.
    const std::vector<RingEnd*> ends = f->fabric_->ends_of(n + leaf);
    for (RingEnd* end : ends) sc.frame_ports.push_back(FramePort::ring(end));
    for (std::uint32_t k = 0; k < e; ++k) {
      sc.egress_gbps.push_back(cfg.to_endpoint.gbps);
      sc.egress_buffer_bytes.push_back(cfg.to_endpoint.buffer_bytes);
    }
    for (std::uint32_t s = 0; s < cfg.spines; ++s) {
      const LinkQueueParams p = link_params(cfg.uplinks, cfg.uplink, leaf, s);
      sc.egress_gbps.push_back(p.gbps);
      sc.egress_buffer_bytes.push_back(p.buffer_bytes);
      sc.ecmp_ports.push_back(static_cast<std::uint16_t>(e + s));
    }
    for (std::uint32_t i = 0; i < n; ++i)
      add_route(sc, i, i / e == leaf ? static_cast<std::uint16_t>(i % e) : kEcmpRoute);
    f->leaves_.push_back(LabSwitch::create(sc, err));
    if (!f->leaves_.back()) {
      err = err.context("leaf" + std::to_string(leaf) + ": ");
      return nullptr;
    }
  }
  for (std::uint32_t spine = 0; spine < cfg.spines; ++spine) {
    LabSwitchConfig sc = fabric_switch(cfg.spine, cfg.pool);
    for (RingEnd* end : f->fabric_->ends_of(n + cfg.leaves + spine)) sc.frame_ports.push_back(FramePort::ring(end));
    for (std::uint32_t leaf = 0; leaf < cfg.leaves; ++leaf) {
      const LinkQueueParams p = link_params(cfg.downlinks, cfg.downlink, leaf, spine);
      sc.egress_gbps.push_back(p.gbps);
      sc.egress_buffer_bytes.push_back(p.buffer_bytes);
    }
    for (std::uint32_t i = 0; i < n; ++i) add_route(sc, i, static_cast<std::uint16_t>(i / e));
    // One leaf: a spine has a single port, and a LabSwitch needs two; such a fabric has no spine
    // traffic, so a spine of one leaf is left out.
    if (cfg.leaves < 2) {
      f->spines_.push_back(nullptr);
      continue;
    }
    f->spines_.push_back(LabSwitch::create(sc, err));
    if (!f->spines_.back()) {
      err = err.context("spine" + std::to_string(spine) + ": ");
      return nullptr;
    }
  }
  err = Status();
  return f;
}

std::vector<FabricLinkCounters> LeafSpine::fabric_links() const {
  std::vector<FabricLinkCounters> v;
  const std::uint32_t n = cfg_.endpoints();
  for (std::uint32_t leaf = 0; leaf < cfg_.leaves; ++leaf)
    for (std::uint32_t spine = 0; spine < cfg_.spines; ++spine) {
      FabricLinkCounters c;
      c.name = fabric_->spec().links[n + leaf * cfg_.spines + spine].name;
      c.leaf = leaf;
      c.spine = spine;
      c.up = leaves_[leaf]->counters(cfg_.endpoints_per_leaf + spine);
      if (spines_[spine]) c.down = spines_[spine]->counters(leaf);
      v.push_back(c);
    }
  return v;
}

void LeafSpine::poll(std::uint64_t now_tsc) {
  for (auto& l : leaves_) l->poll(now_tsc);
  for (auto& s : spines_)
    if (s) s->poll(now_tsc);
}

void LeafSpine::finish() {
  for (auto& l : leaves_)
    if (l) l->finish();
  for (auto& s : spines_)
    if (s) s->finish();
  if (fabric_) fabric_->drain();
}

}  // namespace droce::engine
