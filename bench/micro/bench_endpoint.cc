// Google Benchmark: the cost of one RcEndpoint poll as a function of connected QPs (issue 13:
// an idle connected QP must cost nothing per poll). Runs on a net_ring port, no hugepages.
//   bench_endpoint [--benchmark_filter=...]      ns per poll for 16 and 10,000 connected QPs
//   bench_endpoint --memory DEPTH                RSS of an endpoint with 16,384 connected QPs
// Instructions per poll (deterministic): run under
//   valgrind --tool=callgrind --toggle-collect='droce::engine::RcEndpoint::poll(unsigned long)'
//     bench_endpoint --benchmark_filter='BM_IdlePoll/10000/0$' --benchmark_min_time=0.05
// and divide the instructions by the calls= count of poll_received (223 at 16, 10,000 and 16,384
// connected QPs; 299 with 100 armed ACK timers).
#include <benchmark/benchmark.h>
#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/eal.h"
#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "engine/endpoint/rc_endpoint.h"

using namespace droce;
using namespace droce::engine;

namespace {

// Deliberately never freed: static destructors would run after main() has shut EAL down.
MbufPool& g_pool = *new MbufPool();

wire::L2L3Address addr(std::uint8_t host) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[5] = host;
  a.ip[0] = 10;
  a.ip[3] = host;
  return a;
}

