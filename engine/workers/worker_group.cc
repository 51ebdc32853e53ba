// WorkerGroup: N endpoints on one port's queues and the software steering between them.
#include "engine/workers/worker_group.h"

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>

#include "engine/workers/tsan_handover.h"
#include "protocols/wire/steer.h"
#include "protocols/wire/ud.h"

namespace droce::engine {
namespace {

constexpr std::uint16_t kBurst = RcEndpoint::kRxBurst;

// rte_ring hands frames from one worker to another with ordering ThreadSanitizer cannot see.
void ring_handing_over(rte_ring* r) { tsan_handing_over(r); }
void ring_taken_over(rte_ring* r) { tsan_taken_over(r); }
constexpr unsigned kCommandsPerPoll = 32;    // a flood of commands cannot keep a worker from its RX
constexpr std::uint32_t kMaxQpn = 0xFFFFFF;  // 24-bit QPNs (IBTA §9.2: BTH DestQP)

std::string ring_name(const char* kind, std::uint16_t w) {
  // Ring names are global to the EAL instance: pid and a process-wide serial keep groups apart.
  static std::atomic<unsigned> serial{0};
  return kind + std::to_string(getpid() % 100000) + "_" + std::to_string(serial.fetch_add(1)) + "_" + std::to_string(w);
}

Status check_config(const WorkerGroupConfig& cfg) {
  if (cfg.workers == 0) return Status::error(StatusCode::kInvalidArgument, "workers: at least 1 needed");
  if (cfg.pools.size() != cfg.workers)
    return Status::error(StatusCode::kInvalidArgument, "workers: " + std::to_string(cfg.workers) +
                                                           " workers need as many mbuf pools, " +
                                                           std::to_string(cfg.pools.size()) + " given");
  for (auto* p : cfg.pools)
    if (p == nullptr) return Status::error(StatusCode::kInvalidArgument, "workers: a worker's mbuf pool is missing");
  if (!cfg.memories.empty() && cfg.memories.size() != cfg.workers)
    return Status::error(StatusCode::kInvalidArgument, "workers: per-worker memory registries given for " +
                                                           std::to_string(cfg.memories.size()) + " of " +
                                                           std::to_string(cfg.workers) + " workers");
  if (cfg.qps_per_worker == 0)
    return Status::error(StatusCode::kInvalidArgument, "workers: qps_per_worker must be at least 1");
  const std::uint64_t last =
      std::uint64_t{cfg.endpoint.transport.qpn_base} + std::uint64_t{cfg.workers} * cfg.qps_per_worker;
  if (last - 1 > kMaxQpn)
    return Status::error(StatusCode::kInvalidArgument, "workers: QPNs " +
                                                           std::to_string(cfg.endpoint.transport.qpn_base) + ".." +
                                                           std::to_string(last - 1) + " exceed the 24-bit QPN space");
  if (cfg.steer_ring_size < 2u * kBurst || cfg.steer_ring_size > RTE_RING_SZ_MASK)
    return Status::error(StatusCode::kInvalidArgument, "workers: steer_ring_size must be between " +
                                                           std::to_string(2 * kBurst) + " and " +
                                                           std::to_string(RTE_RING_SZ_MASK));
  if (cfg.workers > 1 && (cfg.control_ring_size < kCommandsPerPoll || cfg.control_ring_size > RTE_RING_SZ_MASK))
    return Status::error(StatusCode::kInvalidArgument, "workers: control_ring_size must be between " +
                                                           std::to_string(kCommandsPerPoll) + " and " +
                                                           std::to_string(RTE_RING_SZ_MASK));
  const std::uint16_t port = cfg.endpoint.queues.port_id;
  if (!rte_eth_dev_is_valid_port(port))
    return Status::error(StatusCode::kNotFound, "workers: port " + std::to_string(port) + " does not exist");
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port, &info) != 0)
    return Status::error(StatusCode::kError, "workers: cannot read the device info of port " + std::to_string(port));
  // Each worker owns RX and TX queue w: the port must have been configured with that many.
  if (info.nb_rx_queues < cfg.workers || info.nb_tx_queues < cfg.workers)
    return Status::error(StatusCode::kInvalidArgument,
                         "workers: " + std::to_string(cfg.workers) + " workers need as many queues, port " +
                             std::to_string(port) + " has " + std::to_string(info.nb_rx_queues) + " rx / " +
                             std::to_string(info.nb_tx_queues) + " tx (device maximum " +
                             std::to_string(info.max_rx_queues) + " / " + std::to_string(info.max_tx_queues) + ")");
  return {};
}

