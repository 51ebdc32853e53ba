// SwitchExperiment on a leaf-spine: the LeafSpine built from the lab's addresses (the ports no
// endpoint takes get addresses of their own, 10.0.3.x, so that every slot has its host route), its
// endpoints polled from their rings, and each leaf-spine link sampled.
#include <string>

#include "engine/lab/switch_experiment.h"

namespace droce::engine {

Status SwitchExperiment::build_leafspine() {
  const SwitchExperimentFabric& f = cfg_.fabric;
  const std::uint32_t n = cfg_.senders, e = f.ports_per_leaf(n);
  LeafSpineConfig lc;
  lc.leaves = f.leaves;
  lc.spines = f.spines;
  lc.endpoints_per_leaf = e;
  lc.ipv4.assign(lc.endpoints(), 0);
  std::vector<bool> taken(lc.endpoints(), false);
  for (std::uint32_t i = 0; i <= n; ++i) {
    lc.ipv4[f.slot(i, n)] = ip_host_order(address(i));
    taken[f.slot(i, n)] = true;
  }
  for (std::uint32_t k = 0, spare = 0; k < lc.endpoints(); ++k)
    if (!taken[k]) lc.ipv4[k] = ip_host_order(host(3, static_cast<std::uint8_t>(++spare)));
  lc.leaf = cfg_.sw;
  lc.spine = cfg_.sw;
  // The bottleneck is the receiver's port alone, as on one switch; senders' ports unshaped.
  lc.to_endpoints.assign(lc.endpoints(), LinkQueueParams{});
  lc.to_endpoints[f.slot(n, n)].gbps = cfg_.bottleneck_gbps;
  lc.uplink.gbps = f.uplink_gbps;
  lc.downlink.gbps = f.uplink_gbps;
  lc.ecmp = f.ecmp;
  lc.link_failures = f.link_failures;
  if (Status s = apply_link_specs(f.links, lc); !s.ok()) return s;
  // The switch template's stuck and slow ports are the lab's endpoints (port n the receiver, as on
  // one switch): here, their slots.
  const auto no_port = [n](const char* option, std::uint32_t p) {
    return Status::error(StatusCode::kInvalidArgument, std::string(option) + ": port index " + std::to_string(p) +
                                                           " does not exist (the lab's ports are 0.." +
                                                           std::to_string(n) + ")");
  };
  for (std::uint16_t p : cfg_.sw.stuck_ports) {
    if (p > n) return no_port("--stuck-port", p);
    lc.stuck_endpoints.push_back(f.slot(p, n));
  }
  for (const SlowReceiverConfig& r : cfg_.sw.slow_receivers) {
    if (r.port > n) return no_port("--slow-receiver", r.port);
    lc.slow_endpoints.push_back({static_cast<std::uint16_t>(f.slot(r.port, n)), r.fraction});
  }
  lc.pool = cfg_.pool;
  Status err;
  ls_ = LeafSpine::create(lc, err);
  return ls_ ? Status() : err;
}

void SwitchExperiment::poll_leafspine(std::uint64_t now_tsc) {
  const std::uint32_t n = cfg_.senders;
  rte_mbuf* rx[RcEndpoint::kRxBurst];
  for (std::uint32_t i = 0; i <= n; ++i) {
    const std::uint16_t got = ls_->endpoint_end(cfg_.fabric.slot(i, n)).receive(rx, RcEndpoint::kRxBurst);
    eps_[i]->poll_received(now_tsc, rx, got);
    // As on one switch: the senders' frames cross the fabric before the receiver polls.
    if (i + 1 == n) ls_->poll(now_tsc);
  }
  ls_->poll(now_tsc);
}

std::vector<LinkSample> SwitchExperiment::link_sample(std::vector<FabricLinkCounters>& last, double secs) const {
  std::vector<FabricLinkCounters> now = ls_->fabric_links();
  const auto direction = [secs](const SwitchPortCounters& c, const SwitchPortCounters& was) {
    LinkDirectionSample d;
    d.queue_bytes = c.queue_bytes;
    d.tx_gbps = secs > 0 ? static_cast<double>(c.tx_bytes - was.tx_bytes) * 8 / secs / 1e9 : 0;
    d.ecn_marked = c.ecn_marked - was.ecn_marked;
    d.pfc_pauses = c.pfc_pause_received - was.pfc_pause_received;
    d.drops = c.tail_drops + c.link_down_drops - was.tail_drops - was.link_down_drops;
    return d;
  };
  std::vector<LinkSample> v;
  for (std::size_t k = 0; k < now.size(); ++k)
    v.push_back(LinkSample{direction(now[k].up, last[k].up), direction(now[k].down, last[k].down)});
  last = std::move(now);
  return v;
}

}  // namespace droce::engine
