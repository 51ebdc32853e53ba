// SharedPort: K ranks' endpoints on one port — RX steered by destination IPv4, siblings' frames
// looped, the rest onto the port in order.
#include "apps/droce-coll/shared_port.h"

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <algorithm>
#include <string>

#include "apps/droce-coll/rank.h"

namespace droce::coll {

using engine::Status;
using engine::StatusCode;

std::unique_ptr<SharedPort> SharedPort::create(std::uint16_t port_id, std::uint32_t first_ip, std::uint32_t count,
                                               Status& err) {
  std::unique_ptr<SharedPort> p(new SharedPort());
  p->port_ = port_id;
  p->first_ip_ = first_ip;
  p->inbox_.resize(count);
  // Never grown on the datapath: an inbox holds at most one RX burst and kHeld from every ring.
  for (auto& in : p->inbox_) in.reserve(std::size_t{count} * kHeld + kBurst);
  p->out_.reserve(kHeld);
  for (std::uint32_t i = 0; i < count; ++i) {
    // One producer (the rank's endpoint) and one consumer (this owner), on the process's thread.
    const std::string name = "coll_tx" + std::to_string(i);
    rte_ring* r = rte_ring_create(name.c_str(), 1024, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (r == nullptr) {
      err = Status::error(StatusCode::kNoMemory,
                          "local rank " + std::to_string(i) + "'s TX ring: " + rte_strerror(rte_errno));
      return nullptr;
    }
    p->rings_.push_back(r);
  }
  return p;
}

SharedPort::~SharedPort() {
  for (auto& in : inbox_)
    if (!in.empty()) rte_pktmbuf_free_bulk(in.data(), static_cast<unsigned>(in.size()));
  if (!out_.empty()) rte_pktmbuf_free_bulk(out_.data(), static_cast<unsigned>(out_.size()));
  for (rte_ring* r : rings_) {
    rte_mbuf* m[kBurst];
    for (unsigned n; (n = rte_ring_dequeue_burst(r, reinterpret_cast<void**>(m), kBurst, nullptr)) != 0;)
      rte_pktmbuf_free_bulk(m, n);
    rte_ring_free(r);
  }
}

int SharedPort::owner(const rte_mbuf* m) const {
  const auto* f = rte_pktmbuf_mtod(m, const std::uint8_t*);
  std::uint32_t l3 = 14;
  if (m->data_len < l3) return -1;
  std::uint16_t type = static_cast<std::uint16_t>(f[12] << 8 | f[13]);
  if (type == 0x8100 && m->data_len >= 18) {  // one 802.1Q tag
    type = static_cast<std::uint16_t>(f[16] << 8 | f[17]);
    l3 = 18;
  }
  if (type != 0x0800 || m->data_len < l3 + 20) return -1;
  const std::uint8_t* d = f + l3 + 16;  // IPv4 destination (RFC 791)
  const std::uint32_t ip = std::uint32_t{d[0]} << 24 | std::uint32_t{d[1]} << 16 | std::uint32_t{d[2]} << 8 | d[3];
  const std::uint32_t i = ip - first_ip_;
  return i < rings_.size() ? static_cast<int>(i) : -1;
}

void SharedPort::drain_rings() {
  // Each pass starts at the next ring: a port that backs up does not starve the last ranks.
  next_ring_ = (next_ring_ + 1) % rings_.size();
  for (std::size_t j = 0; j < rings_.size(); ++j) {
    rte_ring* r = rings_[(next_ring_ + j) % rings_.size()];
    // Bounded per pass (kHeld from each ring, and what the port's queue holds): the rest waits
    // in the ring, then in the endpoint's own backlog.
    for (std::uint32_t taken = 0; taken < kHeld && out_.size() + kBurst <= kHeld;) {
      rte_mbuf* m[kBurst];
      const unsigned n = rte_ring_dequeue_burst(r, reinterpret_cast<void**>(m), kBurst, nullptr);
      taken += n;
      for (unsigned k = 0; k < n; ++k) {
        const int to = owner(m[k]);
        if (to >= 0) {
          inbox_[static_cast<std::size_t>(to)].push_back(m[k]);  // a sibling's: looped
          ++looped_;
        } else {
          out_.push_back(m[k]);
        }
      }
      if (n < kBurst) break;
    }
  }
}

void SharedPort::transmit() {
  std::size_t at = 0;
  while (at < out_.size()) {
    const auto n = static_cast<std::uint16_t>(std::min<std::size_t>(out_.size() - at, kBurst));
    const std::uint16_t sent = rte_eth_tx_burst(port_, 0, out_.data() + at, n);
    sent_ += sent;
    at += sent;
    if (sent < n) break;
  }
  out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(at));
}

std::uint32_t SharedPort::poll(std::uint64_t now_tsc, const std::vector<CollRank*>& ranks) {
  std::uint32_t moved = 0;
  rte_mbuf* rx[kBurst];
  const std::uint16_t n = rte_eth_rx_burst(port_, 0, rx, kBurst);
  moved += n;
  for (std::uint16_t k = 0; k < n; ++k) {
    const int to = owner(rx[k]);
    inbox_[to < 0 ? 0 : static_cast<std::size_t>(to)].push_back(rx[k]);
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::vector<rte_mbuf*>& in = inbox_[i];
    moved += static_cast<std::uint32_t>(in.size());
    // The endpoint takes a burst at a time (kRxBurst); an empty inbox still runs its timers and TX.
    std::size_t at = 0;
    do {
      const auto take = static_cast<std::uint16_t>(std::min<std::size_t>(in.size() - at, kBurst));
      ranks[i]->poll(now_tsc, in.data() + at, take);
      at += take;
    } while (at < in.size());
    in.clear();
  }
  drain_rings();
  transmit();
  return moved;
}

}  // namespace droce::coll
