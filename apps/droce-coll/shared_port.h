// SharedPort: the K ranks of one process (mpirun --ranks-per-process K) on the one DPDK port that
// process opened — a NIC only one primary process may open. Each rank keeps its own RcEndpoint,
// QPs, buffers and IPv4 address (the port's MAC: one NIC port with K addresses, as a RoCE NIC
// with K GID entries); each endpoint transmits into its own rte_ring and this owner moves the
// frames. A frame for a sibling rank (its destination IPv4 is one of this process's) is looped
// here and never reaches the wire: a switch does not send a frame back out the port it came in
// on (droce-switch drops it, as an L2 switch does), and a RoCE NIC loops traffic between its own
// GIDs internally the same way. Every other frame leaves on the port's queue 0. A received frame
// goes to the rank whose address is its destination; one for no rank here (ARP, another host's)
// goes to the first rank's endpoint, which counts it among its drop reasons.
#pragma once

#include <droce/engine/core/status.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace droce::coll {

class CollRank;

class SharedPort {
 public:
  // Rings for `count` ranks whose IPv4 addresses (host order) are first_ip .. first_ip+count-1,
  // frames on `port_id` queue 0. kNoMemory when a ring cannot be made.
  [[nodiscard]] static std::unique_ptr<SharedPort> create(std::uint16_t port_id, std::uint32_t first_ip,
                                                          std::uint32_t count, engine::Status& err);
  ~SharedPort();  // frames still queued are freed
  SharedPort(const SharedPort&) = delete;
  SharedPort& operator=(const SharedPort&) = delete;

  // Where local rank i's endpoint transmits (EndpointQueues::tx_ring).
  [[nodiscard]] rte_ring* ring(std::uint32_t i) const { return rings_[i]; }
  // One pass: a burst from the port steered by destination, every rank polled over its frames
  // and those its siblings sent it, then what the ranks sent: looped or onto the port (what the
  // port does not take waits for the next pass; the rings stay bounded). `ranks[i]` is local
  // rank i. Returns the frames received and looped (0: an idle pass).
  std::uint32_t poll(std::uint64_t now_tsc, const std::vector<CollRank*>& ranks);

  [[nodiscard]] std::uint64_t looped() const { return looped_; }
  [[nodiscard]] std::uint64_t sent() const { return sent_; }

 private:
  static constexpr std::uint32_t kBurst = 32;
  static constexpr std::uint32_t kHeld = 512;  // frames taken from a ring, or waiting for the port, per pass
  SharedPort() = default;
  // Local rank whose address `m` is for, or -1.
  [[nodiscard]] int owner(const rte_mbuf* m) const;
  void drain_rings();
  void transmit();

  std::uint16_t port_ = 0;
  std::uint32_t first_ip_ = 0;
  std::vector<rte_ring*> rings_;
  // Per rank: frames for it this pass (from the port and its siblings).
  std::vector<std::vector<rte_mbuf*>> inbox_;
  // Frames for the port that it did not take yet, in order.
  std::vector<rte_mbuf*> out_;
  std::size_t next_ring_ = 0;  // the ring a pass drains first
  std::uint64_t looped_ = 0, sent_ = 0;
};

}  // namespace droce::coll
