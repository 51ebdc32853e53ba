// The peer's MAC: given, or resolved by ARP or IPv6 Neighbor Discovery through a polled endpoint
// (see peer_mac.h).
#include "apps/common/peer_mac.h"

#include <arpa/inet.h>
#include <droce/engine/core/stop_signal.h>
#include <droce/protocols/arp/neighbour_table.h>
#include <droce/protocols/nd/neighbour_table.h>
#include <errno.h>  // program_invocation_short_name (GNU)
#include <rte_ethdev.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "apps/common/address_text.h"

namespace droce::apps {
namespace {

using Clock = std::chrono::steady_clock;
using engine::Status;
using engine::StatusCode;

// The engine fails a resolution after its last request's interval, on its own clock, as long as
// the endpoint is polled; a round that has not ended by then plus this margin ends here. Only a
// bug ends a round this way: the margin is wide, since a loaded machine stalls a process for
// seconds now and then, and the engine's own words are the ones the user should see.
constexpr std::chrono::milliseconds kRoundMargin{10000};
// Rounds at most, whatever wait_ms says (each lasts about 3 s: hours in all).
constexpr unsigned kMaxRounds = 10000;

std::string ipv4_text(const std::uint8_t ip[4]) {
  char b[INET_ADDRSTRLEN] = {};
  (void)inet_ntop(AF_INET, ip, b, sizeof(b));
  return b;
}

std::string gid_text(const std::uint8_t gid[16]) {
  char b[INET6_ADDRSTRLEN] = {};
  (void)inet_ntop(AF_INET6, gid, b, sizeof(b));
  return b;
}

const char* const kNeedMac = "--peer-mac is required for it";

// One resolution after another until one succeeds or `until` has passed, the endpoint polled all
// along; `start` asks, `get` reads the engine's answer (its NeighbourResolution, the same for both
// protocols). `how` names the protocol in the words of a failure ("ARP", "Neighbor Discovery").
// `note(line)` is told of each round that ended unanswered when another follows, and of an answer
// that came only in a later round.
template <typename Start, typename Get, typename Poll, typename Note>
Status resolve_rounds(Start start, Get get, const Poll& poll, const std::string& who, const char* how,
                      std::uint64_t round_ns, std::uint32_t wait_ms, std::uint8_t mac[6], const Note& note) {
  const auto begun = Clock::now();
  const auto until = begun + std::chrono::milliseconds(wait_ms);
  auto ms_since = [](Clock::time_point t) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
  };
  const auto round_len = std::chrono::nanoseconds(round_ns) + kRoundMargin;
  Status last;
  for (unsigned round = 0; round < kMaxRounds; ++round) {
    // A failed or expired address starts over; a known one is resolved at once.
    if (Status s = start(); !s.ok()) return s;
    const auto round_end = Clock::now() + round_len;
    engine::NeighbourResolution r;
    // Bounded by round_end: the endpoint's own clock ends the resolution well before it.
    for (;;) {
      poll();
      r = get();
      if (r.state != engine::NeighbourResolution::State::kResolving) break;
      if (engine::stop_requested())
        return Status::error(StatusCode::kError, "interrupted while resolving " + who + " by " + how);
      if (Clock::now() >= round_end) {
        r.status = Status::error(StatusCode::kTimeout, "no end to the " + std::string(how) + " resolution of " + who +
                                                           " within " + std::to_string(round_len.count() / 1'000'000) +
                                                           " ms (was the endpoint polled?)");
        break;
      }
    }
    if (r.state == engine::NeighbourResolution::State::kResolved) {
      std::memcpy(mac, r.mac, 6);
      if (round != 0)
        note(std::string(how) + " of " + who + " answered in round " + std::to_string(round + 1) + ", " +
             ms_since(begun) + " ms after the first");
      return {};
    }
    last = r.status;
    if (Clock::now() >= until) break;
    note(std::string(how) + " of " + who + ", round " + std::to_string(round + 1) + ": " + last.message() +
         "; asking again (" + ms_since(begun) + " of " + std::to_string(wait_ms) + " ms spent)");
  }
  return Status::error(last.code(), last.message() + "; a peer that does not answer " + how + " needs --peer-mac");
}

// What this endpoint and its port saw of the resolution's frames: the words a user needs to tell
// a peer that never answered from answers that were lost or refused here.
std::string frames_seen(const engine::RcEndpoint& ep, bool ipv6) {
  const engine::EndpointCounters& c = ep.counters();
  auto n = [](std::uint64_t v) { return std::to_string(v); };
  std::string s = "this endpoint so far: ";
  if (ipv6)
    s += n(c.nd_solicitations_sent) + " solicitations sent, " + n(c.nd_advertisements_learned) +
         " advertisements learned, " + n(c.nd_solicitations_answered) + " of the peer's solicitations answered, " +
         n(c.nd_ignored) + " ND frames ignored, " + n(c.nd_malformed) + " malformed, " + n(c.nd_tx_failures) +
         " not sent (no mbuf or TX room)";
  else
    s += n(c.arp_requests_sent) + " requests sent, " + n(c.arp_replies_learned) + " replies learned, " +
         n(c.arp_requests_answered) + " of the peer's requests answered, " + n(c.arp_ignored) +
         " ARP frames ignored, " + n(c.arp_malformed) + " malformed, " + n(c.arp_tx_failures) +
         " not sent (no mbuf or TX room)";
  const engine::EndpointConfig& cfg = ep.config();
  rte_eth_stats st{};
  if (cfg.queues.tx_ring == nullptr && rte_eth_stats_get(cfg.queues.port_id, &st) == 0)
    s += "; port " + n(cfg.queues.port_id) + ": " + n(st.ipackets) + " frames in (" + n(st.imissed) + " missed, " +
         n(st.rx_nombuf) + " without an mbuf, " + n(st.ierrors) + " errors), " + n(st.opackets) + " out (" +
         n(st.oerrors) + " errors)";
  return s;
}

}  // namespace

