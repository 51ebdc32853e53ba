// droce-coll under mpirun: K ranks per process (--ranks-per-process, default 1), rank =
// process x K + local index. The data moves over droce's RoCEv2 on this process's own DPDK port,
// which its ranks share (SharedPort: each its own endpoint and address, frames between them
// looped here); MPI (MpiJob, one MPI rank per process) carries the bootstrap and results only:
//   hello       every process's parameters (must equal rank 0's), its ranks' cards, pid and host
//   connected   after every QP is connected
//   per size    a start; per iteration a start and an end (each a barrier naming who is missing);
//               then every rank's figures to rank 0, which prints the row
//   end         rank 0's verdict (the job's exit status)
// Stalls: while an iteration runs each process sends rank 0 a heartbeat every 100 ms (each of its
// ranks' progress); at --timeout rank 0 names the rank whose process went silent (stopped, or its
// host gone), else the one that made no progress for longest, and aborts the job.
#include <droce/engine/core/eal.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "apps/droce-coll/card_codec.h"
#include "apps/droce-coll/memory_plan.h"
#include "apps/droce-coll/mpi_bootstrap.h"
#include "apps/droce-coll/mpi_mode.h"
#include "apps/droce-coll/rank_figures.h"
#include "apps/droce-coll/report.h"
#include "apps/droce-coll/run_params.h"
#include "apps/droce-coll/setup.h"
#include "apps/droce-coll/shared_port.h"

namespace droce::coll {

namespace {

using engine::Status;
using engine::StatusCode;

constexpr double kHeartbeatS = 0.1;
// A rank silent this long while its iteration runs has stopped (heartbeats leave every 100 ms).
constexpr double kSilentS = 1.0;
constexpr std::size_t kMaxHostBytes = 255;

// DPDK's runtime files of one process of the job (its rank among the processes, and its pid:
// never another's, even when a job reuses a host).
std::string eal_file_prefix(std::uint32_t process) {
  return "droce-coll-r" + std::to_string(process) + "-" + std::to_string(getpid());
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void put32(Bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (24 - 8 * i)));
}

// Reads length-checked fields from a peer's bytes; any overrun marks it bad.
struct Reader {
  const Bytes& b;
  std::size_t at = 0;
  bool bad = false;
  std::uint32_t u32() {
    if (at + 4 > b.size()) {
      bad = true;
      return 0;
    }
    const std::uint32_t v =
        std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 | std::uint32_t{b[at + 2]} << 8 | b[at + 3];
    at += 4;
    return v;
  }
  const std::uint8_t* take(std::size_t n) {
    if (n > b.size() - std::min(at, b.size())) {
      bad = true;
      return nullptr;
    }
    const std::uint8_t* p = b.data() + at;
    at += n;
    return p;
  }
};

// What rank 0 knows of each rank while an iteration runs.
struct Watch {
  double last_word_s = 0;  // a heartbeat from its process (or the iteration's start)
  double quiet_s = 0;      // its own report: time since its last progress
  bool done = false, failed = false;
  std::string text;  // what it waits for, or its failure
};

// One local rank: its memory, endpoint and collective state (its own address and QPs).
struct LocalRank {
  std::unique_ptr<engine::MemoryRegistry> mem;
  std::unique_ptr<engine::RcEndpoint> ep;
  std::unique_ptr<CollRank> rank;
};

// A process's heartbeat: iteration, its rank count, then per rank done, failed, quiet (ms) and
// one line of text (u16 length first).
Bytes heartbeat_bytes(std::uint32_t iteration, const std::vector<LocalRank>& local, std::uint64_t now_tsc,
                      double tsc_per_us) {
  Bytes b;
  put32(b, iteration);
  put32(b, static_cast<std::uint32_t>(local.size()));
  for (const LocalRank& l : local) {
    const CollRank& r = *l.rank;
    const double quiet_s = static_cast<double>(now_tsc - r.last_progress_tsc()) / (tsc_per_us * 1e6);
    b.push_back(r.done() ? 1 : 0);
    b.push_back(r.failed() ? 1 : 0);
    put32(b, static_cast<std::uint32_t>(std::min(quiet_s * 1e3, 4e9)));
    std::string t = r.failed() ? r.failure() : r.waiting_for();
    if (t.size() > 300) t.resize(300);
    b.push_back(static_cast<std::uint8_t>(t.size() >> 8));
    b.push_back(static_cast<std::uint8_t>(t.size()));
    b.insert(b.end(), t.begin(), t.end());
  }
  return b;
}

class RankProcess {
 public:
  RankProcess(Options& o, MpiJob& job)
      : o_(o), job_(job), k_(o.ranks_per_process), first_(job.rank() * o.ranks_per_process) {}
  int run(engine::SplitArgs& split);

