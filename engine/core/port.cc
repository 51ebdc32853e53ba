// Port bring-up: probe from devargs, probe offloads, queue setup, MTU, start, link wait.
#include "engine/core/port.h"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_errno.h>
#include <rte_interrupts.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "engine/core/stop_signal.h"

namespace droce::engine {
namespace {

std::string err_text(int rc) { return rte_strerror(rc < 0 ? -rc : rc); }

// A memif client's server socket, from its devargs (net_memif's default when none is given).
std::string memif_socket_of(const char* args) {
  const char* p = std::strstr(args, "socket=");
  if (p == nullptr) return "/run/memif.sock";
  p += 7;
  return std::string(p, std::strcspn(p, ","));
}

// Starts a port. A memif client started before its server is listening fails its connect, and
// DPDK's PMD logs each failure as an error ("memif_connect_client(): Failed to connect socket"):
// wait_link_up starts it again every 500 ms, so a client whose peer never comes printed a line
// per try before droce's own one. For a memif client the PMD's log type is quiet while the start
// runs (the connect happens inside it); droce's timeout names the socket instead.
int start_port(std::uint16_t pid, bool memif_client) {
  if (!memif_client) return rte_eth_dev_start(pid);
  const int type = rte_log_register("pmd.net.memif");  // the PMD's own type, looked up by name
  const int level = type >= 0 ? rte_log_get_level(type) : -1;
  if (level >= 0) rte_log_set_level(type, RTE_LOG_CRIT);
  const int rc = rte_eth_dev_start(pid);
  if (level >= 0) rte_log_set_level(type, static_cast<std::uint32_t>(level));
  return rc;
}

// The ethdev name of a devargs string is what precedes the first comma ("net_ring0,..." -> "net_ring0").
std::string device_name(const std::string& devargs) { return devargs.substr(0, devargs.find(',')); }

bool find_port(const std::string& name, std::uint16_t& port) {
  if (rte_eth_dev_get_port_by_name(name.c_str(), &port) == 0) return true;
  // PCI devices may be named differently from the user's spelling ("3b:00.0" vs "0000:3b:00.0").
  std::uint16_t p;
  RTE_ETH_FOREACH_DEV(p) {
    rte_eth_dev_info info{};
    if (rte_eth_dev_info_get(p, &info) != 0 || info.device == nullptr) continue;
    const char* dn = rte_dev_name(info.device);
    if (dn != nullptr && (name == dn || std::strstr(dn, name.c_str()) != nullptr)) {
      port = p;
      return true;
    }
  }
  return false;
}

rte_mempool* rx_pool_of(const PortConfig& cfg, std::uint16_t q) {
  return cfg.rx_pools.empty() ? cfg.rx_pool : cfg.rx_pools[q];
}

// RSS over the UDP 4-tuple, where the PMD can hash it: a QP's frames keep their UDP source port
// (RoCEv2 senders pick one per QP for ECMP entropy and in-order delivery), so each QP's frames land on one queue and
// the worker placement can follow the hash. A PMD without it (net_ring, net_memif) leaves RX where its queues put it,
// and the workers' software steering hands frames to their owners.
void enable_rss(const PortConfig& cfg, const rte_eth_dev_info& info, rte_eth_conf& conf, PortOffloads& off) {
  constexpr std::uint64_t kUdpHash = RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP;
  const std::uint64_t hash = info.flow_type_rss_offloads & kUdpHash;
  if (!cfg.want_rss || cfg.rx_queues < 2 || hash == 0) return;
  conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
  conf.rx_adv_conf.rss_conf.rss_key = nullptr;  // the PMD's default key
  conf.rx_adv_conf.rss_conf.rss_hf = hash;
  off.rss = true;
}

}  // namespace

std::unique_ptr<Port> Port::open(const PortConfig& cfg, Status& err) {
  if (cfg.devargs.empty()) {
    err = Status::error(StatusCode::kInvalidArgument, "empty device string");
    return nullptr;
  }
  if (cfg.rx_pool == nullptr && cfg.rx_pools.empty()) {
    err = Status::error(StatusCode::kInvalidArgument, "port " + cfg.devargs + ": no mbuf pool given");
    return nullptr;
  }
  if (!cfg.rx_pools.empty() && cfg.rx_pools.size() != cfg.rx_queues) {
    err = Status::error(StatusCode::kInvalidArgument, "port " + cfg.devargs + ": " +
                                                          std::to_string(cfg.rx_pools.size()) + " RX pools given for " +
                                                          std::to_string(cfg.rx_queues) + " RX queues");
    return nullptr;
  }
  for (auto* p : cfg.rx_pools)
    if (p == nullptr) {
      err = Status::error(StatusCode::kInvalidArgument, "port " + cfg.devargs + ": an RX queue's mbuf pool is missing");
      return nullptr;
    }
  std::unique_ptr<Port> port(new Port());
  port->name_ = device_name(cfg.devargs);
  if (!find_port(port->name_, port->port_id_)) {
    const int rc = rte_dev_probe(cfg.devargs.c_str());
    if (rc < 0) {
      err = Status::error(StatusCode::kNotFound,
                          "cannot create port '" + cfg.devargs + "': " + err_text(rc) +
                              " (is the PMD installed — e.g. librte-net-* — and are the devargs right?)");
      return nullptr;
    }
    port->probed_by_us_ = true;
    if (!find_port(port->name_, port->port_id_)) {
      err = Status::error(StatusCode::kNotFound, "device '" + cfg.devargs + "' was probed but created no ethdev port");
      return nullptr;
    }
  }
  const std::uint16_t pid = port->port_id_;
  port->valid_ = true;  // from here on the destructor owns the ethdev

  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(pid, &info); rc != 0) {
    err = Status::error(StatusCode::kError, "port " + port->name_ + ": cannot read device info: " + err_text(rc));
    return nullptr;
  }
  port->driver_ = info.driver_name != nullptr ? info.driver_name : "";
  port->device_ = info.device;
  if (cfg.rx_queues == 0 || cfg.rx_queues > info.max_rx_queues || cfg.tx_queues == 0 ||
      cfg.tx_queues > info.max_tx_queues) {
    err = Status::error(StatusCode::kUnsupported,
                        "port " + port->name_ + ": " + std::to_string(cfg.rx_queues) + " rx / " +
                            std::to_string(cfg.tx_queues) + " tx queues asked, device allows " +
                            std::to_string(info.max_rx_queues) + " / " + std::to_string(info.max_tx_queues));
    return nullptr;
  }

