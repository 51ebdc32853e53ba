// The IPv4 neighbour table: ARP learning rules, resolution retries and failure (RFC 826, with
// Linux's defaults for the timers; RFC 5227 for probes and announcements).
#include "protocols/arp/neighbour_table.h"

#include <cstring>

namespace droce::arp {
namespace {

constexpr std::uint8_t kBroadcastMac[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

}  // namespace

bool NeighbourTable::resolvable(std::uint32_t ip) const {
  // 0.0.0.0/8 "this network", 127/8 loopback, 224/4 multicast and 240/4 with the broadcast
  // address (RFC 1122 §3.2.1.3, RFC 5771) never sit behind a neighbour's MAC.
  const std::uint32_t first = ip >> 24;
  return ip != cfg_.local_ip && first != 0 && first != 127 && first < 224;
}

ArpVerdict NeighbourTable::on_frame(const ArpFrame& f, bool any_dst_mac, std::uint64_t now_ns) {
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
  if (!neighbour::usable_mac(f.sender_mac)) {
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
  Neighbour* n = cache_.lookup(f.sender_ip);
  if (request) {
    v.reply = true;
    // The requester is about to talk to us: its MAC saves us a request (RFC 826, "merge").
    if (n == nullptr) {
      n = cache_.claim(f.sender_ip, now_ns);
      if (n == nullptr) {
        v.ignored = ArpIgnore::kTableFull;
        return v;
      }
    }
  } else if (n == nullptr) {
    v.ignored = ArpIgnore::kUnsolicitedReply;
    return v;
  }
  cache_.learn(*n, f.sender_mac, now_ns);
  v.learned = true;
  return v;
}

}  // namespace droce::arp