 private:
  [[nodiscard]] std::vector<std::string> default_eal(const MemoryPlan& m) const;
  [[nodiscard]] Status open(const SizeSchedule& largest, const MemoryPlan& m);
  [[nodiscard]] Status hello();
  void poll_once();
  void keep_polling();
  [[nodiscard]] std::uint32_t process_of(std::uint32_t rank) const { return rank / k_; }
  // "process 1 (ranks 2..3)", or "rank 1" when every process holds one rank.
  [[nodiscard]] std::string process_text(std::uint32_t process) const;
  // The ranks of processes that did not arrive at an exchange.
  [[nodiscard]] std::vector<std::uint32_t> ranks_of(const std::vector<std::uint32_t>& processes) const;
  [[nodiscard]] std::string verdict(const std::vector<std::uint32_t>& missing, const char* what) const;
  [[nodiscard]] bool all_done() const;
  [[nodiscard]] Status run_iteration(std::uint32_t it, const char* size_text);
  [[nodiscard]] Status run_placement(const SizeSchedule& s, PlacementResult& out);
  [[noreturn]] void end_job(const Status& s, int code);
  void teardown();

  Options& o_;
  MpiJob& job_;
  const std::uint32_t k_;      // ranks in each process
  const std::uint32_t first_;  // this process's first rank
  std::unique_ptr<engine::Eal> eal_;
  engine::MbufPool pool_;
  std::unique_ptr<engine::Port> port_;
  std::unique_ptr<SharedPort> shared_;
  std::vector<LocalRank> local_;
  std::vector<CollRank*> ranks_;     // local_'s, for SharedPort::poll
  std::vector<std::uint32_t> pids_;  // by process
  std::vector<std::string> hosts_;   // by process
  std::vector<Watch> watch_;         // by rank
  double tsc_per_us_ = 1;
  double next_beat_s_ = 0;
  std::uint32_t iteration_ = 0;
  EndpointTotals totals_;
};

std::vector<std::string> RankProcess::default_eal(const MemoryPlan& m) const {
  // One CPU per process on its host, in turn over the CPUs this process may use (mpirun --bind-to none).
  const std::vector<unsigned> cpus = engine::Eal::allowed_cpus();
  const unsigned cpu = cpus.empty() ? 0 : cpus[job_.local_rank() % cpus.size()];
  // Its own memory cap and file prefix: processes on one host never share DPDK's runtime files.
  const std::uint64_t mb = (m.pool_bytes >> 20) + 128;
  std::vector<std::string> a = {"-l", std::to_string(cpu), "--file-prefix", eal_file_prefix(job_.rank()),
                                "-m", std::to_string(mb)};
  // A virtual port (memif, the one-host recipe) runs without hugepages; a NIC DMAs from
  // hugepages when there are any.
  const bool vdev = o_.port.rfind("net_", 0) == 0;
  if (vdev || !engine::Eal::hugepages_available()) a.emplace_back("--no-huge");
  if (vdev)
    a.emplace_back("--no-pci");
  else
    a.insert(a.end(), {"-a", o_.port.substr(0, o_.port.find(','))});
  return a;
}

Status RankProcess::open(const SizeSchedule& largest, const MemoryPlan& m) {
  if (Status s = engine::MbufPool::create(
          engine::PoolConfig{"coll_pool", m.pool_mbufs, 256, static_cast<std::uint16_t>(m.mbuf_data_room), -1}, pool_);
      !s.ok())
    return Status::error(s.code(), s.message() + " (" + m.text() + ")");
  engine::PortConfig pc;
  pc.devargs = o_.port;
  pc.rx_pool = pool_.get();
  Status err;
  port_ = engine::Port::open(pc, err);
  if (!port_) return Status::error(err.code(), "--port " + o_.port + ": " + err.message());
  if (Status s = port_->wait_link_up(static_cast<std::uint32_t>(std::max(o_.timeout_s, 10.0) * 1000)); !s.ok())
    return Status::error(s.code(), "--port " + o_.port + ": link not up (is the switch there?): " + s.message());
  if (Status s = port_->hold_peer_events(2000); !s.ok()) return s;
  std::uint32_t ip = 0;
  (void)parse_ipv4(o_.ip_base, ip);
  ip += first_;
  shared_ = SharedPort::create(port_->id(), ip, k_, err);
  if (!shared_) return err;
  // The endpoints send into rings, so the port's own limits are checked here: zero-copy TX sends
  // chained mbufs (the port must take them), and virtio_user's peer reads only DPDK memory.
  rte_eth_dev_info info{};
  const bool have_info = rte_eth_dev_info_get(port_->id(), &info) == 0;
  const bool zero_copy = have_info && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0 &&
                         (info.driver_name == nullptr || std::strcmp(info.driver_name, "net_virtio_user") != 0);
  const rte_ether_addr mac = port_->mac();
  for (std::uint32_t i = 0; i < k_; ++i) {
    LocalRank l;
    l.mem = std::make_unique<engine::MemoryRegistry>();
    engine::EndpointConfig ec;
    ec.queues.port_id = port_->id();
    ec.queues.tx_ring = shared_->ring(i);
    ec.queues.pool = pool_.get();
    ec.queues.memory = l.mem.get();
    ec.transport.zero_copy_tx = zero_copy;
    // The port's MAC, and an address of its own: one NIC port with K addresses.
    std::memcpy(ec.addresses.local.mac, mac.addr_bytes, 6);
    for (int b = 0; b < 4; ++b) ec.addresses.local.ip[b] = static_cast<std::uint8_t>((ip + i) >> (24 - 8 * b));
    ec.addresses.dscp = o_.dscp;
    ec.transport.max_qps = (o_.ranks - 1) * o_.qps_per_peer;
    ec.dcqcn.reaction_point = o_.cc == "dcqcn";
    ec.dcqcn.params = o_.dcqcn;
    ec.pfc.priority = static_cast<std::uint8_t>(o_.dscp / 8);
    // The link the PFC quanta count in: the port's (a ring has none to ask).
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port_->id(), &link) == 0 && link.link_speed != 0 &&
        link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
      ec.pfc.link_bps = static_cast<double>(link.link_speed) * 1e6;
    l.ep = engine::RcEndpoint::create(ec, err);
    if (!l.ep) return err;
    l.rank = CollRank::create(rank_config(o_, first_ + i), largest, *l.ep, *l.mem, err);
    if (!l.rank) return err;
    // A PCI NIC DMAs from the rank's buffers (zero-copy TX): map them for it (a vdev needs nothing).
    if (have_info && info.device != nullptr)
      if (Status s = l.mem->dma_map(info.device); !s.ok()) return s;
    ranks_.push_back(l.rank.get());
    local_.push_back(std::move(l));
  }
  return Status();
}

