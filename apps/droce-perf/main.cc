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
#include "apps/droce-perf/report.h"
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
constexpr const char* kLine = "---------------------------------------------------------------------------------------\n";

int fail(const std::string& msg) {
  std::fprintf(stderr, "droce-perf: %s\n", msg.c_str());
  return 1;
}

// perftest's banner titles (the "test" line of ctx_print_test_info).
const char* title(PerftestTest t) {
  switch (t) {
    case PerftestTest::kSendBw: return "Send BW Test";
    case PerftestTest::kWriteBw: return "RDMA_Write BW Test";
    case PerftestTest::kReadBw: return "RDMA_Read BW Test";
    case PerftestTest::kSendLat: return "Send Latency Test";
    case PerftestTest::kWriteLat: return "RDMA_Write Latency Test";
    case PerftestTest::kReadLat: return "RDMA_Read Latency Test";
  }
  return "?";
}

// " local address: LID 0000 QPN 0x0011 PSN 0x6e9084[ OUT 0x80][ RKey 0x0009be VAddr 0x...]" and the
// GID in decimal, as perftest's ctx_print_pingpong_data prints them.
void print_address(const char* side, const PerftestKeys& k, PerftestTest t) {
  std::printf(" %s address: LID %#04x QPN %#06x PSN %#06x", side, k.lid, k.qpn, k.psn);
  if (t == PerftestTest::kReadBw || t == PerftestTest::kReadLat) std::printf(" OUT %#04x", k.out_reads);
  if (t != PerftestTest::kSendBw && t != PerftestTest::kSendLat)
    std::printf(" RKey %#08x VAddr %#016llx", k.rkey, static_cast<unsigned long long>(k.vaddr));
  std::printf("\n GID: ");
  for (int i = 0; i < 16; ++i) std::printf("%02d%s", k.gid[i], i == 15 ? "\n" : ":");
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
  // While a step waits for the peer, the transport keeps running. A passive server waits in one
  // step for the client's whole run: it gives up after --timeout seconds without a frame from the
  // client (the README's stall), not after a guess at how long the run takes.
  const std::uint64_t stall_tsc = static_cast<std::uint64_t>(opt.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  std::uint64_t idle_calls = 0, last_rx_frames = 0, last_rx_tsc = rte_rdtsc();
  bool watch_stall = false, stalled = false;
  session.set_idle([&] {
    const std::uint64_t now = rte_rdtsc();
    ep.poll(now);
    if ((++idle_calls & 1023) != 0 || !watch_stall || stalled) return;
    if (ep.counters().rx_frames != last_rx_frames) {
      last_rx_frames = ep.counters().rx_frames;
      last_rx_tsc = now;
    } else if (now - last_rx_tsc > stall_tsc) {
      stalled = true;
      end_tcp_waits_now();  // the step's own deadline is the whole run's: end it here
    }
  });
  // Traffic loops look at the connection now and then: a peer that ended (closed) ends our run too.
  const std::function<bool()> peer_closed = [&] { return conn.peer_hung_up(); };  // takes no byte
  PerftestPreamble pre;
  if (Status s = session.preamble(opt.mtu, pre); !s.ok()) return fail(s.message());

  // ---- QPs and memory (perftest's layout: per QP a send region, then per QP the region the peer
  // writes to or reads from, each max(size, cycle buffer) bytes) ----
  perf::Traffic traffic(opt, ep, memory, pre, buffers);
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

  std::printf("%s", kLine);
  std::printf("                    %s\n", title(opt.test));
  std::printf(" Dual-port       : OFF\t\tDevice         : droce (%s)\n", port->name().c_str());
  std::printf(" Number of qps   : %u\t\tTransport type : IB\n", opt.qps);
  std::printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
  if (!server || !opt.bw()) std::printf(" TX depth        : %u\n", traffic.tx_depth());
  if (server && (opt.test == PerftestTest::kSendBw)) std::printf(" RX depth        : %u\n", traffic.rx_depth());
  if (opt.bw()) std::printf(" CQ Moderation   : %u\n", traffic.cq_mod());
  std::printf(" Mtu             : %u[B]\n", pre.mtu);
  std::printf(" Link type       : Ethernet\n");
  std::printf(" GID index       : %d\n", opt.gid_index < 0 ? 0 : opt.gid_index);
  std::printf(" Max inline data : 0[B]\n");
  std::printf(" rdma_cm QPs\t : OFF\n");
  std::printf(" Data ex. method : Ethernet\n");
  std::printf("%s", kLine);
  for (const auto& k : mine) print_address("local", k, opt.test);
  for (const auto& k : peer) print_address("remote", k, opt.test);
  std::printf("%s", kLine);
  const bool lat_duration = !opt.bw() && opt.duration_s != 0;
  std::printf("%s\n", opt.bw() ? perf::bw_header(opt.report_gbits).c_str() : perf::lat_header(lat_duration).c_str());
  std::fflush(stdout);

  // ---- traffic, size by size, with perftest's barriers around each ----
  std::vector<perf::BwRow> bw_rows;
  std::vector<perf::LatRow> lat_rows;
  std::string problem;
  PerftestBwReport peer_report;
  const bool passive = server && (opt.test == PerftestTest::kWriteBw || opt.test == PerftestTest::kReadBw ||
                                  opt.test == PerftestTest::kReadLat);
  if (!passive) {
    for (std::uint32_t size : opt.sizes()) {
      traffic.prepare_receives(size);
      if (Status s = session.before_size(opt.test, mine[0]); !s.ok()) {
        problem = s.message();
        break;
      }
      if (opt.bw()) {
        perf::BwRow row;
        if (Status s = traffic.run_bw(size, row); !s.ok()) problem = s.message();
        else bw_rows.push_back(row);
        if (!problem.empty()) break;
        std::printf("%s\n", perf::bw_line(row).c_str());
      } else {
        perf::LatRow row;
        if (Status s = traffic.run_lat(size, row); !s.ok()) problem = s.message();
        else lat_rows.push_back(row);
        if (!problem.empty()) break;
        std::printf("%s\n", perf::lat_line(row).c_str());
      }
      std::fflush(stdout);
      if (Status s = session.after_size(opt.test, opt.all_sizes, mine[0]); !s.ok()) {
        problem = s.message();
        break;
      }
    }
  }
  // ---- the end: barrier, BW reports, "done" (a passive server waits here while the client runs) ----
  if (problem.empty()) {
    PerftestBwReport mine_report;
    if (!bw_rows.empty()) {
      // perftest swaps its last row's figures (MB/sec, whatever the client printed).
      const perf::BwRow& r = bw_rows.back();
      mine_report = {r.size, r.iters, r.peak, r.avg, r.msg_rate};
    }
    if (passive) {
      // The client's whole run happens inside this step: its deadline is a day, the stall watch
      // (--timeout seconds without a frame from the client) the working limit.
      session.set_timeout(24u * 3600 * 1000);
      last_rx_tsc = rte_rdtsc();
      watch_stall = true;
    }
    if (Status s = session.finish(opt.test, mine[0], mine_report, peer_report); !s.ok()) {
      problem = stalled ? "no frame from the client for " + std::to_string(static_cast<int>(opt.timeout_s)) +
                              " s while it should be running its test (is it running the same test?)"
                        : s.message();
    }
    else if (passive && opt.bw()) {
      // The server of write_bw/read_bw prints the client's figures, as perftest does.
      perf::BwRow r{peer_report.size, peer_report.iters, peer_report.bw_peak, peer_report.bw_avg, peer_report.msg_rate};
      bw_rows.push_back(r);
      std::printf("%s\n", perf::bw_line(r).c_str());
    }
  }
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
  std::printf("%s", kLine);
  const perf::TransportTotals tt = traffic.totals();
  if (tt.retransmitted != 0 || tt.naks_received != 0 || tt.naks_sent != 0 || tt.ack_timeouts != 0 || impairment)
    std::printf(" droce: retransmitted %llu  naks sent %llu / received %llu  ack timeouts %llu  rnr naks %llu  lab loss dropped %llu\n",
                static_cast<unsigned long long>(tt.retransmitted), static_cast<unsigned long long>(tt.naks_sent),
                static_cast<unsigned long long>(tt.naks_received), static_cast<unsigned long long>(tt.ack_timeouts),
                static_cast<unsigned long long>(tt.rnr_naks),
                static_cast<unsigned long long>(impairment ? impairment->counters().dropped : 0));
  if (stop_requested()) problem = "interrupted";
  if (!problem.empty()) std::fprintf(stderr, "droce-perf: %s\n", problem.c_str());
  ep.finish();

  if (!opt.json.empty()) {
    nlohmann::json j;
    j["test"] = perftest_test_name(opt.test);
    j["role"] = server ? "server" : "client";
    j["peer_version"] = pre.peer_version;
    j["mtu"] = pre.mtu;
    j["qps"] = opt.qps;
    j["unit"] = opt.bw() ? (opt.report_gbits ? "Gb/sec" : "MB/sec") : "usec";
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : bw_rows) rows.push_back(perf::to_json(r));
    for (const auto& r : lat_rows) rows.push_back(perf::to_json(r));
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
