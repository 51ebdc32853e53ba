// FabricObserver: what crossed the lab's links, seen by taps at both ends — per port frames and
// RoCE payload bytes (first transmissions apart from retransmissions, told by PSN), the
// rank-to-rank traffic matrix of first transmissions, and the capture (--pcap). Each tap runs on
// the thread that receives from its ring and writes only its own port's counters.
#pragma once

#include <droce/engine/core/status.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace droce::coll {

struct PortTraffic {
  std::uint64_t frames = 0, bytes = 0;
  std::uint64_t payload_first = 0;  // RoCE request payload, first transmissions
  std::uint64_t payload_retx = 0;   // the same, sent again
  std::uint64_t roce_frames = 0;
};

class FabricObserver {
 public:
  FabricObserver(std::uint32_t ranks, std::uint32_t qpn_base, std::uint32_t qps_per_rank);
  ~FabricObserver();
  FabricObserver(const FabricObserver&) = delete;
  FabricObserver& operator=(const FabricObserver&) = delete;

  // Captures what every rank sends into the fabric (its switch port's ingress), cut to `snaplen`
  // bytes, in a pcap file with nanosecond timestamps. Ok, or kIo and why not.
  [[nodiscard]] engine::Status open_capture(const std::string& path, std::uint32_t snaplen);
  void close_capture();
  [[nodiscard]] std::uint64_t captured() const { return captured_; }

  // The taps' contexts, by rank.
  [[nodiscard]] void* ingress_ctx(std::uint32_t rank) { return &ingress_[rank]; }
  [[nodiscard]] void* egress_ctx(std::uint32_t rank) { return &egress_[rank]; }
  static void ingress_tap(void* ctx, rte_mbuf* const* pkts, std::uint16_t n);
  static void egress_tap(void* ctx, rte_mbuf* const* pkts, std::uint16_t n);

  [[nodiscard]] const PortTraffic& ingress(std::uint32_t rank) const { return ingress_[rank].t; }
  [[nodiscard]] const PortTraffic& egress(std::uint32_t rank) const { return egress_[rank].t; }
  // First-transmission payload bytes from rank a to rank b.
  [[nodiscard]] std::uint64_t matrix(std::uint32_t a, std::uint32_t b) const { return ingress_[a].to[b]; }

 private:
  struct Tap {
    FabricObserver* obs = nullptr;
    std::uint32_t rank = 0;
    bool ingress = false;
    PortTraffic t;
    std::vector<std::uint64_t> to;        // ingress: payload_first by destination rank
    std::vector<std::uint32_t> next_psn;  // by (destination rank, QP slot): the PSN after the newest seen
    std::vector<std::uint8_t> seen;       // the same: any seen yet
  };
  void observe(Tap& tap, rte_mbuf* const* pkts, std::uint16_t n);
  [[nodiscard]] int rank_of_ip(const std::uint8_t* ip) const;

  std::uint32_t ranks_, qpn_base_, qps_;
  std::vector<Tap> ingress_, egress_;
  pcap_t* pcap_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;
  std::uint32_t snaplen_ = 0;
  std::vector<std::uint8_t> scratch_;
  std::uint64_t captured_ = 0;
};

}  // namespace droce::coll
