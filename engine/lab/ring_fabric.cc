// RingFabric: rte_ring pairs named per process, one FrameImpairment per impaired direction.
#include "engine/lab/ring_fabric.h"

#include <rte_errno.h>
#include <unistd.h>

#include <atomic>

namespace droce::engine {

FabricSpec FabricSpec::star(std::uint32_t endpoints, const ImpairmentConfig& toward_endpoints) {
  FabricSpec s;
  s.nodes.assign(endpoints, FabricNodeKind::kEndpoint);
  s.nodes.push_back(FabricNodeKind::kSwitch);
  for (std::uint32_t i = 0; i < endpoints; ++i) {
    FabricLinkSpec l;
    l.a = i;
    l.b = endpoints;
    l.toward_a = toward_endpoints;
    l.toward_a.seed = toward_endpoints.seed + i;  // links lose different frames
    l.name = "ep" + std::to_string(i) + "-switch";
    s.links.push_back(l);
  }
  return s;
}

FabricSpec FabricSpec::leafspine(std::uint32_t leaves, std::uint32_t spines, std::uint32_t endpoints_per_leaf,
                                 const ImpairmentConfig& toward_endpoints, const ImpairmentConfig& toward_leaves,
                                 const ImpairmentConfig& toward_spines) {
  FabricSpec s;
  const std::uint32_t n = leaves * endpoints_per_leaf;
  s.nodes.assign(n, FabricNodeKind::kEndpoint);
  s.nodes.insert(s.nodes.end(), std::size_t{leaves} + spines, FabricNodeKind::kSwitch);
  for (std::uint32_t i = 0; i < n; ++i) {
    FabricLinkSpec l;
    l.a = i;
    l.b = n + i / endpoints_per_leaf;
    l.toward_a = toward_endpoints;
    l.toward_a.seed = toward_endpoints.seed + i;
    l.name = "ep" + std::to_string(i) + "-leaf" + std::to_string(i / endpoints_per_leaf);
    s.links.push_back(l);
  }
  for (std::uint32_t leaf = 0; leaf < leaves; ++leaf)
    for (std::uint32_t spine = 0; spine < spines; ++spine) {
      FabricLinkSpec l;
      l.a = n + leaf;
      l.b = n + leaves + spine;
      const auto index = static_cast<std::uint64_t>(s.links.size());
      l.toward_a = toward_leaves;
      l.toward_a.seed = toward_leaves.seed + index;
      l.toward_b = toward_spines;
      l.toward_b.seed = toward_spines.seed + index;
      l.name = "leaf" + std::to_string(leaf) + "-spine" + std::to_string(spine);
      s.links.push_back(l);
    }
  return s;
}

Status FabricSpec::validate() const {
  if (ring_slots < 32 || (ring_slots & (ring_slots - 1)) != 0)
    return Status::fail(StatusCode::kInvalidArgument, "ring_slots must be a power of two >= 32");
  std::vector<std::uint32_t> degree(nodes.size(), 0);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto& l = links[i];
    if (l.a >= nodes.size() || l.b >= nodes.size() || l.a == l.b)
      return Status::error(StatusCode::kInvalidArgument,
                           "link " + std::to_string(i) + " does not join two distinct nodes");
    for (const ImpairmentConfig* c : {&l.toward_a, &l.toward_b})
      if (Status s = c->validate(); !s.ok()) return s.context("link " + std::to_string(i) + " impairment ");
    ++degree[l.a];
    ++degree[l.b];
  }
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n] == FabricNodeKind::kEndpoint && degree[n] != 1)
      return Status::error(StatusCode::kInvalidArgument,
                           "endpoint node " + std::to_string(n) + " must have exactly one link");
  return {};
}

std::unique_ptr<RingFabric> RingFabric::create(const FabricSpec& spec, rte_mempool* pool, Status& err) {
  if (Status s = spec.validate(); !s.ok()) {
    err = s.context("ring fabric: ");
    return nullptr;
  }
  std::unique_ptr<RingFabric> f(new RingFabric());
  f->spec_ = spec;
  static std::atomic<unsigned> serial{0};
  // Ring names are process-global in DPDK: pid and a serial keep them unique.
  const std::string base = "rf" + std::to_string(getpid() % 100000) + "_" + std::to_string(serial.fetch_add(1)) + "_";
  f->rings_.assign(2 * spec.links.size(), nullptr);
  for (std::size_t i = 0; i < f->rings_.size(); ++i) {
    f->rings_[i] = rte_ring_create((base + std::to_string(i)).c_str(), spec.ring_slots, SOCKET_ID_ANY,
                                   RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (f->rings_[i] == nullptr) {
      err = Status::error(StatusCode::kNoMemory, "ring fabric: cannot create ring " + std::to_string(i) + " (" +
                                                     rte_strerror(rte_errno) + ")");
      return nullptr;
    }
  }
  f->ends_.resize(2 * spec.links.size());
  f->impairments_.resize(2 * spec.links.size());
  for (std::size_t l = 0; l < spec.links.size(); ++l) {
    for (int side = 0; side < 2; ++side) {
      RingEnd& e = f->ends_[2 * l + static_cast<unsigned>(side)];
      // Side a sends on ring 2l and receives ring 2l+1; side b the reverse.
      e.tx = f->rings_[2 * l + static_cast<unsigned>(side)];
      e.rx = f->rings_[2 * l + 1 - static_cast<unsigned>(side)];
      const ImpairmentConfig& ic = side == 0 ? spec.links[l].toward_a : spec.links[l].toward_b;
      if (!ic.any()) continue;
      if (ic.duplicate > 0 && pool == nullptr) {
        err = Status::error(StatusCode::kInvalidArgument, "ring fabric: duplication needs a pool for the copies");
        return nullptr;
      }
      f->impairments_[2 * l + static_cast<unsigned>(side)] = std::make_unique<FrameImpairment>(ic, pool);
      if (err = f->impairments_[2 * l + static_cast<unsigned>(side)]->arm_rule(); !err.ok()) return nullptr;
      e.impairment = f->impairments_[2 * l + static_cast<unsigned>(side)].get();
    }
  }
  err = Status();
  return f;
}

RingFabric::~RingFabric() {
  drain();
  for (auto* r : rings_)
    if (r != nullptr) rte_ring_free(r);
}

std::vector<RingEnd*> RingFabric::ends_of(std::uint32_t node) {
  std::vector<RingEnd*> v;
  for (std::size_t l = 0; l < spec_.links.size(); ++l) {
    if (spec_.links[l].a == node) v.push_back(&ends_[2 * l]);
    if (spec_.links[l].b == node) v.push_back(&ends_[2 * l + 1]);
  }
  return v;
}

ImpairmentCounters RingFabric::impairment(std::uint32_t link, int side) const {
  const auto& p = impairments_[2 * link + static_cast<unsigned>(side)];
  return p ? p->counters() : ImpairmentCounters{};
}

void RingFabric::drain() {
  for (auto* r : rings_) {
    if (r == nullptr) continue;
    void* objs[64];
    for (unsigned n; (n = rte_ring_dequeue_burst(r, objs, 64, nullptr)) != 0;)
      rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(objs), n);
  }
  for (auto& i : impairments_)
    if (i) i->release_held();
}

}  // namespace droce::engine
