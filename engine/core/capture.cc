// pcapng capture through rte_pcapng: copies into a private pool, batched writes.
#include "engine/core/capture.h"

#include <fcntl.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace droce::engine {

PcapngCapture::~PcapngCapture() { close(); }

Status PcapngCapture::open(const std::string& path, std::uint32_t snaplen, std::uint32_t pool_mbufs,
                           CaptureLimits limits) {
  std::lock_guard<std::mutex> lock(mu_);
  if (open_) return Status::fail(StatusCode::kBadState, "capture already open");
  if (limits.ring_files == 1 || (limits.ring_files != 0 && limits.max_file_bytes == 0))
    return Status::error(StatusCode::kInvalidArgument, "a capture ring needs two files or more and a size for each");
  path_ = path;
  limits_ = limits;
  file_number_ = limits.ring_files != 0 ? 1 : 0;
  file_bytes_ = file_frames_ = 0;
  full_ = false;
  captured_ = dropped_ = unknown_port_ = cut_ = not_written_ = files_rotated_ = files_removed_ = 0;
  const std::string first = file_name(file_number_);
  fd_ = ::open(first.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::error(StatusCode::kIo, "cannot open capture file " + first + ": " + std::strerror(errno));
  snaplen_ = snaplen == 0 ? UINT32_MAX : snaplen;
  // Pool names are global to the EAL instance; several captures may coexist.
  static std::atomic<unsigned> serial{0};
  const std::string name = "droce_cap" + std::to_string(serial.fetch_add(1));
  const std::uint32_t mbuf_size = rte_pcapng_mbuf_size(snaplen == 0 ? 9216 : snaplen);
  pool_ = rte_pktmbuf_pool_create(name.c_str(), pool_mbufs, 64, 0, static_cast<std::uint16_t>(mbuf_size),
                                  static_cast<int>(rte_socket_id()));
  if (pool_ == nullptr) {
    ::close(fd_);
    fd_ = -1;
    return Status::error(StatusCode::kNoMemory,
                         std::string("cannot create capture mbuf pool: ") + rte_strerror(rte_errno));
  }
  open_.store(true, std::memory_order_release);
  return {};
}

std::string PcapngCapture::ring_file_name(const std::string& path, std::uint64_t n) {
  // dumpcap names a ring's files PREFIX_NNNNN_TIMESTAMP.EXT; the number alone keeps them in order
  // and lets a script name them.
  const std::size_t slash = path.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot <= base) dot = path.size();  // no extension (or a dot file)
  char number[32];
  std::snprintf(number, sizeof(number), "_%05" PRIu64, n);
  return path.substr(0, dot) + number + path.substr(dot);
}

std::string PcapngCapture::file_name(std::uint64_t n) const { return n == 0 ? path_ : ring_file_name(path_, n); }

std::string PcapngCapture::first_file() const {
  if (file_number_ == 0) return path_;
  return file_name(file_number_ > limits_.ring_files ? file_number_ - limits_.ring_files + 1 : 1);
}

std::string PcapngCapture::last_file() const { return file_name(file_number_); }

