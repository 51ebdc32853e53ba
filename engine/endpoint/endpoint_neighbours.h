// EndpointNeighbours: an RcEndpoint's neighbours, by one engine for both address families — ARP
// (RFC 826) on an IPv4 endpoint, Neighbor Discovery (RFC 4861) on an IPv6 one. It answers the
// queries for the endpoint's address, learns and resolves peers' MACs in the protocol's table
// (protocols/arp, protocols/nd, both over protocols/common/neighbour_cache.h), and announces the
// endpoint. What differs between the two protocols is in neighbour_protocols.h. Frames come from
// the endpoint's pool and leave through its ControlFrames; the RcEndpoint owns it and calls it
// from its poll (single-threaded, like the endpoint).
#pragma once

#include <cstdint>
#include <variant>

#include "engine/core/status.h"
#include "engine/endpoint/control_frames.h"
#include "engine/endpoint/endpoint_config.h"
#include "engine/endpoint/endpoint_counters.h"
#include "engine/endpoint/neighbour_protocols.h"
#include "protocols/common/neighbour_cache.h"
#include "protocols/wire/drop_reason.h"

namespace droce::engine {

// What resolution(ip) knows about a peer's MAC, in the same words for both protocols.
using neighbour::NeighbourResolution;

// The engine for one protocol (ArpProtocol or NdProtocol).
template <typename Protocol>
class NeighbourEngine {
 public:
  using Address = typename Protocol::Address;
  // `cfg`, `out` and `counters` are the owning endpoint's and outlive this.
  NeighbourEngine(const EndpointConfig& cfg, ControlFrames& out, EndpointCounters& counters);

  // A frame the RoCE parser refused as Protocol::kRefusedAs: true when it was this protocol's
  // (answered, learned, or counted as ignored or malformed).
  bool on_frame(const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac, std::uint64_t now_ns,
                std::uint64_t now_tsc);
  // Every poll: the resolutions' queries and failures that came due (one compare otherwise).
  void poll(std::uint64_t now_ns, std::uint64_t now_tsc) {
    now_ns_ = now_ns;
    if (now_ns >= table_.next_due_ns()) send_due(now_ns, now_tsc);
  }
  [[nodiscard]] Status start_resolve(const std::uint8_t* ip, std::uint64_t now_ns);
  [[nodiscard]] NeighbourResolution resolution(const std::uint8_t* ip) const;
  [[nodiscard]] Status announce(std::uint64_t now_tsc);
  [[nodiscard]] std::uint32_t size() const { return table_.size(); }
  [[nodiscard]] const typename Protocol::Table& table() const { return table_; }

 private:
  void send_due(std::uint64_t now_ns, std::uint64_t now_tsc);
  // Builds one frame with build(out, room) into an mbuf of the endpoint's pool and sends it;
  // false (counted in the protocol's tx_failures) when the pool or the TX backlog is full.
  template <typename Build>
  bool send(Build&& build, std::uint64_t now_tsc);
  void count(std::uint64_t EndpointCounters::*member, std::uint64_t n = 1) { c_.*member += n; }

  ControlFrames& out_;
  EndpointCounters& c_;
  typename Protocol::Sender self_;
  typename Protocol::Table table_;
  std::uint64_t now_ns_ = 0;  // the last poll's time
};

class EndpointNeighbours {
  // f(the engine) for the endpoint's family: one index test, no exception path. (First: the
  // members below deduce their return types from it.)
  template <typename F>
  decltype(auto) with(F&& f) {
    return ipv6_ ? f(*std::get_if<NeighbourEngine<NdProtocol>>(&engine_))
                 : f(*std::get_if<NeighbourEngine<ArpProtocol>>(&engine_));
  }
  template <typename F>
  decltype(auto) with(F&& f) const {
    return ipv6_ ? f(*std::get_if<NeighbourEngine<NdProtocol>>(&engine_))
                 : f(*std::get_if<NeighbourEngine<ArpProtocol>>(&engine_));
  }

 public:
  // `cfg`, `out` and `counters` are the owning endpoint's and outlive this. The endpoint's
  // family (cfg.addresses.ipv6) picks the protocol.
  EndpointNeighbours(const EndpointConfig& cfg, ControlFrames& out, EndpointCounters& counters);

  // A frame the RoCE parser refused for `reason`: true when it was the endpoint's neighbour
  // protocol's (ARP refused as not IP on an IPv4 endpoint; NS or NA refused as not UDP on an IPv6
  // one), false when the caller still has a drop to count.
  bool on_frame(wire::DropReason reason, const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac,
                std::uint64_t now_ns, std::uint64_t now_tsc) {
    if (reason != refused_as_) return false;
    return with([&](auto& e) { return e.on_frame(frame, len, any_dst_mac, now_ns, now_tsc); });
  }
  void poll(std::uint64_t now_ns, std::uint64_t now_tsc) {
    with([&](auto& e) { e.poll(now_ns, now_tsc); });
  }

  // Starts resolving the peer at `ip`, an address of the endpoint's family as L2L3Address::ip holds
  // it (IPv4: 4 bytes; IPv6: 16; network order); its first query leaves in the next poll. Ok also
  // when it is known or under way; kInvalidArgument for an address that names no neighbour,
  // kNoMemory when the table is full.
  [[nodiscard]] Status start_resolve(const std::uint8_t* ip, std::uint64_t now_ns) {
    return with([&](auto& e) { return e.start_resolve(ip, now_ns); });
  }
  // What is known about `ip` as of the last poll.
  [[nodiscard]] NeighbourResolution resolution(const std::uint8_t* ip) const {
    return with([&](const auto& e) { return e.resolution(ip); });
  }
  // Queues an announcement of the endpoint's address (a gratuitous ARP, or an unsolicited Neighbor
  // Advertisement, RFC 4861 §7.2.6); it leaves in the next poll.
  [[nodiscard]] Status announce(std::uint64_t now_tsc) {
    return with([&](auto& e) { return e.announce(now_tsc); });
  }
  // Entries in the table (resolving, learned or failed).
  [[nodiscard]] std::uint32_t size() const {
    return with([](const auto& e) { return e.size(); });
  }
  // The protocol's table (ArpProtocol or NdProtocol), for readers of its entries; nullptr when the
  // endpoint's family speaks the other protocol.
  template <typename Protocol>
  [[nodiscard]] const typename Protocol::Table* table() const {
    const auto* e = std::get_if<NeighbourEngine<Protocol>>(&engine_);
    return e == nullptr ? nullptr : &e->table();
  }

 private:
  bool ipv6_;
  wire::DropReason refused_as_;
  std::variant<NeighbourEngine<ArpProtocol>, NeighbourEngine<NdProtocol>> engine_;
};

}  // namespace droce::engine
