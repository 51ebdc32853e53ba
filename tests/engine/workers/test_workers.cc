// WorkerGroup tests: N workers per side over net_ring ports with N queues, 64 QPs per side, 5 %
// loss with reordering and duplication; frames on the wrong queue; PFC reaching every worker; QP1,
// ARP and ND reaching the port owner from every queue.
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

namespace {

using namespace droce::engine;
namespace cm = droce::cm;
namespace rc = droce::rc;
namespace wire = droce::wire;

constexpr std::uint32_t kQps = 64;
constexpr int kMsgs = 24;                // per QP
constexpr int kWindow = 8;               // messages in flight per QP
constexpr std::uint32_t kMaxMsg = 3000;  // up to three 1024-byte packets

std::uint8_t pat(std::uint32_t qp, int m, std::uint32_t i) {
  return static_cast<std::uint8_t>(qp * 131 + static_cast<std::uint32_t>(m) * 31 + i * 7 + (i >> 8));
}
std::uint32_t size_of(std::uint32_t qp, int m) {
  return 1 + (qp * 977 + static_cast<std::uint32_t>(m) * 1237) % kMaxMsg;
}

wire::L2L3Address addr(std::uint8_t host) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[5] = host;
  a.ip[0] = 10;
  a.ip[3] = host;
  return a;
}

