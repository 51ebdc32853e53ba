// The workers' test lab, shared by test_workers.cc and test_workers_cm.cc: two sides of N workers
// joined by net_ring (or net_memif) queues, 64 QPs per side with their senders and checking
// receivers, and the single-threaded clock the tests step.
#pragma once

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/core/capture.h"
#include "engine/core/memory_region.h"
#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "engine/core/stop_signal.h"
#include "engine/core/worker.h"
#include "engine/lab/link_impairment.h"
#include "engine/workers/worker_group.h"
#include "protocols/cm/cm_messages.h"
#include "protocols/cm/rdma_cm_header.h"
#include "protocols/wire/pfc.h"
#include "protocols/wire/ud.h"

namespace droce::engine::workers_lab {

namespace cm = droce::cm;
namespace rc = droce::rc;
namespace wire = droce::wire;

constexpr std::uint32_t kQps = 64;
constexpr int kMsgs = 24;                // per QP
constexpr int kWindow = 8;               // messages in flight per QP
constexpr std::uint32_t kMaxMsg = 3000;  // up to three 1024-byte packets

inline std::uint8_t pat(std::uint32_t qp, int m, std::uint32_t i) {
  return static_cast<std::uint8_t>(qp * 131 + static_cast<std::uint32_t>(m) * 31 + i * 7 + (i >> 8));
}
inline std::uint32_t size_of(std::uint32_t qp, int m) {
  return 1 + (qp * 977 + static_cast<std::uint32_t>(m) * 1237) % kMaxMsg;
}

inline wire::L2L3Address addr(std::uint8_t host) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[5] = host;
  a.ip[0] = 10;
  a.ip[3] = host;
  return a;
}

inline std::string unique(const std::string& tag) {
  static std::atomic<unsigned> serial{0};
  return tag + std::to_string(serial.fetch_add(1));
}

// One side of the lab: a net_ring port with N queues, its pools, registries and workers.
struct Side {
  std::vector<MbufPool> pools;
  std::vector<std::unique_ptr<MemoryRegistry>> memories;
  std::unique_ptr<Port> port;
  std::unique_ptr<WorkerGroup> group;
  std::vector<std::unique_ptr<LinkImpairment>> impairments;
};

// Two sides joined by N ring pairs: side A's TX queue q is side B's RX queue q and back.
struct WorkersLab {
  std::uint16_t n;
  std::vector<rte_ring*> ab, ba;
  Side a, b;