bool enqueue_one(rte_ring* r, rte_mbuf* m) {
  ring_handing_over(r);
  return rte_ring_enqueue(r, m) == 0;
}

unsigned enqueue_burst(rte_ring* r, rte_mbuf* const* b, unsigned n) {
  ring_handing_over(r);
  return rte_ring_enqueue_burst(r, reinterpret_cast<void* const*>(b), n, nullptr);
}

unsigned dequeue_burst(rte_ring* r, rte_mbuf** b, unsigned n) {
  const unsigned got = rte_ring_dequeue_burst(r, reinterpret_cast<void**>(b), n, nullptr);
  if (got != 0) ring_taken_over(r);
  return got;
}

void drain_ring(rte_ring* r) {
  if (r == nullptr) return;
  rte_mbuf* b[kBurst];
  // Bounded: the ring holds at most its size, and nobody enqueues any more.
  for (unsigned n; (n = dequeue_burst(r, b, kBurst)) != 0;) rte_pktmbuf_free_bulk(b, n);
}

}  // namespace

// ---- Worker ----

void Worker::poll(std::uint64_t now_tsc) {
  // Commands first: a move the port owner's CM posted before its REP or RTU left is made before
  // this worker's next burst, where the peer's answer lands (docs/cm.md).
  if (control_ != nullptr) run_commands(now_tsc);
  if (!held_.empty()) retry_held();
  rte_mbuf* local[kBurst];
  std::uint16_t n_local = 0;
  // Back-pressure: while the frames waiting for full rings could not absorb another burst's
  // worth, the NIC ring keeps the frames (the PMD counts what overflows it) and RX waits.
  if (held_.size() + held_room_per_burst() <= held_cap_) {
    const EndpointConfig& ec = group_->cfg_.endpoint;
    rte_mbuf* rx[kBurst];
    const std::uint16_t n = rte_eth_rx_burst(ec.queues.port_id, index_, rx, kBurst);
    if (n != 0) {
      // Captured once, here, as the port delivered them: the endpoint that gets a frame does not.
      if (ec.recording.capture != nullptr)
        ec.recording.capture->capture(ec.queues.port_id, index_, rx, n, CaptureDirection::kRx, now_tsc);
      n_local = steer(rx, n, local);
      hand_over();
    }
  }
  deliver(now_tsc, local, n_local);
}

std::size_t Worker::held_room_per_burst() const {
  // One burst can leave at most kBurst frames per other worker (all MAC Control: one copy each).
  const std::size_t others = group_->cfg_.workers > 1 ? group_->cfg_.workers - 1u : 1u;
  return kBurst * others;
}

void Worker::retry_held() {
  std::fill(blocked_.begin(), blocked_.end(), 0);
  std::size_t keep = 0;
  for (std::size_t i = 0; i < held_.size(); ++i) {
    const std::uint16_t o = held_owner_[i];
    // Once one frame for `o` stays, the later ones for `o` stay too: the owner sees them in order.
    if (blocked_[o] == 0 && enqueue_one(group_->workers_[o]->inbound_, held_[i])) {
      ++steer_.rx_steered_in_software;
      continue;
    }
    blocked_[o] = 1;
    held_[keep] = held_[i];
    held_owner_[keep] = o;
    ++keep;
  }
  held_.resize(keep);
  held_owner_.resize(keep);
}

