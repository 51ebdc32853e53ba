// Test helpers: frames with a verifiable pattern, and bounded polling of a port.
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace droce::test {

// A frame whose every byte is a function of (seq, offset): any corruption or mix-up shows.
inline std::uint8_t pattern_byte(std::uint32_t seq, std::uint32_t off) {
  return static_cast<std::uint8_t>((seq * 131u + off * 7u + (off >> 8)) ^ 0x5A);
}

// Ethernet header (broadcast dst, locally administered src, experimental ether type 0x88B5)
// followed by a 4-byte sequence number and the pattern.
inline rte_mbuf* make_frame(rte_mempool* pool, std::uint32_t seq, std::uint32_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)));
  if (p == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memset(p, 0xFF, 6);
  const std::uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};
  std::memcpy(p + 6, src, 6);
  p[12] = 0x88;
  p[13] = 0xB5;
  std::memcpy(p + 14, &seq, 4);
  for (std::uint32_t i = 18; i < len; ++i) p[i] = pattern_byte(seq, i);
  return m;
}

// Reads the sequence number and checks every byte of a (possibly chained) frame.
inline bool check_frame(const rte_mbuf* m, std::uint32_t expected_len, std::uint32_t& seq) {
  if (m->pkt_len != expected_len) return false;
  std::vector<std::uint8_t> copy(m->pkt_len);
  // rte_pktmbuf_read copies only when the frame is chained; otherwise it points into the mbuf.
  const auto* buf = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, copy.data()));
  if (buf == nullptr) return false;
  std::memcpy(&seq, buf + 14, 4);
  for (std::uint32_t i = 18; i < expected_len; ++i)
    if (buf[i] != pattern_byte(seq, i)) return false;
  return true;
}

// Polls until `want` frames arrived or `timeout_ms` passed.
inline std::vector<rte_mbuf*> receive(std::uint16_t port, std::uint16_t queue, std::size_t want,
                                      std::uint32_t timeout_ms) {
  std::vector<rte_mbuf*> got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
    rte_mbuf* pkts[32];
    const std::uint16_t n = rte_eth_rx_burst(port, queue, pkts, 32);
    got.insert(got.end(), pkts, pkts + n);
    if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return got;
}

inline void free_all(std::vector<rte_mbuf*>& v) {
  for (auto* m : v) rte_pktmbuf_free(m);
  v.clear();
}

}  // namespace droce::test