std::string unique(const std::string& tag) {
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

std::uint64_t ns_to_tsc(std::uint64_t ns) {
  return static_cast<std::uint64_t>(static_cast<double>(ns) * static_cast<double>(rte_get_tsc_hz()) / 1e9);
}

// The single-threaded tests' clock: it moves only as they step it (never behind the TSC it
// started from), so that one lab's phases never see time go back.
std::uint64_t& test_clock() {
  static std::uint64_t now = 0;
  now = std::max(now, rte_rdtsc());
  return now;
}

// Polls every worker in turn on this thread, on a clock that moves 5 µs per round: the ACK
// timers count rounds, not the machine's speed. The wall-clock bound only ends a hang.
bool run_on_this_thread(Traffic& t, int seconds = 240) {
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

void check_steering_all_local(WorkerGroup& g) {
  const SteeringCounters s = g.steering_totals();
  CHECK(s.rx_steered_in_software == 0);
  CHECK(s.rx_steered_in == 0);
  CHECK(g.endpoint_totals().rx_frames > 0);
}

}  // namespace

TEST_CASE("every message verified with N workers per side, 64 QPs round-robin, 5 % loss, reordering, duplication",
          "[workers]") {
  for (std::uint16_t n : {std::uint16_t{2}, std::uint16_t{4}}) {
    INFO(n << " workers");
    WorkersLab lab("wk", n, 0.05);
    Traffic t(lab, 0);
    // net_ring has no RSS table to set (its queues meet the peer's one to one): not an error.
    RssPlacement rss;
    REQUIRE(lab.b.group->place_flows_by_rss(rss).ok());
    CHECK_FALSE(rss.applied);
    CHECK(rss.flows == kQps);
    CHECK_FALSE(rss.why.empty());
    REQUIRE(run_on_this_thread(t));
    t.verify();
    // Every QP sits on the worker whose queue its frames arrive on: nothing needed steering.
    check_steering_all_local(*lab.a.group);
    check_steering_all_local(*lab.b.group);
    // The impairment was there: frames were lost, and the QPs recovered.
    std::uint64_t dropped = 0, duplicated = 0;
    for (const Side* s : {&lab.a, &lab.b})
      for (const auto& i : s->impairments) {
        dropped += i->counters().dropped;
        duplicated += i->counters().duplicated;
      }
    CHECK(dropped > 0);
    CHECK(duplicated > 0);
    // Each worker carried its share.
    for (std::uint16_t w = 0; w < n; ++w) CHECK(lab.b.group->worker(w).endpoint().counters().rx_frames > 0);
  }
}

TEST_CASE("net_memif with N queue pairs, server and client in one process: every message verified",
          "[workers][memif]") {
  for (std::uint16_t n : {std::uint16_t{2}, std::uint16_t{4}}) {
    INFO(n << " workers");
    WorkersLab lab("wm", n, 0.05, 4096, WorkersLab::Link::kMemif);
    Traffic t(lab, 0);
    REQUIRE(run_on_this_thread(t));
    t.verify();
    check_steering_all_local(*lab.a.group);
    check_steering_all_local(*lab.b.group);
  }
}

TEST_CASE("a peer that puts every QP on the wrong queue: every frame reaches its owner through the software path",
          "[workers]") {
  for (std::uint16_t n : {std::uint16_t{2}, std::uint16_t{4}}) {
    INFO(n << " workers");
    WorkersLab lab("wq", n, 0.05);
    Traffic t(lab, 1);  // B's QP i on worker (i+1) % N: A's frames arrive on B's queue i % N, and back
    REQUIRE(run_on_this_thread(t));
    t.verify();
    for (Side* s : {&lab.a, &lab.b}) {
      const SteeringCounters st = s->group->steering_totals();
      CHECK(st.rx_steered_in_software > 0);
      // Handed over == taken in: none lost between the workers, none left behind...
      CHECK(st.rx_steered_in == st.rx_steered_in_software);
      // ... and every frame the endpoints saw came that way.
      CHECK(s->group->endpoint_totals().rx_frames == st.rx_steered_in);
      CHECK(st.rx_broadcast == 0);
    }
  }
}

TEST_CASE("an owner that stops polling: its ring fills, the reader holds the frames, then RX waits; none lost",
          "[workers]") {
  WorkersLab lab("wf", 2, 0.0, 64);  // the smallest ring: two bursts
  Traffic t(lab, 1);                 // every frame on the wrong queue
  Worker& a0 = lab.a.group->worker(0);
  Worker& a1 = lab.a.group->worker(1);
  Worker& b0 = lab.b.group->worker(0);
  Worker& b1 = lab.b.group->worker(1);
  // B's worker 1 is stalled: B's worker 0 reads the frames of worker 1's QPs and hands them over
  // until the ring is full, then holds them, then stops reading its queue.
  const std::uint64_t step = ns_to_tsc(5'000);
  std::uint64_t now = rte_rdtsc();
  for (int r = 0; r < 100; ++r) {
    now += step;
    a0.poll(now);
    a1.poll(now);
    for (auto& s : t.senders) s.step();
    b0.poll(now);
  }
  CHECK(b0.steering().rx_steered_in_software == 64);  // the ring's size
  CHECK(b0.steering().steer_ring_full_waits > 0);
  CHECK(b1.steering().rx_steered_in == 0);
  const std::uint64_t read_while_stalled = b0.steering().rx_steered_in_software + b0.steering().steer_ring_full_waits;
  // Back-pressure: the reader's queue still holds frames it did not read.
  CHECK(rte_eth_rx_queue_count(lab.b.port->id(), 0) != 0);
  CHECK(read_while_stalled <= 64 + 64);
  // The owner comes back: everything arrives, in order, intact.
  REQUIRE(run_on_this_thread(t));
  t.verify();
  const SteeringCounters st = lab.b.group->steering_totals();
  CHECK(st.rx_steered_in == st.rx_steered_in_software);
  CHECK(lab.b.group->endpoint_totals().rx_frames == st.rx_steered_in);
}

TEST_CASE("a PFC pause frame on worker 0's queue pauses every worker's transmit", "[workers]") {
  WorkersLab lab("wp", 4, 0.0);
  const unsigned in_use = rte_mempool_in_use_count(lab.b.pools[0].get());
  rte_mbuf* m = rte_pktmbuf_alloc(lab.b.pools[0].get());
  REQUIRE(m != nullptr);
  wire::PfcFrame f;
  f.class_enable = 1u << 3;  // the endpoints' default priority
  f.quanta[3] = 0xFFFF;
  const std::uint8_t mac[6] = {0x02, 0, 0, 0, 0, 9};
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, wire::kPfcFrameBytes));
  REQUIRE(wire::build_pfc(mac, f, p, wire::kPfcFrameBytes) == wire::kPfcFrameBytes);
  // B's TX queue 0 is A's RX queue 0: worker 0 reads it.
  REQUIRE(rte_eth_tx_burst(lab.b.port->id(), 0, &m, 1) == 1);
  const std::uint64_t now = rte_rdtsc();
  for (std::uint16_t w = 0; w < lab.n; ++w) CHECK_FALSE(lab.a.group->worker(w).endpoint().pfc_paused());
  for (std::uint16_t w = 0; w < lab.n; ++w) lab.a.group->worker(w).poll(now);
  for (std::uint16_t w = 0; w < lab.n; ++w) {
    INFO("worker " << w);
    CHECK(lab.a.group->worker(w).endpoint().pfc_paused());
    CHECK(lab.a.group->worker(w).endpoint().counters().pfc_pause_frames == 1);
  }
  CHECK(lab.a.group->worker(0).steering().rx_broadcast == 1);
  CHECK(lab.a.group->steering_totals().rx_steered_in == lab.n - 1u);
  // Every worker gave its reference back: the frame is free again.
  CHECK(rte_mempool_in_use_count(lab.b.pools[0].get()) == in_use);
}

