// RSS placement: the port's redirection table (RETA) set so that each connected QP's inbound
// frames land on the RX queue of the worker that owns the QP, instead of on whichever queue the
// default table gives their hash (and a software hand-over from there).
//
// A RoCEv2 sender keeps one UDP source port per QP. Linux (rxe, mlx5) and droce derive it from
// the two QPNs (rdma_get_udp_sport: the flow label of lqpn * rqpn, wire::roce_udp_src_port), and
// the product is symmetric, so the port a peer sends from is the one this end computes for the
// pair. With the port's Toeplitz key the hash of every inbound 4-tuple is known here, and so is
// the RETA entry it indexes. DPDK 22.11 has no rte_flow item for the IB BTH (23.07 added one), so
// the RETA is what a PMD offers to steer by QP.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace droce::engine {

// Where one connected QP's frames come from, as the port hashes them (IPv4 or IPv6 + UDP).
struct InboundFlow {
  bool ipv6 = false;
  std::uint8_t src_ip[16] = {};  // the peer's address (IPv4 in the first 4 bytes)
  std::uint8_t dst_ip[16] = {};  // ours
  std::uint16_t src_port = 0;    // the peer's UDP source port for this QP
  std::uint16_t owner = 0;       // the worker (RX queue) that owns the QP
};

// The port's Toeplitz hash of a flow's 4-tuple, as the NIC computes it with `key` (at least 40
// bytes: the IPv6 tuple is 36 bytes, and the hash reads 4 key bytes past it; a shorter key gives 0).
// The destination port is RoCEv2's 4791 (IANA); another one is for checking published vectors.
inline constexpr std::uint16_t kRoceV2UdpPort = 4791;
[[nodiscard]] std::uint32_t inbound_rss_hash(const InboundFlow& f, std::span<const std::uint8_t> key,
                                             std::uint16_t dst_port = kRoceV2UdpPort);

struct RetaPlan {
  std::vector<std::uint16_t> entries;  // the whole table, queue per entry
  std::vector<bool> changed;           // entries that differ from the table it started from
  std::uint32_t placed = 0;            // flows whose entry now leads to their owner
  std::uint32_t conflicts = 0;         // flows sharing an entry with an earlier flow of another owner:
                                       // they arrive on that owner's queue and are handed over in software
};

// The table that sends each flow to its owner, from the `current` one: the first flow on an entry
// claims it, later flows of the same owner share it, others count as conflicts. Entries no flow
// uses keep their queue. The entry of a hash is hash % table size (the PMDs index by the low bits).
[[nodiscard]] RetaPlan plan_reta(std::span<const std::uint16_t> current, std::span<const std::uint8_t> key,
                                 std::span<const InboundFlow> flows);

// What placing the flows on a port did.
struct RssPlacement {
  bool applied = false;  // the PMD took the table (false: it has no RSS table to set, see `why`)
  std::uint32_t flows = 0, placed = 0, conflicts = 0;
  std::uint16_t reta_size = 0;
  std::string why;  // when not applied: what the PMD lacks
};

// Reads the port's key and table, plans and writes the changed entries. A port without RSS, or a
// PMD that cannot query or update its table (net_ring, net_memif: one queue per peer queue, where
// frames already land on their owner; net_tap, net_af_xdp: no table in DPDK 22.11) is not an
// error: `applied` stays false.
[[nodiscard]] Status place_flows_on_reta(std::uint16_t port_id, std::span<const InboundFlow> flows, RssPlacement& out);

}  // namespace droce::engine
