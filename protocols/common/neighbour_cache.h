// The resolution machinery ARP's (protocols/arp) and Neighbor Discovery's (protocols/nd)
// neighbour tables share: a fixed array of address -> MAC entries, each learned with a lifetime,
// and the resolution of a peer's MAC (queries at an interval, a bounded count, then failure).
// The two protocols differ in their address (IPv4 in host order, or 16 bytes), in which addresses
// may be resolved and in what a received frame teaches; those rules stay in each table, which
// calls this cache for the bookkeeping. Pure protocol code: no clock reads (every call takes
// now_ns), nothing allocated after construction, every loop bounded by the capacity.
// NeighbourResolution, at the end, is what either protocol tells its user about one peer.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "protocols/common/status.h"

namespace droce::neighbour {

inline constexpr std::uint64_t kNever = UINT64_MAX;

enum class NeighbourState : std::uint8_t {
  kNone,        // a free slot
  kIncomplete,  // queries (ARP requests, ND solicitations) going out, no answer yet
                // (RFC 4861 §7.3.2 INCOMPLETE)
  kReachable,   // MAC known until deadline_ns
  kFailed,      // the table's maximum of queries went unanswered
};

enum class StartResult : std::uint8_t {
  kStarted,     // a new resolution: its first query is due now
  kResolving,   // one was already in progress
  kResolved,    // the MAC is known (and within its lifetime)
  kBadAddress,  // the table's resolvable() refuses it: nothing to resolve
  kTableFull,
};

template <typename Address>
struct NeighbourEntry {
  Address ip{};
  std::uint8_t mac[6] = {};
  NeighbourState state = NeighbourState::kNone;
  std::uint32_t queries_sent = 0;  // ARP requests or ND solicitations of the current (or last) resolution
  std::uint64_t started_ns = 0;    // when that resolution sent its first query
  // kIncomplete: the next query (or the failure) is due; kReachable: the MAC expires;
  // kFailed: when it failed.
  std::uint64_t deadline_ns = 0;
};

// The timers each protocol configures (its own defaults and clauses sit beside its table).
struct ResolutionTimers {
  std::uint64_t lifetime_ns = 0;        // how long a learned MAC is trusted
  std::uint64_t retry_interval_ns = 0;  // between queries of one resolution
  std::uint32_t max_queries = 1;        // sent before the resolution fails; at least 1
};

template <typename Address, std::uint32_t Capacity>
class NeighbourCache {
 public:
  using Entry = NeighbourEntry<Address>;

  explicit NeighbourCache(const ResolutionTimers& timers) : timers_(timers) {
    if (timers_.max_queries == 0) timers_.max_queries = 1;
  }

  // The entry for `ip` in any state but kNone, expired or not.
  Entry* lookup(const Address& ip) {
    for (Entry& n : entries_)
      if (n.state != NeighbourState::kNone && n.ip == ip) return &n;
    return nullptr;
  }

  // The entry for `ip`, or nullptr when there is none (a reachable entry past its lifetime
  // counts as none).
  [[nodiscard]] const Entry* find(const Address& ip, std::uint64_t now_ns) const {
    for (const Entry& n : entries_) {
      if (n.state == NeighbourState::kNone || n.ip != ip) continue;
      if (n.state == NeighbourState::kReachable && now_ns >= n.deadline_ns) return nullptr;
      return &n;
    }
    return nullptr;
  }

  // Entries in use (any state but kNone).
  [[nodiscard]] std::uint32_t size() const {
    std::uint32_t k = 0;
    for (const Entry& n : entries_) k += n.state != NeighbourState::kNone ? 1u : 0u;
    return k;
  }

  // A fresh entry for a new address `ip` (state kNone until learn or start_resolve sets one):
  // a free slot, else the oldest failed or expired entry; nullptr when every entry is resolving
  // or within its lifetime, so a full table never evicts either.
  Entry* claim(const Address& ip, std::uint64_t now_ns) {
    Entry* slot = nullptr;
    for (Entry& n : entries_) {
      if (n.state == NeighbourState::kNone) {
        slot = &n;
        break;
      }
      const bool reusable =
          n.state == NeighbourState::kFailed || (n.state == NeighbourState::kReachable && now_ns >= n.deadline_ns);
      if (reusable && (slot == nullptr || n.deadline_ns < slot->deadline_ns)) slot = &n;
    }
    if (slot == nullptr) return nullptr;
    *slot = Entry{};
    slot->ip = ip;
    slot->started_ns = now_ns;
    return slot;
  }