namespace {

// Sends `len` bytes on side B's TX queue q, which is side A's RX queue q.
void send_to_a_queue(WorkersLab& lab, std::uint16_t q, const std::uint8_t* frame, std::uint32_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(lab.b.pools[q].get());
  REQUIRE(m != nullptr);
  std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)), frame, len);
  REQUIRE(rte_eth_tx_burst(lab.b.port->id(), q, &m, 1) == 1);
}

// A's QP1 as the destination of a REQ from B's address (host 2) for rdma_cm port `port`, as
// librdmacm writes it; `len` gets the frame's length.
void req_frame_to_a(std::uint32_t comm_id, std::uint16_t port, std::uint8_t* frame, std::uint32_t room,
                    std::uint32_t& len) {
  cm::CmReq req;
  req.local_comm_id = comm_id;
  req.service_id = cm::rdma_cm_tcp_service_id(port);
  req.local_ca_guid = 0x0200000000000002ull;
  req.local_qpn = 0x99;
  req.starting_psn = 0x777;
  req.path_mtu = 3;
  req.max_cm_retries = 2;
  cm::RdmaCmHeader h;
  h.src_port = 40000;
  std::memcpy(h.src_ip, addr(2).ip, 4);
  std::memcpy(h.dst_ip, addr(1).ip, 4);
  REQUIRE(cm::write_rdma_cm_req_private(h, nullptr, 0, req.private_data) > 0);
  std::uint8_t mad[cm::kMadBytes];
  cm::encode_cm(req, std::uint64_t{comm_id} << 32, mad);
  wire::TemplateConfig tc;
  tc.local = addr(2);
  tc.remote = addr(1);
  tc.dest_qpn = wire::kGsiQpn;
  const wire::HeaderTemplate t = wire::HeaderTemplate::make(tc);
  len = wire::build_ud_send(t, wire::UdSendFields{}, mad, cm::kMadBytes, frame, room);
  REQUIRE(len > 0);
}

}  // namespace

