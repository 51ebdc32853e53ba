// Mbuf pool creation with a metadata private area; clear errors when memory is short.
#include "engine/core/mempool.h"

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <unistd.h>

#include <cstring>

namespace droce::engine {

static_assert(sizeof(PacketMeta) % RTE_MBUF_PRIV_ALIGN == 0, "private area must keep mbuf alignment");

Status MbufPool::create(const PoolConfig& cfg, MbufPool& out) {
  if (cfg.mbufs < 64)
    return Status::error(StatusCode::kInvalidArgument, "mbuf pool '" + cfg.name + "': at least 64 mbufs needed");
  if (cfg.data_room < RTE_PKTMBUF_HEADROOM + 64)
    return Status::error(StatusCode::kInvalidArgument, "mbuf pool '" + cfg.name + "': data room too small");
  const unsigned cache = cfg.cache > RTE_MEMPOOL_CACHE_MAX_SIZE ? RTE_MEMPOOL_CACHE_MAX_SIZE : cfg.cache;
  const int socket = cfg.socket < 0 ? static_cast<int>(rte_socket_id()) : cfg.socket;
  rte_mempool* p =
      rte_pktmbuf_pool_create(cfg.name.c_str(), cfg.mbufs, cache, sizeof(PacketMeta), cfg.data_room, socket);
  if (p == nullptr)
    return Status::error(StatusCode::kNoMemory, "cannot create mbuf pool '" + cfg.name + "' (" +
                                                    std::to_string(cfg.mbufs) + " x " + std::to_string(cfg.data_room) +
                                                    " B): " + rte_strerror(rte_errno) +
                                                    " — not enough hugepage memory? try fewer mbufs or -m");
  out = MbufPool();
  out.pool_ = p;
  return {};
}

MbufPool& MbufPool::operator=(MbufPool&& o) noexcept {
  if (this != &o) {
    if (pool_ != nullptr) rte_mempool_free(pool_);
    pool_ = o.pool_;
    o.pool_ = nullptr;
  }
  return *this;
}

MbufPool::~MbufPool() {
  if (pool_ != nullptr) rte_mempool_free(pool_);
}

std::uint32_t MbufPool::available() const { return pool_ ? rte_mempool_avail_count(pool_) : 0; }
std::uint32_t MbufPool::in_use() const { return pool_ ? rte_mempool_in_use_count(pool_) : 0; }

Status create_worker_pools(const PoolConfig& base, const std::vector<unsigned>& lcores, std::vector<MbufPool>& out) {
  out.clear();
  std::vector<MbufPool> pools(lcores.size());
  for (std::size_t w = 0; w < lcores.size(); ++w) {
    PoolConfig c = base;
    c.name = base.name + "_w" + std::to_string(w);
    if (lcores[w] < RTE_MAX_LCORE && rte_lcore_is_enabled(lcores[w]))
      c.socket = static_cast<int>(rte_lcore_to_socket_id(lcores[w]));
    if (Status s = MbufPool::create(c, pools[w]); !s.ok()) return s;
  }
  out = std::move(pools);
  return {};
}

std::uint16_t pool_data_room_for_port(const std::string& devargs, std::uint16_t wanted) {
  const std::string name = devargs.substr(0, devargs.find(','));
  std::uint16_t port = 0;
  rte_eth_dev_info info{};
  if (rte_eth_dev_get_port_by_name(name.c_str(), &port) != 0 || rte_eth_dev_info_get(port, &info) != 0 ||
      info.driver_name == nullptr || std::strcmp(info.driver_name, "net_af_xdp") != 0)
    return wanted;
  // The object as rte_pktmbuf_pool_create lays it out (flags 0: cache-line aligned and spread
  // over memory channels), which is the UMEM chunk size the PMD registers.
  const auto page = static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE));
  const std::uint32_t fixed = sizeof(rte_mbuf) + sizeof(PacketMeta);
  std::uint32_t room = wanted;
  while (room > RTE_PKTMBUF_HEADROOM + 64 && rte_mempool_calc_obj_size(fixed + room, 0, nullptr) > page)
    room -= RTE_CACHE_LINE_SIZE;
  return static_cast<std::uint16_t>(room);
}

PacketMeta* packet_meta(rte_mbuf* m) { return static_cast<PacketMeta*>(rte_mbuf_to_priv(m)); }

}  // namespace droce::engine
