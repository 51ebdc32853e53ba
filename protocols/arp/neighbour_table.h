// The IPv4 neighbour table: IPv4 address -> MAC, learned by ARP (RFC 826) with a lifetime, and
// the resolution of a peer's MAC (requests at an interval, a bounded count, then failure).
// The entries and the resolution's clock are protocols/common/neighbour_cache.h's, shared with
// ND's table; this file keeps ARP's own rules (which addresses resolve, what a frame teaches).
// Pure protocol code: no clock reads (every call takes now_ns), fixed capacity, nothing allocated
// after construction.
#pragma once

#include <cstdint>

#include "protocols/arp/arp_frame.h"
#include "protocols/common/neighbour_cache.h"

namespace droce::arp {

// How long a learned MAC is trusted. Linux keeps an unused entry about as long (gc_stale_time,
// 60 s); a peer that changed its MAC is found again at the next resolution after that.
inline constexpr std::uint64_t kNeighbourLifetimeNs = 60'000'000'000;
// Requests for an unresolved address are this far apart (Linux's retrans_time_ms, 1000) ...
inline constexpr std::uint64_t kArpRetryIntervalNs = 1'000'000'000;
// ... and this many are sent before the resolution fails (Linux's mcast_solicit, 3), so a silent
// address fails kArpMaxRequests x kArpRetryIntervalNs (3 s) after resolution started.
inline constexpr std::uint32_t kArpMaxRequests = 3;
// Entries: an endpoint talks to few peers. A full table refuses new addresses (counted); it never
// evicts a resolution in progress nor an entry still within its lifetime.
inline constexpr std::uint32_t kNeighbourCapacity = 64;

struct NeighbourConfig {
  std::uint8_t local_mac[6] = {};
  std::uint32_t local_ip = 0;  // host order
  std::uint64_t lifetime_ns = kNeighbourLifetimeNs;
  std::uint64_t retry_interval_ns = kArpRetryIntervalNs;
  std::uint32_t max_requests = kArpMaxRequests;  // at least 1
};

using NeighbourState = neighbour::NeighbourState;
using Neighbour = neighbour::NeighbourEntry<std::uint32_t>;  // ip in host order
// kBadAddress: 0.0.0.0, our own, broadcast, multicast or loopback.
using StartResult = neighbour::StartResult;

// What on_frame did not do, and why (each a counter for the caller).
enum class ArpIgnore : std::uint8_t {
  kNone,
  kNotOurMac,         // Ethernet destination neither ours nor broadcast (port not promiscuous)
  kNotForUs,          // target IP not ours: others' traffic, others' announcements
  kAddressConflict,   // the sender claims our own IP
  kBadSenderMac,      // multicast, broadcast or zero sender MAC
  kBadSenderIp,       // broadcast, multicast or loopback sender IP (0.0.0.0 only in a probe)
  kUnsolicitedReply,  // a reply for an address we never asked about
  kTableFull,         // a request for us from a new address: answered, not learned
};

struct ArpVerdict {
  bool reply = false;    // answer it: build_arp_reply to the frame's sender_mac / sender_ip
  bool learned = false;  // the sender's MAC is now in the table (reachable)
  ArpIgnore ignored = ArpIgnore::kNone;
};

class NeighbourTable {
 public:
  static constexpr std::uint64_t kNever = neighbour::kNever;
  explicit NeighbourTable(const NeighbourConfig& cfg)
      : cfg_(cfg), cache_({cfg.lifetime_ns, cfg.retry_interval_ns, cfg.max_requests}) {
    if (cfg_.max_requests == 0) cfg_.max_requests = 1;
  }

  // Starts resolving `ip` (host order) unless it is known or under way. A failed or expired
  // entry starts over.
  [[nodiscard]] StartResult start_resolve(std::uint32_t ip, std::uint64_t now_ns) {
    return resolvable(ip) ? cache_.start_resolve(ip, now_ns) : StartResult::kBadAddress;
  }
  // The entry for `ip`, or nullptr when there is none (a reachable entry past its lifetime
  // counts as none).
  [[nodiscard]] const Neighbour* find(std::uint32_t ip, std::uint64_t now_ns) const { return cache_.find(ip, now_ns); }

  // Resolution's clock: writes up to `max` addresses whose request is due now into `ips` and
  // returns how many (each is counted as sent); entries that have had all their requests
  // unanswered for a whole interval become kFailed (`failed` says how many did now). Costs one
  // compare while nothing is due.
  unsigned due_queries(std::uint64_t now_ns, std::uint32_t* ips, unsigned max, unsigned& failed) {
    return cache_.due_queries(now_ns, ips, max, failed);
  }
  // When due_queries next has work (kNever: no resolution in progress).
  [[nodiscard]] std::uint64_t next_due_ns() const { return cache_.next_due_ns(); }

  // A received ARP frame (parse_arp accepted it). Learning follows Linux: a request for our IP
  // teaches (or refreshes) the requester's MAC; a reply for our IP updates an address we hold an
  // entry for; nothing is learned from frames for other IPs, from a sender 0.0.0.0 (an RFC 5227
  // probe, which is still answered) or from a sender claiming our IP. `any_dst_mac`: the port
  // takes frames for any MAC, so the Ethernet destination is not checked.
  [[nodiscard]] ArpVerdict on_frame(const ArpFrame& f, bool any_dst_mac, std::uint64_t now_ns);

  [[nodiscard]] const NeighbourConfig& config() const { return cfg_; }
  // Entries in use (any state but kNone).
  [[nodiscard]] std::uint32_t size() const { return cache_.size(); }
  // True for an IPv4 address one can resolve (and learn): not 0.0.0.0, ours, loopback,
  // multicast or broadcast.
  [[nodiscard]] bool resolvable(std::uint32_t ip) const;

 private:
  NeighbourConfig cfg_;
  neighbour::NeighbourCache<std::uint32_t, kNeighbourCapacity> cache_;
};

}  // namespace droce::arp