void RankProcess::poll_once() {
  const std::uint32_t moved = shared_->poll(rte_rdtsc(), ranks_);
  // More processes than CPUs on this host: an idle poll gives the CPU to the one that has work.
  if (moved == 0 && job_.local_size() > engine::Eal::allowed_cpus().size()) sched_yield();
}

// Between MPI probes: the port keeps moving (peers still need our ACKs), heartbeats go out, and
// rank 0 reads them.
void RankProcess::keep_polling() {
  poll_once();
  const double now = now_s();
  if (job_.rank() == 0) {
    job_.take_heartbeats([this, now](std::uint32_t from, const Bytes& b) {
      Reader rd{b};
      const std::uint32_t it = rd.u32();
      const std::uint32_t count = rd.u32();
      if (rd.bad || it != iteration_ || count != k_ || std::uint64_t{from + 1} * k_ > watch_.size())
        return;  // late news of another iteration, or not a process of this job
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint8_t* flags = rd.take(2);
        const std::uint32_t quiet_ms = rd.u32();
        const std::uint8_t* len = rd.take(2);
        const std::uint8_t* text = len == nullptr ? nullptr : rd.take(std::size_t{len[0]} << 8 | len[1]);
        if (rd.bad) return;
        Watch& w = watch_[from * k_ + i];
        w.last_word_s = now;
        w.done = flags[0] != 0;
        w.failed = flags[1] != 0;
        w.quiet_s = quiet_ms / 1e3;
        w.text.assign(reinterpret_cast<const char*>(text), std::size_t{len[0]} << 8 | len[1]);
        for (char& c : w.text)
          if (c < 0x20 || c > 0x7e) c = '?';
      }
    });
  } else if (now >= next_beat_s_) {
    next_beat_s_ = now + kHeartbeatS;
    job_.heartbeat(heartbeat_bytes(iteration_, local_, rte_rdtsc(), tsc_per_us_));
  }
}

std::string RankProcess::process_text(std::uint32_t process) const {
  if (k_ == 1) return "rank " + std::to_string(process);
  return "process " + std::to_string(process) + " (ranks " + std::to_string(process * k_) + ".." +
         std::to_string(process * k_ + k_ - 1) + ")";
}

std::vector<std::uint32_t> RankProcess::ranks_of(const std::vector<std::uint32_t>& processes) const {
  std::vector<std::uint32_t> r;
  for (std::uint32_t p : processes)
    for (std::uint32_t i = 0; i < k_; ++i) r.push_back(p * k_ + i);
  return r;
}