  std::uint32_t steer_ring;
  std::string memif_socket;
  enum class Link { kRing, kMemif };
  PcapngCapture* capture_a;
  WorkersLab(const std::string& tag, std::uint16_t workers, double loss, std::uint32_t steer_ring_size = 4096,
             Link link = Link::kRing, PcapngCapture* capture_side_a = nullptr)
      : n(workers), steer_ring(steer_ring_size), capture_a(capture_side_a) {
    const std::string base = unique(tag);
    std::string da, db;
    if (link == Link::kRing) {
      for (std::uint16_t q = 0; q < n; ++q) {
        ab.push_back(rte_ring_create((base + "ab" + std::to_string(q)).c_str(), 1024, SOCKET_ID_ANY,
                                     RING_F_SP_ENQ | RING_F_SC_DEQ));
        ba.push_back(rte_ring_create((base + "ba" + std::to_string(q)).c_str(), 1024, SOCKET_ID_ANY,
                                     RING_F_SP_ENQ | RING_F_SC_DEQ));
        REQUIRE(ab.back() != nullptr);
        REQUIRE(ba.back() != nullptr);
      }
      REQUIRE(rte_eth_from_rings((base + "A").c_str(), ba.data(), n, ab.data(), n, SOCKET_ID_ANY) >= 0);
      REQUIRE(rte_eth_from_rings((base + "B").c_str(), ab.data(), n, ba.data(), n, SOCKET_ID_ANY) >= 0);
      da = base + "A";
      db = base + "B";
    } else {
      // Server and client of one memif socket, both in this process; N queue pairs each.
      memif_socket = "/tmp/droce-" + base + "-" + std::to_string(getpid()) + ".sock";
      da = "net_memif_" + base + "A,role=server,id=0,socket=" + memif_socket;
      db = "net_memif_" + base + "B,role=client,id=0,socket=" + memif_socket;
    }
    open_port(a, da, base + "A", loss);
    open_port(b, db, base + "B", loss);
    REQUIRE(a.port->wait_link_up(5000).ok());
    REQUIRE(b.port->wait_link_up(5000).ok());
    // net_memif tears a port's rings down on EAL's interrupt thread when its peer disconnects; with
    // both ends in this process that would race our own teardown of the other end (DPDK then
    // reports "Invalid memory"). One hold parks that thread for the process: both ends are stopped
    // from this thread before it handles anything (see InterruptThreadHold).
    if (link == Link::kMemif) REQUIRE(a.port->hold_peer_events(5000).ok());
    make_group(a, 1, loss);
    make_group(b, 2, loss);
  }
  void open_port(Side& s, const std::string& devargs, const std::string& name, double loss) {
    PoolConfig pc;
    pc.name = name + "p";
    pc.mbufs = n <= 2 ? 8191 : 4095;
    // Unknown lcores (this thread sets up): the pools land on the caller's socket.
    REQUIRE(create_worker_pools(pc, std::vector<unsigned>(n, RTE_MAX_LCORE), s.pools).ok());
    PortConfig cfg;
    cfg.devargs = devargs;
    cfg.rx_queues = n;
    cfg.tx_queues = n;
    for (auto& p : s.pools) cfg.rx_pools.push_back(p.get());
    Status err;
    s.port = Port::open(cfg, err);
    INFO(err.message());
    REQUIRE(err.ok());
    CHECK_FALSE(s.port->offloads().rss);  // net_ring and net_memif hash nothing: the software path steers
    (void)loss;
  }
  void make_group(Side& s, std::uint8_t host, double loss) {
    Status err;
    WorkerGroupConfig wc;
    wc.workers = n;
    wc.endpoint.queues.port_id = s.port->id();
    wc.endpoint.addresses.local = addr(host);
    wc.endpoint.transport.qpn_base = 0x100;
    wc.endpoint.recording.capture = host == 1 ? capture_a : nullptr;
    wc.qps_per_worker = kQps;
    wc.steer_ring_size = steer_ring;
    for (std::uint16_t w = 0; w < n; ++w) {
      wc.pools.push_back(s.pools[w].get());
      s.memories.push_back(std::make_unique<MemoryRegistry>());
      wc.memories.push_back(s.memories.back().get());
    }
    s.group = WorkerGroup::create(wc, err);
    REQUIRE(err.ok());
    if (loss > 0) {
      for (std::uint16_t q = 0; q < n; ++q) {
        ImpairmentConfig ic;
        ic.loss = loss;
        ic.duplicate = 0.01;
        ic.reorder = 0.01;
        ic.seed = 1000u * host + q;
        s.impairments.push_back(LinkImpairment::attach(s.port->id(), q, ic, s.pools[q].get(), err));
        REQUIRE(err.ok());
      }
    }
  }
  ~WorkersLab() {
    for (Side* s : {&a, &b})
      if (s->port) s->port->stop();
    for (Side* s : {&a, &b}) {
      if (s->group) s->group->finish();
      s->impairments.clear();
      s->group.reset();
      s->port.reset();
    }
    for (auto* r : ab) rte_ring_free(r);
    for (auto* r : ba) rte_ring_free(r);
    if (!memif_socket.empty()) ::unlink(memif_socket.c_str());
  }
};

// A's end of one QP: sends kMsgs messages; runs on the thread of A's owning worker.
struct SenderQp {
  RcEndpoint* ep = nullptr;
  std::uint32_t id = 0, qpn = 0;
  std::vector<std::uint8_t> buf;
  int posted = 0, completed = 0, errors = 0;
  void step() {
    while (posted < kMsgs && posted - completed < kWindow) {
      std::uint8_t* p = buf.data() + static_cast<std::size_t>(posted % kWindow) * kMaxMsg;
      const std::uint32_t len = size_of(id, posted);
      for (std::uint32_t i = 0; i < len; ++i) p[i] = pat(id, posted, i);
      const auto seq = static_cast<std::uint32_t>(posted);
      if (!ep->send_message(qpn, p, len, seq, &seq).ok()) break;
      ++posted;
    }
    rc::Completion c[16];
    for (unsigned k = ep->poll_cq(qpn, c, 16), i = 0; i < k; ++i)
      (c[i].status == rc::WcStatus::kSuccess ? completed : errors)++;
  }
  [[nodiscard]] bool done() const { return completed == kMsgs || errors != 0; }
};

