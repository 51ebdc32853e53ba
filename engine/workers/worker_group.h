// WorkerGroup: N poll-mode workers on one port, each owning an RX and a TX queue, an mbuf pool,
// an RcEndpoint with its share of the QPs, and the steering that hands every received frame to
// the worker owning its destination QP.
#pragma once

#include <rte_mbuf.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/memory_region.h"
#include "engine/core/status.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/workers/group_cm_qps.h"
#include "engine/workers/qp_command_ring.h"
#include "engine/workers/rss_placement.h"
#include "protocols/wire/steer.h"

struct rte_ring;

namespace droce::engine {

// What the steering stage did on one worker. Written only by that worker.
struct SteeringCounters {
  std::uint64_t rx_steered_in_software = 0;  // frames this worker read for another worker's QP and handed over
  std::uint64_t rx_steered_in = 0;           // frames other workers handed to this one
  std::uint64_t rx_broadcast = 0;            // MAC Control (PFC) frames copied to every worker
  std::uint64_t steer_ring_full_waits = 0;   // an owner's ring was full: the frame waited here, not dropped
  // The control rings (qp_command_ring.h): commands this worker ran for the port owner's CM (or,
  // on the port owner, traffic notices it took), those its endpoint refused (a QP destroyed
  // meanwhile), and those this worker could not post because the target's ring was full.
  std::uint64_t qp_commands_run = 0;
  std::uint64_t qp_commands_failed = 0;
  std::uint64_t qp_commands_refused = 0;
};

struct WorkerGroupConfig {
  std::uint16_t workers = 1;
  // Every worker's endpoint is made from this template; per worker w the group sets queue = w,
  // pool = pools[w], max_qps = qps_per_worker, qpn_base = endpoint.transport.qpn_base + w * qps_per_worker
  // and counters = the port's queue w counters (when endpoint.recording.counters is not null, it must point
  // at queue 0 of an array of `workers` QueueCounters). The port (endpoint.queues.port_id) must have
  // been opened with at least `workers` RX and TX queues.
  EndpointConfig endpoint;
  std::uint32_t qps_per_worker = 64;
  std::vector<rte_mempool*> pools;       // one per worker (its RX queue's pool and its TX mbufs)
  std::uint32_t steer_ring_size = 4096;  // frames each worker's inbound steering ring holds
  // Commands each worker's control ring holds (several workers only): a CM connection posts at
  // most four to a QP's worker (recovery, RTR/RTS, wait for traffic, ERROR), and the CM holds
  // EndpointCm::kMaxConnections, so 1024 leaves room for every connection's commands four times.
  std::uint32_t control_ring_size = 1024;
  // Optional, one per worker: worker w's endpoint uses memories[w] instead of endpoint.queues.memory.
  // MemoryRegistry's pointer lookup (find_lkey) writes a last-hit cache, so a registry shared by
  // workers on several lcores is written by all of them; per-worker registries avoid that.
  std::vector<MemoryRegistry*> memories;
};

// One worker's share. Single-threaded: poll() and everything on endpoint() run on the worker's
// lcore (or, before the workers are launched, on the thread that sets them up).
class Worker {
 public:
  // RX burst from queue w -> steer (own frames; other owners' rings in bursts; QP1, ARP and ND
  // to the port owner; MAC Control to all) -> frames other workers handed over ->
  // endpoint().poll_received (timers, TX, flush).
  void poll(std::uint64_t now_tsc);
  void finish();
  [[nodiscard]] RcEndpoint& endpoint() { return *endpoint_; }
  [[nodiscard]] const RcEndpoint& endpoint() const { return *endpoint_; }
  [[nodiscard]] std::uint16_t index() const { return index_; }
  [[nodiscard]] const SteeringCounters& steering() const { return steer_; }
  // On this worker's thread: `c` to worker `to`'s control ring; false (counted
  // qp_commands_refused) when that ring is full.
  [[nodiscard]] bool post_command(std::uint16_t to, const QpCommand& c);

