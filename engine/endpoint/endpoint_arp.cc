// EndpointArp: ARP frames in and out of an RcEndpoint's queue, and the resolution API's words.
#include "engine/endpoint/endpoint_arp.h"

#include <rte_mbuf.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {
namespace {

arp::NeighbourConfig table_config(const EndpointConfig& cfg) {
  arp::NeighbourConfig t;
  std::memcpy(t.local_mac, cfg.addresses.local.mac, 6);
  t.local_ip = cfg.addresses.ipv6 ? 0 : arp::load_ipv4(cfg.addresses.local.ip);
  return t;
}

std::string ipv4_text(std::uint32_t ip) {
  char b[16];
  std::snprintf(b, sizeof(b), "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xFFu, (ip >> 8) & 0xFFu, ip & 0xFFu);
  return b;
}

}  // namespace

EndpointArp::EndpointArp(const EndpointConfig& cfg, TxBatch<1024>& tx, EndpointCounters& counters)
    : cfg_(cfg), tx_(tx), c_(counters), enabled_(!cfg.addresses.ipv6), table_(table_config(cfg)) {
  std::memcpy(self_.mac, cfg.addresses.local.mac, 6);
  self_.ip = table_.config().local_ip;
  self_.vlan_id = cfg.addresses.vlan_id;
  self_.vlan_pcp = cfg.addresses.vlan_pcp;
}

bool EndpointArp::on_frame(const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac, std::uint64_t now_ns,
                           std::uint64_t now_tsc) {
  if (!enabled_) return false;
  arp::ArpFrame f;
  const arp::ArpRefusal r = arp::parse_arp(frame, len, f);
  if (r == arp::ArpRefusal::kNotArp) return false;
  if (r != arp::ArpRefusal::kNone) {
    ++c_.arp_malformed;
    return true;
  }
  const arp::ArpVerdict v = table_.on_arp(f, any_dst_mac, now_ns);
  if (v.learned) {
    if (f.op == arp::ArpOp::kReply)
      ++c_.arp_replies_learned;
    else
      ++c_.arp_requests_learned;
  }
  if (v.ignored != arp::ArpIgnore::kNone) ++c_.arp_ignored;
  // The reply goes out with our own 802.1Q tag (the tag belongs to the link we are on).
  if (v.reply && send(Kind::kReply, f.sender_mac, f.sender_ip, now_tsc)) ++c_.arp_requests_answered;
  return true;
}

void EndpointArp::send_due(std::uint64_t now_ns, std::uint64_t now_tsc) {
  // Bounded by the table's capacity; what one call cannot send goes in the next poll.
  std::uint32_t ips[16];
  unsigned failed = 0;
  const unsigned n = table_.due_requests(now_ns, ips, 16, failed);
  c_.arp_resolve_failures += failed;
  for (unsigned i = 0; i < n; ++i)
    if (send(Kind::kRequest, nullptr, ips[i], now_tsc)) ++c_.arp_requests_sent;
}

bool EndpointArp::send(Kind kind, const std::uint8_t* to_mac, std::uint32_t ip, std::uint64_t now_tsc) {
  rte_mbuf* m = rte_pktmbuf_alloc(cfg_.queues.pool);
  if (m == nullptr) {
    ++c_.arp_tx_failures;
    return false;
  }
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, arp::kArpFrameBytes));
  std::uint32_t n = 0;
  if (p != nullptr) {
    switch (kind) {
      case Kind::kRequest:
        n = arp::build_arp_request(self_, ip, p, arp::kArpFrameBytes);
        break;
      case Kind::kReply:
        n = arp::build_arp_reply(self_, to_mac, ip, p, arp::kArpFrameBytes);
        break;
      case Kind::kAnnouncement:
        n = arp::build_gratuitous_arp(self_, p, arp::kArpFrameBytes);
        break;
    }
  }
  if (n == 0) {
    rte_pktmbuf_free(m);
    ++c_.arp_tx_failures;
    return false;
  }
  if (cfg_.recording.capture != nullptr)
    cfg_.recording.capture->capture(cfg_.queues.port_id, cfg_.queues.queue, &m, 1, CaptureDirection::kTx, now_tsc);
  if (!tx_.push(m)) {
    rte_pktmbuf_free(m);
    ++c_.arp_tx_failures;
    return false;
  }
  ++c_.tx_frames;
  return true;
}

Status EndpointArp::start_resolve(const std::uint8_t* ipv4, std::uint64_t now_ns) {
  if (!enabled_) return Status::fail(StatusCode::kUnsupported, "ARP resolves IPv4 peers; this endpoint speaks IPv6");
  const std::uint32_t ip = arp::load_ipv4(ipv4);
  switch (table_.start_resolve(ip, now_ns)) {
    case arp::StartResult::kStarted:
    case arp::StartResult::kResolving:
    case arp::StartResult::kResolved:
      return Status{};
    case arp::StartResult::kBadAddress:
      return Status::error(StatusCode::kInvalidArgument,
                           ipv4_text(ip) + " names no neighbour (ours, 0.0.0.0, loopback, multicast or broadcast)");
    case arp::StartResult::kTableFull:
      break;
  }
  return Status::error(StatusCode::kNoMemory, "neighbour table full (" + std::to_string(arp::kNeighbourCapacity) +
                                                  " addresses resolving or learned): cannot resolve " + ipv4_text(ip));
}

NeighbourResolution EndpointArp::resolution(const std::uint8_t* ipv4) const {
  NeighbourResolution out;
  const std::uint32_t ip = arp::load_ipv4(ipv4);
  const arp::Neighbour* n = enabled_ ? table_.find(ip, now_ns_) : nullptr;
  if (n == nullptr) {
    out.status = Status::error(StatusCode::kNotFound, ipv4_text(ip) + " is not resolved: start_resolve asks for it");
    return out;
  }
  switch (n->state) {
    case arp::NeighbourState::kReachable:
      out.state = NeighbourResolution::State::kResolved;
      std::memcpy(out.mac, n->mac, 6);
      break;
    case arp::NeighbourState::kIncomplete:
      out.state = NeighbourResolution::State::kResolving;
      out.status = Status::error(
          StatusCode::kBadState,
          "still resolving " + ipv4_text(ip) + " (ARP requests sent so far: " + std::to_string(n->queries_sent) + ")");
      break;
    case arp::NeighbourState::kFailed:
    case arp::NeighbourState::kNone:
      out.state = NeighbourResolution::State::kFailed;
      out.status =
          Status::error(StatusCode::kTimeout, "no ARP reply from " + ipv4_text(ip) + " after " +
                                                  std::to_string(n->queries_sent) + " requests in " +
                                                  std::to_string((n->deadline_ns - n->started_ns) / 1'000'000) + " ms");
      break;
  }
  return out;
}

Status EndpointArp::announce(std::uint64_t now_tsc) {
  if (!enabled_)
    return Status::fail(StatusCode::kUnsupported, "ARP announces IPv4 addresses; this endpoint speaks IPv6");
  if (!send(Kind::kAnnouncement, nullptr, 0, now_tsc))
    return Status::fail(StatusCode::kNoMemory, "no mbuf or TX room for the ARP announcement");
  ++c_.arp_announcements_sent;
  return Status{};
}

}  // namespace droce::engine
