// droce-perf: perftest's eight RC tests (ib_send_bw ... ib_atomic_lat) on droce's transport, speaking
// perftest 6.06's TCP exchange byte for byte so that either side may be perftest itself.
#include <droce/engine/core/capture.h>
#include <droce/engine/core/eal.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/stop_signal.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/exchange/oob_exchange.h>
#include <droce/engine/exchange/perftest_cm_exchange.h>
#include <droce/engine/exchange/perftest_exchange.h>
#include <droce/engine/lab/link_impairment.h>
#include <droce/engine/workers/worker_group.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "apps/common/address_text.h"
#include "apps/common/capture_report.h"
#include "apps/common/default_port.h"
#include "apps/common/lab_impairments.h"
#include "apps/common/oob_waits.h"
#include "apps/common/output_file.h"
#include "apps/common/peer_mac.h"
#include "apps/common/rss_line.h"
#include "apps/common/worker_limits.h"
#include "apps/droce-perf/banner.h"
#include "apps/droce-perf/options.h"
#include "apps/droce-perf/perf_workers.h"
#include "apps/droce-perf/perftest_json.h"
#include "apps/droce-perf/report.h"
#include "apps/droce-perf/run.h"
#include "apps/droce-perf/test_mismatch.h"
#include "apps/droce-perf/traffic.h"

using namespace droce;
using namespace droce::engine;
using perf::Options;