std::uint16_t Worker::steer(rte_mbuf* const* rx, std::uint16_t n, rte_mbuf** local) {
  const std::uint16_t workers = group_->cfg_.workers;
  std::uint16_t n_local = 0;
  for (std::uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = rx[i];
    // Only the first segment is read: a PMD that splits the headers over segments gets its frames
    // handled here, where the endpoint's full parse (linearising) still sees them.
    const wire::SteerPeek p = wire::steer_peek(rte_pktmbuf_mtod(m, const std::uint8_t*), m->data_len);
    // (A chain's later segments would not share the head's reference count: such a frame, never
    // a real PFC frame of 60 bytes, stays here.)
    if (p.cls == wire::SteerClass::kMacControl && workers > 1 && m->nb_segs == 1) {
      // PFC pauses the port's transmit, and every worker transmits: each endpoint gets a
      // reference to the one frame and frees its own.
      ++steer_.rx_broadcast;
      rte_mbuf_refcnt_update(m, static_cast<std::int16_t>(workers - 1));
      for (std::uint16_t o = 0; o < workers; ++o)
        if (o != index_) out_[o * kBurst + out_n_[o]++] = m;
      local[n_local++] = m;
      continue;
    }
    const std::uint16_t o = group_->steer_owner(p, index_);
    // Unknown QPNs and everything else stay: this endpoint counts the drop by its reason.
    if (o == index_ || o >= workers)
      local[n_local++] = m;
    else
      out_[o * kBurst + out_n_[o]++] = m;
  }
  return n_local;
}

void Worker::hand_over() {
  const std::uint16_t workers = group_->cfg_.workers;
  for (std::uint16_t o = 0; o < workers; ++o) {
    const std::uint16_t k = out_n_[o];
    if (k == 0) continue;
    out_n_[o] = 0;
    rte_mbuf** b = &out_[o * kBurst];
    // Behind frames already waiting for this owner: wait too, in order.
    const unsigned sent = !held_.empty() && blocked_[o] != 0 ? 0u : enqueue_burst(group_->workers_[o]->inbound_, b, k);
    steer_.rx_steered_in_software += sent;
    for (unsigned i = sent; i < k; ++i) hold(b[i], o);
    if (sent < k) blocked_[o] = 1;
  }
}

void Worker::hold(rte_mbuf* m, std::uint16_t owner) {
  // Never full here: RX ran only with room for a whole burst's worth (see poll).
  held_.push_back(m);
  held_owner_.push_back(owner);
  ++steer_.steer_ring_full_waits;
}

void Worker::deliver(std::uint64_t now_tsc, rte_mbuf** local, std::uint16_t n_local) {
  // Own frames first, topped up from the inbound ring; more of the ring in further chunks,
  // bounded per poll so that a flood from the others cannot keep this worker from its own RX.
  const unsigned max_rounds = group_->cfg_.workers;
  for (unsigned round = 0; round < max_rounds; ++round) {
    const unsigned got = dequeue_burst(inbound_, local + n_local, static_cast<unsigned>(kBurst - n_local));
    steer_.rx_steered_in += got;
    n_local = static_cast<std::uint16_t>(n_local + got);
    if (n_local == 0 && round != 0) break;
    endpoint_->poll_received(now_tsc, local, n_local);  // once with n = 0 at least: timers and TX
    if (n_local < kBurst) break;
    n_local = 0;
  }
}

bool Worker::post_command(std::uint16_t to, const QpCommand& c) {
  if (group_->workers_[to]->control_->post(c)) return true;
  ++steer_.qp_commands_refused;
  return false;
}

void Worker::run_commands(std::uint64_t now_tsc) {
  QpCommand c[kCommandsPerPoll];
  const unsigned n = control_->take(c, kCommandsPerPoll);
  CmQpControl& qps = endpoint_->cm_qps();
  for (unsigned i = 0; i < n; ++i) {
    Status st;
    switch (c[i].kind) {
      case QpCommand::Kind::kSetRecovery:
        st = qps.set_qp_recovery(c[i].qpn, c[i].recovery);
        break;
      case QpCommand::Kind::kConnectAgreed:
        st = qps.connect_agreed(c[i].qpn, c[i].peer, c[i].agreed);
        break;
      case QpCommand::Kind::kSetError:
        st = qps.set_qp_error(c[i].qpn);
        break;
      case QpCommand::Kind::kWaitForTraffic:
        qps.set_waits_for_traffic(c[i].qpn, c[i].waiting);
        break;
      case QpCommand::Kind::kTrafficSeen:
        endpoint_->cm_qp_traffic(c[i].qpn, now_tsc);
        break;
    }
    ++steer_.qp_commands_run;
    if (!st.ok()) ++steer_.qp_commands_failed;
  }
}