TEST_CASE("frames for QP1, ARP and ND landing on every queue in turn reach the port owner (worker 0)",
          "[workers][cm]") {
  for (std::uint16_t n : {std::uint16_t{2}, std::uint16_t{4}}) {
    INFO(n << " workers");
    WorkersLab lab("w1", n, 0.0);
    Worker& owner = lab.a.group->worker(WorkerGroup::kPortOwner);
    const std::uint64_t now = rte_rdtsc();
    for (std::uint16_t q = 0; q < n; ++q) {
      INFO("frames on A's queue " << q);
      // A REQ for a port nobody listens on: the port owner's CM takes it and answers REJ.
      std::uint8_t frame[512];
      std::uint32_t len = 0;
      req_frame_to_a(0x1000u + q, 7000, frame, sizeof(frame), len);
      send_to_a_queue(lab, q, frame, len);
      // An ARP frame and an ICMPv6 one (ND's carrier): the port owner's neighbour table reads them.
      std::uint8_t arp[60] = {};
      arp[12] = 0x08;
      arp[13] = 0x06;
      send_to_a_queue(lab, q, arp, sizeof(arp));
      std::uint8_t nd[14 + 40 + 32] = {};
      nd[12] = 0x86;
      nd[13] = 0xDD;
      nd[14] = 0x60;
      nd[14 + 6] = 58;  // next header: ICMPv6
      send_to_a_queue(lab, q, nd, sizeof(nd));
      const std::uint64_t before = owner.endpoint().counters().rx_frames;
      // The reader polls first (it hands the frames over), then every worker.
      lab.a.group->worker(q).poll(now);
      for (std::uint16_t w = 0; w < n; ++w) lab.a.group->worker(w).poll(now);
      CHECK(owner.endpoint().cm_counters().mads_received == q + 1u);
      CHECK(owner.endpoint().cm_counters().rejects_sent == q + 1u);
      CHECK(owner.endpoint().counters().rx_frames == before + 3);
      for (std::uint16_t w = 0; w < n; ++w) {
        if (w == WorkerGroup::kPortOwner) continue;
        INFO("worker " << w);
        CHECK(lab.a.group->worker(w).endpoint().cm_counters().mads_received == 0);
        CHECK(lab.a.group->worker(w).endpoint().counters().rx_frames == 0);
      }
      CHECK(lab.a.group->worker(q).steering().rx_steered_in_software == (q == 0 ? 0u : 3u));
    }
    // Every frame another worker read went through the software path to the owner.
    CHECK(owner.steering().rx_steered_in == 3u * (n - 1u));
    // The REJs left on the owner's queue: B's worker 0 reads them (a message for no connection).
    for (std::uint16_t w = 0; w < n; ++w) lab.b.group->worker(w).poll(now);
    CHECK(lab.b.group->worker(0).endpoint().cm_counters().mads_received == n);
  }
}

namespace {

constexpr std::uint16_t kCmPort = 7471;

// The consumers of both port owners' CMs: B accepts REQ i (its private data carries i) with B's
// QP i, wherever that QP lives; both sides count their events.
struct CmConsumers {
  Traffic& t;
  RcEndpoint& a0;  // A's port owner's endpoint: its CM holds A's connections
  RcEndpoint& b0;
  std::vector<std::uint32_t> a_conns;
  // While set, B's REQs wait in `held` (connection, index) for accept_held.
  bool hold_requests = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> held;
  int accepted = 0, a_established = 0, b_established = 0, a_disconnected = 0, b_disconnected = 0, unexpected = 0;
  CmConsumers(WorkersLab& lab, Traffic& traffic)
      : t(traffic),
        a0(lab.a.group->worker(WorkerGroup::kPortOwner).endpoint()),
        b0(lab.b.group->worker(WorkerGroup::kPortOwner).endpoint()) {}
  // A's port owner asks for every QP of A, whichever worker owns it (before the workers run).
  void connect_all() {
    REQUIRE(b0.cm_listen(kCmPort).ok());
    for (auto& s : t.senders) {
      CmConnectTo to;
      to.peer = addr(2);
      to.port = kCmPort;
      to.private_data = reinterpret_cast<const std::uint8_t*>(&s.id);
      to.private_len = sizeof(s.id);
      std::uint32_t conn = 0;
      REQUIRE(a0.cm_connect(s.qpn, to, conn).ok());
      a_conns.push_back(conn);
    }
  }
  void step() {
    CmEndpointEvent e;
    while (b0.cm_next_event(e)) {
      if (e.kind == CmEndpointEventKind::kConnectRequest) {
        std::uint32_t i = 0;
        std::memcpy(&i, e.private_data, sizeof(i));
        if (hold_requests)
          held.emplace_back(e.conn, i);
        else
          accept(e.conn, i);
      } else {
        count(e, b_established, b_disconnected);
      }
    }
    while (a0.cm_next_event(e)) count(e, a_established, a_disconnected);
  }
  void accept(std::uint32_t conn, std::uint32_t i) {
    if (i < kQps && b0.cm_accept(conn, t.receivers[i].qpn).ok())
      ++accepted;
    else
      ++unexpected;
  }
  void accept_held() {
    for (const auto& [conn, i] : held) accept(conn, i);
    held.clear();
  }
  void count(const CmEndpointEvent& e, int& established, int& disconnected) {
    if (e.kind == CmEndpointEventKind::kEstablished)
      ++established;
    else if (e.kind == CmEndpointEventKind::kDisconnected)
      ++disconnected;
    else if (e.kind != CmEndpointEventKind::kClosed)
      ++unexpected;
  }
};

// Polls both sides' workers (B's port owner only when `b_owner`) and the consumers on one thread,
// on a clock that moves `step_ns` per round, until `done` or a bound that only ends a hang.
template <typename Done>
bool poll_until(WorkersLab& lab, CmConsumers& c, std::uint64_t step_ns, bool senders, bool b_owner, Done done) {
  const std::uint64_t step = ns_to_tsc(step_ns);
  std::uint64_t& now = test_clock();
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    for (int r = 0; r < 16; ++r) {
      now += step;
      for (std::uint16_t w = 0; w < lab.n; ++w) lab.a.group->worker(w).poll(now);
      if (senders)
        for (auto& s : c.t.senders) s.step();
      for (std::uint16_t w = 0; w < lab.n; ++w)
        if (b_owner || w != WorkerGroup::kPortOwner) lab.b.group->worker(w).poll(now);
      c.step();
    }
  }
  return true;
}

