// droce-perf: perftest's six RC tests (ib_send_bw ... ib_read_lat) on droce's transport, speaking
// perftest 6.06's TCP exchange byte for byte so that either side may be perftest itself.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "apps/droce-perf/options.h"
#include "apps/common/output_file.h"
#include "apps/droce-perf/banner.h"
#include "apps/droce-perf/perf_worker.h"
#include "apps/droce-perf/report.h"
#include "apps/droce-perf/run.h"
#include "apps/droce-perf/traffic.h"
#include "apps/common/address_text.h"
#include "apps/common/default_port.h"
#include "apps/common/oob_waits.h"
#include "engine/core/eal.h"
#include "engine/lab/link_impairment.h"
#include "engine/core/mempool.h"
#include "engine/exchange/oob_exchange.h"
#include "engine/exchange/perftest_exchange.h"
#include "engine/core/port.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/core/stop_signal.h"
#include "protocols/wire/icrc.h"

using namespace droce;
using namespace droce::engine;
using perf::Options;

namespace {

constexpr const char* kDefaultSocket = "/tmp/droce-perf.sock";

int fail(const std::string& msg) {
  std::fprintf(stderr, "droce-perf: %s\n", msg.c_str());
  return 1;
}

std::string ip_text(const std::uint8_t ip[4]) {
  return std::to_string(ip[0]) + "." + std::to_string(ip[1]) + "." + std::to_string(ip[2]) + "." + std::to_string(ip[3]);
}

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = split_args(argc, argv);
  Options opt;
  if (int rc = perf::parse_options(split.app, opt); rc != 0) return rc > 0 ? 0 : 2;
  const bool server = opt.server();
  const bool default_port = split.eal.empty();
  if (default_port) split.eal = default_pair_eal_args(server);
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-perf", split.eal, err);
  if (!eal) return fail(err.message());
  wire::icrc_init();

  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"perf_pool", 32767, 256, 2176 + 4096, -1}, pool); !s.ok())
    return fail(s.message());
  PortConfig pc;
  pc.rx_pool = pool.get();
  pc.promiscuous = true;
  if (Status s = pair_port_devargs(default_port, server, kDefaultSocket, pc.devargs); !s.ok()) return fail(s.message());
  auto port = Port::open(pc, err);
  if (!port) return fail(err.message());
  const auto timeout_ms = static_cast<std::uint32_t>(opt.timeout_s * 1000);
  if (Status s = port->wait_link_up(timeout_ms); !s.ok()) return fail(s.message());
  // Before the first burst: a peer that ends (even killed) must not tear the rings down under us.
  if (Status s = port->hold_peer_events(5000); !s.ok()) std::fprintf(stderr, "droce-perf: warning: %s\n", s.message().c_str());

  // Addresses: our GID is ::ffff:<local IP>; the peer's IP comes from its GID, its MAC from
  // --peer-mac or the lab rule.
  std::uint8_t local_ip[4], mac_buf[6], peer_mac[6];
  (void)parse_ipv4(!opt.local_ip.empty() ? opt.local_ip : server ? "10.0.0.2" : "10.0.0.1", local_ip);
  const rte_ether_addr port_mac = port->mac();
  std::memcpy(mac_buf, port_mac.addr_bytes, 6);
  if (!opt.local_mac.empty()) (void)parse_mac(opt.local_mac, mac_buf);
  const bool have_peer_mac = !opt.peer_mac.empty() && parse_mac(opt.peer_mac, peer_mac);

  perf::BufferStorage buffers(nullptr, &std::free);  // outlives `memory`, which registers it
  MemoryRegistry memory;
  EndpointConfig ec;
  ec.port_id = port->id();
  ec.pool = pool.get();
  ec.memory = &memory;
  ec.max_qps = opt.qps;
  ec.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
  ec.local = lab_address(local_ip, mac_buf);
  RcEndpoint ep(ec);
  std::unique_ptr<LinkImpairment> impairment;
  if (opt.loss > 0) {
    ImpairmentConfig ic;
    ic.loss = opt.loss;
    ic.seed = opt.seed;
    impairment = LinkImpairment::attach(port->id(), 0, ic, pool.get(), err);
    if (!impairment) return fail(err.message());
  }

  // ---- TCP: perftest's server listens, its client connects ----
  // perftest's exchange has no message for "stop": every wait on it (the passive server's included)
  // ends at a Ctrl-C by closing the connection, which is also how the peer learns of it.
  set_stop_ends_tcp_waits(true);
  OobConnection conn;
  RcPingpongServer listener;
  if (server) {
    std::uint16_t bound = 0;
    if (Status s = listener.listen(opt.port, bound); !s.ok()) return fail(s.message());
    std::printf("\n************************************\n* Waiting for client to connect... *\n************************************\n");
    std::fflush(stdout);
    if (Status s = accept_stoppable(listener, timeout_ms, conn); !s.ok()) return fail(s.message());
  } else if (Status s = connect_stoppable(opt.host, opt.port, timeout_ms, conn); !s.ok()) {
    return fail(s.message());
  }
  PerftestSession session(conn, server ? PerftestRole::kServer : PerftestRole::kClient, timeout_ms);
  // While a step waits for the peer, the transport keeps running; a passive server's stall watch
  // looks at the worker's figures meanwhile.
  perf::StallWatch watch(opt.timeout_s);
  perf::PerfWorker* worker = nullptr;  // set once the QPs exist, before any step that needs them
  session.set_idle([&] {
    const std::uint64_t now = rte_rdtsc();
    if (worker == nullptr) {
      ep.poll(now);
      return;
    }
    worker->poll(now);
    watch.on_idle(now, worker->rx_frames());
  });
  // Traffic loops look at the connection now and then: a peer that ended (closed) ends our run too.
  const std::function<bool()> peer_closed = [&] { return conn.peer_hung_up(); };  // takes no byte
  PerftestPreamble pre;
  if (Status s = session.preamble(opt.mtu, pre); !s.ok()) return fail(s.message());

  // ---- QPs and memory (perftest's layout: per QP a send region, then per QP the region the peer
  // writes to or reads from, each max(size, cycle buffer) bytes) ----
  perf::PerfWorker w0(opt, ep, memory, pre, buffers);
  worker = &w0;
  perf::Traffic& traffic = w0.traffic();
  traffic.set_peer_probe(peer_closed);
  if (Status s = traffic.create(); !s.ok()) return fail(s.message());
  std::vector<PerftestKeys> mine = traffic.keys(local_ip), peer;
  const Status connected = session.connect(opt.test, mine, peer, [&]() -> Status {
    for (std::uint32_t i = 0; i < opt.qps; ++i) {
      std::uint8_t pip[4];
      if (Status g = ipv4_from_gid(peer[i].gid, pip); !g.ok()) return g;
      if (Status c = traffic.connect(i, lab_address(pip, have_peer_mac ? peer_mac : nullptr), peer[i]); !c.ok()) return c;
    }
    return {};
  });
  if (!connected.ok()) return fail(connected.message());
  perf::print_banner(opt, {port->name(), pre.mtu, traffic.tx_depth(), traffic.rx_depth(), traffic.cq_mod()}, mine, peer);

  // ---- traffic, size by size, with perftest's barriers around each; then the end ----
  perf::RunOutcome run = perf::run_test(opt, session, w0, mine[0], watch);
  std::string& problem = run.problem;
  // ---- goodbye: no port is stopped while its peer still polls. perftest's exchange ends without a
  // message for it (its tools just close), so end-of-file says it: the client, polling no more,
  // half-closes; the server then stops its port and closes; then the client stops its port. A
  // perftest peer has closed by then, and a vanished one reads as closed too. ----
  {
    std::string ignored;
    if (!server) conn.shutdown_send();
    (void)wait_line(conn, ignored, 10000, {}, false);
    port->stop();
    conn = OobConnection();
  }
  std::printf("%s", perf::kLine);
  const perf::TransportTotals tt = traffic.totals();
  if (tt.retransmitted != 0 || tt.naks_received != 0 || tt.naks_sent != 0 || tt.ack_timeouts != 0 || impairment)
    std::printf(" droce: retransmitted %llu  naks sent %llu / received %llu  ack timeouts %llu  rnr naks %llu  lab loss dropped %llu\n",
                static_cast<unsigned long long>(tt.retransmitted), static_cast<unsigned long long>(tt.naks_sent),
                static_cast<unsigned long long>(tt.naks_received), static_cast<unsigned long long>(tt.ack_timeouts),
                static_cast<unsigned long long>(tt.rnr_naks),
                static_cast<unsigned long long>(impairment ? impairment->counters().dropped : 0));
  if (stop_requested()) problem = "interrupted";
  if (!problem.empty()) std::fprintf(stderr, "droce-perf: %s\n", problem.c_str());
  w0.finish();

  if (!opt.json.empty()) {
    nlohmann::json j;
    j["test"] = perftest_test_name(opt.test);
    j["role"] = server ? "server" : "client";
    j["peer_version"] = pre.peer_version;
    j["mtu"] = pre.mtu;
    j["qps"] = opt.qps;
    j["unit"] = opt.bw() ? (opt.report_gbits ? "Gb/sec" : "MB/sec") : "usec";
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : run.bw_rows) rows.push_back(perf::to_json(r));
    for (const auto& r : run.lat_rows) rows.push_back(perf::to_json(r));
    j["results"] = rows;
    auto keys_json = [](const PerftestKeys& k, const std::uint8_t* ip) {
      return nlohmann::json{{"qpn", k.qpn}, {"psn", k.psn}, {"rkey", k.rkey}, {"vaddr", k.vaddr}, {"ip", ip_text(ip)}};
    };
    std::uint8_t pip[4] = {};
    if (!peer.empty()) (void)ipv4_from_gid(peer[0].gid, pip);
    j["local"] = keys_json(mine[0], local_ip);
    if (!peer.empty()) j["remote"] = keys_json(peer[0], pip);
    j["retransmitted_packets"] = tt.retransmitted;
    j["naks_sent"] = tt.naks_sent;
    j["naks_received"] = tt.naks_received;
    j["ack_timeouts"] = tt.ack_timeouts;
    j["rnr_naks"] = tt.rnr_naks;
    j["impairment_dropped"] = impairment ? impairment->counters().dropped : 0;
    j["problem"] = problem;
    if (std::string e = droce::apps::write_text_file(opt.json, j.dump(2) + "\n"); !e.empty()) return fail(e);
  }
  return problem.empty() ? 0 : 1;
}
