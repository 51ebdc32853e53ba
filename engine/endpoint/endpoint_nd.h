// EndpointNd: IPv6 Neighbor Discovery (RFC 4861) on an RcEndpoint's port queue — answers
// solicitations for the endpoint's address, learns and resolves peers' MACs in a protocols/nd
// NeighbourTable, and announces the endpoint (unsolicited advertisement, §7.2.6). The IPv6
// sibling of EndpointArp: frames come from the endpoint's pool and leave through its TX batch;
// the RcEndpoint owns it and calls it from its poll (single-threaded, like the endpoint).
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "engine/core/tx_batch.h"
#include "engine/endpoint/endpoint_config.h"
#include "protocols/nd/neighbour_table.h"

namespace droce::engine {

struct EndpointCounters;

// What resolution(ip) knows about a peer's MAC: the same struct as ARP's (EndpointArp).
using neighbour::NeighbourResolution;

class EndpointNd {
 public:
  // `cfg`, `tx` and `counters` are the owning endpoint's and outlive this.
  EndpointNd(const EndpointConfig& cfg, TxBatch<1024>& tx, EndpointCounters& counters);

  // A frame the RoCE parser refused as IP but not UDP: true when it was NS or NA (answered,
  // learned or counted as ignored or malformed), false when it is something else (other ICMPv6,
  // other protocols, IPv4) or the endpoint speaks IPv4.
  bool on_frame(const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac, std::uint64_t now_ns,
                std::uint64_t now_tsc);
  // Every poll: the resolutions' solicitations and failures that came due (one compare otherwise).
  void poll(std::uint64_t now_ns, std::uint64_t now_tsc) {
    now_ns_ = now_ns;
    if (now_ns >= table_.next_due_ns()) send_due(now_ns, now_tsc);
  }

  // Starts resolving the peer at `ipv6` (16 bytes, network order); its first solicitation leaves
  // in the next poll. Ok also when it is known or under way; kInvalidArgument for an address
  // that names no neighbour, kNoMemory when the table is full, kUnsupported on an IPv4 endpoint.
  [[nodiscard]] Status start_resolve(const std::uint8_t* ipv6, std::uint64_t now_ns);
  // What is known about `ipv6` as of the last poll.
  [[nodiscard]] NeighbourResolution resolution(const std::uint8_t* ipv6) const;
  // Queues an unsolicited advertisement for the endpoint's address; it leaves in the next poll.
  [[nodiscard]] Status announce(std::uint64_t now_tsc);

  [[nodiscard]] const nd::NeighbourTable& neighbours() const { return table_; }

 private:
  void send_due(std::uint64_t now_ns, std::uint64_t now_tsc);
  enum class Kind : std::uint8_t { kSolicitation, kAdvertisement, kAnnouncement };
  // Builds one ND frame into an mbuf of the endpoint's pool and queues it; false (counted in
  // nd_tx_failures) when the pool or the TX backlog is full.
  bool send(Kind kind, const std::uint8_t* to_mac, const std::uint8_t* ip, bool solicited, std::uint64_t now_tsc);

  const EndpointConfig& cfg_;
  TxBatch<1024>& tx_;
  EndpointCounters& c_;
  bool enabled_ = false;  // an IPv6 endpoint
  nd::NdSender self_;
  nd::NeighbourTable table_;
  std::uint64_t now_ns_ = 0;  // the last poll's time
};

}  // namespace droce::engine