std::uint32_t qps_off_port_owner(WorkersLab& lab, const Traffic& t) {
  std::uint32_t n = 0;
  for (const auto& r : t.receivers) n += lab.b.group->owner_of(r.qpn) != WorkerGroup::kPortOwner;
  return n;
}

}  // namespace

TEST_CASE("RDMA-CM on every worker: the port owner's CM connects and disconnects QPs of all workers, 1 % loss",
          "[workers][cm]") {
  for (std::uint16_t n : {std::uint16_t{2}, std::uint16_t{4}}) {
    INFO(n << " workers");
    WorkersLab lab("wcm", n, 0.01);
    // A's QP i on worker i % N, B's on (i + 1) % N: each REQ, REP and RTU names a QP of another
    // worker than the one whose queue carries it.
    Traffic t(lab, 1, 14, true);
    CmConsumers c(lab, t);
    c.connect_all();
    // CM response timeouts are seconds (4.3 s, Linux's default): 1 ms a round while connecting.
    REQUIRE(poll_until(lab, c, 1'000'000, false, true,
                       [&] { return c.a_established == int{kQps} && c.b_established == int{kQps}; }));
    CHECK(c.accepted == int{kQps});
    CHECK(c.unexpected == 0);
    for (std::uint32_t i = 0; i < kQps; ++i) {
      INFO("QP " << i);
      const rc::RcQp* qa = t.senders[i].ep->qp(t.senders[i].qpn);
      const rc::RcQp* qb = t.receivers[i].ep->qp(t.receivers[i].qpn);
      REQUIRE(qa != nullptr);
      REQUIRE(qb != nullptr);
      CHECK(qa->state() == rc::QpState::kRts);
      CHECK(qb->state() == rc::QpState::kRts);
    }
    // Every message of every QP, at 1 % loss with duplication and reordering.
    REQUIRE(run_on_this_thread(t));
    t.verify();
    // A's port owner disconnects every connection: A's QPs and, at the DREQ, B's go to ERROR on
    // their own workers.
    for (std::uint32_t conn : c.a_conns) REQUIRE(c.a0.cm_disconnect(conn).ok());
    REQUIRE(poll_until(lab, c, 1'000'000, false, true,
                       [&] { return c.a_disconnected == int{kQps} && c.b_disconnected == int{kQps}; }));
    for (std::uint16_t w = 0; w < n; ++w) {  // what each worker's ring still holds
      lab.a.group->worker(w).poll(test_clock());
      lab.b.group->worker(w).poll(test_clock());
    }
    for (std::uint32_t i = 0; i < kQps; ++i) {
      INFO("QP " << i);
      CHECK(t.senders[i].ep->qp(t.senders[i].qpn)->state() == rc::QpState::kError);
      CHECK(t.receivers[i].ep->qp(t.receivers[i].qpn)->state() == rc::QpState::kError);
    }
    for (Side* s : {&lab.a, &lab.b}) {
      const SteeringCounters st = s->group->steering_totals();
      CHECK(st.qp_commands_run > 0);
      CHECK(st.qp_commands_failed == 0);
      CHECK(st.qp_commands_refused == 0);
      // Only the port owner's CM connected anything.
      for (std::uint16_t w = 1; w < n; ++w) CHECK(s->group->worker(w).endpoint().cm_counters().mads_received == 0);
    }
  }
}

