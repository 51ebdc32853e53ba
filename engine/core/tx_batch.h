// TxBatch: frames waiting for tx_burst; what the NIC did not take is kept for the next iteration.
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace droce::engine {

// A filter over the frames a batch sends (a lab's impairment of this side's TX): it sees each
// frame once, before its first tx_burst, and may drop (free), duplicate or hold back frames in
// pkts[0..n), the array holding `max`; it returns how many frames the array now holds. An ethdev
// TX callback cannot do this: tx_burst returns what the PMD took of the filtered burst, so the
// caller would keep (and resend) frames the callback dropped.
using TxFilter = std::uint16_t (*)(void* ctx, rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max);

// A fixed array, no allocation. flush() calls tx_burst once: a full TX ring is back-pressure,
// and spinning on it would starve RX (the DESIGN trap "busy-retrying tx_burst"). The unsent tail
// moves to the front and goes first next time, so order on the wire is preserved. push() fails
// only when the backlog itself is full; the caller counts that drop.
// With kTrackBytes the batch remembers each frame's length at push time (once sent, the PMD may
// free the mbuf at any moment) so flush() can report the bytes that left; the raw forwarder
// turns it off and stays pointer-only, like testpmd's io mode.
// A batch may drain into an rte_ring instead of a port's TX queue (sink_to): an in-process lab's
// link that is no ethdev (Debian's DPDK allows 32 ethdevs; a 64-rank lab needs 128 link ends).
// A full ring is back-pressure exactly as a full TX ring is. One branch per flush decides.
template <std::uint16_t kCapacity = 512, bool kTrackBytes = true>
class TxBatch {
 public:
  static constexpr std::uint16_t kBurst = 32;
  static constexpr std::uint16_t kSlots = kCapacity;  // frames it can hold back (pool sizing counts them)
  static_assert(kCapacity >= kBurst);

  [[nodiscard]] bool push(rte_mbuf* m) {
    if (count_ == kCapacity) return false;
    if constexpr (kTrackBytes) lens_[count_] = m->pkt_len;
    pkts_[count_++] = m;
    return true;
  }
  // Receive straight into the backlog: `tail()` has room() free slots; commit(n) adopts n of them.
  [[nodiscard]] rte_mbuf** tail() { return pkts_ + count_; }
  void commit(std::uint16_t n) {
    if constexpr (kTrackBytes)
      for (std::uint16_t i = 0; i < n; ++i) lens_[count_ + i] = pkts_[count_ + i]->pkt_len;
    count_ = static_cast<std::uint16_t>(count_ + n);
  }

  [[nodiscard]] std::uint16_t size() const { return count_; }
  [[nodiscard]] std::uint16_t room() const { return static_cast<std::uint16_t>(kCapacity - count_); }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] rte_mbuf* const* data() const { return pkts_; }
  // From now on flush() enqueues into `ring` (single producer: the batch's thread) and ignores
  // its port and queue; nullptr goes back to tx_burst.
  void sink_to(rte_ring* ring) { ring_ = ring; }
  // Frames pushed from now on pass `fn` once before they are sent; nullptr removes it.
  void set_filter(TxFilter fn, void* ctx) {
    filter_ = fn;
    filter_ctx_ = ctx;
    judged_ = 0;
  }

  // One tx_burst over everything pending; returns how many frames the NIC took and, when
  // tracking bytes, adds their bytes to `sent_bytes`.
  std::uint16_t flush(std::uint16_t port, std::uint16_t queue, std::uint64_t& sent_bytes) {
    if (filter_ != nullptr) judge();
    if (count_ == 0) return 0;
    const std::uint16_t sent = ring_ != nullptr ? static_cast<std::uint16_t>(rte_ring_enqueue_burst(
                                                      ring_, reinterpret_cast<void* const*>(pkts_), count_, nullptr))
                                                : rte_eth_tx_burst(port, queue, pkts_, count_);
    if constexpr (kTrackBytes)
      for (std::uint16_t i = 0; i < sent; ++i) sent_bytes += lens_[i];
    if (sent != 0 && sent < count_) {
      std::memmove(pkts_, pkts_ + sent, (count_ - sent) * sizeof(rte_mbuf*));
      if constexpr (kTrackBytes) std::memmove(lens_, lens_ + sent, (count_ - sent) * sizeof(std::uint32_t));
    }
    count_ = static_cast<std::uint16_t>(count_ - sent);
    judged_ = count_;  // the unsent tail has been through the filter
    return sent;
  }
  std::uint16_t flush(std::uint16_t port, std::uint16_t queue) {
    std::uint64_t ignored = 0;
    return flush(port, queue, ignored);
  }

  // Frees everything pending (shutdown). Returns how many were dropped.
  std::uint16_t drop_all() {
    const std::uint16_t n = count_;
    if (n != 0) rte_pktmbuf_free_bulk(pkts_, n);
    count_ = 0;
    judged_ = 0;
    return n;
  }

 private:
  // The filter over the frames pushed since the last flush (the backlog's tail).
  void judge() {
    if (judged_ >= count_) return;
    const std::uint16_t n = filter_(filter_ctx_, pkts_ + judged_, static_cast<std::uint16_t>(count_ - judged_),
                                    static_cast<std::uint16_t>(kCapacity - judged_));
    count_ = static_cast<std::uint16_t>(judged_ + n);
    if constexpr (kTrackBytes)
      for (std::uint16_t i = judged_; i < count_; ++i) lens_[i] = pkts_[i]->pkt_len;
    judged_ = count_;
  }

  struct NoLens {};
  rte_mbuf* pkts_[kCapacity];
  [[no_unique_address]] std::conditional_t<kTrackBytes, std::uint32_t[kCapacity], NoLens> lens_;
  std::uint16_t count_ = 0;
  rte_ring* ring_ = nullptr;
  TxFilter filter_ = nullptr;
  void* filter_ctx_ = nullptr;
  std::uint16_t judged_ = 0;  // pkts_[0..judged_) have been through the filter
};

}  // namespace droce::engine