// One endpoint on a net_ring port whose peer never answers; its QPs are connected to QPNs
// nobody holds. `armed` of them get one WRITE each, sent in the set-up poll and never
// acknowledged: their ACK timers stay armed (on the wheel) for the whole run.
struct IdleEndpoint {
  rte_ring* rx = nullptr;
  rte_ring* tx = nullptr;
  std::unique_ptr<Port> port;
  MemoryRegistry mem;
  std::unique_ptr<RcEndpoint> ep;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096, 0x5A);
  bool ok = false;

  IdleEndpoint(const std::string& name, std::uint32_t qps, std::uint32_t armed, std::uint32_t depth) {
    rx = rte_ring_create((name + "_rx").c_str(), 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    tx = rte_ring_create((name + "_tx").c_str(), 16384, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (rx == nullptr || tx == nullptr || rte_eth_from_rings(name.c_str(), &rx, 1, &tx, 1, SOCKET_ID_ANY) < 0) return;
    Status err;
    PortConfig pc;
    pc.rx_pool = g_pool.get();
    pc.devargs = name;
    port = Port::open(pc, err);
    if (!err.ok() || !port->wait_link_up(1000).ok()) return;
    EndpointConfig c;
    c.queues.port_id = port->id();
    c.queues.pool = g_pool.get();
    c.queues.memory = &mem;
    c.addresses.local = addr(1);
    c.transport.max_qps = qps;
    ep = RcEndpoint::create(c, err);
    if (!ep) return;
    rc::MemoryRegion mr;
    if (!mem.register_memory(buf.data(), buf.size(), rc::kAccessLocalWrite, mr).ok()) return;
    for (std::uint32_t i = 0; i < qps; ++i) {
      rc::QpAttr a;
      a.sq_depth = depth;
      a.rq_depth = depth;
      a.timeout = 31;  // hours: an armed ACK timer never fires during the run
      a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
      std::uint32_t qpn = 0;
      if (!ep->create_qp(a, qpn).ok() || !ep->connect(qpn, RemoteQp{addr(2), 0x1000 + i, 0}).ok()) return;
      if (i % (qps / (armed == 0 ? 1 : armed)) == 0 && armed != 0) {
        rc::SendWr w;
        w.opcode = rc::WrOpcode::kWrite;
        w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), 64, mr.lkey};
        w.remote_addr = 0x1000;
        w.rkey = 1;
        if (!ep->post_send(qpn, w).ok()) return;
      }
    }
    // Connect and post put every QP on the ready list once: one poll serves them (not measured:
    // poll_received is outside the callgrind toggle on poll()).
    ep->poll_received(rte_rdtsc(), nullptr, 0);
    ok = true;
  }
  ~IdleEndpoint() {
    if (ep) ep->finish();
    ep.reset();
    port.reset();
    if (rx != nullptr) rte_ring_free(rx);
    if (tx != nullptr) {
      void* m = nullptr;
      while (rte_ring_dequeue(tx, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
      rte_ring_free(tx);
    }
  }
};

int g_ports = 0;

// One idle poll: no frame to read, nothing to send, the clock 100 ns later than the last one.
void BM_IdlePoll(benchmark::State& st) {
  const auto qps = static_cast<std::uint32_t>(st.range(0));
  const auto armed = static_cast<std::uint32_t>(st.range(1));
  IdleEndpoint e("bench_ep" + std::to_string(g_ports++), qps, armed, 16);
  if (!e.ok) {
    st.SkipWithError("endpoint set-up failed");
    return;
  }
  const std::uint64_t step = rte_get_tsc_hz() / 10'000'000 + 1;  // ~100 ns
  std::uint64_t now = rte_rdtsc();
  const EndpointCounters before = e.ep->counters();
  for (auto _ : st) {
    now += step;
    e.ep->poll(now);
  }
  const EndpointCounters& after = e.ep->counters();
  st.counters["qp_turns/poll"] = benchmark::Counter(static_cast<double>(after.tx_qp_turns - before.tx_qp_turns),
                                                    benchmark::Counter::kAvgIterations);
  st.counters["timer_fires/poll"] = benchmark::Counter(static_cast<double>(after.timer_fires - before.timer_fires),
                                                       benchmark::Counter::kAvgIterations);
}
// {connected QPs, of which with an armed ACK timer}
BENCHMARK(BM_IdlePoll)->Args({16, 0})->Args({10'000, 0})->Args({10'000, 100})->Args({16'384, 0});

long rss_kib() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return resident * 4;
}

// Resident memory of one endpoint with 16,384 connected QPs at `depth` (sq_depth = rq_depth),
// in a fresh process (freed heap is not returned to the system, so one depth per run).
void report_memory(std::uint32_t depth) {
  const long before = rss_kib();
  IdleEndpoint e("bench_mem", 16'384, 0, depth);
  const long after = rss_kib();
  std::printf("16384 connected QPs, sq_depth = rq_depth = %u: %s, RSS +%ld KiB (%.1f KiB per QP)\n", depth,
              e.ok ? "ok" : "SET-UP FAILED", after - before, static_cast<double>(after - before) / 16'384);
}

}  // namespace

int main(int argc, char** argv) {
  Status err;
  auto eal = Eal::init(
      "bench-endpoint",
      {"-l", "0", "--no-huge", "-m", "1024", "--no-pci", "--no-telemetry", "--no-shconf", "--log-level", "lib.*:error"},
      err, /*quiet=*/true);
  if (!eal) {
    std::fprintf(stderr, "bench_endpoint: %s\n", err.message().c_str());
    return 2;
  }
  if (!MbufPool::create(PoolConfig{"bench_ep_pool", 8191, 256, 2176, -1}, g_pool).ok()) {
    std::fprintf(stderr, "bench_endpoint: cannot create the mbuf pool\n");
    return 2;
  }
  if (argc > 1 && std::strcmp(argv[1], "--memory") == 0) {
    // DEPTH is a QP's sq_depth/rq_depth: a power of two up to 65536 (rc::QpAttr::validate).
    char* end = nullptr;
    const unsigned long depth = argc == 3 ? std::strtoul(argv[2], &end, 10) : 0;
    if (argc != 3 || end == argv[2] || *end != '\0' || depth == 0 || depth > 65536 || (depth & (depth - 1)) != 0) {
      std::fprintf(stderr, "bench_endpoint: --memory DEPTH: DEPTH must be a power of two, 1..65536\n");
      return 2;
    }
    report_memory(static_cast<std::uint32_t>(depth));
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