std::string RankProcess::verdict(const std::vector<std::uint32_t>& missing, const char* what) const {
  const double now = now_s();
  for (std::uint32_t r : missing)
    if (r >= watch_.size()) return std::string("rank ") + std::to_string(r) + " did not arrive at '" + what + "'";
  // A rank whose process fell silent stopped (SIGSTOP, a dead host): it is the one to name (the
  // first of its process; its siblings went silent with it).
  int silent = -1;
  for (std::uint32_t r : missing)
    if (process_of(r) != 0 && now - watch_[r].last_word_s > kSilentS &&
        (silent < 0 || watch_[r].last_word_s < watch_[static_cast<std::size_t>(silent)].last_word_s))
      silent = static_cast<int>(r);
  char line[480];
  if (silent >= 0) {
    const auto r = static_cast<std::size_t>(silent);
    const std::uint32_t p = process_of(static_cast<std::uint32_t>(r));
    const std::string which = k_ == 1 ? "" : ", " + process_text(p);
    std::snprintf(line, sizeof line,
                  "rank %d stopped: no word from its process (pid %u on %s%s) for %.1f s at '%s' (%zu of %u ranks "
                  "not done)",
                  silent, pids_[p], hosts_[p].c_str(), which.c_str(), now - watch_[r].last_word_s, what, missing.size(),
                  o_.ranks);
    return line;
  }
  // Every missing rank still talks: the one that made no progress for longest.
  int quiet = -1;
  for (std::uint32_t r : missing)
    if (quiet < 0 || watch_[r].quiet_s > watch_[static_cast<std::size_t>(quiet)].quiet_s) quiet = static_cast<int>(r);
  if (quiet < 0) return std::string("no rank missing at '") + what + "'";
  const Watch& w = watch_[static_cast<std::size_t>(quiet)];
  const std::string which =
      k_ == 1 ? "" : " (process " + std::to_string(process_of(static_cast<std::uint32_t>(quiet))) + ")";
  std::snprintf(line, sizeof line,
                "rank %d%s stalled: no progress for %.1f s at '%s' (%zu of %u ranks not done); it waits for", quiet,
                which.c_str(), w.quiet_s, what, missing.size(), o_.ranks);
  return line + w.text;
}

Status RankProcess::hello() {
  // Mine: pid, host, parameters, then each local rank's card.
  Bytes mine;
  put32(mine, static_cast<std::uint32_t>(getpid()));
  std::string host = job_.host().substr(0, kMaxHostBytes);
  put32(mine, static_cast<std::uint32_t>(host.size()));
  mine.insert(mine.end(), host.begin(), host.end());
  const std::vector<RunParam> params = run_params(o_, o_.ranks);
  const Bytes pb = encode_params(params);
  put32(mine, static_cast<std::uint32_t>(pb.size()));
  mine.insert(mine.end(), pb.begin(), pb.end());
  for (const LocalRank& l : local_) {
    const Bytes card = encode_card(l.rank->card(), o_.ranks);
    put32(mine, static_cast<std::uint32_t>(card.size()));
    mine.insert(mine.end(), card.begin(), card.end());
  }
  // Rank 0 checks every process's and answers with every pid, host and card; a card is checked
  // by whoever reads it (rank 0 too is a peer).
  auto decide = [&](const std::vector<Bytes>& all, Bytes& reply) -> Status {
    for (std::uint32_t p = 0; p < all.size(); ++p) {
      Reader rd{all[p]};
      const std::uint32_t pid = rd.u32();
      const std::uint32_t hl = rd.u32();
      const std::uint8_t* h = hl <= kMaxHostBytes ? rd.take(hl) : (rd.bad = true, nullptr);
      const std::uint32_t pl = rd.u32();
      const std::uint8_t* pp = rd.take(pl);
      if (rd.bad) return Status::error(StatusCode::kPeer, "bootstrap: " + process_text(p) + "'s hello is malformed");
      // Its parameters first: a process with another --ranks-per-process sends another count of cards.
      if (Status e = compare_params(params, pp, pl, p * k_); !e.ok())
        return k_ == 1 ? e.context("bootstrap: ")
                       : Status::error(e.code(), "bootstrap: " + e.message() + " (" + process_text(p) + ")");
      put32(reply, pid);
      put32(reply, hl);
      reply.insert(reply.end(), h, h + hl);
      for (std::uint32_t i = 0; i < k_; ++i) {
        const std::uint32_t cl = rd.u32();
        const std::uint8_t* c = rd.take(cl);
        if (rd.bad) return Status::error(StatusCode::kPeer, "bootstrap: " + process_text(p) + "'s hello is malformed");
        RankCard rc;
        if (Status e = decode_card(c, cl, o_.ranks, p * k_ + i, rc); !e.ok()) return e.context("bootstrap: ");
        put32(reply, cl);
        reply.insert(reply.end(), c, c + cl);
      }
      if (rd.at != all[p].size())
        return Status::error(StatusCode::kPeer, "bootstrap: " + process_text(p) + "'s hello is malformed");
    }
    return Status();
  };
  auto missing = [&](const std::vector<std::uint32_t>& m) {
    std::string s = "bootstrap:";
    for (std::uint32_t p : m) s += " " + process_text(p);
    return s + " did not arrive within " + std::to_string(static_cast<int>(std::max(o_.timeout_s, 60.0))) +
           " s (their port or EAL did not come up)";
  };
  Bytes reply;
  // Processes start at their own pace (EAL, the port's link): the wait is the larger of --timeout and 60 s.
  if (Status s = job_.exchange(
          "hello", mine, std::max(o_.timeout_s, 60.0), 5, [this] { poll_once(); }, decide, missing, reply);
      !s.ok())
    return s;
  std::vector<RankCard> cards(o_.ranks);
  Reader rd{reply};
  for (std::uint32_t p = 0; p < job_.size(); ++p) {
    const std::uint32_t pid = rd.u32();
    const std::uint32_t hl = rd.u32();
    const std::uint8_t* h = hl <= kMaxHostBytes ? rd.take(hl) : (rd.bad = true, nullptr);
    if (rd.bad) return Status::error(StatusCode::kPeer, "bootstrap: rank 0's list of cards is malformed");
    pids_.push_back(pid);
    hosts_.emplace_back(reinterpret_cast<const char*>(h), hl);
    for (std::uint32_t i = 0; i < k_; ++i) {
      const std::uint32_t cl = rd.u32();
      const std::uint8_t* c = rd.take(cl);
      if (rd.bad) return Status::error(StatusCode::kPeer, "bootstrap: rank 0's list of cards is malformed");
      if (Status e = decode_card(c, cl, o_.ranks, p * k_ + i, cards[p * k_ + i]); !e.ok())
        return e.context("bootstrap: ");
    }
  }
  if (rd.at != reply.size()) return Status::error(StatusCode::kPeer, "bootstrap: rank 0's list of cards is too long");
  // Everyone spoke a moment ago: rank 0's watch starts here.
  watch_.assign(o_.ranks, Watch{now_s(), 0, false, false, {}});
  for (LocalRank& l : local_)
    if (Status s = l.rank->connect(cards); !s.ok()) return s;
  Bytes none;
  return job_.exchange(
      "connected", {}, std::max(o_.timeout_s, 60.0), 5, [this] { keep_polling(); },
      [](const std::vector<Bytes>&, Bytes&) { return Status(); },
      [this](const std::vector<std::uint32_t>& m) { return verdict(ranks_of(m), "connected"); }, none);
}

