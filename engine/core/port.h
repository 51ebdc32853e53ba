// Port: one DPDK ethdev from any devargs string (vdev or PCI), configured with probed offloads.
#pragma once

#include <rte_ethdev.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"

struct rte_mempool;
struct rte_intr_handle;

namespace droce::engine {

struct PortConfig {
  std::string devargs;  // "net_ring0", "net_memif0,role=server,socket=/tmp/x.sock", "0000:3b:00.0", ...
  std::uint16_t rx_queues = 1;
  std::uint16_t tx_queues = 1;
  std::uint16_t rx_desc = 1024;
  std::uint16_t tx_desc = 1024;
  std::uint16_t mtu = 0;  // 0: leave the PMD's default
  bool promiscuous = false;
  // Multicast MACs the port must take besides its own (a port that is promiscuous takes them
  // anyway): an IPv6 endpoint's Neighbor Discovery groups, nd::nd_group_macs (its solicited-node
  // group and all nodes, RFC 4861 §7.2.1). Set as the PMD's multicast list, or all-multicast
  // where the PMD keeps no list; a PMD with no filter at all takes them already.
  std::vector<std::array<std::uint8_t, 6>> multicast_macs;
  bool want_multi_seg = true;      // chained mbufs on TX (zero-copy payload segments)
  bool want_fast_free = false;     // only valid when every mbuf is direct, refcnt 1, one pool
  rte_mempool* rx_pool = nullptr;  // required
  // One pool per RX queue (a worker's own, on its NUMA socket); empty: rx_pool for every queue.
  std::vector<rte_mempool*> rx_pools;
  // With more than one RX queue, spread frames over them by an IPv4/IPv6 UDP hash (RSS) when the
  // PMD offers it: RoCEv2 senders keep one UDP source port per QP, so a QP's frames stay on one queue.
  bool want_rss = true;
};

// What the port can do, and what was switched on. Never assumed: probed from dev_info.
struct PortOffloads {
  bool multi_seg = false;
  // Offered by the PMD and deliberately left off (docs/labs.md, "Offloads"): every header of a
  // frame, the IPv4 checksum and the 802.1Q tag included, comes from the QP's template, the
  // checksum patched per frame by RFC 1624's incremental form (a few adds), so the frame the
  // capture and the ICRC see is the frame on the wire. The NIC would save those adds and cost a
  // capture fix-up per frame; the ICRC masks the IPv4 checksum either way (IBTA Annex A17.4.1).
  bool ipv4_cksum_offered = false;
  bool vlan_insert_offered = false;
  bool fast_free = false;
  bool rx_scatter = false;
  bool rss = false;  // RX spread over the queues by a UDP hash (RTE_ETH_MQ_RX_RSS)
  std::uint32_t max_rx_pktlen = 0;
  std::uint16_t min_mtu = 0;
  std::uint16_t max_mtu = 0;
};

// Keeps EAL's interrupt thread parked in a callback of ours. net_memif handles its peer's
// disconnect on that thread (memif_intr_handler -> memif_disconnect, DPDK 22.11 memif_socket.c):
// it clears the connected flag and then unmaps and frees the shared regions with no lock against
// the lcore, which may be inside rx_burst/tx_burst copying to or from them — a SIGSEGV in
// librte_net_memif when the peer exits first. The interrupt thread runs one callback at a time, so
// while it sits in ours the disconnect waits, however the peer ends (even SIGKILL); the rings stay
// mapped and merely go quiet, and the port is stopped from our thread before the hold ends.
class InterruptThreadHold {
 public:
  InterruptThreadHold() = default;
  ~InterruptThreadHold() { (void)release(); }
  InterruptThreadHold(const InterruptThreadHold&) = delete;
  InterruptThreadHold& operator=(const InterruptThreadHold&) = delete;
  // Registers the callback and waits until the thread is parked in it (or `timeout_ms` passes:
  // then the hold takes effect whenever the thread gets there). May be called again after
  // release(): a release/engage pair is a gate through which the thread handles what queued up
  // meanwhile (engage returns once it has, being parked again), while the caller polls nothing.
  [[nodiscard]] Status engage(std::uint32_t timeout_ms);
  // Lets the thread go and unregisters (bounded waits); pending events are then handled. False
  // when the thread did not leave the callback within 10 s: the object must then stay allocated.
  bool release();
  [[nodiscard]] bool engaged() const { return handle_ != nullptr; }
  // Parks the thread in a hold that is never released (nor freed: the thread reads it until the
  // process ends), for rte_eal_cleanup: DPDK 22.11's cleanup unmaps DPDK's memory but leaves the
  // interrupt thread running, and net_memif never unregisters its listener socket's source, whose
  // handle EAL copied into that memory (memif_socket.c registers it RTE_INTR_INSTANCE_F_SHARED).
  // Any rebuild of the thread's wait list still to come then reads unmapped memory — e.g. the
  // one that a port's released hold or the PMD's own teardown queued, run late by a descheduled
  // thread on a busy machine: SIGSEGV in rte_intr_fd_get at exit. A parked thread rebuilds nothing.
  // True once parked (within `timeout_ms`); false: it may still rebuild, so no cleanup is safe.
  [[nodiscard]] static bool park_until_exit(std::uint32_t timeout_ms);

