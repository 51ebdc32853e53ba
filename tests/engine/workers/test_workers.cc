// WorkerGroup tests: N workers per side over net_ring ports with N queues, 64 QPs per side, 5 %
// loss with reordering and duplication; frames on the wrong queue; PFC reaching every worker.
// The CM's cases are in test_workers_cm.cc, the lab both use in workers_lab.h.
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