bool RankProcess::all_done() const {
  for (const LocalRank& l : local_)
    if (!l.rank->done()) return false;
  return true;
}

Status RankProcess::run_iteration(std::uint32_t it, const char* size_text) {
  for (LocalRank& l : local_) l.rank->prepare(it);
  iteration_ = it;
  const auto pass = [](const std::vector<Bytes>&, Bytes&) { return Status(); };
  Bytes none;
  char what[96];
  std::snprintf(what, sizeof what, "%s iteration %u start", size_text, it);
  // Everyone was alive a moment ago: the watch starts from here.
  const double t0 = now_s();
  watch_.assign(o_.ranks, Watch{t0, 0, false, false, {}});
  if (Status s = job_.exchange(
          what, {}, o_.timeout_s, 2 + o_.timeout_s / 2, [this] { keep_polling(); }, pass,
          [this, &what](const std::vector<std::uint32_t>& m) { return verdict(ranks_of(m), what); }, none);
      !s.ok())
    return s;
  for (Watch& w : watch_) w.last_word_s = now_s();
  const double start = now_s();
  const std::uint64_t start_tsc = rte_rdtsc();
  for (LocalRank& l : local_) l.rank->start(start_tsc);
  std::snprintf(what, sizeof what, "%s iteration %u", size_text, it);
  // Until this process's ranks are done: polling, heartbeats; rank 0 watches the clock for everyone.
  // A failed QP (its retries spent on a peer that stopped answering, most often) is news of a
  // rank that stopped: rank 0 waits until that rank's silence shows, then names both.
  double failure_seen_s = 0;
  std::string failure;
  const bool root = job_.rank() == 0;
  while (!all_done()) {
    keep_polling();
    const double now = now_s();
    if (root && failure.empty()) {
      for (std::uint32_t i = 0; i < k_ && failure.empty(); ++i)
        if (local_[i].rank->failed()) failure = "rank " + std::to_string(i) + " failed: " + local_[i].rank->failure();
      for (std::uint32_t r = k_; r < o_.ranks && failure.empty(); ++r)
        if (watch_[r].failed) failure = "rank " + std::to_string(r) + " failed: " + watch_[r].text;
      if (!failure.empty()) failure_seen_s = now;
    }
    const bool failure_due = !failure.empty() && now - failure_seen_s > kSilentS + 0.5;
    if (failure_due || now - start > o_.timeout_s + (root ? 0 : 2 + o_.timeout_s / 2)) {
      if (!root)
        return Status::error(StatusCode::kTimeout, process_text(job_.rank()) +
                                                       ": not done past --timeout and no word from rank 0 (which "
                                                       "names the stalled rank; without its line, rank 0 stopped)");
      // Rank 0's own ranks, as their heartbeats would say.
      const std::uint64_t tsc = rte_rdtsc();
      for (std::uint32_t i = 0; i < k_; ++i) {
        const CollRank& r = *local_[i].rank;
        watch_[i].done = r.done();
        watch_[i].quiet_s = static_cast<double>(tsc - r.last_progress_tsc()) / (tsc_per_us_ * 1e6);
        watch_[i].text = r.waiting_for();
      }
      std::vector<std::uint32_t> not_done;
      for (std::uint32_t r = 0; r < o_.ranks; ++r)
        if (!watch_[r].done) not_done.push_back(r);
      const std::string v = verdict(not_done, what);
      return Status::error(failure.empty() ? StatusCode::kTimeout : StatusCode::kPeer,
                           failure.empty() ? v : v + "; " + failure);
    }
    if (engine::stop_requested()) return Status::error(StatusCode::kBadState, "interrupted");
  }
  for (LocalRank& l : local_) l.rank->finish_iteration(tsc_per_us_);
  if (root)
    for (std::uint32_t i = 0; i < k_; ++i) watch_[i].done = true;
  // The end: a barrier whose deadline is what is left of the iteration's --timeout.
  const double left = std::max(0.1, o_.timeout_s - (now_s() - start));
  std::snprintf(what, sizeof what, "%s iteration %u end", size_text, it);
  return job_.exchange(
      what, {}, left, 2 + o_.timeout_s / 2, [this] { keep_polling(); }, pass,
      [this, &what](const std::vector<std::uint32_t>& m) { return verdict(ranks_of(m), what); }, none);
}