TEST_CASE("RDMA-CM on every worker: a QP's first packet stands for a lost RTU through the port owner's ring",
          "[workers][cm]") {
  WorkersLab lab("wrt", 2, 0.0);
  // QP i on worker i % 2 of both sides: B's worker 1 reads its own QPs' frames on queue 1.
  Traffic t(lab, 0, 14, true);
  CmConsumers c(lab, t);
  c.connect_all();
  // B's port owner takes every REQ, accepts them all at once, sends the REPs with one more poll
  // (nothing else is on its queue then), and stops polling: the RTUs will wait there unread.
  c.hold_requests = true;
  REQUIRE(poll_until(lab, c, 1'000'000, false, true, [&] { return c.held.size() == kQps; }));
  c.accept_held();
  REQUIRE(c.accepted == int{kQps});
  lab.b.group->worker(WorkerGroup::kPortOwner).poll(test_clock() += ns_to_tsc(5'000));
  REQUIRE(poll_until(lab, c, 5'000, false, false, [&] { return c.a_established == int{kQps}; }));
  CHECK(c.b_established == 0);
  // A sends: each of B's QPs on worker 1 gets its first packet there and tells the port owner
  // (B's QPs on worker 0 wait: their frames are on the port owner's queue).
  int rounds = 0;
  REQUIRE(poll_until(lab, c, 5'000, true, false, [&] { return ++rounds > 200; }));
  const Worker& b0 = lab.b.group->worker(WorkerGroup::kPortOwner);
  CHECK(b0.steering().qp_commands_run == 0);
  // The port owner comes back: the notices are taken before its RX, so its connections are
  // established by them (one per QP off the port owner), and the RTUs after them change nothing.
  REQUIRE(poll_until(lab, c, 5'000, true, true, [&] { return c.b_established == int{kQps}; }));
  CHECK(b0.steering().qp_commands_run == qps_off_port_owner(lab, t));
  CHECK(c.unexpected == 0);
  REQUIRE(run_on_this_thread(t));
  t.verify();
}

TEST_CASE("frames for QPNs no worker owns, and non-RoCE frames, stay on the worker that read them", "[workers]") {
  WorkersLab lab("wu", 2, 0.0);
  rte_mbuf* m = rte_pktmbuf_alloc(lab.b.pools[1].get());
  REQUIRE(m != nullptr);
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, 60));
  std::memset(p, 0, 60);
  p[12] = 0x08;
  p[13] = 0x00;  // IPv4, but no UDP 4791 behind it
  REQUIRE(rte_eth_tx_burst(lab.b.port->id(), 1, &m, 1) == 1);
  const std::uint64_t now = rte_rdtsc();
  for (std::uint16_t w = 0; w < lab.n; ++w) lab.a.group->worker(w).poll(now);
  CHECK(lab.a.group->worker(1).endpoint().counters().rx_frames == 1);
  CHECK(lab.a.group->worker(0).endpoint().counters().rx_frames == 0);
  CHECK(lab.a.group->steering_totals().rx_steered_in_software == 0);
  // Owner lookup: QPNs outside every range belong to worker 0 (whose endpoint counts them).
  CHECK(lab.a.group->owner_of(0x100) == 0);
  CHECK(lab.a.group->owner_of(0x100 + kQps) == 1);
  CHECK(lab.a.group->owner_of(0x100 + 2 * kQps) == 0);
  CHECK(lab.a.group->owner_of(0x10) == 0);
}

TEST_CASE("WorkerGroup::create refuses what the port or the config cannot give, naming the limit", "[workers]") {
  WorkersLab lab("wc", 2, 0.0);
  WorkerGroupConfig wc;
  wc.endpoint.queues.port_id = lab.a.port->id();
  wc.workers = 3;  // the port has 2 queues
  for (int i = 0; i < 3; ++i) wc.pools.push_back(lab.a.pools[0].get());
  Status err;
  CHECK(WorkerGroup::create(wc, err) == nullptr);
  CHECK(err.message().find("3 workers need as many queues") != std::string::npos);
  CHECK(err.message().find("has 2 rx") != std::string::npos);
  wc.workers = 2;
  CHECK(WorkerGroup::create(wc, err) == nullptr);
  CHECK(err.message().find("2 workers need as many mbuf pools, 3 given") != std::string::npos);
  wc.workers = 0;
  CHECK(WorkerGroup::create(wc, err) == nullptr);
  CHECK(err.message().find("at least 1") != std::string::npos);
  wc.workers = 2;
  wc.pools.resize(2);
  wc.endpoint.transport.qpn_base = 0xFFFF00;
  wc.qps_per_worker = 1024;
  CHECK(WorkerGroup::create(wc, err) == nullptr);
  CHECK(err.message().find("24-bit") != std::string::npos);
}

TEST_CASE("Port::open: one RX pool per queue or none, each given; RSS stays off where the PMD hashes nothing",
          "[workers][port]") {
  WorkersLab lab("wo", 2, 0.0);
  // The lab's ports took one pool per queue (net_ring has no UDP hash: rss off, checked there).
  PortConfig cfg;
  cfg.devargs = "net_ring_never_made";
  cfg.rx_queues = 2;
  cfg.rx_pools = {lab.a.pools[0].get()};
  Status err;
  CHECK(Port::open(cfg, err) == nullptr);
  CHECK(err.message().find("1 RX pools given for 2 RX queues") != std::string::npos);
  cfg.rx_pools = {lab.a.pools[0].get(), nullptr};
  CHECK(Port::open(cfg, err) == nullptr);
  CHECK(err.message().find("an RX queue's mbuf pool is missing") != std::string::npos);
}

TEST_CASE("2 workers per side on EAL lcores, 64 QPs, 5 % loss, wrong-queue peer: every message verified",
          "[workers][lcores]") {
  // Worker lcores: the test binary's main gives it three lcores on any machine (tests/engine/workers/main.cc).
  std::vector<unsigned> lcores;
  for (unsigned l = rte_get_next_lcore(-1, 1, 0); l < RTE_MAX_LCORE; l = rte_get_next_lcore(l, 1, 0))
    lcores.push_back(l);
  if (lcores.size() < 2) {
    WARN("fewer than two worker lcores: the threaded case is not exercised");
    return;
  }
  for (std::uint16_t shift : {std::uint16_t{0}, std::uint16_t{1}}) {
    INFO("B's placement shifted by " << shift);
    // Both workers of side A write one pcapng for the port, from two lcores at once.
    PcapngCapture cap;
    const std::string cap_path =
        "/tmp/droce-workers-" + std::to_string(getpid()) + "-" + std::to_string(shift) + ".pcapng";
    REQUIRE(cap.open(cap_path).ok());
    WorkersLab lab("wl", 2, 0.05, 4096, WorkersLab::Link::kRing, &cap);
    Traffic t(lab, shift, 17);
    clear_stop();
    for (std::uint16_t k = 0; k < 2; ++k) REQUIRE(launch_worker(lcores[k], *t.shards[k]).ok());
    // The workers run on the TSC; the bound only ends a hang (a busy machine slows, never fails, this).
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(240);
    while (!t.all_finished() && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    // Let the last ACKs cross before stopping.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    request_stop();
    for (std::uint16_t k = 0; k < 2; ++k) CHECK(wait_worker(lcores[k]) == 0);
    for (std::uint16_t k = 0; k < 2; ++k) CHECK(t.shards[k]->stopped.load(std::memory_order_acquire));
    clear_stop();
    REQUIRE(t.all_finished());
    t.verify();
    for (Side* s : {&lab.a, &lab.b}) {
      const SteeringCounters st = s->group->steering_totals();
      if (shift == 0) {
        CHECK(st.rx_steered_in_software == 0);
      } else {
        CHECK(st.rx_steered_in_software > 0);
        CHECK(st.rx_steered_in <= st.rx_steered_in_software);
        CHECK(s->group->endpoint_totals().rx_frames == st.rx_steered_in);
      }
    }
    // Every frame side A sent and every one it delivered was offered to the capture (written, or
    // counted dropped when the copy pool ran dry); the file closes as a valid pcapng.
    const EndpointCounters ea = lab.a.group->endpoint_totals();
    cap.close();  // writes the last batch
    CHECK(cap.captured() > 0);
    CHECK(cap.captured() + cap.dropped() >= ea.tx_frames + ea.rx_frames);
    ::unlink(cap_path.c_str());
  }
}

TEST_CASE("RDMA-CM on every worker, workers on EAL lcores, 1 % loss: connect, every message verified, disconnect",
          "[workers][cm][lcores]") {
  std::vector<unsigned> lcores;
  for (unsigned l = rte_get_next_lcore(-1, 1, 0); l < RTE_MAX_LCORE; l = rte_get_next_lcore(l, 1, 0))
    lcores.push_back(l);
  if (lcores.size() < 2) {
    WARN("fewer than two worker lcores: the threaded case is not exercised");
    return;
  }
  WorkersLab lab("wcl", 2, 0.01);
  Traffic t(lab, 1, 17, true);  // B's QP i on the other worker than A's
  CmConsumers c(lab, t);
  c.connect_all();  // before the workers run: the REQs leave with the port owner's first poll
  // The consumers run on the port owners' thread (shard 0): B accepts; once every message has
  // arrived, A disconnects everything. The commands for worker 1's QPs cross to shard 1's thread.
  std::atomic<bool> cm_done{false};
  bool disconnecting = false;
  t.shards[0]->control = [&] {
    c.step();
    if (!disconnecting && t.all_finished()) {
      for (std::uint32_t conn : c.a_conns) CHECK(c.a0.cm_disconnect(conn).ok());
      disconnecting = true;
    }
    if (disconnecting && c.a_disconnected == int{kQps} && c.b_disconnected == int{kQps})
      cm_done.store(true, std::memory_order_release);
  };
  clear_stop();
  for (std::uint16_t k = 0; k < 2; ++k) REQUIRE(launch_worker(lcores[k], *t.shards[k]).ok());
  // The workers and the CM run on the TSC (CM waits are seconds); the bound only ends a hang.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (!cm_done.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  request_stop();
  for (std::uint16_t k = 0; k < 2; ++k) CHECK(wait_worker(lcores[k]) == 0);
  for (std::uint16_t k = 0; k < 2; ++k) CHECK(t.shards[k]->stopped.load(std::memory_order_acquire));
  clear_stop();
  REQUIRE(cm_done.load(std::memory_order_acquire));
  t.verify();
  CHECK(c.accepted == int{kQps});
  CHECK(c.unexpected == 0);
  // Commands posted as the last DREQs arrived: run here, now that the lcores have stopped.
  for (std::uint16_t w = 0; w < 2; ++w) {
    lab.a.group->worker(w).poll(rte_rdtsc());
    lab.b.group->worker(w).poll(rte_rdtsc());
  }
  for (std::uint32_t i = 0; i < kQps; ++i) {
    INFO("QP " << i);
    CHECK(t.senders[i].ep->qp(t.senders[i].qpn)->state() == rc::QpState::kError);
    CHECK(t.receivers[i].ep->qp(t.receivers[i].qpn)->state() == rc::QpState::kError);
  }
  for (Side* s : {&lab.a, &lab.b}) {
    const SteeringCounters st = s->group->steering_totals();
    CHECK(st.qp_commands_run > 0);
    CHECK(st.qp_commands_failed == 0);
    CHECK(st.qp_commands_refused == 0);
  }
}