  PortOffloads& off = port->offloads_;
  off.max_rx_pktlen = info.max_rx_pktlen;
  off.min_mtu = info.min_mtu;
  off.max_mtu = info.max_mtu;
  rte_eth_conf conf{};
  if (cfg.want_multi_seg && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    off.multi_seg = true;
  }
  off.ipv4_cksum_offered = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
  off.vlan_insert_offered = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_VLAN_INSERT) != 0;
  if (cfg.want_fast_free && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    off.fast_free = true;
  }
  enable_rss(cfg, info, conf, off);
  // Frames bigger than one mbuf need RX scatter (PMTU 4096 over small mbufs); the smallest
  // queue pool decides.
  std::uint32_t room = UINT32_MAX;
  for (std::uint16_t q = 0; q < cfg.rx_queues; ++q) {
    const std::uint32_t r = rte_pktmbuf_data_room_size(rx_pool_of(cfg, q)) - RTE_PKTMBUF_HEADROOM;
    room = r < room ? r : room;
  }
  const std::uint32_t frame = cfg.mtu != 0 ? cfg.mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + 4u : 0u;
  if (frame > room) {
    if (!(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)) {
      err = Status::error(StatusCode::kUnsupported, "port " + port->name_ + ": MTU " + std::to_string(cfg.mtu) +
                                                        " needs " + std::to_string(frame) +
                                                        "-byte frames but mbufs hold " + std::to_string(room) +
                                                        " and the device has no RX scatter; use bigger mbufs");
      return nullptr;
    }
    conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    off.rx_scatter = true;
  }
  if (cfg.mtu != 0) {
    if ((info.max_mtu != 0 && cfg.mtu > info.max_mtu) || cfg.mtu < info.min_mtu) {
      err = Status::error(StatusCode::kUnsupported, "port " + port->name_ + ": MTU " + std::to_string(cfg.mtu) +
                                                        " outside the device's " + std::to_string(info.min_mtu) + ".." +
                                                        std::to_string(info.max_mtu));
      return nullptr;
    }
    conf.rxmode.mtu = cfg.mtu;
  }

  if (int rc = rte_eth_dev_configure(pid, cfg.rx_queues, cfg.tx_queues, &conf); rc != 0) {
    err = Status::error(StatusCode::kError, "port " + port->name_ + ": configure failed: " + err_text(rc));
    return nullptr;
  }
  std::uint16_t nrx = cfg.rx_desc, ntx = cfg.tx_desc;
  if (int rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nrx, &ntx); rc != 0) {
    err = Status::error(StatusCode::kError, "port " + port->name_ + ": descriptor counts rejected: " + err_text(rc));
    return nullptr;
  }
  const int socket = rte_eth_dev_socket_id(pid) < 0 ? static_cast<int>(rte_socket_id()) : rte_eth_dev_socket_id(pid);
  for (std::uint16_t q = 0; q < cfg.rx_queues; ++q) {
    rte_eth_rxconf rxc = info.default_rxconf;
    rxc.offloads = conf.rxmode.offloads;
    if (int rc = rte_eth_rx_queue_setup(pid, q, nrx, static_cast<unsigned>(socket), &rxc, rx_pool_of(cfg, q));
        rc != 0) {
      err = Status::error(StatusCode::kError,
                          "port " + port->name_ + ": rx queue " + std::to_string(q) + " setup failed: " + err_text(rc));
      return nullptr;
    }
  }
  for (std::uint16_t q = 0; q < cfg.tx_queues; ++q) {
    rte_eth_txconf txc = info.default_txconf;
    txc.offloads = conf.txmode.offloads;
    if (int rc = rte_eth_tx_queue_setup(pid, q, ntx, static_cast<unsigned>(socket), &txc); rc != 0) {
      err = Status::error(StatusCode::kError,
                          "port " + port->name_ + ": tx queue " + std::to_string(q) + " setup failed: " + err_text(rc));
      return nullptr;
    }
  }
  port->rx_queues_ = cfg.rx_queues;
  port->tx_queues_ = cfg.tx_queues;
  if (port->driver_ == "net_memif" && port->device_ != nullptr) {
    const rte_devargs* da = rte_dev_devargs(port->device_);
    port->memif_client_ = da != nullptr && da->args != nullptr && std::strstr(da->args, "role=client") != nullptr;
    if (port->memif_client_) port->memif_socket_ = memif_socket_of(da->args);
  }
  if (int rc = start_port(pid, port->memif_client_); rc == 0) {
    port->started_ = true;
  } else if (!port->memif_client_) {
    err = Status::error(StatusCode::kError, "port " + port->name_ + ": start failed: " + err_text(rc));
    return nullptr;
  }
  // (A memif client whose server is not listening yet fails to start; wait_link_up() retries.)
  if (cfg.promiscuous) {
    const int rc = rte_eth_promiscuous_enable(pid);
    // Virtual PMDs without a MAC filter accept everything anyway.
    if (rc != 0 && rc != -ENOTSUP) {
      err = Status::error(StatusCode::kError,
                          "port " + port->name_ + ": cannot enable promiscuous mode: " + err_text(rc));
      return nullptr;
    }
  }
  if (!cfg.promiscuous && !cfg.multicast_macs.empty()) {
    std::vector<rte_ether_addr> list(cfg.multicast_macs.size());
    for (std::size_t i = 0; i < list.size(); ++i) std::memcpy(list[i].addr_bytes, cfg.multicast_macs[i].data(), 6);
    int rc = rte_eth_dev_set_mc_addr_list(pid, list.data(), static_cast<std::uint32_t>(list.size()));
    if (rc == -ENOTSUP) rc = rte_eth_allmulticast_enable(pid);  // no list: every multicast frame
    // Virtual PMDs without a MAC filter take every frame anyway.
    if (rc != 0 && rc != -ENOTSUP) {
      err = Status::error(StatusCode::kError,
                          "port " + port->name_ + ": cannot take the multicast MACs asked for: " + err_text(rc));
      return nullptr;
    }
  }
  err = Status();
  return port;
}