Status RankProcess::run_placement(const SizeSchedule& s, PlacementResult& out) {
  struct Before {
    std::uint64_t cnps = 0, handled = 0, pauses = 0;
    std::vector<PeerFigures> peers;
  };
  std::vector<Before> before;
  for (LocalRank& l : local_) {
    if (Status st = l.rank->set_size(&s); !st.ok()) return st;
    l.rank->reset_stats();
    const auto& c = l.ep->counters();
    before.push_back({c.np_cnp_sent, c.rp_cnp_handled, c.pfc_pause_frames, l.rank->peer_figures(tsc_per_us_)});
  }
  char size_text[64];
  std::snprintf(size_text, sizeof size_text, "%llu B%s", static_cast<unsigned long long>(s.params.plan.size_bytes),
                s.in_place ? " in place" : "");
  const std::uint32_t total = o_.warmup_iters + o_.iters;
  for (std::uint32_t i = 0; i < total; ++i)
    if (Status st = run_iteration(iteration_ + 1, size_text); !st.ok()) return st;
  // Every rank's figures to rank 0 (its QP counters: this placement's own), a process's together
  // with its endpoints' totals.
  nlohmann::json j;
  j["ranks"] = nlohmann::json::array();
  std::vector<const engine::RcEndpoint*> eps;
  for (std::size_t i = 0; i < local_.size(); ++i) {
    const LocalRank& l = local_[i];
    RankFigures mine;
    const RankSizeStats& st = l.rank->stats();
    mine.iter_us = st.iter_us;
    mine.wrong = st.wrong;
    mine.wrong_on_arrival = st.wrong_on_arrival;
    mine.peers = l.rank->peer_figures(tsc_per_us_);
    for (PeerFigures& f : mine.peers)
      for (const PeerFigures& b : before[i].peers)
        if (b.peer == f.peer) {
          f.retransmitted_packets -= b.retransmitted_packets;
          f.naks_received -= b.naks_received;
          f.local_ack_timeouts -= b.local_ack_timeouts;
        }
    const auto& c = l.ep->counters();
    mine.cnps_sent = c.np_cnp_sent - before[i].cnps;
    mine.cnps_handled = c.rp_cnp_handled - before[i].handled;
    mine.pfc_pauses = c.pfc_pause_frames - before[i].pauses;
    j["ranks"].push_back(nlohmann::json::parse(figures_text(mine)));
    eps.push_back(l.ep.get());
  }
  const EndpointTotals t = endpoint_totals(eps);
  j["totals"] = {{"hw", t.hw_counters}, {"drops", t.drop_reasons}, {"tx", {t.tx_alloc_failures, t.tx_backlog_drops}}};
  const std::string text = j.dump();
  const Bytes b(text.begin(), text.end());
  auto decide = [&](const std::vector<Bytes>& all, Bytes&) -> Status {
    std::vector<RankFigures> figs(o_.ranks);
    EndpointTotals sum;
    for (std::uint32_t p = 0; p < all.size(); ++p) {
      try {
        const nlohmann::json pj = nlohmann::json::parse(all[p].begin(), all[p].end());
        const nlohmann::json& rj = pj.at("ranks");
        if (!rj.is_array() || rj.size() != k_)
          return Status::error(StatusCode::kPeer, process_text(p) + "'s figures: not " + std::to_string(k_) + " ranks");
        for (std::uint32_t i = 0; i < k_; ++i)
          if (Status e = parse_figures(rj[i].dump(), p * k_ + i, o_.ranks, total, figs[p * k_ + i]); !e.ok()) return e;
        // The endpoint totals are cumulative: the last placement's are the run's.
        const nlohmann::json& tj = pj.at("totals");
        EndpointTotals et;
        for (const auto& [k, v] : tj.at("hw").items())
          if (v.is_number_unsigned()) et.hw_counters[k] = v;
        for (const auto& [k, v] : tj.at("drops").items())
          if (v.is_number_unsigned()) et.drop_reasons[k] = v;
        et.tx_alloc_failures = tj.at("tx").at(0).get<std::uint64_t>();
        et.tx_backlog_drops = tj.at("tx").at(1).get<std::uint64_t>();
        add_totals(sum, et);
      } catch (const nlohmann::json::exception& e) {
        return Status::error(StatusCode::kPeer, process_text(p) + "'s figures: unreadable");
      }
    }
    out = combine_figures(figs, o_.warmup_iters, s);
    totals_ = sum;
    return Status();
  };
  Bytes none;
  return job_.exchange(
      "figures", b, o_.timeout_s, 2 + o_.timeout_s / 2, [this] { keep_polling(); }, decide,
      [this](const std::vector<std::uint32_t>& m) { return verdict(ranks_of(m), "figures"); }, none);
}

