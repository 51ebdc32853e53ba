// droce-perf's workers: placement, launch, commands and the merge of their figures.
#include "apps/droce-perf/perf_workers.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <algorithm>
#include <cstdio>

#include "apps/common/telemetry_setup.h"

namespace droce::perf {

using engine::Status;

PerfWorkers::PerfWorkers(const Options& o, engine::WorkerGroup& group,
                         const std::vector<std::unique_ptr<engine::MemoryRegistry>>& memories,
                         const engine::PerftestPreamble& pre, std::vector<BufferStorage>& storage)
    : o_(o) {
  const std::uint32_t n = group.size();
  for (std::uint32_t w = 0; w < n; ++w) {
    const std::uint32_t qps = (o.qps - w + n - 1) / n;  // QP i on worker i % n
    w_.push_back(std::make_unique<PerfWorker>(o, group.worker(static_cast<std::uint16_t>(w)), *memories[w], pre,
                                              storage[w], qps));
    // The launched workers learn of the peer's end (or the main lcore's) through abort_.
    w_[w]->traffic().set_peer_probe([this] { return abort_.load(std::memory_order_relaxed); });
  }
}

PerfWorkers::~PerfWorkers() { stop(); }

void PerfWorkers::set_peer_probe(std::function<bool()> probe) {
  peer_closed_ = std::move(probe);
  w_[0]->traffic().set_peer_probe([this] {
    if (abort_.load(std::memory_order_relaxed)) return true;
    if (!peer_closed_ || !peer_closed_()) return false;
    abort_.store(true, std::memory_order_relaxed);  // the others end too
    return true;
  });
}

Status PerfWorkers::create() {
  apps::start_telemetry("droce-perf");
  for (auto& w : w_)
    if (Status s = w->traffic().create(); !s.ok()) return s;
  return {};
}

std::vector<engine::PerftestKeys> PerfWorkers::keys(const std::uint8_t local_gid[16]) const {
  std::vector<std::vector<engine::PerftestKeys>> per(w_.size());
  for (std::size_t w = 0; w < w_.size(); ++w) per[w] = w_[w]->traffic().keys(local_gid);
  std::vector<engine::PerftestKeys> out(o_.qps);
  for (std::uint32_t i = 0; i < o_.qps; ++i) out[i] = per[i % w_.size()][i / w_.size()];
  return out;
}

Status PerfWorkers::connect(std::uint32_t i, const wire::L2L3Address& peer, const engine::PerftestKeys& keys) {
  const auto n = static_cast<std::uint32_t>(w_.size());
  return w_[i % n]->traffic().connect(i / n, peer, keys);
}

Status PerfWorkers::take_peer(std::uint32_t i, const engine::PerftestKeys& keys) {
  const auto n = static_cast<std::uint32_t>(w_.size());
  return w_[i % n]->traffic().take_peer(i / n, keys);
}

void PerfWorkers::poll(std::uint64_t now_tsc) {
  if (launched_) {
    w_[0]->poll(now_tsc);
    return;
  }
  for (auto& w : w_) w->poll(now_tsc);
}

Status PerfWorkers::wait_cm_moved(const std::vector<engine::PerftestKeys>& mine, std::uint32_t timeout_ms) {
  const auto n = static_cast<std::uint32_t>(w_.size());
  const std::uint64_t hz = rte_get_tsc_hz();
  const std::uint64_t deadline = rte_rdtsc() + hz * timeout_ms / 1000;
  for (;;) {
    std::uint32_t moved = 0;
    for (std::uint32_t i = 0; i < mine.size(); ++i) {
      const rc::RcQp* qp = w_[i % n]->worker().endpoint().qp(mine[i].qpn);
      if (qp != nullptr && (qp->state() == rc::QpState::kRts || qp->state() == rc::QpState::kError)) ++moved;
    }
    if (moved == mine.size()) return {};
    const std::uint64_t now = rte_rdtsc();
    if (now > deadline)
      return Status::error(StatusCode::kTimeout, "-R: " + std::to_string(mine.size() - moved) + " of " +
                                                     std::to_string(mine.size()) +
                                                     " QPs established over RDMA-CM were not moved to RTS by their "
                                                     "worker within " +
                                                     std::to_string(timeout_ms) + " ms (its control ring's commands)");
    poll(now);
  }
}

Status PerfWorkers::launch() {
  unsigned lcore = rte_get_main_lcore();
  for (std::size_t w = 1; w < w_.size(); ++w) {
    lcore = rte_get_next_lcore(lcore, 1, 0);  // worker lcores only, no wrap
    if (lcore >= RTE_MAX_LCORE)
      return Status::error(StatusCode::kInvalidArgument,
                           "no EAL lcore left for worker " + std::to_string(w) + " (see -l)");
    const int rc = rte_eal_remote_launch(
        [](void* arg) -> int {
          static_cast<PerfWorker*>(arg)->serve_commands();
          return 0;
        },
        w_[w].get(), lcore);
    if (rc != 0)
      return Status::error(StatusCode::kBadState,
                           "cannot launch worker " + std::to_string(w) + " on lcore " + std::to_string(lcore));
    lcores_.push_back(lcore);
    launched_ = true;
  }
  return {};
}

std::uint64_t PerfWorkers::rx_frames() const {
  std::uint64_t n = 0;
  for (const auto& w : w_) n += w->rx_frames();
  return n;
}

std::uint8_t PerfWorkers::request_kinds() const {
  std::uint8_t kinds = 0;
  for (const auto& w : w_) kinds |= w->request_kinds();
  return kinds;
}

std::uint8_t PerfWorkers::request_kinds_now() const {
  std::uint8_t kinds = 0;
  for (const auto& w : w_) kinds |= w->traffic().request_kinds();
  return kinds;
}

Status PerfWorkers::wait_all(const std::vector<std::uint32_t>& seqs) {
  const double hz = static_cast<double>(rte_get_tsc_hz());
  const auto quiet_limit = static_cast<std::uint64_t>((o_.timeout_s + 5) * hz);
  const auto grace = static_cast<std::uint64_t>(5 * hz);
  std::uint64_t last_rx = rx_frames(), last_change = rte_rdtsc(), aborted_at = 0, iter = 0;
  for (;;) {
    bool all = true;
    for (std::size_t w = 1; w < w_.size(); ++w) all = all && w_[w]->done(seqs[w]);
    if (all) break;
    const std::uint64_t now = rte_rdtsc();
    w_[0]->poll(now);  // worker 0's QPs and the frames its queue holds for the others
    if ((++iter & 4095) != 0) continue;
    if (const std::uint64_t rx = rx_frames(); rx != last_rx) {
      last_rx = rx;
      last_change = now;
    }
    const bool give_up =
        engine::stop_requested() || (peer_closed_ && peer_closed_()) || now - last_change > quiet_limit;
    if (give_up && aborted_at == 0) {
      abort_.store(true, std::memory_order_relaxed);
      aborted_at = now;
    }
    if (aborted_at != 0 && now - aborted_at > grace)
      return Status::error(StatusCode::kTimeout, "a worker did not end its run within 5 s of being told to");
  }
  for (std::size_t w = 1; w < w_.size(); ++w)
    if (!w_[w]->result().ok()) return w_[w]->result().context("worker " + std::to_string(w) + ": ");
  return {};
}

Status PerfWorkers::prepare(std::uint32_t size) {
  std::vector<std::uint32_t> seqs(w_.size(), 0);
  for (std::size_t w = 1; w < w_.size(); ++w) seqs[w] = w_[w]->command(PerfWorker::Command::kPrepare, size);
  w_[0]->traffic().prepare_receives(size);
  return wait_all(seqs);
}

Status PerfWorkers::run_bw(std::uint32_t size, BwRow& row) {
  if (w_.size() == 1) return w_[0]->run_bw(size, row);
  std::vector<std::uint32_t> seqs(w_.size(), 0);
  for (std::size_t w = 1; w < w_.size(); ++w) seqs[w] = w_[w]->command(PerfWorker::Command::kRunBw, size);
  BwRow own;
  Status mine = w_[0]->run_bw(size, own);
  if (!mine.ok()) abort_.store(true, std::memory_order_relaxed);  // the others end too
  Status others = wait_all(seqs);
  if (!mine.ok()) return mine;
  if (!others.ok()) return others;
  // perftest's figures over all QPs: iterations summed, from the earliest start to the latest end;
  // the peak from every message's times where every worker kept them.
  BwRaw m;
  bool peak = true;
  std::vector<BwRaw> raws;
  for (auto& w : w_) raws.push_back(w->take_raw());
  m.first = raws[0].first;
  for (const auto& r : raws) {
    m.iters += r.iters;
    m.first = std::min(m.first, r.first);
    m.last = std::max(m.last, r.last);
    peak = peak && !r.posted.empty();
  }
  if (peak) {
    for (const auto& r : raws) {
      m.posted.insert(m.posted.end(), r.posted.begin(), r.posted.end());
      m.completed.insert(m.completed.end(), r.completed.begin(), r.completed.end());
    }
    std::sort(m.posted.begin(), m.posted.end());
    std::sort(m.completed.begin(), m.completed.end());
  }
  row = bw_row(size, m.iters, m.first, m.last, m.posted, m.completed, w_[0]->traffic().cq_mod(),
               static_cast<double>(rte_get_tsc_hz()), o_.report_gbits);
  return {};
}

void PerfWorkers::stop() {
  if (!launched_) return;
  abort_.store(true, std::memory_order_relaxed);  // a command still running ends at once
  for (std::size_t w = 1; w < w_.size() && w - 1 < lcores_.size(); ++w)
    (void)w_[w]->command(PerfWorker::Command::kQuit, 0);
  for (unsigned lcore : lcores_) (void)rte_eal_wait_lcore(lcore);
  launched_ = false;
}

TransportTotals PerfWorkers::totals() {
  TransportTotals t;
  for (const auto& w : w_) {
    const TransportTotals x = w->traffic().totals();
    t.retransmitted += x.retransmitted;
    t.naks_sent += x.naks_sent;
    t.naks_received += x.naks_received;
    t.ack_timeouts += x.ack_timeouts;
    t.rnr_naks += x.rnr_naks;
    t.rnr_naks_sent += x.rnr_naks_sent;
    t.implied_naks += x.implied_naks;
    t.duplicate_responses += x.duplicate_responses;
    t.adaptive_timeouts += x.adaptive_timeouts;
    t.tail_probes += x.tail_probes;
    t.spurious_retransmits += x.spurious_retransmits;
  }
  return t;
}

void PerfWorkers::print_worker_lines() const {
  if (w_.size() < 2 || lcores_.size() + 1 != w_.size()) return;
  for (std::size_t w = 0; w < w_.size(); ++w) {
    const engine::SteeringCounters& st = w_[w]->worker().steering();
    std::printf(
        " droce: worker %zu (lcore %u): %u QPs, %llu messages, %llu frames received, %llu steered to other workers, "
        "%llu from them\n",
        w, w == 0 ? rte_get_main_lcore() : lcores_[w - 1], w_[w]->traffic().qp_count(),
        static_cast<unsigned long long>(w_[w]->messages()), static_cast<unsigned long long>(w_[w]->rx_frames()),
        static_cast<unsigned long long>(st.rx_steered_in_software), static_cast<unsigned long long>(st.rx_steered_in));
  }
}

nlohmann::json PerfWorkers::workers_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t w = 0; w < w_.size(); ++w) {
    const engine::SteeringCounters& st = w_[w]->worker().steering();
    a.push_back({{"worker", w},
                 {"qps", w_[w]->traffic().qp_count()},
                 {"messages", w_[w]->messages()},
                 {"rx_frames", w_[w]->rx_frames()},
                 {"rx_steered_in_software", st.rx_steered_in_software},
                 {"rx_steered_in", st.rx_steered_in}});
  }
  return a;
}

}  // namespace droce::perf