  // Starts resolving `ip` (which the caller found resolvable) unless it is known or under way.
  // A failed or expired entry starts over.
  [[nodiscard]] StartResult start_resolve(const Address& ip, std::uint64_t now_ns) {
    Entry* n = lookup(ip);
    if (n != nullptr) {
      if (n->state == NeighbourState::kIncomplete) return StartResult::kResolving;
      if (n->state == NeighbourState::kReachable && now_ns < n->deadline_ns) return StartResult::kResolved;
      *n = Entry{};
      n->ip = ip;
      n->started_ns = now_ns;
    } else {
      n = claim(ip, now_ns);
      if (n == nullptr) return StartResult::kTableFull;
    }
    n->state = NeighbourState::kIncomplete;
    n->deadline_ns = now_ns;  // the first query goes at the next due_queries
    if (now_ns < next_due_ns_) next_due_ns_ = now_ns;
    return StartResult::kStarted;
  }

  // Resolution's clock: writes up to `max` addresses whose query is due now into `ips` and
  // returns how many (each is counted as sent); entries whose queries all went unanswered for a
  // whole interval become kFailed (`failed` says how many did now). One compare while nothing
  // is due.
  unsigned due_queries(std::uint64_t now_ns, Address* ips, unsigned max, unsigned& failed) {
    failed = 0;
    if (now_ns < next_due_ns_) return 0;
    unsigned k = 0;
    std::uint64_t next = kNever;
    for (Entry& n : entries_) {
      if (n.state != NeighbourState::kIncomplete) continue;
      if (n.deadline_ns <= now_ns) {
        if (n.queries_sent >= timers_.max_queries) {
          // The last query's interval passed without an answer (RFC 4861 §7.2.2; ARP follows
          // Linux's mcast_solicit the same way).
          n.state = NeighbourState::kFailed;
          n.deadline_ns = now_ns;
          ++failed;
          continue;
        }
        if (k < max) {
          if (n.queries_sent == 0) n.started_ns = now_ns;  // the failure's words count from here
          ips[k++] = n.ip;
          ++n.queries_sent;
          n.deadline_ns = now_ns + timers_.retry_interval_ns;
        }
      }
      if (n.deadline_ns < next) next = n.deadline_ns;  // still due when `ips` was full: next call
    }
    next_due_ns_ = next;
    return k;
  }

  // When due_queries next has work (kNever: no resolution in progress).
  [[nodiscard]] std::uint64_t next_due_ns() const { return next_due_ns_; }

  // `mac` (checked by the caller) is `n`'s for a lifetime from now; any resolution ends.
  void learn(Entry& n, const std::uint8_t* mac, std::uint64_t now_ns) {
    std::memcpy(n.mac, mac, 6);
    n.state = NeighbourState::kReachable;
    n.deadline_ns = now_ns + timers_.lifetime_ns;
  }

 private:
  ResolutionTimers timers_;
  std::array<Entry, Capacity> entries_{};
  std::uint64_t next_due_ns_ = kNever;
};

// False for a MAC no neighbour can own: the group bit (multicast or broadcast, IEEE 802 §8.2)
// or all zeros. Both protocols refuse to learn one.
[[nodiscard]] inline bool usable_mac(const std::uint8_t* mac) {
  if ((mac[0] & 1u) != 0) return false;
  for (int i = 0; i < 6; ++i)
    if (mac[i] != 0) return true;
  return false;
}

// What a resolution knows about one peer's MAC, as the engine's ARP (IPv4) and Neighbor
// Discovery (IPv6) report it to their user; the same words for both protocols.
struct NeighbourResolution {
  enum class State : std::uint8_t {
    kUnknown,    // never asked, or its MAC outlived the table's lifetime: start a resolution
    kResolving,  // queries (ARP requests, Neighbor Solicitations) going out
    kResolved,   // `mac` is the peer's
    kFailed,     // nobody answered
  };
  State state = State::kUnknown;
  std::uint8_t mac[6] = {};
  // Ok when resolved; else a code and a line a person can read: kBadState "still resolving",
  // kTimeout "no ARP reply from 10.0.0.2 after 3 requests in 3000 ms" (or "no Neighbor
  // Advertisement from fd00::2 after 3 solicitations in 3000 ms"), kNotFound.
  Status status;
};

}  // namespace droce::neighbour
