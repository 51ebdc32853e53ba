// The IPv6 neighbour table: IPv6 address -> MAC, learned by Neighbor Discovery (RFC 4861) with a
// lifetime, and the resolution of a peer's MAC (solicitations at an interval, a bounded count,
// then failure). The sibling of protocols/arp's table, with the same rules for 16-byte
// addresses: learn only what we asked (an advertisement for an address we are resolving or hold)
// or who asks us (a solicitation for our address with the asker's link-layer address).
// No Neighbor Unreachability Detection (§7.3): an entry is trusted for its lifetime, then
// resolved again. The entries and the resolution's clock are protocols/common/neighbour_cache.h's,
// shared with ARP's table; this file keeps ND's own rules. Pure protocol code: no clock reads,
// fixed capacity, nothing allocated after construction.
#pragma once

#include <array>
#include <cstdint>

#include "protocols/common/neighbour_cache.h"
#include "protocols/nd/nd_frame.h"

namespace droce::nd {

using Ipv6Address = std::array<std::uint8_t, 16>;
[[nodiscard]] inline Ipv6Address to_address(const std::uint8_t ip[16]) {
  Ipv6Address a;
  for (std::size_t i = 0; i < 16; ++i) a[i] = ip[i];
  return a;
}

// How long a learned MAC is trusted: the same as ARP's (protocols/arp), since droce runs no NUD
// to find a changed MAC earlier (RFC 4861's REACHABLE_TIME, 30 s, is followed by STALE, still
// used, with NUD's probes).
inline constexpr std::uint64_t kNeighbourLifetimeNs = 60'000'000'000;
// Solicitations are RETRANS_TIMER (1000 ms) apart, MAX_MULTICAST_SOLICIT (3) of them, then the
// resolution fails (RFC 4861 §7.2.2, §10): a silent address fails after 3 s.
inline constexpr std::uint64_t kNdRetryIntervalNs = 1'000'000'000;
inline constexpr std::uint32_t kNdMaxSolicitations = 3;
// Entries, as ARP's table: a full table refuses new addresses, never evicting a resolution in
// progress nor an entry within its lifetime.
inline constexpr std::uint32_t kNeighbourCapacity = 64;

struct NeighbourConfig {
  std::uint8_t local_mac[6] = {};
  Ipv6Address local_ip{};
  std::uint64_t lifetime_ns = kNeighbourLifetimeNs;
  std::uint64_t retry_interval_ns = kNdRetryIntervalNs;
  std::uint32_t max_solicitations = kNdMaxSolicitations;  // at least 1
};

// kIncomplete is §7.3.2's INCOMPLETE; kFailed: max_solicitations went unanswered.
using NeighbourState = neighbour::NeighbourState;
using Neighbour = neighbour::NeighbourEntry<Ipv6Address>;
// kBadAddress: ::, ::1, multicast, IPv4-mapped or our own.
using StartResult = neighbour::StartResult;

// What on_frame did not do, and why (each a counter for the caller).
enum class NdIgnore : std::uint8_t {
  kNone,
  kNotOurMac,                 // Ethernet destination neither ours nor one of our groups'
  kNotForUs,                  // a solicitation for another target
  kAddressConflict,           // a solicitation from our address, or another node advertising it
  kBadSenderIp,               // a solicitation from a multicast, loopback or IPv4-mapped source
  kBadLinkAddress,            // a link-layer option naming a multicast or zero MAC
  kUnsolicitedAdvertisement,  // an advertisement for an address we hold no entry for (§7.2.5)
  kNoLinkAddress,             // an advertisement without the target's MAC for an INCOMPLETE entry
  kNoOverride,                // O clear and a different MAC for a known entry (§7.2.5)
  kTableFull,                 // a solicitation for us from a new address: answered, not learned
};

struct NdVerdict {
  // Answer it: build_na to reply_mac / reply_ip with S = reply_solicited.
  bool reply = false;
  bool reply_solicited = false;
  std::uint8_t reply_mac[6] = {};
  std::uint8_t reply_ip[16] = {};
  bool learned = false;  // the sender's (NS) or target's (NA) MAC is now in the table
  NdIgnore ignored = NdIgnore::kNone;
};

class NeighbourTable {
 public:
  static constexpr std::uint64_t kNever = neighbour::kNever;
  explicit NeighbourTable(const NeighbourConfig& cfg)
      : cfg_(cfg), cache_({cfg.lifetime_ns, cfg.retry_interval_ns, cfg.max_solicitations}) {
    if (cfg_.max_solicitations == 0) cfg_.max_solicitations = 1;
  }

  // Starts resolving `ip` unless it is known or under way. A failed or expired entry starts over.
  [[nodiscard]] StartResult start_resolve(const Ipv6Address& ip, std::uint64_t now_ns) {
    return resolvable(ip) ? cache_.start_resolve(ip, now_ns) : StartResult::kBadAddress;
  }
  // The entry for `ip`, or nullptr when there is none (a reachable entry past its lifetime
  // counts as none).
  [[nodiscard]] const Neighbour* find(const Ipv6Address& ip, std::uint64_t now_ns) const {
    return cache_.find(ip, now_ns);
  }

  // Resolution's clock: writes up to `max` addresses whose solicitation is due now into `ips`
  // and returns how many (each counted as sent); entries whose solicitations all went
  // unanswered for a whole interval become kFailed (`failed` says how many did now, §7.2.2).
  // One compare while nothing is due.
  unsigned due_queries(std::uint64_t now_ns, Ipv6Address* ips, unsigned max, unsigned& failed) {
    return cache_.due_queries(now_ns, ips, max, failed);
  }
  // When due_queries next has work (kNever: no resolution in progress).
  [[nodiscard]] std::uint64_t next_due_ns() const { return cache_.next_due_ns(); }

  // A received NS or NA (parse_nd accepted it). `any_dst_mac`: the port takes frames for any
  // MAC, so the Ethernet destination is not checked (else it must be ours, our solicited-node
  // group's or all nodes').
  [[nodiscard]] NdVerdict on_frame(const NdFrame& f, bool any_dst_mac, std::uint64_t now_ns);

  [[nodiscard]] const NeighbourConfig& config() const { return cfg_; }
  [[nodiscard]] std::uint32_t size() const { return cache_.size(); }
  // True for an address one can resolve (and learn): not ::, ::1, multicast, IPv4-mapped
  // (::ffff:0:0/96, never on the wire, RFC 4291 §2.5.5.2) or ours.
  [[nodiscard]] bool resolvable(const Ipv6Address& ip) const;

 private:
  [[nodiscard]] NdVerdict on_solicitation(const NdFrame& f, std::uint64_t now_ns);
  [[nodiscard]] NdVerdict on_advertisement(const NdFrame& f, std::uint64_t now_ns);

  NeighbourConfig cfg_;
  neighbour::NeighbourCache<Ipv6Address, kNeighbourCapacity> cache_;
};

}  // namespace droce::nd