bool PcapngCapture::open_ring_file() {
  ++file_number_;
  const std::string next = file_name(file_number_);
  fd_ = ::open(next.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return false;
  // Keep the last ring_files files: the one that fell out of the ring goes.
  if (file_number_ > limits_.ring_files && ::unlink(file_name(file_number_ - limits_.ring_files).c_str()) == 0)
    ++files_removed_;
  return true;
}

bool PcapngCapture::make_room(std::uint64_t bytes) {
  if (limits_.max_file_bytes == 0 || file_bytes_ + bytes <= limits_.max_file_bytes) return true;
  // A frame that does not fit even in a file of its own is not written (the apps' caps, 1 MiB
  // and up, are far above any snap length): rotating for it would never end.
  if (limits_.ring_files == 0 || file_frames_ == 0) {
    if (limits_.ring_files == 0) full_ = true;
    return false;
  }
  flush_locked();
  rte_pcapng_close(handle_);  // closes fd_ as well
  handle_ = nullptr;
  fd_ = -1;
  ++files_rotated_;
  if (!open_ring_file() || !start_section()) {
    full_ = true;  // the next file cannot be made: stop, counting what is not written
    return false;
  }
  return file_bytes_ + bytes <= limits_.max_file_bytes;
}

bool PcapngCapture::start_section() {
  if (handle_ != nullptr) return true;
  // rte_pcapng_fdopen writes one interface block per port in RTE_ETH_FOREACH_DEV order, and
  // rte_pcapng_copy names a frame's interface by its port id: the two agree for ports 0..n-1
  // without gaps, which is what is recorded here.
  std::uint16_t n = 0;
  std::uint16_t port = 0;
  RTE_ETH_FOREACH_DEV(port) {
    if (port != n) break;
    ++n;
  }
  handle_ = rte_pcapng_fdopen(fd_, nullptr, nullptr, "droce", nullptr);
  if (handle_ == nullptr) return false;
  interfaces_ = n;
  // The section and interface blocks count towards the file's size.
  const off_t at = ::lseek(fd_, 0, SEEK_CUR);
  file_bytes_ = at > 0 ? static_cast<std::uint64_t>(at) : 0;
  file_frames_ = 0;
  return true;
}

void PcapngCapture::capture(std::uint16_t port, std::uint16_t queue, rte_mbuf* const* pkts, std::uint16_t n,
                            CaptureDirection dir, std::uint64_t tsc) {
  if (!open_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_.load(std::memory_order_relaxed)) return;  // closed meanwhile
  if (!start_section()) {
    dropped_ += n;
    return;
  }
  if (port >= interfaces_) {
    dropped_ += n;
    unknown_port_ += n;
    return;
  }
  const auto d = dir == CaptureDirection::kRx ? RTE_PCAPNG_DIRECTION_IN : RTE_PCAPNG_DIRECTION_OUT;
  for (std::uint16_t i = 0; i < n; ++i) {
    if (full_) {  // stopped at the cap: no copy made
      not_written_ += n - i;
      return;
    }
    rte_mbuf* copy = rte_pcapng_copy(port, queue, pkts[i], pool_, snaplen_, tsc, d);
    if (copy == nullptr) {
      ++dropped_;
      continue;
    }
    // The copy is the whole enhanced packet block rte_pcapng_write_packets writes.
    if (!make_room(copy->pkt_len)) {
      rte_pktmbuf_free(copy);
      ++not_written_;
      continue;
    }
    if (pkts[i]->pkt_len > snaplen_) ++cut_;
    file_bytes_ += copy->pkt_len;
    ++file_frames_;
    pending_[npending_++] = copy;
    if (npending_ == kBatch) flush_locked();
  }
}

void PcapngCapture::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  flush_locked();
}

void PcapngCapture::flush_locked() {
  if (handle_ == nullptr || npending_ == 0) return;
  // DPDK 22.11's rte_pcapng_write_packets does not free the copies, whatever its comment says
  // (dpdk-dumpcap frees them itself, and a pool-exhaustion test shows it): free them here.
  if (rte_pcapng_write_packets(handle_, pending_, npending_) < 0)
    dropped_ += npending_;
  else
    captured_ += npending_;
  rte_pktmbuf_free_bulk(pending_, npending_);
  npending_ = 0;
}

void PcapngCapture::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return;
  open_ = false;
  flush_locked();
  // A capture that saw no frame still ends as a valid file: section and interfaces, no packets.
  if (start_section()) {
    rte_pcapng_close(handle_);  // closes fd_ as well
  } else {
    ::close(fd_);
  }
  handle_ = nullptr;
  fd_ = -1;
  rte_mempool_free(pool_);
  pool_ = nullptr;
}

}  // namespace droce::engine