PeerMac::PeerMac(const std::string& given, engine::RcEndpoint& ep, Poll poll) : ep_(ep), poll_(std::move(poll)) {
  given_ = !given.empty() && engine::parse_mac(given, given_mac_);
}

void PeerMac::say(const std::string& line) const {
  if (note_) {
    note_(line);
    return;
  }
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, line.c_str());
}

void PeerMac::announce() {
  // Best effort: a neighbour that missed it still learns us from our requests or asks itself.
  if (given_) return;
  (void)ep_.announce();  // a gratuitous ARP, or an unsolicited Neighbor Advertisement (RFC 4861 §7.2.6)
}

Status PeerMac::of_ipv4(const std::uint8_t ipv4[4], std::uint32_t wait_ms, std::uint8_t mac[6]) {
  if (given_) {
    std::memcpy(mac, given_mac_, 6);
    return {};
  }
  if (ep_.config().addresses.ipv6)
    return Status::error(StatusCode::kUnsupported, "the peer's address " + ipv4_text(ipv4) +
                                                       " is IPv4 and this endpoint speaks IPv6: " + kNeedMac);
  return resolve_rounds([&] { return ep_.start_resolve(ipv4); }, [&] { return ep_.resolution(ipv4); }, poll_,
                        ipv4_text(ipv4), "ARP", arp::kArpMaxRequests * arp::kArpRetryIntervalNs, wait_ms, mac,
                        [this](const std::string& line) { say(line + "; " + frames_seen(ep_, false)); });
}

Status PeerMac::of_ipv6(const std::uint8_t ipv6[16], std::uint32_t wait_ms, std::uint8_t mac[6]) {
  if (given_) {
    std::memcpy(mac, given_mac_, 6);
    return {};
  }
  if (!ep_.config().addresses.ipv6)
    return Status::error(StatusCode::kUnsupported,
                         "the peer's GID " + gid_text(ipv6) +
                             " is an IPv6 address and this endpoint speaks IPv4, so neither ARP nor Neighbor "
                             "Discovery finds its MAC: " +
                             kNeedMac);
  return resolve_rounds([&] { return ep_.start_resolve(ipv6); }, [&] { return ep_.resolution(ipv6); }, poll_,
                        gid_text(ipv6), "Neighbor Discovery", nd::kNdMaxSolicitations * nd::kNdRetryIntervalNs, wait_ms,
                        mac, [this](const std::string& line) { say(line + "; " + frames_seen(ep_, true)); });
}

Status PeerMac::of_gid(const std::uint8_t gid[16], std::uint32_t wait_ms, std::uint8_t mac[6]) {
  static constexpr std::uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  if (std::memcmp(gid, kV4Mapped, sizeof(kV4Mapped)) == 0) return of_ipv4(gid + 12, wait_ms, mac);
  return of_ipv6(gid, wait_ms, mac);
}

}  // namespace droce::apps
