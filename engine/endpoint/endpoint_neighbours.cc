// The endpoint's neighbour engine: frames in and out of its queue, resolutions, announcements,
// and the resolution API's words — once, for ARP and Neighbor Discovery alike.
#include "engine/endpoint/endpoint_neighbours.h"

#include <rte_mbuf.h>

#include <cstring>
#include <string>

namespace droce::engine {

template <typename Protocol>
NeighbourEngine<Protocol>::NeighbourEngine(const EndpointConfig& cfg, ControlFrames& out, EndpointCounters& counters)
    : out_(out), c_(counters), self_(Protocol::sender(cfg)), table_(Protocol::table(cfg)) {}

template <typename Protocol>
bool NeighbourEngine<Protocol>::on_frame(const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac,
                                         std::uint64_t now_ns, std::uint64_t now_tsc) {
  typename Protocol::Verdict v;
  switch (Protocol::hear(table_, frame, len, any_dst_mac, now_ns, v)) {
    case Heard::kNotOurs:
      return false;
    case Heard::kMalformed:
      count(Protocol::kCounters.malformed);
      return true;
    case Heard::kTaken:
      break;
  }
  if (v.table.learned)
    count(v.learned_from_answer() ? Protocol::kCounters.learned_from_answer : Protocol::kCounters.learned_from_query);
  if (v.ignored()) count(Protocol::kCounters.ignored);
  if (v.table.reply &&
      send([&](std::uint8_t* p, std::uint32_t room) { return Protocol::build_answer(self_, v, p, room); }, now_tsc))
    count(Protocol::kCounters.answered);
  return true;
}

template <typename Protocol>
void NeighbourEngine<Protocol>::send_due(std::uint64_t now_ns, std::uint64_t now_tsc) {
  // Bounded by the table's capacity; what one call cannot send goes in the next poll.
  Address ips[16];
  unsigned failed = 0;
  const unsigned n = table_.due_queries(now_ns, ips, 16, failed);
  count(Protocol::kCounters.resolve_failures, failed);
  for (unsigned i = 0; i < n; ++i)
    if (send([&](std::uint8_t* p, std::uint32_t room) { return Protocol::build_query(self_, ips[i], p, room); },
             now_tsc))
      count(Protocol::kCounters.queries_sent);
}

template <typename Protocol>
template <typename Build>
bool NeighbourEngine<Protocol>::send(Build&& build, std::uint64_t now_tsc) {
  rte_mbuf* m = out_.alloc();
  if (m == nullptr) {
    count(Protocol::kCounters.tx_failures);
    return false;
  }
  // Room for the protocol's longest (tagged) frame; trimmed to what the builder wrote.
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, Protocol::kFrameBytes));
  const std::uint32_t n = p == nullptr ? 0 : build(p, Protocol::kFrameBytes);
  if (n == 0) {
    rte_pktmbuf_free(m);
    count(Protocol::kCounters.tx_failures);
    return false;
  }
  (void)rte_pktmbuf_trim(m, static_cast<std::uint16_t>(Protocol::kFrameBytes - n));
  if (!out_.send(m, now_tsc)) {
    count(Protocol::kCounters.tx_failures);
    return false;
  }
  ++c_.tx_frames;
  return true;
}

template <typename Protocol>
Status NeighbourEngine<Protocol>::start_resolve(const std::uint8_t* ip, std::uint64_t now_ns) {
  const Address a = Protocol::address(ip);
  switch (table_.start_resolve(a, now_ns)) {
    case neighbour::StartResult::kStarted:
    case neighbour::StartResult::kResolving:
    case neighbour::StartResult::kResolved:
      return Status{};
    case neighbour::StartResult::kBadAddress:
      return Status::error(StatusCode::kInvalidArgument,
                           Protocol::text(a) + " names no neighbour " + Protocol::kWords.not_neighbours);
    case neighbour::StartResult::kTableFull:
      break;
  }
  return Status::error(StatusCode::kNoMemory,
                       std::string(Protocol::kWords.table) + " full (" + std::to_string(Protocol::kCapacity) +
                           " addresses resolving or learned): cannot resolve " + Protocol::text(a));
}

template <typename Protocol>
NeighbourResolution NeighbourEngine<Protocol>::resolution(const std::uint8_t* ip) const {
  NeighbourResolution out;
  const Address a = Protocol::address(ip);
  const auto* n = table_.find(a, now_ns_);
  if (n == nullptr) {
    out.status =
        Status::error(StatusCode::kNotFound, Protocol::text(a) + " is not resolved: start_resolve asks for it");
    return out;
  }
  switch (n->state) {
    case neighbour::NeighbourState::kReachable:
      out.state = NeighbourResolution::State::kResolved;
      std::memcpy(out.mac, n->mac, 6);
      break;
    case neighbour::NeighbourState::kIncomplete:
      out.state = NeighbourResolution::State::kResolving;
      out.status = Status::error(StatusCode::kBadState, "still resolving " + Protocol::text(a) + " (" +
                                                            Protocol::kWords.queries +
                                                            " sent so far: " + std::to_string(n->queries_sent) + ")");
      break;
    case neighbour::NeighbourState::kFailed:
    case neighbour::NeighbourState::kNone:
      out.state = NeighbourResolution::State::kFailed;
      out.status = Status::error(
          StatusCode::kTimeout, std::string("no ") + Protocol::kWords.answer + " from " + Protocol::text(a) +
                                    " after " + std::to_string(n->queries_sent) + " " + Protocol::kWords.queries_short +
                                    " in " + std::to_string((n->deadline_ns - n->started_ns) / 1'000'000) + " ms");
      break;
  }
  return out;
}

template <typename Protocol>
Status NeighbourEngine<Protocol>::announce(std::uint64_t now_tsc) {
  if (!send([&](std::uint8_t* p, std::uint32_t room) { return Protocol::build_announcement(self_, p, room); }, now_tsc))
    return Status::fail(StatusCode::kNoMemory, Protocol::kWords.announce_failed);
  count(Protocol::kCounters.announcements_sent);
  return Status{};
}

template class NeighbourEngine<ArpProtocol>;
template class NeighbourEngine<NdProtocol>;

namespace {

std::variant<NeighbourEngine<ArpProtocol>, NeighbourEngine<NdProtocol>> engine_for(const EndpointConfig& cfg,
                                                                                   ControlFrames& out,
                                                                                   EndpointCounters& c) {
  using Engines = std::variant<NeighbourEngine<ArpProtocol>, NeighbourEngine<NdProtocol>>;
  if (cfg.addresses.ipv6) return Engines(std::in_place_type<NeighbourEngine<NdProtocol>>, cfg, out, c);
  return Engines(std::in_place_type<NeighbourEngine<ArpProtocol>>, cfg, out, c);
}

}  // namespace

EndpointNeighbours::EndpointNeighbours(const EndpointConfig& cfg, ControlFrames& out, EndpointCounters& counters)
    : ipv6_(cfg.addresses.ipv6),
      refused_as_(ipv6_ ? NdProtocol::kRefusedAs : ArpProtocol::kRefusedAs),
      engine_(engine_for(cfg, out, counters)) {}

}  // namespace droce::engine
