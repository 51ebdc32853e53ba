// RingFabric: an in-process lab's links as plain rte_ring pairs, built from a small topology
// description (nodes, links, impairment per direction). Debian's DPDK allows 32 ethdevs and a
// net_ring link (RingLink) takes two, so a lab of 64 ranks links its endpoints and switches with
// rings: endpoints transmit into them (EndpointQueues::tx_ring) and switches take them as ports
// (FramePort::ring).
#pragma once

#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/lab/frame_impairment.h"

namespace droce::engine {

// Sees every frame an end takes from its ring, before the impairment of that end (a capture, a
// counter of what crossed the link). Runs on the receiving thread; must not keep the frames.
using FrameTap = void (*)(void* ctx, rte_mbuf* const* pkts, std::uint16_t n);

// One end of a link: what it sends goes into `tx`, what it receives comes out of `rx` (single
// producer and single consumer each: the two ends may run on two threads).
struct RingEnd {
  rte_ring* rx = nullptr;
  rte_ring* tx = nullptr;
  FrameImpairment* impairment = nullptr;  // applied on receive, when the link's direction has one
  FrameTap tap = nullptr;
  void* tap_ctx = nullptr;

  // Up to `max` frames (an impairment may add duplicates: half the array is left for them).
  std::uint16_t receive(rte_mbuf** pkts, std::uint16_t max) {
    const unsigned want = impairment != nullptr ? max / 2u : max;
    auto n = static_cast<std::uint16_t>(rte_ring_dequeue_burst(rx, reinterpret_cast<void**>(pkts), want, nullptr));
    if (tap != nullptr && n != 0) tap(tap_ctx, pkts, n);
    if (impairment != nullptr) n = impairment->apply(pkts, n, max);
    return n;
  }
  // How many of pkts[0..n) the link took; the rest stay the caller's (back-pressure).
  std::uint16_t send(rte_mbuf* const* pkts, std::uint16_t n) {
    return static_cast<std::uint16_t>(rte_ring_enqueue_burst(tx, reinterpret_cast<void* const*>(pkts), n, nullptr));
  }
};

// The topology: nodes (endpoints and switches) and the links between them. A switch's ports are
// its links in the order they are listed; an endpoint has one link.
enum class FabricNodeKind : std::uint8_t { kEndpoint, kSwitch };

struct FabricLinkSpec {
  std::uint32_t a = 0, b = 0;  // node indices
  ImpairmentConfig toward_a;   // what a's end receives goes through this
  ImpairmentConfig toward_b;
};

struct FabricSpec {
  std::vector<FabricNodeKind> nodes;
  std::vector<FabricLinkSpec> links;
  std::uint32_t ring_slots = 1024;  // frames each direction holds (a power of two)

  // N endpoints (nodes 0..N-1) on one switch (node N): link i joins endpoint i to switch port i;
  // `toward_endpoints` impairs what each endpoint receives (its seed offset by the link index).
  [[nodiscard]] static FabricSpec star(std::uint32_t endpoints, const ImpairmentConfig& toward_endpoints);
  // Ok if valid, else kInvalidArgument saying what is wrong.
  [[nodiscard]] Status validate() const;
};

class RingFabric {
 public:
  // The rings and impairments of `spec`; `pool` provides the impairment's duplicates.
  [[nodiscard]] static std::unique_ptr<RingFabric> create(const FabricSpec& spec, rte_mempool* pool, Status& err);
  ~RingFabric();
  RingFabric(const RingFabric&) = delete;
  RingFabric& operator=(const RingFabric&) = delete;

  [[nodiscard]] const FabricSpec& spec() const { return spec_; }
  // side 0: the link's node a; 1: node b.
  [[nodiscard]] RingEnd& end(std::uint32_t link, int side) { return ends_[2 * link + static_cast<unsigned>(side)]; }
  // The ends at a node, in link order (a switch's ports; an endpoint's one link).
  [[nodiscard]] std::vector<RingEnd*> ends_of(std::uint32_t node);
  // The impairment counters of the frames `side` of `link` received (zero when none).
  [[nodiscard]] ImpairmentCounters impairment(std::uint32_t link, int side) const;
  // Frees every frame still in a ring or held back by an impairment (shutdown, after the pollers stopped).
  void drain();

 private:
  RingFabric() = default;
  FabricSpec spec_;
  std::vector<rte_ring*> rings_;                               // 2 per link: [2l] carries a -> b, [2l + 1] b -> a
  std::vector<RingEnd> ends_;                                  // 2 per link
  std::vector<std::unique_ptr<FrameImpairment>> impairments_;  // 2 per link, null when none
};

}  // namespace droce::engine
