// The peer's MAC for the apps' QPs: the one the user gave (--peer-mac: used as is, no neighbour
// traffic), or found through one of our endpoints, polled while it waits: by ARP (RFC 826) on an
// IPv4 endpoint, by IPv6 Neighbor Discovery (RFC 4861) on an IPv6 one.
//
// Use (one per app, made once the endpoint exists and the port's link is up):
//   apps::PeerMac peer_mac(opt.peer_mac, ep, [&] { ep.poll(); });  // "" = find it
//   peer_mac.announce();        // a gratuitous ARP or an unsolicited Neighbor Advertisement, at start
//   std::uint8_t mac[6];
//   if (Status s = peer_mac.of_gid(peer_gid, 0, mac); !s.ok()) fail(s.message());
//   ... RemoteQp{lab_address(peer_ip, mac), ...}
// With several workers, resolve through the endpoint whose queue the peer's replies reach
// (worker 0's: RSS and memif pairs put frames that are not RoCE on queue 0, docs/arp.md) and give
// the MAC to every worker. While the app waits for its peer elsewhere (the TCP exchange), that
// endpoint must be polled too: the peer may be resolving us, and only a polled endpoint answers.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace droce::apps {

class PeerMac {
 public:
  using Poll = std::function<void()>;
  // `given`: --peer-mac's text, already checked by the option parser; "" to resolve by ARP.
  // `ep` sends the requests and learns the replies; `poll` runs one iteration of whatever polls
  // it (the endpoint itself, or its worker). Both outlive this.
  PeerMac(const std::string& given, engine::RcEndpoint& ep, Poll poll);

  // True when the MAC comes from ARP or Neighbor Discovery (no --peer-mac).
  [[nodiscard]] bool by_arp() const { return !given_; }
  // Without --peer-mac (nothing otherwise): queues a gratuitous ARP (IPv4 endpoint) or an
  // unsolicited Neighbor Advertisement (IPv6 endpoint, RFC 4861 §7.2.6) for our address, so that
  // neighbours' caches learn us; it leaves in the next poll.
  void announce();

  // The MAC of the peer at `ipv4` (4 bytes, network order). Given: that MAC, at once. ARP: one
  // resolution (the engine's: arp::kArpMaxRequests requests, arp::kArpRetryIntervalNs apart),
  // then more until `wait_ms` has passed (0: the first one only — the peer is known to be up,
  // e.g. it is in the middle of the exchange); the endpoint is polled all along. On failure the
  // engine's words, e.g. "no ARP reply from 10.0.0.3 after 3 requests in 3000 ms"; "interrupted"
  // on a stop request (Ctrl-C). An IPv6 endpoint: kUnsupported saying --peer-mac is required.
  [[nodiscard]] engine::Status of_ipv4(const std::uint8_t ipv4[4], std::uint32_t wait_ms, std::uint8_t mac[6]);
  // The same for the peer at `ipv6` (16 bytes) by Neighbor Discovery (nd::kNdMaxSolicitations
  // solicitations nd::kNdRetryIntervalNs apart per resolution), e.g. "no Neighbor Advertisement
  // from fd00::3 after 3 solicitations in 3000 ms". An IPv4 endpoint: kUnsupported saying
  // --peer-mac is required.
  [[nodiscard]] engine::Status of_ipv6(const std::uint8_t ipv6[16], std::uint32_t wait_ms, std::uint8_t mac[6]);
  // The same for the peer whose GID (from the exchange) is `gid`: an IPv4-mapped GID
  // (::ffff:a.b.c.d) resolves its IPv4 address by ARP, any other its IPv6 address by ND.
  [[nodiscard]] engine::Status of_gid(const std::uint8_t gid[16], std::uint32_t wait_ms, std::uint8_t mac[6]);

  // A resolution that takes more than one round says so, once per unanswered round and once when
  // a later round is answered, with what the endpoint and its port saw of the protocol's frames
  // (queries sent, answers learned, the peer's queries answered, frames ignored or not sent; the
  // port's frames in and out, missed, without an mbuf): a peer that never answers, an answer lost
  // on the way and one refused here read differently. By default a line on stderr after the
  // program's name; `note` takes the lines instead (a test, an app with its own log).
  using Note = std::function<void(const std::string&)>;
  void set_note(Note note) { note_ = std::move(note); }

 private:
  void say(const std::string& line) const;
  engine::RcEndpoint& ep_;
  Poll poll_;
  Note note_;
  bool given_ = false;
  std::uint8_t given_mac_[6] = {};
};

}  // namespace droce::apps
