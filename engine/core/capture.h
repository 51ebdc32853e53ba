// pcapng capture of frames sent and received by droce, written with DPDK's rte_pcapng (Wireshark reads it).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "engine/core/status.h"

struct rte_mbuf;
struct rte_mempool;
struct rte_pcapng;

namespace droce::engine {

enum class CaptureDirection : std::uint8_t { kRx, kTx };

// One capture file per port, fed by every worker of that port: capture(), flush() and close()
// may be called from several lcores at once. A mutex serialises the copy and the batched write:
// capture is opt-in and off the fast path (a traced run pays the copies and the file writes
// anyway), so a lock here costs nothing a run without capture sees. Counters are read once the
// workers have stopped.
// Frames are copied with rte_pcapng_copy into a private pool and written in batches, so the
// original mbufs are never touched and a frame is captured exactly as it was handed to the NIC
// or received from it (ICRC included). Capture is opt-in: when not open, capture() is one branch.
class PcapngCapture {
 public:
  PcapngCapture() = default;
  ~PcapngCapture();
  PcapngCapture(const PcapngCapture&) = delete;
  PcapngCapture& operator=(const PcapngCapture&) = delete;

  // Opens (truncates) `path`. The pcapng section and its interface blocks are written when the
  // first frame is captured (or at close), because rte_pcapng records only the ethdev ports that
  // exist at that moment and a frame's interface index is its port id: a lab whose ports are
  // made after the capture is opened (droce-gen's loopback) still gets a file tshark reads.
  // `snaplen` 0 captures whole frames. kBadState when already open, kIo when the file cannot be
  // created, kNoMemory when the copies' pool cannot.
  [[nodiscard]] Status open(const std::string& path, std::uint32_t snaplen = 0, std::uint32_t pool_mbufs = 4095);
  [[nodiscard]] bool is_open() const { return open_.load(std::memory_order_acquire); }

  // Records `n` frames seen on (port, queue) at TSC time `tsc`. Copies that cannot be made
  // (pool exhausted) are counted in dropped(), never block.
  void capture(std::uint16_t port, std::uint16_t queue, rte_mbuf* const* pkts, std::uint16_t n, CaptureDirection dir,
               std::uint64_t tsc);
  void flush();
  void close();

  [[nodiscard]] std::uint64_t captured() const { return captured_; }
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }
  // Frames from a port that did not exist when the interface blocks were written (counted in
  // dropped() too): recording them would name an interface the file does not have.
  [[nodiscard]] std::uint64_t unknown_port() const { return unknown_port_; }

 private:
  static constexpr std::uint16_t kBatch = 32;
  [[nodiscard]] bool start_section();
  void flush_locked();

  std::mutex mu_;                  // everything below, while open
  std::atomic<bool> open_{false};  // read without the lock: a closed capture costs one load
  rte_pcapng* handle_ = nullptr;   // made by start_section(), at the first frame or at close
  std::uint16_t interfaces_ = 0;   // ports 0..interfaces_-1 have interface blocks
  rte_mempool* pool_ = nullptr;
  int fd_ = -1;
  std::uint32_t snaplen_ = 0;
  rte_mbuf* pending_[kBatch] = {};
  std::uint16_t npending_ = 0;
  std::uint64_t captured_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t unknown_port_ = 0;
};

}  // namespace droce::engine