void Worker::free_pending() {
  if (!held_.empty()) rte_pktmbuf_free_bulk(held_.data(), static_cast<unsigned>(held_.size()));
  held_.clear();
  held_owner_.clear();
  drain_ring(inbound_);
}

void Worker::finish() {
  free_pending();
  endpoint_->finish();
}

// ---- WorkerGroup ----

std::unique_ptr<WorkerGroup> WorkerGroup::create(const WorkerGroupConfig& cfg, Status& err) {
  err = check_config(cfg);
  if (!err.ok()) return nullptr;
  std::unique_ptr<WorkerGroup> g(new WorkerGroup());
  g->cfg_ = cfg;
  for (std::uint16_t w = 0; w < cfg.workers; ++w) {
    auto wk = std::make_unique<Worker>();
    wk->index_ = w;
    wk->group_ = g.get();
    EndpointConfig ec = cfg.endpoint;
    ec.queues.queue = w;
    ec.queues.pool = cfg.pools[w];
    ec.transport.max_qps = cfg.qps_per_worker;
    ec.transport.qpn_base = cfg.endpoint.transport.qpn_base + w * cfg.qps_per_worker;
    if (cfg.endpoint.recording.counters != nullptr) ec.recording.counters = cfg.endpoint.recording.counters + w;
    if (!cfg.memories.empty()) ec.queues.memory = cfg.memories[w];
    // Multi-producer (every other worker hands frames in), single consumer (the owner).
    wk->inbound_ = rte_ring_create(ring_name("dstr", w).c_str(), cfg.steer_ring_size, rte_socket_id(),
                                   RING_F_SC_DEQ | RING_F_EXACT_SZ);
    if (wk->inbound_ == nullptr) {
      err = Status::error(StatusCode::kNoMemory, "workers: cannot create worker " + std::to_string(w) +
                                                     "'s steering ring of " + std::to_string(cfg.steer_ring_size) +
                                                     " frames: " + rte_strerror(rte_errno));
      return nullptr;
    }
    wk->endpoint_ = RcEndpoint::create(ec, err);
    if (!wk->endpoint_) {
      err = err.context("workers: worker " + std::to_string(w) + ": ");
      return nullptr;
    }
    if (cfg.workers > 1) {
      wk->control_ = QpCommandRing::create(ring_name("dctl", w), cfg.control_ring_size, err);
      if (!wk->control_) return nullptr;
    }
    wk->out_.assign(std::size_t{cfg.workers} * kBurst, nullptr);
    wk->out_n_.assign(cfg.workers, 0);
    wk->blocked_.assign(cfg.workers, 0);
    g->workers_.push_back(std::move(wk));
  }
  if (cfg.workers > 1) {
    // One CM per port (docs/cm.md): the port owner's reaches every worker's QPs; the others tell
    // it of their QPs' first packets.
    g->cm_qps_ = std::make_unique<GroupCmQps>(*g);
    for (auto& wk : g->workers_) {
      if (wk->index_ == kPortOwner)
        wk->endpoint_->cm_route_qps(*g->cm_qps_);
      else
        wk->endpoint_->cm_forward_traffic(g->cm_qps_.get());
    }
  }
  for (auto& wk : g->workers_) {
    wk->held_cap_ = 2 * wk->held_room_per_burst();
    wk->held_.reserve(wk->held_cap_);
    wk->held_owner_.reserve(wk->held_cap_);
  }
  err = Status();
  return g;
}

WorkerGroup::~WorkerGroup() {
  for (auto& w : workers_) {
    w->free_pending();
    // The endpoints go first (their destructors free what they hold); the rings are empty.
    w->endpoint_.reset();
  }
  for (auto& w : workers_) {
    drain_ring(w->inbound_);
    rte_ring_free(w->inbound_);
    w->inbound_ = nullptr;
  }
}

std::uint16_t WorkerGroup::size() const { return static_cast<std::uint16_t>(workers_.size()); }

