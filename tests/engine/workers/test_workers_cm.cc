// RDMA-CM on every worker (issue 41): QP1, ARP and ND reach the port owner from every queue; the
// port owner's CM connects, establishes and disconnects QPs of every worker through their control
// rings, single-threaded and on EAL lcores.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/engine/workers/workers_lab.h"

using namespace droce::engine;
using namespace droce::engine::workers_lab;

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

// After the disconnects: every QP of both sides in ERROR, moved by its own worker, and every
// command the port owners posted run, none failed or refused.
void check_all_disconnected(WorkersLab& lab, const Traffic& t) {
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
    check_all_disconnected(lab, t);
    // Only the port owner's CM connected anything.
    for (Side* s : {&lab.a, &lab.b})
      for (std::uint16_t w = 1; w < n; ++w) CHECK(s->group->worker(w).endpoint().cm_counters().mads_received == 0);
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
  // Counted on the worker, checked on the main thread: Catch's assertions are not thread-safe.
  std::atomic<int> disconnects_refused{0};
  bool disconnecting = false;
  t.shards[0]->control = [&] {
    c.step();
    if (!disconnecting && t.all_finished()) {
      for (std::uint32_t conn : c.a_conns)
        if (!c.a0.cm_disconnect(conn).ok()) disconnects_refused.fetch_add(1, std::memory_order_relaxed);
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
  CHECK(disconnects_refused.load() == 0);
  REQUIRE(cm_done.load(std::memory_order_acquire));
  t.verify();
  CHECK(c.accepted == int{kQps});
  CHECK(c.unexpected == 0);
  // Commands posted as the last DREQs arrived: run here, now that the lcores have stopped.
  for (std::uint16_t w = 0; w < 2; ++w) {
    lab.a.group->worker(w).poll(rte_rdtsc());
    lab.b.group->worker(w).poll(rte_rdtsc());
  }
  check_all_disconnected(lab, t);
}