namespace {

constexpr const char* kDefaultSocket = "/tmp/droce-perf.sock";

int fail(const std::string& msg) {
  std::fprintf(stderr, "droce-perf: %s\n", msg.c_str());
  return 1;
}

// A --workers the lcores or the port cannot carry: a usage error, as a bad option is.
int bad_workers(const std::string& msg) {
  std::fprintf(stderr, "droce-perf: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = split_args(argc, argv);
  Options opt;
  if (int rc = perf::parse_options(split.app, opt, split.eal); rc != 0) return rc > 0 ? 0 : 2;
  // --timeout 0: the server waits for its client forever (perftest's); every other wait, and the
  // stall watch, keep the default bound.
  const PeerWaits waits = peer_waits(opt.timeout_s, Options{}.timeout_s);
  opt.timeout_s = waits.bound_s;
  const bool server = opt.server();
  const bool default_port = split.eal.empty();
  if (default_port) split.eal = default_pair_eal_args(server);
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-perf", split.eal, err);
  if (!eal) return fail(err.message());

  // --workers: each worker needs its own lcore (the main one is worker 0) and its own queue pair.
  if (Status s = apps::workers_lcore_limit(opt.workers); !s.ok()) return bad_workers(s.message());
  // One pool per worker (its RX queue's and its TX mbufs) on its lcore's socket, the one worker's
  // size shared out; worker w polls on the w-th lcore (the main one first), as PerfWorkers launches.
  std::vector<unsigned> lcores;
  for (unsigned l = rte_get_main_lcore(); lcores.size() < opt.workers && l < RTE_MAX_LCORE;
       l = rte_get_next_lcore(l, 1, 0))
    lcores.push_back(l);
  PortConfig pc;
  if (Status s = pair_port_devargs(default_port, server, kDefaultSocket, pc.devargs); !s.ok()) return fail(s.message());
  std::vector<MbufPool> pools;
  const std::uint16_t room = pool_data_room_for_port(pc.devargs, 2176 + 4096);
  if (Status s = create_worker_pools(PoolConfig{"perf_pool", 32768 / opt.workers - 1, 256, room, -1}, lcores, pools);
      !s.ok())
    return fail(s.message());
  pc.rx_pool = pools[0].get();
  for (auto& p : pools) pc.rx_pools.push_back(p.get());
  pc.rx_queues = pc.tx_queues = static_cast<std::uint16_t>(opt.workers);
  pc.promiscuous = true;
  if (Status s = apps::workers_queue_limit(opt.workers, pc.devargs); !s.ok()) return bad_workers(s.message());
  auto port = Port::open(pc, err);
  if (!port) return fail(err.message());
  const auto timeout_ms = static_cast<std::uint32_t>(opt.timeout_s * 1000);
  if (Status s = port->wait_link_up(timeout_ms); !s.ok()) return fail(s.message());
  // Before the first burst: a peer that ends (even killed) must not tear the rings down under us.
  if (Status s = port->hold_peer_events(5000); !s.ok())
    std::fprintf(stderr, "droce-perf: warning: %s\n", s.message().c_str());

  // Addresses: our GID is ::ffff:<local IPv4> or the IPv6 address itself; the peer's IP comes
  // from its GID (of our family), its MAC from --peer-mac, ARP or Neighbor Discovery.
  IpAddress local_ip;
  std::uint8_t local_gid[16], mac_buf[6];
  (void)parse_ip(!opt.local_ip.empty() ? opt.local_ip
                 : server              ? "10.0.0.2"
                                       : "10.0.0.1",
                 local_ip);  // checked by the parser
  gid_of(local_ip, local_gid);
  const rte_ether_addr port_mac = port->mac();
  std::memcpy(mac_buf, port_mac.addr_bytes, 6);
  if (!opt.local_mac.empty()) (void)parse_mac(opt.local_mac, mac_buf);

  // Per worker a buffer, which outlives `memory` (it registers them); then the engine's workers.
  // Per worker a buffer and the registry it is in (the buffer outlives it), so that no two
  // lcores share a registry's lookup cache; then the engine's workers.
  std::vector<perf::BufferStorage> buffers;
  std::vector<std::unique_ptr<MemoryRegistry>> memories;
  for (std::uint32_t w = 0; w < opt.workers; ++w) {
    buffers.emplace_back(nullptr, &std::free);
    memories.push_back(std::make_unique<MemoryRegistry>());
  }
  WorkerGroupConfig wc;
  wc.workers = static_cast<std::uint16_t>(opt.workers);
  wc.qps_per_worker = (opt.qps + opt.workers - 1) / opt.workers;
  if (opt.rdma_cm) wc.qps_per_worker += 1;  // -R: the comm QP beside the data QPs (on worker 0, the port owner)
  for (auto& p : pools) wc.pools.push_back(p.get());
  wc.endpoint.queues.port_id = port->id();
  wc.endpoint.queues.pool = pools[0].get();
  wc.endpoint.queues.memory = memories[0].get();
  for (auto& m : memories) wc.memories.push_back(m.get());
  wc.endpoint.addresses.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
  wc.endpoint.addresses.local = lab_address(local_ip, mac_buf);
  wc.endpoint.addresses.ipv6 = local_ip.ipv6;
  wc.endpoint.addresses.dscp = opt.dscp;
  wc.endpoint.addresses.vlan_id = opt.vlan_id;
  wc.endpoint.addresses.vlan_pcp = opt.vlan_pcp;
  // --pcap: one file for every worker's queue (the capture serialises its writers); declared
  // before the group, whose endpoints write to it, so that it outlives them.
  PcapngCapture capture;
  const apps::CaptureOptions capture_opts{opt.pcap, opt.pcap_snaplen, opt.pcap_max_mb, opt.pcap_files};
  if (!opt.pcap.empty()) {
    if (Status s = capture.open(opt.pcap, opt.pcap_snaplen, 4095, apps::capture_limits(capture_opts)); !s.ok())
      return fail(s.message());
    wc.endpoint.recording.capture = &capture;
  }
  auto group = WorkerGroup::create(wc, err);
  if (!group) return fail(err.message());
  // The peer's MAC: --peer-mac, or ARP through worker 0's endpoint, the port owner, which every
  // ARP and ND frame reaches whatever queue it lands on (docs/cm.md), and the MAC goes to every
  // worker. The resolutions run before the workers are launched: this thread polls them all
  // whenever we wait for the peer (the session's idle below, then the resolution's own loop), so
  // we answer its ARP too.
  apps::PeerMac peer_mac(opt.peer_mac, group->worker(0).endpoint(), [&group] {
    const std::uint64_t now = rte_rdtsc();
    for (std::uint16_t w = 0; w < group->size(); ++w) group->worker(w).poll(now);
  });
  peer_mac.announce();             // ARP only; it leaves with the first poll
  std::uint8_t peer_mac0[6] = {};  // the first QP's peer MAC, for the JSON report
  // Lab loss where --impair-direction says: every RX queue and/or every worker's sending (a seed
  // each: the losses differ), before any worker polls.
  apps::LabImpairments impairments;
  {
    std::vector<rte_mempool*> qpools;
    std::vector<RcEndpoint*> eps;
    for (std::uint16_t q = 0; q < group->size(); ++q) {
      qpools.push_back(pools[q].get());
      eps.push_back(&group->worker(q).endpoint());
    }
    ImpairmentConfig ic;
    ic.loss = opt.loss;
    ic.seed = opt.seed;
    apps::ImpairDirection dir = apps::ImpairDirection::kRx;
    if (Status s = apps::parse_impair_direction(opt.impair_direction, dir); !s.ok()) return fail(s.message());
    if (Status s = impairments.install(ic, dir, port->id(), qpools, eps); !s.ok()) return fail(s.message());
  }
  auto impairment_dropped = [&] { return impairments.tally().dropped(); };

  // ---- the exchange: perftest's TCP socket (its server listens, its client connects), or with -R
  // its rdma_cm comm connection on the port owner's endpoint (worker 0's: its CM connects the data
  // QPs of every worker, QP i on worker i % N; docs/cm.md "One CM per port") ----
  // perftest's exchange has no message for "stop": every wait on it (the passive server's included)
  // ends at a Ctrl-C by closing the connection, which is also how the peer learns of it.
  set_stop_ends_tcp_waits(true);
  OobConnection conn;
  RcPingpongServer listener;
  std::unique_ptr<PerftestControl> control;
  PerftestCmSession* cm = nullptr;  // -R: `control`
  perf::StallWatch watch(opt.timeout_s);
  std::unique_ptr<perf::PerfWorkers> workers;  // once the preamble is known
  // While a step waits for the peer, the transport keeps running; a passive server's stall watch
  // looks at the worker's figures meanwhile. The CM's waits end at a stall or a Ctrl-C here (the
  // TCP ones end by themselves: end_tcp_waits_now, set_stop_ends_tcp_waits).
  bool cm_abandoned = false;
  // A peer running another test (perf/test_mismatch.h): its first request of a foreign kind ends
  // the waiting step at once, as a stall does.
  std::string peer_test;
  auto idle = [&] {
    const std::uint64_t now = rte_rdtsc();
    if (!workers) {
      // Every worker, from this thread (none runs on its lcore yet): QP1's frames may land on any
      // queue, and reach the port owner through the reader's poll.
      for (std::uint16_t w = 0; w < group->size(); ++w) group->worker(w).poll(now);
    } else {
      workers->poll(now);
      watch.on_idle(now, workers->rx_frames());
      if (peer_test.empty() && !(peer_test = perf::request_mismatch(opt, workers->request_kinds())).empty())
        end_tcp_waits_now();
    }
    if (cm != nullptr && !cm_abandoned && (watch.stalled() || !peer_test.empty() || stop_requested())) {
      cm_abandoned = true;
      cm->abandon_wait(watch.stalled()      ? "the peer went silent"
                       : !peer_test.empty() ? "the peer runs another test"
                                            : "interrupted");
    }
  };
  const PerftestRole role = server ? PerftestRole::kServer : PerftestRole::kClient;
  if (opt.rdma_cm) {
    PerftestCmConfig cc;
    cc.port = opt.port;
    if (!server) {
      // The server's MAC by ARP or ND (or --peer-mac) before the REQ, polling worker 0 meanwhile.
      IpAddress sip;
      std::uint8_t smac[6];
      if (!parse_ip(opt.host, sip) || sip.ipv6 != local_ip.ipv6)
        return fail(std::string("-R: the server must be given as an ") + family_name(local_ip) +
                    " address (as --local-ip), not " + opt.host);
      const Status m =
          sip.ipv6 ? peer_mac.of_ipv6(sip.bytes, timeout_ms, smac) : peer_mac.of_ipv4(sip.bytes, timeout_ms, smac);
      if (!m.ok()) return fail(m.message());
      cc.server = lab_address(sip, smac);
    }
    auto s = std::make_unique<PerftestCmSession>(group->worker(0).endpoint(), role, cc, timeout_ms);
    cm = s.get();
    control = std::move(s);
    control->set_idle(idle);
    if (server) {
      std::printf(
          "\n************************************\n* Waiting for client to connect... "
          "*\n************************************\n");
      std::fflush(stdout);
    }
    // --timeout 0: the server waits for the client's REQ without end (a Ctrl-C abandons it); the
    // steps after it keep the bound.
    if (server) cm->set_timeout(waits.for_client_ms);
    if (Status s2 = cm->open(); !s2.ok()) return fail(s2.message());
    cm->set_timeout(timeout_ms);
  } else {
    if (server) {
      std::uint16_t bound = 0;
      if (Status s = listener.listen(opt.port, bound); !s.ok()) return fail(s.message());
      std::printf(
          "\n************************************\n* Waiting for client to connect... "
          "*\n************************************\n");
      std::fflush(stdout);
      if (Status s = accept_stoppable(listener, waits.for_client_ms, conn); !s.ok()) return fail(s.message());
    } else if (Status s = connect_stoppable(opt.host, opt.port, timeout_ms, conn); !s.ok()) {
      return fail(s.message());
    }
    control = std::make_unique<PerftestSession>(conn, role, timeout_ms);
    control->set_idle(idle);
  }
  PerftestControl& session = *control;
  // Traffic loops look at the peer now and then: a peer that ended (closed) ends our run too.
  const std::function<bool()> peer_closed = [&] {
    return cm != nullptr ? cm->peer_disconnected() : conn.peer_hung_up();  // takes no byte
  };
  PerftestPreamble pre;
  if (Status s = session.preamble(opt.mtu, pre); !s.ok()) return fail(s.message());

  // ---- QPs and memory (perftest's layout: per QP a send region, then per QP the region the peer
  // writes to or reads from, each max(size, cycle buffer) bytes) ----
  workers = std::make_unique<perf::PerfWorkers>(opt, *group, memories, pre, buffers);
  workers->set_peer_probe(peer_closed);
  if (Status s = workers->create(); !s.ok()) return fail(s.message());
  std::vector<PerftestKeys> mine = workers->keys(local_gid), peer;
  const Status connected = session.connect(opt.test, mine, peer, [&]() -> Status {
    // -R: the CM has connected the QPs (REQ/REP gave QPNs, PSNs and the read depth): only the
    // peer's keys are taken, for their rkey and vaddr.
    for (std::uint32_t i = 0; cm != nullptr && i < opt.qps; ++i)
      if (Status c = workers->take_peer(i, peer[i]); !c.ok()) return c;
    if (cm != nullptr) {
      std::memcpy(peer_mac0, cm->peer().mac, 6);
      return {};
    }
    for (std::uint32_t i = 0; i < opt.qps; ++i) {
      // The peer polls as it waits for the exchange's next step. Only the first QP asks (the
      // others find the MAC known); resolutions go on until --timeout (lab loss drops ARP too).
      IpAddress pip;
      std::uint8_t mac[6];
      if (Status g = peer_ip_of_gid(peer[i].gid, local_ip, pip); !g.ok()) return g;
      if (Status m = peer_mac.of_gid(peer[i].gid, timeout_ms, mac); !m.ok()) return m;
      if (Status c = workers->connect(i, lab_address(pip, mac), peer[i]); !c.ok()) return c;
      if (i == 0) std::memcpy(peer_mac0, mac, 6);
    }
    return {};
  });
  if (!connected.ok()) return fail(connected.message());
  if (cm != nullptr)
    if (Status s = workers->wait_cm_moved(mine, timeout_ms); !s.ok()) return fail(s.message());
  apps::place_flows_and_say("droce-perf", *group);  // N > 1 workers: the port's RSS table, where it has one
  if (Status s = workers->launch(); !s.ok()) return fail(s.message());
  const perf::Traffic& t0 = workers->traffic0();
  const perf::BannerFacts facts{port->name(), pre.mtu, t0.tx_depth(), t0.rx_depth(), t0.cq_mod()};
  perf::print_banner(opt, facts, mine, peer);

  // ---- traffic, size by size, with perftest's barriers around each; then the end ----
  perf::RunOutcome run = perf::run_test(opt, session, *workers, mine[0], watch);
  std::string& problem = run.problem;
  // perftest's exchange has no message for a stop: the peer's Ctrl-C (or any end of it) is its
  // closed connection, which the failed step names; say whose run was cut (our own Ctrl-C is said
  // below).
  if (!problem.empty() && !stop_requested() && peer_closed())
    problem = std::string(server ? "the client" : "the server") +
              " ended the run early (it closed the connection: interrupted, or gone): " + problem;
  workers->stop();  // the launched workers poll no more, as worker 0 from here on
  // A peer running another test is named by its requests, whatever symptom the run ended on.
  if (std::string m = perf::request_mismatch(opt, workers->request_kinds_now()); !m.empty()) problem = m;
  // ---- goodbye: no port is stopped while its peer still polls. perftest's exchange ends without a
  // message for it (its tools just close), so end-of-file says it: the client, polling no more,
  // half-closes; the server then stops its port and closes; then the client stops its port. A
  // perftest peer has closed by then, and a vanished one reads as closed too. ----
  // A teardown that could not finish is said after the table's closing line (perftest closes its
  // table before destroy_ctx): a DREP lost on the way from a droce peer that has exited is never
  // sent again, and the warning must not land inside the table scripts read.
  std::string teardown_warning;
  if (cm != nullptr) {
    // -R: the DREQs of perftest's destroy_ctx (data connections, then comm), while worker 0 is
    // still polled; then the port stops.
    cm_abandoned = false;
    if (Status s = cm->disconnect(); !s.ok() && problem.empty()) teardown_warning = s.message();
    control.reset();  // the comm QP's buffers go before the port
    port->stop();
  } else {
    std::string ignored;
    if (!server) conn.shutdown_send();
    (void)wait_line(conn, ignored, 10000, {}, false);
    port->stop();
    conn = OobConnection();
  }
  std::printf("%s", perf::kLine);
  if (!teardown_warning.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "droce-perf: warning: %s\n", teardown_warning.c_str());
  }
  const perf::TransportTotals tt = workers->totals();
  // RNR NAKs both ways: one we sent means a peer's SEND found no receive of ours (a -b peer
  // against a side without -b), one we received the same of the peer.
  if (tt.retransmitted != 0 || tt.naks_received != 0 || tt.naks_sent != 0 || tt.ack_timeouts != 0 || tt.rnr_naks != 0 ||
      tt.rnr_naks_sent != 0 || !impairments.empty())
    std::printf(
        " droce: retransmitted %llu  naks sent %llu / received %llu  ack timeouts %llu  rnr naks sent %llu / received "
        "%llu"
        "  lab loss dropped %llu  implied naks %llu  duplicate responses %llu  tail probes %llu\n",
        static_cast<unsigned long long>(tt.retransmitted), static_cast<unsigned long long>(tt.naks_sent),
        static_cast<unsigned long long>(tt.naks_received), static_cast<unsigned long long>(tt.ack_timeouts),
        static_cast<unsigned long long>(tt.rnr_naks_sent), static_cast<unsigned long long>(tt.rnr_naks),
        static_cast<unsigned long long>(impairment_dropped()), static_cast<unsigned long long>(tt.implied_naks),
        static_cast<unsigned long long>(tt.duplicate_responses), static_cast<unsigned long long>(tt.tail_probes));
  // A SEND of the peer's met no receive of ours: a peer running -b against a side without it
  // (perftest's duplex mode is not in its exchange, so only this shows it).
  if (!opt.duplex && tt.rnr_naks_sent != 0)
    std::printf(
        " droce: we answered the peer's SENDs with %llu RNR NAKs (no receive posted): a peer running -b needs -b here "
        "too\n",
        static_cast<unsigned long long>(tt.rnr_naks_sent));
  if (!impairments.empty()) std::printf(" droce: %s\n", impairments.line().c_str());
  workers->print_worker_lines();
  if (!opt.pcap.empty()) {
    capture.close();  // the ports have stopped: every frame is in
    std::printf(" droce: %s\n", apps::capture_line(capture_opts, capture).c_str());
  }
  if (t0.atomic_mismatches() != 0)
    std::printf(" droce: %llu of %llu atomics returned an original value out of the sequence the first implies\n",
                static_cast<unsigned long long>(t0.atomic_mismatches()),
                static_cast<unsigned long long>(t0.atomic_checked()));
  if (stop_requested()) problem = "interrupted";
  if (!problem.empty()) std::fprintf(stderr, "droce-perf: %s\n", problem.c_str());
  group->finish();
  // --out_json: perftest's own report of the last row printed.
  if (opt.out_json && (!run.bw_rows.empty() || !run.lat_rows.empty())) {
    const std::string text = perf::perftest_json(opt, facts, run.bw_rows.empty() ? nullptr : &run.bw_rows.back(),
                                                 run.lat_rows.empty() ? nullptr : &run.lat_rows.back());
    if (Status s = droce::apps::write_text_file(opt.out_json_file, text); !s.ok()) return fail(s.message());
  }

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
    auto keys_json = [](const PerftestKeys& k, const IpAddress& ip) {
      return nlohmann::json{{"qpn", k.qpn}, {"psn", k.psn}, {"rkey", k.rkey}, {"vaddr", k.vaddr}, {"ip", ip_text(ip)}};
    };
    IpAddress pip;
    if (!peer.empty()) (void)peer_ip_of_gid(peer[0].gid, local_ip, pip);
    j["local"] = keys_json(mine[0], local_ip);
    if (!peer.empty()) j["remote"] = keys_json(peer[0], pip);
    char mac_text[18];
    std::snprintf(mac_text, sizeof(mac_text), "%02x:%02x:%02x:%02x:%02x:%02x", peer_mac0[0], peer_mac0[1], peer_mac0[2],
                  peer_mac0[3], peer_mac0[4], peer_mac0[5]);
    j["remote"]["mac"] = mac_text;
    j["remote"]["mac_from"] = !peer_mac.by_arp() ? "--peer-mac" : local_ip.ipv6 ? "nd" : "arp";
    j["retransmitted_packets"] = tt.retransmitted;
    j["naks_sent"] = tt.naks_sent;
    j["naks_received"] = tt.naks_received;
    j["ack_timeouts"] = tt.ack_timeouts;  // every expiry, the adaptive ones included
    j["adaptive_timeouts"] = tt.adaptive_timeouts;
    j["tail_probes"] = tt.tail_probes;
    j["spurious_retransmits"] = tt.spurious_retransmits;
    j["adaptive_rto"] = opt.adaptive_rto;
    j["rnr_naks"] = tt.rnr_naks;  // received, as before
    j["rnr_naks_received"] = tt.rnr_naks;
    j["rnr_naks_sent"] = tt.rnr_naks_sent;
    j["bidirectional"] = opt.duplex;
    if (opt.duplex) {
      nlohmann::json local = nlohmann::json::array(), remote = nlohmann::json::array();
      for (const auto& r : run.local_rows) local.push_back(perf::to_json(r));
      for (const auto& r : run.remote_rows) remote.push_back(perf::to_json(r));
      j["results_local"] = local;
      j["results_remote"] = remote;
    }
    j["impairment_dropped"] = impairment_dropped();
    if (!impairments.empty()) j["impairment"] = impairments.json();
    j["workers"] = workers->workers_json();
    if (opt.atomic_test()) {
      j["atomic_type"] = perf::atomic_type_name(opt.atomic);
      j["atomic_checked"] = t0.atomic_checked();
      j["atomic_mismatches"] = t0.atomic_mismatches();
    }
    j["problem"] = problem;
    if (!opt.pcap.empty()) j["capture"] = apps::capture_json(capture_opts, capture);
    perf::add_counter_names(j, *group, impairment_dropped());
    if (Status s = droce::apps::write_text_file(opt.json, j.dump(2) + "\n"); !s.ok()) return fail(s.message());
  }
  return problem.empty() ? 0 : 1;
}
