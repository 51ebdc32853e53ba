// Port: one DPDK ethdev from any devargs string (vdev or PCI), configured with probed offloads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <rte_ethdev.h>

#include "engine/core/status.h"

struct rte_mempool;

namespace droce::engine {

struct PortConfig {
  std::string devargs;              // "net_ring0", "net_memif0,role=server,socket=/tmp/x.sock", "0000:3b:00.0", ...
  std::uint16_t rx_queues = 1;
  std::uint16_t tx_queues = 1;
  std::uint16_t rx_desc = 1024;
  std::uint16_t tx_desc = 1024;
  std::uint16_t mtu = 0;            // 0: leave the PMD's default
  bool promiscuous = false;
  bool want_multi_seg = true;       // chained mbufs on TX (zero-copy payload segments)
  bool want_ipv4_cksum = true;      // IPv4 header checksum offload
  bool want_fast_free = false;      // only valid when every mbuf is direct, refcnt 1, one pool
  rte_mempool* rx_pool = nullptr;   // required
};

// What the port can do, and what was switched on. Never assumed: probed from dev_info.
struct PortOffloads {
  bool multi_seg = false;
  bool ipv4_cksum = false;
  bool fast_free = false;
  bool rx_scatter = false;
  std::uint32_t max_rx_pktlen = 0;
  std::uint16_t min_mtu = 0;
  std::uint16_t max_mtu = 0;
};

class Port {
 public:
  // Creates (probing the device unless a port with that name already exists), configures
  // queues and offloads, sets MTU and starts the port. Does not wait for the link.
  [[nodiscard]] static std::unique_ptr<Port> open(const PortConfig& cfg, Status& err);
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  // Polls the link every 10 ms until it is up or `timeout_ms` passes.
  [[nodiscard]] Status wait_link_up(std::uint32_t timeout_ms) const;
  [[nodiscard]] bool link_up() const;

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
  PortOffloads offloads_;
};

}  // namespace droce::engine