 private:
  friend class WorkerGroup;
  std::uint16_t index_ = 0;
  std::unique_ptr<RcEndpoint> endpoint_;
  SteeringCounters steer_;
  class WorkerGroup* group_ = nullptr;
  rte_ring* inbound_ = nullptr;
  std::unique_ptr<QpCommandRing> control_;  // several workers only
  // Frames for another worker whose ring was full: they wait here (bounded; RX stops while full).
  std::vector<rte_mbuf*> held_;
  std::vector<std::uint16_t> held_owner_;  // held_[i] goes to worker held_owner_[i]
  std::size_t held_cap_ = 0;
  // Per-poll scratch, sized at creation: frames bound for each owner, and owners whose earlier
  // frames still wait in held_ (later ones queue behind them, so an owner sees them in order).
  std::vector<rte_mbuf*> out_;  // workers x kRxBurst
  std::vector<std::uint16_t> out_n_;
  std::vector<std::uint8_t> blocked_;

  [[nodiscard]] std::size_t held_room_per_burst() const;
  void retry_held();
  // Sorts a received burst: own frames to `local` (returns how many), others to out_.
  std::uint16_t steer(rte_mbuf* const* rx, std::uint16_t n, rte_mbuf** local);
  void hand_over();
  void hold(rte_mbuf* m, std::uint16_t owner);
  void deliver(std::uint64_t now_tsc, rte_mbuf** local, std::uint16_t n_local);
  void free_pending();
  // Runs what the control ring holds (bounded per poll), before the next RX burst.
  void run_commands(std::uint64_t now_tsc);
};

class WorkerGroup {
 public:
  // The worker that owns what has no QP on the port: QP1 (its endpoint's EndpointCm answers every
  // CM message), ARP and ND (its endpoint keeps the port's neighbour table). Steering hands it
  // those frames whatever queue they land on (docs/cm.md, "One CM per port").
  static constexpr std::uint16_t kPortOwner = 0;

  [[nodiscard]] static std::unique_ptr<WorkerGroup> create(const WorkerGroupConfig& cfg, Status& err);
  ~WorkerGroup();
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  [[nodiscard]] std::uint16_t size() const;
  [[nodiscard]] Worker& worker(std::uint16_t w);
  [[nodiscard]] const Worker& worker(std::uint16_t w) const;
  // The worker whose endpoint owns `qpn` (its QPN range); a QPN outside every range belongs to
  // worker 0, whose endpoint counts it as unknown. (Steering does not move such frames: the
  // worker that read one counts the drop itself, which needs no hand-over.)
  [[nodiscard]] std::uint16_t owner_of(std::uint32_t qpn) const;
  // Sums over the workers (call when they are stopped, or accept a slightly stale view).
  [[nodiscard]] SteeringCounters steering_totals() const;
  [[nodiscard]] EndpointCounters endpoint_totals() const;
  // Sets the port's RSS redirection table so that every connected QP's inbound frames land on its
  // owner's RX queue (rss_placement.h): call once the QPs are connected, before the workers run. A
  // PMD without a settable table is not an error (`out.applied` false, `out.why` says why); flows
  // that share a table entry with another owner's flow still arrive, through the software path.
  [[nodiscard]] Status place_flows_by_rss(RssPlacement& out) const;
  // Frees every frame still held or queued between workers, then finishes each endpoint.
  void finish();

 private:
  WorkerGroup() = default;
  // Where a peeked frame goes: the owner of its QP, the port owner for QP1, ARP and ND, or
  // `reader` (the worker that read it) for everything else, including QPNs no worker owns.
  [[nodiscard]] std::uint16_t steer_owner(const wire::SteerPeek& p, std::uint16_t reader) const;
  // The worker owning `qpn`, or size() when no worker's range holds it.
  [[nodiscard]] std::uint16_t range_owner(std::uint32_t qpn) const;
  WorkerGroupConfig cfg_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Several workers: the port owner's CM reaches every worker's QPs through this.
  std::unique_ptr<GroupCmQps> cm_qps_;
  friend class Worker;
};

}  // namespace droce::engine