// B's end: checks every message's length, contents and order; runs on B's owning worker.
struct ReceiverQp {
  RcEndpoint* ep = nullptr;
  std::uint32_t id = 0, qpn = 0;
  int delivered = 0, corrupt = 0, out_of_order = 0;
  void step() {
    MessageView v;
    while (ep->receive_message(qpn, v)) {
      const int m = static_cast<int>(v.imm);
      out_of_order += !v.has_imm || m != delivered;
      bool ok = v.length == size_of(id, m);
      std::uint32_t off = 0;
      v.for_each_fragment([&](const std::uint8_t* p, std::uint32_t len) {
        for (std::uint32_t i = 0; ok && i < len; ++i) ok = p[i] == pat(id, m, off + i);
        off += len;
      });
      corrupt += !(ok && off == v.length);
      ++delivered;
      ep->release(v);
    }
  }
  [[nodiscard]] bool done() const { return delivered >= kMsgs; }
};

// What one thread drives: A's worker k and B's worker k, and the QP ends they own.
struct Shard {
  Worker* a = nullptr;
  Worker* b = nullptr;
  std::vector<SenderQp*> senders;
  std::vector<ReceiverQp*> receivers;
  std::atomic<bool> finished{false};
  // Set by the lcore when its loop ends: the thread that joined it reads the QPs' and workers'
  // state after an acquire of ours (EAL's own join is not visible to ThreadSanitizer).
  std::atomic<bool> stopped{false};
  // Optional: what else runs on this shard's thread (the port owners' CM consumers).
  std::function<void()> control;
  void poll(std::uint64_t now_tsc) {
    a->poll(now_tsc);
    for (auto* s : senders) s->step();
    b->poll(now_tsc);
    for (auto* r : receivers) r->step();
    if (control) control();
    if (!finished.load(std::memory_order_relaxed)) {
      bool all = true;
      for (auto* s : senders) all = all && s->done();
      for (auto* r : receivers) all = all && r->done();
      if (all) finished.store(true, std::memory_order_release);
    }
  }
  void finish() { stopped.store(true, std::memory_order_release); }  // the group finishes once every thread has stopped
};

