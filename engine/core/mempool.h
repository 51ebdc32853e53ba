// Mbuf pools sized from configuration, with a private area per mbuf for transport metadata.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

struct rte_mempool;
struct rte_mbuf;

namespace droce::engine {

// Per-packet metadata kept in each mbuf's private area (between the rte_mbuf and its headroom),
// so the transport can tag a frame without a side table or an allocation.
struct PacketMeta {
  std::uint64_t tx_tsc;  // when the frame was handed to the NIC (latency, RTO bookkeeping)
  std::uint32_t qpn;     // local QP that owns the frame
  std::uint32_t psn;
  std::uint32_t wr_index;  // send-queue slot of the work request the payload belongs to
  std::uint16_t flags;
  std::uint16_t reserved;
};

struct PoolConfig {
  std::string name = "droce_pool";
  std::uint32_t mbufs = 8191;  // power of two minus one is the mempool sweet spot
  std::uint32_t cache = 256;
  std::uint16_t data_room = 2048 + 128;  // RTE_MBUF_DEFAULT_BUF_SIZE: one 1500-MTU frame
  int socket = -1;                       // -1: the caller's socket
};

// Owns an rte_mempool of packet mbufs; frees it on destruction.
class MbufPool {
 public:
  [[nodiscard]] static Status create(const PoolConfig& cfg, MbufPool& out);
  MbufPool() = default;
  ~MbufPool();
  MbufPool(MbufPool&& o) noexcept : pool_(o.pool_) { o.pool_ = nullptr; }
  MbufPool& operator=(MbufPool&& o) noexcept;
  MbufPool(const MbufPool&) = delete;
  MbufPool& operator=(const MbufPool&) = delete;

  [[nodiscard]] rte_mempool* get() const { return pool_; }
  [[nodiscard]] std::uint32_t available() const;
  [[nodiscard]] std::uint32_t in_use() const;

 private:
  rte_mempool* pool_ = nullptr;
};

[[nodiscard]] PacketMeta* packet_meta(rte_mbuf* m);

// The data room a pool for the port named by `devargs` can have: `wanted`, or less where the PMD
// hands each mbuf to the kernel as one page. net_af_xdp (DPDK 22.11, built with unaligned UMEM
// chunks) registers the pool itself as the AF_XDP UMEM, one chunk per mempool object, and Linux
// refuses a chunk larger than a page (XDP_UMEM_REG: EINVAL; "Failed to create umem" from the PMD):
// there the room shrinks until a whole object (header, rte_mbuf, PacketMeta, room, the mempool's
// alignment) fits in one page, which leaves frames of about 3.5 KiB (path MTU 2048 at most; the
// PMD's max_rx_pktlen says the same). A port that is not probed yet (the apps' default memif
// pair) keeps `wanted`.
[[nodiscard]] std::uint16_t pool_data_room_for_port(const std::string& devargs, std::uint16_t wanted);

// One pool per worker, each on the NUMA socket of the lcore that will poll it
// (rte_lcore_to_socket_id), so a worker's RX descriptors and TX headers are local memory. Pool w
// is named `base.name` + "_w" + w; an lcore EAL does not know (the thread that sets up and polls
// in a test) gets `base.socket`. `out` gets lcores.size() pools, or none on error.
[[nodiscard]] Status create_worker_pools(const PoolConfig& base, const std::vector<unsigned>& lcores,
                                         std::vector<MbufPool>& out);

}  // namespace droce::engine
