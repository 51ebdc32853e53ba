// LeafSpine: FabricSpec::leafspine's rings, one LabSwitch per leaf and per spine, routes from the
// endpoints' addresses, and links that fail on a schedule.
#include "engine/lab/leaf_spine.h"

#include <rte_cycles.h>

#include <charconv>
#include <cmath>

namespace droce::engine {

namespace {

bool parse_u32(std::string_view s, std::uint32_t& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_ms(std::string_view s, double& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(v) && v >= 0 &&
         v <= 86'400'000;
}

}  // namespace

Status LinkFailure::parse(const std::string& spec, LinkFailure& out) {
  const auto bad = [&](const std::string& why) {
    return Status::error(StatusCode::kInvalidArgument, "--link-down: '" + spec + "': " + why);
  };
  const std::string_view v(spec);
  const std::size_t at = v.find('@'), colon = v.find(':');
  if (at == std::string_view::npos || colon == std::string_view::npos || colon > at)
    return bad("expected LEAF:SPINE@DOWN_MS[:UP_MS]");
  LinkFailure f;
  if (!parse_u32(v.substr(0, colon), f.leaf) || !parse_u32(v.substr(colon + 1, at - colon - 1), f.spine))
    return bad("LEAF and SPINE must be numbers");
  const std::string_view times = v.substr(at + 1);
  const std::size_t c2 = times.find(':');
  if (!parse_ms(times.substr(0, c2), f.down_ms)) return bad("DOWN_MS must be a time in ms, 0..86400000");
  if (c2 != std::string_view::npos) {
    if (!parse_ms(times.substr(c2 + 1), f.up_ms)) return bad("UP_MS must be a time in ms, 0..86400000");
    if (f.up_ms <= f.down_ms) return bad("UP_MS must come after DOWN_MS");
  }
  out = f;
  return {};
}

Status check_link_failures(const std::vector<LinkFailure>& failures, std::uint32_t leaves, std::uint32_t spines) {
  for (std::size_t i = 0; i < failures.size(); ++i) {
    const LinkFailure& f = failures[i];
    if (f.leaf >= leaves || f.spine >= spines)
      return Status::error(StatusCode::kInvalidArgument, "--link-down: no link leaf" + std::to_string(f.leaf) +
                                                             "-spine" + std::to_string(f.spine) + " in a fabric of " +
                                                             std::to_string(leaves) + " leaves and " +
                                                             std::to_string(spines) + " spines");
    // A one-leaf fabric has no spine switches (LeafSpine leaves them out): nothing to fail.
    if (leaves < 2)
      return Status::fail(StatusCode::kInvalidArgument,
                          "--link-down: a one-leaf fabric carries nothing over its spines");
    for (std::size_t j = 0; j < i; ++j) {
      const LinkFailure& g = failures[j];
      const double f_end = f.up_ms < 0 ? INFINITY : f.up_ms, g_end = g.up_ms < 0 ? INFINITY : g.up_ms;
      if (g.leaf == f.leaf && g.spine == f.spine && f.down_ms < g_end && g.down_ms < f_end)
        return Status::error(StatusCode::kInvalidArgument, "--link-down: two failures of leaf" +
                                                               std::to_string(f.leaf) + "-spine" +
                                                               std::to_string(f.spine) + " overlap");
    }
  }
  return {};
}

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
  for (std::uint32_t l = 0; l < leaves && links > 0; ++l)
    for (std::uint32_t sp = 0; sp < spines; ++sp)
      if (Status s = check_link(l, sp); !s.ok()) return s;
  if ((!to_endpoints.empty() && to_endpoints.size() != endpoints()) ||
      (!endpoint_ports.empty() && endpoint_ports.size() != endpoints()))
    return Status::fail(StatusCode::kInvalidArgument, "leaf-spine: per-endpoint parameters need one per endpoint");
  for (std::size_t i = 0; i < ipv4.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (ipv4[i] == ipv4[j])
        return Status::error(StatusCode::kInvalidArgument, "leaf-spine: endpoints " + std::to_string(j) + " and " +
                                                               std::to_string(i) + " share an IPv4 address");
  if (Status s = check_link_failures(link_failures, leaves, spines); !s.ok()) return s;
  for (std::size_t i = 0; i < stuck_endpoints.size(); ++i) {
    if (stuck_endpoints[i] >= endpoints())
      return Status::error(StatusCode::kInvalidArgument, "--stuck-endpoint: endpoint " +
                                                             std::to_string(stuck_endpoints[i]) + " does not exist (" +
                                                             std::to_string(endpoints()) + " endpoints)");
    for (std::size_t j = 0; j < i; ++j)
      if (stuck_endpoints[j] == stuck_endpoints[i])
        return Status::error(StatusCode::kInvalidArgument,
                             "--stuck-endpoint: endpoint " + std::to_string(stuck_endpoints[i]) + " given twice");
  }
  const std::vector<std::uint16_t> stuck(stuck_endpoints.begin(), stuck_endpoints.end());
  if (Status s = check_slow_receivers(slow_endpoints, stuck, endpoints(), leaf.pfc, leaf.slow_receiver_buffer_bytes);
      !s.ok())
    return s;
  if (!stuck_endpoints.empty() && !leaf.pfc)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--stuck-endpoint: a stuck NIC pauses lossless classes: give --pfc");
  if (pool == nullptr) return Status::fail(StatusCode::kInvalidArgument, "leaf-spine: no mbuf pool");
  return {};
}

LinkQueueParams LeafSpineConfig::link(std::uint32_t l, std::uint32_t s, bool up) const {
  const std::vector<LinkQueueParams>& per_link = up ? uplinks : downlinks;
  return per_link.empty() ? (up ? uplink : downlink) : per_link[l * spines + s];
}

Status LeafSpineConfig::check_link(std::uint32_t l, std::uint32_t s) const {
  const std::string name = "leaf" + std::to_string(l) + "-spine" + std::to_string(s);
  SwitchPortSettings eff[2];
  for (int dir = 0; dir < 2; ++dir) {
    const LinkQueueParams p = link(l, s, dir == 0);
    // The link's egress as its own one-port switch of the tier: LabSwitchConfig's checks apply.
    LabSwitchConfig one = dir == 0 ? leaf : spine;
    one.stuck_ports.clear();
    one.slow_receivers.clear();
    one.egress_buffer_bytes = {p.buffer_bytes};
    one.port_settings = {p.port};
    if (!(p.gbps >= 0 && p.gbps <= 1000))
      return Status::error(StatusCode::kInvalidArgument,
                           "link " + name + (dir == 0 ? " up" : " down") + ": gbps must be in [0, 1000]");
    if (p.buffer_bytes != 0 && p.buffer_bytes < 2048)
      return Status::error(StatusCode::kInvalidArgument, "link " + name + (dir == 0 ? " up" : " down") +
                                                             ": buffer must hold at least one jumbo RoCE frame (2048)");
    if (Status st = one.check_port(0); !st.ok()) return st.context("link " + name + (dir == 0 ? " up: " : " down: "));
    eff[dir] = one.resolved(0);
  }
  // 802.1Qbb 36.1.3.2 with DCBX (802.1Qaz): PFC is a property of the link, enabled at both ends
  // or neither; a link set to one and left to tiers that disagree would run it one way only.
  const bool own = link(l, s, true).port.pfc || link(l, s, false).port.pfc;
  if (own && *eff[0].pfc != *eff[1].pfc)
    return Status::error(
        StatusCode::kInvalidArgument,
        "link " + name + ": pfc is on at one end only (the leaf tier's and the spine tier's PFC differ)");
  return {};
}

namespace {

// A leaf's or a spine's switch: the tier's settings (queues, RED/ECN, PFC) with what the fabric
// decides per switch (its ports, routes, egress rates and buffers, stuck ports) left for the caller to fill,
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
  // A tier names no switch's ports: LeafSpineConfig::stuck_endpoints and slow_endpoints do.
  sc.stuck_ports.clear();
  sc.slow_receivers.clear();
  sc.port_settings.clear();
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
  f->up_params_.resize(std::size_t{cfg.leaves} * cfg.spines);
  f->down_params_.resize(std::size_t{cfg.leaves} * cfg.spines);
  // An ECMP route's group is the destination's leaf: a failed link removes a spine for the
  // destinations behind that leaf only.
  auto add_route = [&](LabSwitchConfig& sc, std::uint32_t endpoint, std::uint16_t out) {
    const auto group = static_cast<std::uint16_t>(endpoint / cfg.endpoints_per_leaf);
    sc.host_routes.push_back(HostRoute::ipv4(cfg.ipv4[endpoint], out, group));
    if (!cfg.ipv6.empty()) sc.host_routes.push_back(HostRoute::ipv6(cfg.ipv6[endpoint].data(), out, group));
  };
  for (std::uint32_t leaf = 0; leaf < cfg.leaves; ++leaf) {
    LabSwitchConfig sc = fabric_switch(cfg.leaf, cfg.pool);
    sc.ecmp = cfg.ecmp;
    // Ports in link order (FabricSpec::leafspine): endpoints, then uplinks.
    const std::vector<RingEnd*> ends = f->fabric_->ends_of(n + leaf);
    for (RingEnd* end : ends) sc.frame_ports.push_back(FramePort::ring(end));
    if (!cfg.endpoint_ports.empty())
      for (std::uint32_t k = 0; k < e; ++k) sc.frame_ports[k] = cfg.endpoint_ports[leaf * e + k];
    for (std::uint32_t k = 0; k < e; ++k) {
      const LinkQueueParams p = cfg.to_endpoints.empty() ? cfg.to_endpoint : cfg.to_endpoints[leaf * e + k];
      sc.egress_gbps.push_back(p.gbps);
      sc.egress_buffer_bytes.push_back(p.buffer_bytes);
    }
    for (std::uint32_t s = 0; s < cfg.spines; ++s) {
      const LinkQueueParams p = cfg.link(leaf, s, true);
      sc.egress_gbps.push_back(p.gbps);
      sc.egress_buffer_bytes.push_back(p.buffer_bytes);
      sc.port_settings.resize(e + s);  // endpoint ports: the tier's
      sc.port_settings.push_back(p.port);
      LinkQueueParams& r = f->up_params_[leaf * cfg.spines + s];
      r = p;
      r.buffer_bytes = p.buffer_bytes != 0 ? p.buffer_bytes : sc.buffer_bytes;
      r.port = sc.resolved(e + s);
      sc.ecmp_ports.push_back(static_cast<std::uint16_t>(e + s));
    }
    for (std::uint32_t i = 0; i < n; ++i)
      add_route(sc, i, i / e == leaf ? static_cast<std::uint16_t>(i % e) : kEcmpRoute);
    for (std::uint32_t i : cfg.stuck_endpoints)
      if (i / e == leaf) sc.stuck_ports.push_back(static_cast<std::uint16_t>(i % e));
    for (const SlowReceiverConfig& r : cfg.slow_endpoints)
      if (r.port / e == leaf) sc.slow_receivers.push_back({static_cast<std::uint16_t>(r.port % e), r.fraction});
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
      const LinkQueueParams p = cfg.link(leaf, spine, false);
      sc.egress_gbps.push_back(p.gbps);
      sc.egress_buffer_bytes.push_back(p.buffer_bytes);
      sc.port_settings.push_back(p.port);
      LinkQueueParams& r = f->down_params_[leaf * cfg.spines + spine];
      r = p;
      r.buffer_bytes = p.buffer_bytes != 0 ? p.buffer_bytes : sc.buffer_bytes;
      r.port = sc.resolved(leaf);
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
  f->link_state_.assign(std::size_t{cfg.leaves} * cfg.spines, LinkState{});
  f->schedule_.assign(cfg.link_failures.size(), Scheduled{});
  err = Status();
  return f;
}

void LeafSpine::start_clock(std::uint64_t now_tsc) {
  origin_tsc_ = now_tsc;
  clock_started_ = true;
  const double hz = static_cast<double>(rte_get_tsc_hz());
  for (std::size_t i = 0; i < schedule_.size(); ++i) {
    const LinkFailure& lf = cfg_.link_failures[i];
    schedule_[i].down_tsc = now_tsc + static_cast<std::uint64_t>(lf.down_ms * 1e-3 * hz);
    schedule_[i].up_tsc = lf.up_ms < 0 ? UINT64_MAX : now_tsc + static_cast<std::uint64_t>(lf.up_ms * 1e-3 * hz);
    schedule_[i].stage = 0;
  }
}

void LeafSpine::set_link(std::uint32_t leaf, std::uint32_t spine, bool up, std::uint64_t now_tsc) {
  if (leaf >= cfg_.leaves || spine >= cfg_.spines || !spines_[spine]) return;
  LinkState& st = link_state_[leaf * cfg_.spines + spine];
  if (st.up == up) return;
  st.up = up;
  const auto ns = static_cast<std::int64_t>(static_cast<double>(now_tsc - std::min(now_tsc, origin_tsc_)) * 1e9 /
                                            static_cast<double>(rte_get_tsc_hz()));
  if (up) {
    st.last_up_ns = ns;
  } else {
    st.last_down_ns = ns;
    ++st.downs;
  }
  leaves_[leaf]->set_port_down(static_cast<std::uint16_t>(cfg_.endpoints_per_leaf + spine), !up, now_tsc);
  spines_[spine]->set_port_down(static_cast<std::uint16_t>(leaf), !up, now_tsc);
  // Leaf l reaches leaf d through spine s while both l-s and d-s are up (the spine withdraws its
  // route to d, the leaf its own uplink): each leaf's group d keeps those spines.
  for (std::uint32_t l = 0; l < cfg_.leaves; ++l)
    for (std::uint32_t d = 0; d < cfg_.leaves; ++d) {
      std::uint64_t live = 0;
      for (std::uint32_t s = 0; s < cfg_.spines; ++s)
        if (link_state_[l * cfg_.spines + s].up && link_state_[d * cfg_.spines + s].up) live |= 1ull << s;
      leaves_[l]->set_ecmp_live(static_cast<std::uint16_t>(d), live);
    }
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
      const LinkState& st = link_state_[leaf * cfg_.spines + spine];
      c.link_up = st.up;
      c.downs = st.downs;
      c.last_down_ns = st.last_down_ns;
      c.last_up_ns = st.last_up_ns;
      c.up_params = up_params_[leaf * cfg_.spines + spine];
      c.down_params = down_params_[leaf * cfg_.spines + spine];
      v.push_back(c);
    }
  return v;
}

void LeafSpine::poll(std::uint64_t now_tsc) {
  if (clock_started_)
    for (std::size_t i = 0; i < schedule_.size(); ++i) {
      Scheduled& sc = schedule_[i];
      const LinkFailure& lf = cfg_.link_failures[i];
      if (sc.stage == 0 && now_tsc >= sc.down_tsc) {
        set_link(lf.leaf, lf.spine, false, now_tsc);
        sc.stage = 1;
      }
      if (sc.stage == 1 && now_tsc >= sc.up_tsc) {
        set_link(lf.leaf, lf.spine, true, now_tsc);
        sc.stage = 2;
      }
    }
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