void RankProcess::teardown() {
  for (LocalRank& l : local_)
    if (l.ep) l.ep->finish();
  // Frames still queued between the ranks and the port may point into the ranks' buffers.
  shared_.reset();
  ranks_.clear();
  for (LocalRank& l : local_) l.rank.reset();
  for (LocalRank& l : local_) l.ep.reset();
  if (port_) port_->stop();
  port_.reset();
  local_.clear();
  pool_ = engine::MbufPool();  // before EAL goes
}

[[noreturn]] void RankProcess::end_job(const Status& s, int code) {
  std::fprintf(stderr, "droce-coll: %s\n", s.message().c_str());
  job_.abort(code);
}

int RankProcess::run(engine::SplitArgs& split) {
  const std::vector<std::uint64_t> sizes = o_.sizes();
  const SizeSchedule largest = SizeSchedule::build(schedule_params(o_, sizes.back()), false);
  // This process holds K ranks: the plan of a K-rank share of the lab (their buffers, a pool
  // for K endpoints).
  MemoryPlan mem = plan_memory(o_, largest);
  mem.pool_mbufs = 8192 * std::min<std::uint32_t>(k_, 8) - 1;
  mem.pool_bytes = std::uint64_t{mem.pool_mbufs} * (mem.mbuf_data_room + 128 + 64);
  if (split.eal.empty()) split.eal = default_eal(mem);
  engine::install_stop_signals();
  Status err;
  eal_ = engine::Eal::init("droce-coll", split.eal, err);
  if (!eal_) end_job(Status::error(err.code(), process_text(job_.rank()) + ": " + err.message()), 1);
  tsc_per_us_ = static_cast<double>(rte_get_tsc_hz()) / 1e6;
  if (Status s = open(largest, mem); !s.ok())
    end_job(Status::error(s.code(), process_text(job_.rank()) + ": " + s.message()), 1);
  if (Status s = hello(); !s.ok()) end_job(s, s.code() == StatusCode::kInvalidArgument ? 2 : 1);
  const bool root = job_.rank() == 0;
  if (root && !o_.quiet)
    std::printf("# %s (%s)\n", mem.text().c_str(),
                k_ == 1 ? "per rank" : ("per process of " + std::to_string(k_) + " ranks").c_str());
  if (root) print_table_header(o_);
  RunSummary sum;
  sum.schedule_matrix.assign(std::size_t{o_.ranks} * o_.ranks, 0);
  for (std::uint64_t bytes : sizes) {
    SizeResult r;
    r.requested_bytes = bytes;
    r.plan = schedule_params(o_, bytes).plan;
    for (bool in_place : {false, true}) {
      if (!placement_runs(o_, in_place)) continue;
      const SizeSchedule ss = SizeSchedule::build(schedule_params(o_, bytes), in_place);
      if (Status s = run_placement(ss, in_place ? r.in_place : r.out_of_place); !s.ok()) {
        if (root && !sum.sizes.empty()) print_summary(o_, sum, nullptr, nullptr);
        end_job(s, 1);
      }
      const auto m = traffic_matrix(ss.schedule, dtype_bytes(o_.dtype));
      for (std::size_t i = 0; i < m.size(); ++i) sum.schedule_matrix[i] += m[i] * (o_.warmup_iters + o_.iters);
    }
    sum.sizes.push_back(r);
    if (root) print_table_row(o_, r);
  }
  int rc = 0;
  if (root) {
    rc = print_summary(o_, sum, nullptr, nullptr) ? 0 : 1;
    if (!o_.json.empty()) {
      nlohmann::json ranks = nlohmann::json::array();
      for (std::uint32_t r = 0; r < o_.ranks; ++r)
        ranks.push_back(
            {{"rank", r}, {"process", process_of(r)}, {"pid", pids_[process_of(r)]}, {"host", hosts_[process_of(r)]}});
      const nlohmann::json mpi = {
          {"processes", job_.size()}, {"ranks_per_process", k_}, {"looped_frames", shared_->looped()},
          {"port", o_.port},          {"ip_base", o_.ip_base},   {"ranks", ranks}};
      if (Status e = write_json(o_, sum, nullptr, nullptr, totals_, mpi); !e.ok()) {
        std::fprintf(stderr, "droce-coll: %s\n", e.message().c_str());
        rc = 1;
      }
    }
  }
  // The end: nobody stops its port while a peer may still need an ACK from it.
  Bytes verdict_bytes;
  if (Status s = job_.exchange(
          "end", {}, o_.timeout_s, 2 + o_.timeout_s / 2, [this] { keep_polling(); },
          [rc](const std::vector<Bytes>&, Bytes& reply) {
            reply.push_back(static_cast<std::uint8_t>(rc));
            return Status();
          },
          [this](const std::vector<std::uint32_t>& m) { return verdict(ranks_of(m), "end"); }, verdict_bytes);
      !s.ok())
    end_job(s, 1);
  teardown();
  eal_.reset();
  return rc;
}

}  // namespace

