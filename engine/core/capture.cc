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
#include <cstring>

namespace droce::engine {

PcapngCapture::~PcapngCapture() { close(); }

Status PcapngCapture::open(const std::string& path, std::uint32_t snaplen, std::uint32_t pool_mbufs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (open_) return Status::fail(StatusCode::kBadState, "capture already open");
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::error(StatusCode::kIo, "cannot open capture file " + path + ": " + std::strerror(errno));
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
    rte_mbuf* copy = rte_pcapng_copy(port, queue, pkts[i], pool_, snaplen_, tsc, d);
    if (copy == nullptr) {
      ++dropped_;
      continue;
    }
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
