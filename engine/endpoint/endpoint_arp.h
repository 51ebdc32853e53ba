// EndpointArp: ARP (IPv4, RFC 826) on an RcEndpoint's port queue — answers requests for the
// endpoint's address, learns and resolves peers' MACs in a protocols/arp NeighbourTable, and
// announces the endpoint. Frames come from the endpoint's pool and leave through its TX batch.
// The RcEndpoint owns it and calls it from its poll (single-threaded, like the endpoint).
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "engine/core/tx_batch.h"
#include "engine/endpoint/endpoint_config.h"
#include "protocols/arp/neighbour_table.h"

namespace droce::engine {

struct EndpointCounters;

// What resolution(ip) knows about a peer's MAC: the same struct as Neighbor Discovery's
// (EndpointNd), so that a user handles both alike.
using neighbour::NeighbourResolution;

class EndpointArp {
 public:
  // `cfg`, `tx` and `counters` are the owning endpoint's and outlive this.
  EndpointArp(const EndpointConfig& cfg, TxBatch<1024>& tx, EndpointCounters& counters);

  // A frame the RoCE parser refused as not IP: true when it was ARP (answered, learned or
  // counted as ignored or malformed), false when it was not ARP (or the endpoint speaks IPv6).
  bool on_frame(const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac, std::uint64_t now_ns,
                std::uint64_t now_tsc);
  // Every poll: the resolutions' requests and failures that came due (one compare otherwise).
  void poll(std::uint64_t now_ns, std::uint64_t now_tsc) {
    now_ns_ = now_ns;
    if (now_ns >= table_.next_due_ns()) send_due(now_ns, now_tsc);
  }

  // Starts resolving the peer at `ipv4` (4 bytes, network order); its first request leaves in
  // the next poll. Ok also when it is known or under way; kInvalidArgument for an address that
  // names no neighbour, kNoMemory when the table is full, kUnsupported on an IPv6 endpoint.
  [[nodiscard]] Status start_resolve(const std::uint8_t* ipv4, std::uint64_t now_ns);
  // What is known about `ipv4` as of the last poll.
  [[nodiscard]] NeighbourResolution resolution(const std::uint8_t* ipv4) const;
  // Queues a gratuitous ARP (announcement) for the endpoint's address; it leaves in the next poll.
  [[nodiscard]] Status announce(std::uint64_t now_tsc);

  [[nodiscard]] const arp::NeighbourTable& neighbours() const { return table_; }

 private:
  void send_due(std::uint64_t now_ns, std::uint64_t now_tsc);
  enum class Kind : std::uint8_t { kRequest, kReply, kAnnouncement };
  // Builds one ARP frame into an mbuf of the endpoint's pool and queues it; false (counted in
  // arp_tx_failures) when the pool or the TX backlog is full.
  bool send(Kind kind, const std::uint8_t* to_mac, std::uint32_t ip, std::uint64_t now_tsc);

  const EndpointConfig& cfg_;
  TxBatch<1024>& tx_;
  EndpointCounters& c_;
  bool enabled_ = false;  // an IPv4 endpoint
  arp::ArpSender self_;
  arp::NeighbourTable table_;
  std::uint64_t now_ns_ = 0;  // the last poll's time
};

}  // namespace droce::engine