int run_mpi_rank(Options& o, engine::SplitArgs& split) {
  // Refusals before MPI and EAL start, printed once (by the process that will be rank 0).
  const char* wr = std::getenv("OMPI_COMM_WORLD_RANK");
  const bool first = wr == nullptr || std::strcmp(wr, "0") == 0;
  auto refuse = [first](const std::string& m) {
    if (first) std::fprintf(stderr, "droce-coll: %s\n", m.c_str());
    return 2;
  };
  // mpirun's processes, each holding K ranks: the world is their product.
  const std::uint32_t procs = mpirun_world_size();
  const std::uint32_t k = o.ranks_per_process;
  const std::uint64_t world = std::uint64_t{procs} * k;
  const std::string k_text = k == 1 ? "" : " x --ranks-per-process " + std::to_string(k);
  if (procs != 0 && (world < 2 || world > kMaxRanks))
    return refuse("under mpirun: " + std::to_string(procs) + " processes" + k_text + " = " + std::to_string(world) +
                  " ranks; droce-coll runs 2.." + std::to_string(kMaxRanks) + " ranks (mpirun -np" +
                  (k == 1 ? "" : " x --ranks-per-process") + ")");
  if (o.ranks_given && k > 1 && o.ranks % k != 0)
    return refuse("--ranks " + std::to_string(o.ranks) + ": not a multiple of --ranks-per-process " +
                  std::to_string(k) + " (every process holds " + std::to_string(k) + " ranks)");
  if (o.ranks_given && procs != 0 && o.ranks != world)
    return refuse(k == 1 ? "--ranks " + std::to_string(o.ranks) + ": under mpirun the ranks are the processes (-np " +
                               std::to_string(procs) + ")"
                         : "--ranks " + std::to_string(o.ranks) + ": under mpirun the ranks are -np " +
                               std::to_string(procs) + k_text + " = " + std::to_string(world) + " (-np " +
                               std::to_string(o.ranks / k) + " for " + std::to_string(o.ranks) + ")");
  // Explicit EAL options go to every process unchanged: each needs its own runtime files.
  bool prefix_given = false;
  for (const std::string& a : split.eal) prefix_given = prefix_given || a.rfind("--file-prefix", 0) == 0;
  const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (prefix_given && local_size != nullptr && std::strtoul(local_size, nullptr, 10) > 1)
    return refuse(
        "--file-prefix: every process on this host would take the same one (mpirun passes EAL options "
        "unchanged); leave it out and each process takes its own");
  if (!o.lab_only_given.empty())
    return refuse(o.lab_only_given.front() +
                  ": the one-process lab's option; under mpirun the fabric is outside droce-coll (droce-switch's "
                  "options, or the NICs')");
  if (o.port.empty())
    return refuse(
        "under mpirun every rank needs its own port: --port DEVARGS (e.g. "
        "net_memif0,role=client,socket=/run/coll-{rank}.sock; scripts/coll-mpi.sh)");
  Status err;
  std::unique_ptr<MpiJob> job = MpiJob::init(nullptr, nullptr, err);
  if (!job) return refuse(err.message());
  if (procs == 0) {  // a launcher without Open MPI's variables: the size MPI says
    o.ranks = job->size() * k;
    if (o.ranks < 2 || o.ranks > kMaxRanks) return refuse("under mpirun: droce-coll runs 2..64 ranks");
  }
  if (!split.eal.empty() && !prefix_given)
    split.eal.insert(split.eal.end(), {"--file-prefix", eal_file_prefix(job->rank())});
  // One of several ports ("A|B|C": the host's NICs, one per local rank in turn), then {rank} and
  // {local_rank} replaced: each process its own.
  if (o.port.find('|') != std::string::npos) {
    std::vector<std::string> ports;
    for (std::size_t from = 0;;) {
      const std::size_t bar = o.port.find('|', from);
      ports.push_back(o.port.substr(from, bar - from));
      if (bar == std::string::npos) break;
      from = bar + 1;
    }
    o.port = ports[job->local_rank() % ports.size()];
    if (o.port.empty()) return refuse("--port: an empty port in the list");
  }
  for (const auto& [key, v] :
       {std::pair<std::string, std::uint32_t>{"{rank}", job->rank()}, {"{local_rank}", job->local_rank()}})
    for (std::size_t at; (at = o.port.find(key)) != std::string::npos;)
      o.port.replace(at, key.size(), std::to_string(v));
  RankProcess p(o, *job);
  return p.run(split);
}

}  // namespace droce::coll
