// The IPv4 neighbour table: ARP learning rules, resolution retries and failure (RFC 826, with
// Linux's defaults for the timers; RFC 5227 for probes and announcements).
#include "protocols/arp/neighbour_table.h"

#include <cstring>

namespace droce::arp {
namespace {

constexpr std::uint8_t kBroadcastMac[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

bool usable_mac(const std::uint8_t* mac) {
  if ((mac[0] & 1u) != 0) return false;  // group bit: multicast or broadcast (IEEE 802 §8.2)
  for (int i = 0; i < 6; ++i)
    if (mac[i] != 0) return true;
  return false;
}

}  // namespace

bool NeighbourTable::resolvable(std::uint32_t ip) const {
  // 0.0.0.0/8 "this network", 127/8 loopback, 224/4 multicast and 240/4 with the broadcast
  // address (RFC 1122 §3.2.1.3, RFC 5771) never sit behind a neighbour's MAC.
  const std::uint32_t first = ip >> 24;
  return ip != cfg_.local_ip && first != 0 && first != 127 && first < 224;
}

Neighbour* NeighbourTable::lookup(std::uint32_t ip) {
  for (Neighbour& n : entries_)
    if (n.state != NeighbourState::kNone && n.ip == ip) return &n;
  return nullptr;
}

const Neighbour* NeighbourTable::find(std::uint32_t ip, std::uint64_t now_ns) const {
  for (const Neighbour& n : entries_) {
    if (n.state == NeighbourState::kNone || n.ip != ip) continue;
    if (n.state == NeighbourState::kReachable && now_ns >= n.deadline_ns) return nullptr;
    return &n;
  }
  return nullptr;
}

std::uint32_t NeighbourTable::size() const {
  std::uint32_t k = 0;
  for (const Neighbour& n : entries_) k += n.state != NeighbourState::kNone ? 1u : 0u;
  return k;
}

Neighbour* NeighbourTable::claim(std::uint64_t now_ns) {
  Neighbour* oldest = nullptr;
  for (Neighbour& n : entries_) {
    if (n.state == NeighbourState::kNone) return &n;
    const bool reusable =
        n.state == NeighbourState::kFailed || (n.state == NeighbourState::kReachable && now_ns >= n.deadline_ns);
    if (reusable && (oldest == nullptr || n.deadline_ns < oldest->deadline_ns)) oldest = &n;
  }
  return oldest;
}

StartResult NeighbourTable::start_resolve(std::uint32_t ip, std::uint64_t now_ns) {
  if (!resolvable(ip)) return StartResult::kBadAddress;
  Neighbour* n = lookup(ip);
  if (n != nullptr) {
    if (n->state == NeighbourState::kIncomplete) return StartResult::kResolving;
    if (n->state == NeighbourState::kReachable && now_ns < n->deadline_ns) return StartResult::kResolved;
  } else {
    n = claim(now_ns);
    if (n == nullptr) return StartResult::kTableFull;
  }
  *n = Neighbour{};
  n->ip = ip;
  n->state = NeighbourState::kIncomplete;
  n->started_ns = now_ns;
  n->deadline_ns = now_ns;  // the first request goes at the next due_requests
  if (now_ns < next_due_ns_) next_due_ns_ = now_ns;
  return StartResult::kStarted;
}

unsigned NeighbourTable::due_requests(std::uint64_t now_ns, std::uint32_t* ips, unsigned max, unsigned& failed) {
  failed = 0;
  if (now_ns < next_due_ns_) return 0;
  unsigned k = 0;
  std::uint64_t next = kNever;
  for (Neighbour& n : entries_) {
    if (n.state != NeighbourState::kIncomplete) continue;
    if (n.deadline_ns <= now_ns) {
      if (n.requests_sent >= cfg_.max_requests) {
        // The last request's interval passed without a reply.
        n.state = NeighbourState::kFailed;
        n.deadline_ns = now_ns;
        ++failed;
        continue;
      }
      if (k < max) {
        if (n.requests_sent == 0) n.started_ns = now_ns;  // the failure's words count from here
        ips[k++] = n.ip;
        ++n.requests_sent;
        n.deadline_ns = now_ns + cfg_.retry_interval_ns;
      }
    }
    if (n.deadline_ns < next) next = n.deadline_ns;  // still due when `ips` was full: next call
  }
  next_due_ns_ = next;
  return k;
}

void NeighbourTable::learn(Neighbour& n, const std::uint8_t* mac, std::uint64_t now_ns) {
  std::memcpy(n.mac, mac, 6);
  n.state = NeighbourState::kReachable;
  n.deadline_ns = now_ns + cfg_.lifetime_ns;
}

ArpVerdict NeighbourTable::on_arp(const ArpFrame& f, bool any_dst_mac, std::uint64_t now_ns) {
  ArpVerdict v;
  if (!any_dst_mac && std::memcmp(f.eth_dst, kBroadcastMac, 6) != 0 && std::memcmp(f.eth_dst, cfg_.local_mac, 6) != 0) {
    v.ignored = ArpIgnore::kNotOurMac;
    return v;
  }
  // Announcements of other hosts (target IP = their own) fall here too: frames about other
  // addresses teach nothing (Linux's arp_accept=0 creates no entry from them).
  if (f.target_ip != cfg_.local_ip) {
    v.ignored = ArpIgnore::kNotForUs;
    return v;
  }
  if (f.sender_ip == cfg_.local_ip) {
    v.ignored = ArpIgnore::kAddressConflict;
    return v;
  }
  if (!usable_mac(f.sender_mac)) {
    v.ignored = ArpIgnore::kBadSenderMac;
    return v;
  }
  const bool request = f.op == ArpOp::kRequest;
  // RFC 5227 §2.1.1: a probe (sender 0.0.0.0) for our address is answered, so that its sender
  // sees the address is taken; it names no address to learn.
  if (request && f.sender_ip == 0) {
    v.reply = true;
    return v;
  }
  if (!resolvable(f.sender_ip)) {
    v.ignored = ArpIgnore::kBadSenderIp;
    return v;
  }
  Neighbour* n = lookup(f.sender_ip);
  if (request) {
    v.reply = true;
    // The requester is about to talk to us: its MAC saves us a request (RFC 826, "merge").
    if (n == nullptr) {
      n = claim(now_ns);
      if (n == nullptr) {
        v.ignored = ArpIgnore::kTableFull;
        return v;
      }
      *n = Neighbour{};
      n->ip = f.sender_ip;
      n->started_ns = now_ns;
    }
  } else if (n == nullptr) {
    v.ignored = ArpIgnore::kUnsolicitedReply;
    return v;
  }
  learn(*n, f.sender_mac, now_ns);
  v.learned = true;
  return v;
}

}  // namespace droce::arp
