// EndpointNd: ND frames in and out of an RcEndpoint's queue, and the resolution API's words.
#include "engine/endpoint/endpoint_nd.h"

#include <arpa/inet.h>
#include <rte_mbuf.h>

#include <cstring>
#include <string>

#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {
namespace {

nd::NeighbourConfig table_config(const EndpointConfig& cfg) {
  nd::NeighbourConfig t;
  std::memcpy(t.local_mac, cfg.addresses.local.mac, 6);
  if (cfg.addresses.ipv6) t.local_ip = nd::to_address(cfg.addresses.local.ip);
  return t;
}

std::string ipv6_text(const std::uint8_t* ip) {
  char b[INET6_ADDRSTRLEN] = {};
  (void)inet_ntop(AF_INET6, ip, b, sizeof(b));
  return b;
}

}  // namespace

EndpointNd::EndpointNd(const EndpointConfig& cfg, TxBatch<1024>& tx, EndpointCounters& counters)
    : cfg_(cfg), tx_(tx), c_(counters), enabled_(cfg.addresses.ipv6), table_(table_config(cfg)) {
  std::memcpy(self_.mac, cfg.addresses.local.mac, 6);
  std::memcpy(self_.ip, table_.config().local_ip.data(), 16);
  self_.vlan_id = cfg.addresses.vlan_id;
  self_.vlan_pcp = cfg.addresses.vlan_pcp;
}

bool EndpointNd::on_frame(const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac, std::uint64_t now_ns,
                          std::uint64_t now_tsc) {
  if (!enabled_) return false;
  nd::NdFrame f;
  const nd::NdRefusal r = nd::parse_nd(frame, len, f);
  if (nd::not_nd(r)) return false;
  if (r != nd::NdRefusal::kNone) {
    // §7.1: an invalid ND message is silently discarded; counted here.
    ++c_.nd_malformed;
    return true;
  }
  const nd::NdVerdict v = table_.on_nd(f, any_dst_mac, now_ns);
  if (v.learned) {
    if (f.type == nd::NdType::kAdvertisement)
      ++c_.nd_advertisements_learned;
    else
      ++c_.nd_solicitations_learned;
  }
  if (v.ignored != nd::NdIgnore::kNone) ++c_.nd_ignored;
  // The answer goes out with our own 802.1Q tag (the tag belongs to the link we are on).
  if (v.reply && send(Kind::kAdvertisement, v.reply_mac, v.reply_ip, v.reply_solicited, now_tsc))
    ++c_.nd_solicitations_answered;
  return true;
}

void EndpointNd::send_due(std::uint64_t now_ns, std::uint64_t now_tsc) {
  // Bounded by the table's capacity; what one call cannot send goes in the next poll.
  nd::Ipv6Address ips[16];
  unsigned failed = 0;
  const unsigned n = table_.due_solicitations(now_ns, ips, 16, failed);
  c_.nd_resolve_failures += failed;
  for (unsigned i = 0; i < n; ++i)
    if (send(Kind::kSolicitation, nullptr, ips[i].data(), false, now_tsc)) ++c_.nd_solicitations_sent;
}