// 64 QPs per side, QP i on A's worker i % N and on B's worker (i + b_shift) % N.
struct Traffic {
  std::vector<SenderQp> senders;
  std::vector<ReceiverQp> receivers;
  std::vector<std::unique_ptr<Shard>> shards;
  // qp_timeout: 14 (~67 ms, as rxe and perftest use) on the test's clock; the lcores run on the
  // TSC, where a descheduled peer must not use up the retries (7 x 2^17 x 4.096 us ~ 3.8 s).
  // by_cm: the QPs are left in INIT for the CM to connect (connect_by_cm).
  Traffic(WorkersLab& lab, std::uint16_t b_shift, std::uint8_t qp_timeout = 14, bool by_cm = false)
      : senders(kQps), receivers(kQps) {
    const std::uint16_t n = lab.n;
    for (std::uint16_t k = 0; k < n; ++k) {
      shards.push_back(std::make_unique<Shard>());
      shards[k]->a = &lab.a.group->worker(k);
      shards[k]->b = &lab.b.group->worker(k);
    }
    for (std::uint32_t i = 0; i < kQps; ++i) {
      const auto wa = static_cast<std::uint16_t>(i % n);
      const auto wb = static_cast<std::uint16_t>((i + b_shift) % n);
      RcEndpoint& ea = lab.a.group->worker(wa).endpoint();
      RcEndpoint& eb = lab.b.group->worker(wb).endpoint();
      rc::QpAttr qa;
      qa.timeout = qp_timeout;
      qa.sq_psn = (0xFFFFF0 + i) & 0xFFFFFF;  // PSNs wrap through 2^24 early
      rc::QpAttr qb = qa;
      qb.sq_psn = 0x100 + i;
      qb.recv_mode = rc::RecvMode::kMessageViews;
      qb.rq_depth = 16;
      SenderQp& s = senders[i];
      ReceiverQp& r = receivers[i];
      s.id = r.id = i;
      s.ep = &ea;
      r.ep = &eb;
      REQUIRE(ea.create_qp(qa, s.qpn).ok());
      REQUIRE(eb.create_qp(qb, r.qpn).ok());
      REQUIRE(lab.a.group->owner_of(s.qpn) == wa);
      REQUIRE(lab.b.group->owner_of(r.qpn) == wb);
      if (!by_cm) {
        REQUIRE(ea.connect(s.qpn, RemoteQp{addr(2), r.qpn, qb.sq_psn}).ok());
        REQUIRE(eb.connect(r.qpn, RemoteQp{addr(1), s.qpn, qa.sq_psn}).ok());
      }
      s.buf.resize(static_cast<std::size_t>(kWindow) * kMaxMsg);
      rc::MemoryRegion mr;
      REQUIRE(lab.a.memories[wa]->register_memory(s.buf.data(), s.buf.size(), rc::kAccessLocalWrite, mr).ok());
      shards[wa]->senders.push_back(&s);
      shards[wb]->receivers.push_back(&r);
    }
  }
  [[nodiscard]] bool all_finished() const {
    for (const auto& s : shards)
      if (!s->finished.load(std::memory_order_acquire)) return false;
    return true;
  }
  // Every message of every QP arrived once, in order, intact, and every send completed.
  void verify() const {
    int delivered = 0, completed = 0;
    for (std::uint32_t i = 0; i < kQps; ++i) {
      INFO("QP " << i);
      CHECK(senders[i].errors == 0);
      CHECK(senders[i].completed == kMsgs);
      CHECK(receivers[i].delivered == kMsgs);
      CHECK(receivers[i].corrupt == 0);
      CHECK(receivers[i].out_of_order == 0);
      delivered += receivers[i].delivered;
      completed += senders[i].completed;
    }
    CHECK(delivered == static_cast<int>(kQps) * kMsgs);
    CHECK(completed == static_cast<int>(kQps) * kMsgs);
  }
};

inline std::uint64_t ns_to_tsc(std::uint64_t ns) {
  return static_cast<std::uint64_t>(static_cast<double>(ns) * static_cast<double>(rte_get_tsc_hz()) / 1e9);
}

// The single-threaded tests' clock: it moves only as they step it (never behind the TSC it
// started from), so that one lab's phases never see time go back.
inline std::uint64_t& test_clock() {
  static std::uint64_t now = 0;
  now = std::max(now, rte_rdtsc());
  return now;
}

// Polls every worker in turn on this thread, on a clock that moves 5 µs per round: the ACK
// timers count rounds, not the machine's speed. The wall-clock bound only ends a hang.
inline bool run_on_this_thread(Traffic& t, int seconds = 240) {
  const std::uint64_t step = ns_to_tsc(5'000);
  std::uint64_t& now = test_clock();
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!t.all_finished()) {
    if (std::chrono::steady_clock::now() > end) return false;
    for (int r = 0; r < 64; ++r) {
      now += step;
      for (auto& s : t.shards) s->poll(now);
    }
  }
  // Quiet rounds: what is still on the rings (duplicates, late ACKs) is read and handed over.
  for (int r = 0; r < 200; ++r) {
    now += step;
    for (auto& s : t.shards) s->poll(now);
  }
  return true;
}

inline void check_steering_all_local(WorkerGroup& g) {
  const SteeringCounters s = g.steering_totals();
  CHECK(s.rx_steered_in_software == 0);
  CHECK(s.rx_steered_in == 0);
  CHECK(g.endpoint_totals().rx_frames > 0);
}

}  // namespace droce::engine::workers_lab