Worker& WorkerGroup::worker(std::uint16_t w) { return *workers_[w]; }

const Worker& WorkerGroup::worker(std::uint16_t w) const { return *workers_[w]; }

std::uint16_t WorkerGroup::range_owner(std::uint32_t qpn) const {
  if (qpn < cfg_.endpoint.transport.qpn_base) return cfg_.workers;
  const std::uint32_t w = (qpn - cfg_.endpoint.transport.qpn_base) / cfg_.qps_per_worker;
  return w < cfg_.workers ? static_cast<std::uint16_t>(w) : cfg_.workers;
}

std::uint16_t WorkerGroup::steer_owner(const wire::SteerPeek& p, std::uint16_t reader) const {
  switch (p.cls) {
    case wire::SteerClass::kRoceV2:
      // QP1 (the CM's GMPs, IBTA ch. 13) has no worker's range: it belongs to the port owner.
      return p.dest_qpn == wire::kGsiQpn ? kPortOwner : range_owner(p.dest_qpn);
    case wire::SteerClass::kNeighbour:
      return kPortOwner;
    case wire::SteerClass::kMacControl:
    case wire::SteerClass::kOther:
      break;
  }
  return reader;
}

std::uint16_t WorkerGroup::owner_of(std::uint32_t qpn) const {
  const std::uint16_t w = range_owner(qpn);
  return w < cfg_.workers ? w : 0;
}

SteeringCounters WorkerGroup::steering_totals() const {
  SteeringCounters t;
  for (const auto& w : workers_) {
    t.rx_steered_in_software += w->steer_.rx_steered_in_software;
    t.rx_steered_in += w->steer_.rx_steered_in;
    t.rx_broadcast += w->steer_.rx_broadcast;
    t.steer_ring_full_waits += w->steer_.steer_ring_full_waits;
    t.qp_commands_run += w->steer_.qp_commands_run;
    t.qp_commands_failed += w->steer_.qp_commands_failed;
    t.qp_commands_refused += w->steer_.qp_commands_refused;
  }
  return t;
}

EndpointCounters WorkerGroup::endpoint_totals() const {
  // Every field is a 64-bit count (the struct grows with the endpoint): summed as an array, so
  // a counter added there is summed here without a change.
  static_assert(std::is_trivially_copyable_v<EndpointCounters> &&
                sizeof(EndpointCounters) % sizeof(std::uint64_t) == 0);
  constexpr std::size_t kFields = sizeof(EndpointCounters) / sizeof(std::uint64_t);
  std::uint64_t sum[kFields] = {};
  for (const auto& w : workers_) {
    std::uint64_t f[kFields];
    std::memcpy(f, &w->endpoint_->counters(), sizeof(f));
    for (std::size_t i = 0; i < kFields; ++i) sum[i] += f[i];
  }
  EndpointCounters t;
  std::memcpy(&t, sum, sizeof(t));
  return t;
}

void WorkerGroup::finish() {
  // Held frames first (they would otherwise land in a ring after it was drained), then the rings.
  for (auto& w : workers_) {
    if (!w->held_.empty()) rte_pktmbuf_free_bulk(w->held_.data(), static_cast<unsigned>(w->held_.size()));
    w->held_.clear();
    w->held_owner_.clear();
  }
  for (auto& w : workers_) drain_ring(w->inbound_);
  for (auto& w : workers_) w->endpoint_->finish();
}

Status WorkerGroup::place_flows_by_rss(RssPlacement& out) const {
  std::vector<RcEndpoint::ConnectedQp> qps;
  std::vector<InboundFlow> flows;
  for (const auto& w : workers_) {
    qps.clear();
    w->endpoint().connected_qps(qps);
    for (const auto& q : qps) {
      InboundFlow f;
      f.ipv6 = q.ipv6;
      std::memcpy(f.src_ip, q.remote.ip, sizeof(f.src_ip));
      std::memcpy(f.dst_ip, q.local.ip, sizeof(f.dst_ip));
      f.src_port = q.udp_src_port;
      f.owner = w->index();
      flows.push_back(f);
    }
  }
  return place_flows_on_reta(cfg_.endpoint.queues.port_id, flows, out);
}

}  // namespace droce::engine