Status Port::wait_link_up(std::uint32_t timeout_ms) const {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  auto next_retry = start + std::chrono::milliseconds(500);
  for (;;) {
    if (link_up()) return {};
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    if (stop_requested())
      return Status::error(StatusCode::kError, "interrupted while waiting for the link of port " + name_);
    // A memif client tries its server's socket once, when the port starts (DPDK 22.11 never
    // retries; the start even fails when nobody listens): started before its server it would wait
    // in vain, so the port is started again, which connects again. Start order then does not matter.
    if (memif_client_ && now >= next_retry) {
      if (started_) (void)rte_eth_dev_stop(port_id_);
      started_ = start_port(port_id_, true) == 0;
      next_retry = now + std::chrono::milliseconds(500);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (memif_client_)
    return Status::error(StatusCode::kTimeout, "link of port " + name_ + " did not come up within " +
                                                   std::to_string(timeout_ms) + " ms: no memif server at " +
                                                   memif_socket_ + " (is the peer running?)");
  return Status::error(StatusCode::kTimeout, "link of port " + name_ + " did not come up within " +
                                                 std::to_string(timeout_ms) + " ms (is the peer running?)");
}

bool Port::link_up() const {
  rte_eth_link link{};
  return rte_eth_link_get_nowait(port_id_, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

rte_ether_addr Port::mac() const {
  rte_ether_addr a{};
  if (rte_eth_macaddr_get(port_id_, &a) != 0) std::memset(&a, 0, sizeof(a));
  return a;
}

std::uint16_t Port::mtu() const {
  std::uint16_t m = 0;
  return rte_eth_dev_get_mtu(port_id_, &m) == 0 ? m : 0;
}

Status Port::hold_peer_events(std::uint32_t timeout_ms) {
  if (driver_ != "net_memif" || hold_) return {};
  hold_ = std::make_unique<InterruptThreadHold>();
  return hold_->engage(timeout_ms);
}

void Port::stop() {
  // Stopped from our thread while the interrupt thread is held: the PMD's teardown (unmapping the
  // rings, closing the control channel) runs once, here, and never concurrently with a second
  // teardown for the peer's disconnect on the interrupt thread (which would free the regions twice).
  if (valid_ && started_) (void)rte_eth_dev_stop(port_id_);
  started_ = false;
}

Port::~Port() {
  if (!valid_) return;  // open() failed before a port existed: nothing to close
  stop();
  rte_eth_dev_close(port_id_);
  // Closing released the ethdev; remove the underlying device so its name can be reused.
  if (probed_by_us_ && device_ != nullptr) rte_dev_remove(device_);
  // Only now may the interrupt thread handle what the peer did meanwhile: our side is gone.
  // A thread that never left our callback keeps using the hold: leave it allocated.
  if (hold_ && !hold_->release()) static_cast<void>(hold_.release());
}

// ---- InterruptThreadHold ----

void InterruptThreadHold::on_event(void* arg) {
  auto* h = static_cast<InterruptThreadHold*>(arg);
  std::uint64_t v = 0;
  (void)!::read(h->event_fd_, &v, sizeof(v));  // drained: after the release the callback does not run again
  h->parked_.store(true, std::memory_order_release);
  // Bounded by the owner: release() sets let_go_ before it waits for us to return.
  while (!h->let_go_.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  h->parked_.store(false, std::memory_order_release);
}

Status InterruptThreadHold::engage(std::uint32_t timeout_ms) {
  if (handle_ != nullptr) return {};
  // Engaged again after a release (a gate that lets queued events through): the previous
  // callback has returned (release() unregistered it), so the flags start afresh.
  let_go_.store(false, std::memory_order_release);
  parked_.store(false, std::memory_order_release);
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) return Status::error(StatusCode::kIo, std::string("eventfd: ") + std::strerror(errno));
  handle_ = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  if (handle_ == nullptr || rte_intr_fd_set(handle_, event_fd_) != 0 ||
      rte_intr_type_set(handle_, RTE_INTR_HANDLE_EXT) != 0 ||
      rte_intr_callback_register(handle_, &InterruptThreadHold::on_event, this) != 0) {
    if (handle_ != nullptr) rte_intr_instance_free(handle_);
    handle_ = nullptr;
    ::close(event_fd_);
    event_fd_ = -1;
    return Status::error(StatusCode::kError, "cannot register an interrupt callback to hold the PMD's event thread");
  }
  const std::uint64_t one = 1;
  (void)!::write(event_fd_, &one, sizeof(one));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!parked_.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::error(StatusCode::kTimeout, "EAL's interrupt thread did not reach our callback within " +
                                                     std::to_string(timeout_ms) +
                                                     " ms: a peer's exit may still race our polling");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return {};
}

bool InterruptThreadHold::park_until_exit(std::uint32_t timeout_ms) {
  // Reachable through this pointer to the end (not a leak), never released.
  static InterruptThreadHold* const hold = new InterruptThreadHold();
  (void)hold->engage(timeout_ms);  // a timeout is read from parked_ below
  return hold->parked_.load(std::memory_order_acquire);
}

bool InterruptThreadHold::release() {
  if (handle_ == nullptr) return true;
  let_go_.store(true, std::memory_order_release);
  // The callback returns within a millisecond of let_go_; unregistering an active source fails
  // with -EAGAIN, so retry for a bounded time (the thread may be descheduled on a busy machine).
  int rc = -EAGAIN;
  for (int i = 0; i < 10000 && rc == -EAGAIN; ++i) {
    rc = rte_intr_callback_unregister(handle_, &InterruptThreadHold::on_event, this);
    if (rc == -EAGAIN) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (rc == -EAGAIN) return false;  // still inside our callback: the owner must not free us
  // The callback has returned (EAL unregisters only an inactive source), but EAL's own locks are
  // not visible to ThreadSanitizer: read the callback's last store with acquire, so that its
  // accesses are ordered before our owner frees this object in a way TSan can see too.
  for (int i = 0; i < 10000 && parked_.load(std::memory_order_acquire); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  rte_intr_instance_free(handle_);
  handle_ = nullptr;
  ::close(event_fd_);
  event_fd_ = -1;
  return true;
}

}  // namespace droce::engine