 private:
  static void on_event(void* arg);
  rte_intr_handle* handle_ = nullptr;
  int event_fd_ = -1;
  std::atomic<bool> parked_{false};
  std::atomic<bool> let_go_{false};
};

class Port {
 public:
  // Creates (probing the device unless a port with that name already exists), configures
  // queues and offloads, sets MTU and starts the port. Does not wait for the link.
  [[nodiscard]] static std::unique_ptr<Port> open(const PortConfig& cfg, Status& err);
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  // Polls the link every 10 ms until it is up, `timeout_ms` passes or a stop is requested
  // (SIGINT: "interrupted").
  [[nodiscard]] Status wait_link_up(std::uint32_t timeout_ms) const;
  [[nodiscard]] bool link_up() const;

  // For net_memif (no effect on other PMDs): from now until the port is stopped, a peer that exits
  // cannot make the PMD tear the shared rings down under our polling (InterruptThreadHold). Call
  // after wait_link_up, before the first rx/tx burst.
  [[nodiscard]] Status hold_peer_events(std::uint32_t timeout_ms);
  // Stops the port (nothing may poll it afterwards); the peer sees the link go down. The hold ends
  // in the destructor, after the port is closed. The destructor stops the port if this was not done.
  void stop();

  [[nodiscard]] std::uint16_t id() const { return port_id_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& driver() const { return driver_; }
  [[nodiscard]] const PortOffloads& offloads() const { return offloads_; }
  [[nodiscard]] rte_ether_addr mac() const;
  [[nodiscard]] std::uint16_t mtu() const;
  [[nodiscard]] std::uint16_t rx_queues() const { return rx_queues_; }
  [[nodiscard]] std::uint16_t tx_queues() const { return tx_queues_; }

  std::uint16_t rx_burst(std::uint16_t queue, rte_mbuf** pkts, std::uint16_t n) {
    return rte_eth_rx_burst(port_id_, queue, pkts, n);
  }
  std::uint16_t tx_burst(std::uint16_t queue, rte_mbuf** pkts, std::uint16_t n) {
    return rte_eth_tx_burst(port_id_, queue, pkts, n);
  }

 private:
  Port() = default;
  std::uint16_t port_id_ = 0;
  std::uint16_t rx_queues_ = 0;
  std::uint16_t tx_queues_ = 0;
  bool valid_ = false;
  bool probed_by_us_ = false;
  rte_device* device_ = nullptr;
  mutable bool started_ = false;  // wait_link_up() may restart a memif client
  std::string name_;
  std::string driver_;
  bool memif_client_ = false;  // net_memif in the client role: it connects only when started
  std::string memif_socket_;   // its server's socket, for the error when nobody answers
  PortOffloads offloads_;
  std::unique_ptr<InterruptThreadHold> hold_;
};

}  // namespace droce::engine