bool EndpointNd::send(Kind kind, const std::uint8_t* to_mac, const std::uint8_t* ip, bool solicited,
                      std::uint64_t now_tsc) {
  rte_mbuf* m = rte_pktmbuf_alloc(cfg_.queues.pool);
  if (m == nullptr) {
    ++c_.nd_tx_failures;
    return false;
  }
  // Room for the longest (tagged) frame; trimmed to what the builder wrote.
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, nd::kNdFrameBytes));
  std::uint32_t n = 0;
  if (p != nullptr) {
    switch (kind) {
      case Kind::kSolicitation:
        n = nd::build_ns(self_, ip, p, nd::kNdFrameBytes);
        break;
      case Kind::kAdvertisement:
        n = nd::build_na(self_, to_mac, ip, solicited, p, nd::kNdFrameBytes);
        break;
      case Kind::kAnnouncement:
        n = nd::build_unsolicited_na(self_, p, nd::kNdFrameBytes);
        break;
    }
  }
  if (n == 0) {
    rte_pktmbuf_free(m);
    ++c_.nd_tx_failures;
    return false;
  }
  (void)rte_pktmbuf_trim(m, static_cast<std::uint16_t>(nd::kNdFrameBytes - n));
  if (cfg_.recording.capture != nullptr)
    cfg_.recording.capture->capture(cfg_.queues.port_id, cfg_.queues.queue, &m, 1, CaptureDirection::kTx, now_tsc);
  if (!tx_.push(m)) {
    rte_pktmbuf_free(m);
    ++c_.nd_tx_failures;
    return false;
  }
  ++c_.tx_frames;
  return true;
}

Status EndpointNd::start_resolve(const std::uint8_t* ipv6, std::uint64_t now_ns) {
  if (!enabled_)
    return Status::fail(StatusCode::kUnsupported, "Neighbor Discovery resolves IPv6 peers; this endpoint speaks IPv4");
  switch (table_.start_resolve(nd::to_address(ipv6), now_ns)) {
    case nd::StartResult::kStarted:
    case nd::StartResult::kResolving:
    case nd::StartResult::kResolved:
      return Status{};
    case nd::StartResult::kBadAddress:
      return Status::error(StatusCode::kInvalidArgument,
                           ipv6_text(ipv6) + " names no neighbour (ours, ::, ::1, multicast or IPv4-mapped)");
    case nd::StartResult::kTableFull:
      break;
  }
  return Status::error(StatusCode::kNoMemory, "IPv6 neighbour table full (" + std::to_string(nd::kNeighbourCapacity) +
                                                  " addresses resolving or learned): cannot resolve " +
                                                  ipv6_text(ipv6));
}

NeighbourResolution EndpointNd::resolution(const std::uint8_t* ipv6) const {
  NeighbourResolution out;
  const nd::Neighbour* n = enabled_ ? table_.find(nd::to_address(ipv6), now_ns_) : nullptr;
  if (n == nullptr) {
    out.status =
        Status::error(StatusCode::kNotFound, ipv6_text(ipv6) + " is not resolved: start_nd_resolve asks for it");
    return out;
  }
  switch (n->state) {
    case nd::NeighbourState::kReachable:
      out.state = NeighbourResolution::State::kResolved;
      std::memcpy(out.mac, n->mac, 6);
      break;
    case nd::NeighbourState::kIncomplete:
      out.state = NeighbourResolution::State::kResolving;
      out.status = Status::error(StatusCode::kBadState,
                                 "still resolving " + ipv6_text(ipv6) +
                                     " (Neighbor Solicitations sent so far: " + std::to_string(n->queries_sent) + ")");
      break;
    case nd::NeighbourState::kFailed:
    case nd::NeighbourState::kNone:
      out.state = NeighbourResolution::State::kFailed;
      out.status =
          Status::error(StatusCode::kTimeout, "no Neighbor Advertisement from " + ipv6_text(ipv6) + " after " +
                                                  std::to_string(n->queries_sent) + " solicitations in " +
                                                  std::to_string((n->deadline_ns - n->started_ns) / 1'000'000) + " ms");
      break;
  }
  return out;
}

Status EndpointNd::announce(std::uint64_t now_tsc) {
  if (!enabled_)
    return Status::fail(StatusCode::kUnsupported,
                        "Neighbor Discovery announces IPv6 addresses; this endpoint speaks IPv4");
  if (!send(Kind::kAnnouncement, nullptr, nullptr, false, now_tsc))
    return Status::fail(StatusCode::kNoMemory, "no mbuf or TX room for the unsolicited Neighbor Advertisement");
  ++c_.nd_announcements_sent;
  return Status{};
}

}  // namespace droce::engine
