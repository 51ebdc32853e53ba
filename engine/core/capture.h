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

// How big a capture may grow, as dumpcap's `-a filesize:` and `-b filesize: -b files:` put it.
// max_file_bytes 0: no limit. With a limit and ring_files 0, writing stops at the limit (every
// later frame counted in not_written()). With ring_files N >= 2, a file that would pass the limit
// is closed and the next one started (PATH's stem + "_00001", "_00002", ... + its extension), and
// only the last N files are kept, so a soak's capture never holds more than N x max_file_bytes.
struct CaptureLimits {
  std::uint64_t max_file_bytes = 0;
  std::uint32_t ring_files = 0;
};

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
  // `limits`: a size cap or a ring of files (CaptureLimits); kInvalidArgument for a ring of one
  // file or a ring without a size.
  [[nodiscard]] Status open(const std::string& path, std::uint32_t snaplen = 0, std::uint32_t pool_mbufs = 4095,
                            CaptureLimits limits = {});
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
  // Frames written shorter than they were (longer than the snap length: headers kept).
  [[nodiscard]] std::uint64_t cut() const { return cut_; }
  // Frames not written because the size cap was reached (no ring).
  [[nodiscard]] std::uint64_t not_written() const { return not_written_; }
  // Files closed at the size cap for the next one (ring), and how many of them were removed.
  [[nodiscard]] std::uint64_t files_rotated() const { return files_rotated_; }
  [[nodiscard]] std::uint64_t files_removed() const { return files_removed_; }
  // The files the capture holds now: PATH itself, or the ring's first_file()..last_file().
  [[nodiscard]] std::string first_file() const;
  [[nodiscard]] std::string last_file() const;
  // The name of the ring's file number `n` (1-based) for `path`: "run.pcapng" -> "run_00003.pcapng".
  [[nodiscard]] static std::string ring_file_name(const std::string& path, std::uint64_t n);

 private:
  static constexpr std::uint16_t kBatch = 32;
  [[nodiscard]] bool start_section();
  void flush_locked();
  // Whether a copy of `bytes` may join the pending batch: true when it fits under the cap, after
  // moving to the ring's next file if need be; false when writing has stopped at the cap.
  [[nodiscard]] bool make_room(std::uint64_t bytes);
  [[nodiscard]] bool open_ring_file();
  [[nodiscard]] std::string file_name(std::uint64_t n) const;

  std::mutex mu_;                  // everything below, while open
  std::atomic<bool> open_{false};  // read without the lock: a closed capture costs one load
  rte_pcapng* handle_ = nullptr;   // made by start_section(), at the first frame or at close
  std::uint16_t interfaces_ = 0;   // ports 0..interfaces_-1 have interface blocks
  rte_mempool* pool_ = nullptr;
  int fd_ = -1;
  std::uint32_t snaplen_ = 0;
  std::string path_;
  CaptureLimits limits_;
  std::uint64_t file_bytes_ = 0;   // written to the current file, pending copies included
  std::uint64_t file_frames_ = 0;  // frames in the current file, pending copies included
  std::uint64_t file_number_ = 0;  // the ring's current file (1-based); 0 without a ring
  bool full_ = false;              // the cap was reached without a ring: nothing more is written
  std::uint64_t cut_ = 0;
  std::uint64_t not_written_ = 0;
  std::uint64_t files_rotated_ = 0;
  std::uint64_t files_removed_ = 0;
  rte_mbuf* pending_[kBatch] = {};
  std::uint16_t npending_ = 0;
  std::uint64_t captured_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t unknown_port_ = 0;
};

}  // namespace droce::engine
