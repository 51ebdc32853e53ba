// droce-echo: a request/response service embedded the way a user embeds droce — written only
// against the public API (RcEndpoint, MessageView, QpChannel, OobConnection). The server echoes
// each message back; the client measures round-trip times. The client's logic runs either on the
// worker itself (polling inline) or on an ordinary application thread through QpChannel.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <rte_lcore.h>

#include "apps/droce-echo/echo_client.h"
#include "apps/droce-echo/echo_server.h"
#include "apps/droce-echo/options.h"
#include "apps/common/output_file.h"
#include "apps/common/address_text.h"
#include "apps/common/default_port.h"
#include "apps/common/oob_waits.h"
#include "apps/common/worker_limits.h"
#include "engine/core/eal.h"
#include "apps/common/latency_histogram.h"
#include "engine/lab/link_impairment.h"
#include "engine/lab/loopback_lab.h"
#include "engine/core/mempool.h"
#include "engine/exchange/oob_exchange.h"
#include "engine/core/port.h"
#include "engine/endpoint/qp_channel.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/core/stop_signal.h"
#include "engine/workers/worker_group.h"
#include "protocols/wire/icrc.h"

using namespace droce;
using namespace droce::engine;

namespace {

using echo::ClientState;
using echo::Options;
using echo::client_step;

rc::QpAttr echo_qp_attr(const Options& o, std::uint32_t psn) {
  rc::QpAttr a;
  a.pmtu = o.mtu;
  a.sq_psn = psn;
  a.timeout = o.qp_timeout;
  a.rnr_retry = 7;
  a.min_rnr_timer = 1;
  a.recv_mode = rc::RecvMode::kMessageViews;  // requests and replies arrive as zero-copy views
  a.max_message_bytes = 65536;
  a.rq_depth = 64;
  return a;
}

constexpr std::uint32_t kMaxQps = 64;  // --qps's limit: what a server takes from a client

// Where one of our QPs lives.
struct QpPlace {
  std::uint32_t worker = 0;
  std::uint32_t qpn = 0;
};

// After the first QP's exchange between droce-echo peers: the client says how many QPs it opens
// and over how many queue pairs ("QPS <qps> <queue pairs>"); the server reads it. net_memif pairs
// the two sides' queues ring by ring, so a server whose queue pairs differ from the client's would
// send some replies where the client never reads: it refuses, naming both. A hostile count is
// refused with a line naming it.
Status exchange_qp_count(OobConnection& oob, bool server, std::uint32_t workers, std::uint32_t& qps,
                         std::uint32_t timeout_ms) {
  if (!server) return oob.send_line("QPS " + std::to_string(qps) + " " + std::to_string(workers), timeout_ms);
  std::string line;
  if (Status s = recv_line_stoppable(oob, line, timeout_ms, "the client's QP count"); !s.ok()) return s;
  const std::string_view v(line);
  const std::size_t space = v.find(' ', 4);
  std::uint64_t n = 0, w = 0;
  if (v.substr(0, 4) != "QPS " || space == std::string_view::npos || !parse_line_decimal(v.substr(4, space - 4), kMaxQps, n) ||
      n == 0 || !parse_line_decimal(v.substr(space + 1), 16, w) || w == 0)
    return Status::error("the client's QP count is not 'QPS <1.." + std::to_string(kMaxQps) + "> <1..16>': '" +
                         line.substr(0, 80) + "'");
  if (w != workers)
    return Status::error("the client has " + std::to_string(w) + " queue pair(s) and this server " + std::to_string(workers) +
                         ": give both the same --workers");
  qps = static_cast<std::uint32_t>(n);
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  // The CPUs we may use, before EAL pins this thread to its lcore: the application thread goes
  // on the others (threads inherit the pinning, and sharing the worker's CPU costs a scheduler
  // time slice per round trip).
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  (void)sched_getaffinity(0, sizeof(allowed), &allowed);
  SplitArgs split = split_args(argc, argv);
  Options o;
  if (int r = echo::parse_options(split.app, o); r != 0) return r > 0 ? 0 : 2;
  const bool defaults = split.eal.empty();
  // Loopback with an application thread needs the worker and that thread on two CPUs; a server
  // beside a client on one machine takes the last CPU.
  if (defaults) split.eal = default_pair_eal_args(o.mode == "server");
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-echo", split.eal, err);
  if (!eal) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
  wire::icrc_init();
  MbufPool pool;  // loopback's

  // ---- wiring: the lab, or our port and endpoint ----
  std::unique_ptr<LoopbackLab> lab;
  std::unique_ptr<Port> port;
  std::vector<std::unique_ptr<LinkImpairment>> impairments;
  std::vector<MbufPool> pools;                             // server/client: one per worker
  std::vector<std::unique_ptr<MemoryRegistry>> memories;   // one per worker
  std::unique_ptr<WorkerGroup> group;
  std::vector<QpPlace> own_qps;                            // QP i: its worker and QPN
  RcEndpoint* client_ep = nullptr;
  RcEndpoint* server_ep = nullptr;
  MemoryRegistry* client_mem = nullptr;
  MemoryRegistry* server_mem = nullptr;
  std::uint32_t client_qpn = 0, server_qpn = 0;
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  // The control connection stays open to a droce-echo peer for the end of the run (ibv_rc_pingpong
  // closes it after the exchange).
  OobConnection oob;
  RcPingpongServer listener;
  if (o.mode == "loopback") {
    if (Status s = MbufPool::create(PoolConfig{"echo_pool", 16383, 256, 2176 + 4096, -1}, pool); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    LoopbackLabConfig lc;
    lc.pool = pool.get();
    lc.max_qps = 1;
    lab = LoopbackLab::create(lc, err);
    if (!lab) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
    client_ep = &lab->a();
    server_ep = &lab->b();
    client_mem = &lab->memory_a();
    server_mem = &lab->memory_b();
    if (!client_ep->create_qp(echo_qp_attr(o, 0x100), client_qpn).ok() ||
        !server_ep->create_qp(echo_qp_attr(o, 0x200), server_qpn).ok() ||
        !client_ep->connect(client_qpn, RemoteQp{LoopbackLab::address(1), server_qpn, 0x200}).ok() ||
        !server_ep->connect(server_qpn, RemoteQp{LoopbackLab::address(0), client_qpn, 0x100}).ok())
      return std::fprintf(stderr, "droce-echo: cannot connect the loopback QPs\n"), 1;
  } else {
    const bool server = o.mode == "server";
    // --workers: the server's each need an lcore (the main one is worker 0); every worker, the
    // client's included, its own queue pair.
    if (server)
      if (std::string e = apps::workers_lcore_limit(o.workers); !e.empty())
        return std::fprintf(stderr, "droce-echo: %s\n", e.c_str()), 2;
    std::vector<unsigned> lcores;  // the lcore that polls each worker
    for (unsigned l = rte_get_main_lcore(); lcores.size() < o.workers && l < RTE_MAX_LCORE; l = server ? rte_get_next_lcore(l, 1, 0) : l)
      lcores.push_back(l);
    if (Status s = create_worker_pools(PoolConfig{"echo_pool", 16384 / o.workers - 1, 256, 2176 + 4096, -1}, lcores, pools); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    PortConfig pc;
    pc.rx_pool = pools[0].get();
    for (auto& p : pools) pc.rx_pools.push_back(p.get());
    pc.rx_queues = pc.tx_queues = static_cast<std::uint16_t>(o.workers);
    pc.promiscuous = true;
    if (Status s = pair_port_devargs(defaults, server, "/tmp/droce-echo.sock", pc.devargs); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    if (std::string e = apps::workers_queue_limit(o.workers, pc.devargs); !e.empty())
      return std::fprintf(stderr, "droce-echo: %s\n", e.c_str()), 2;
    port = Port::open(pc, err);
    if (!port) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
    if (Status s = port->wait_link_up(timeout_ms); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    // Before the first burst: a peer that ends (even killed) must not tear the rings down under us.
    if (Status s = port->hold_peer_events(5000); !s.ok()) std::fprintf(stderr, "droce-echo: warning: %s\n", s.message().c_str());
    std::uint8_t ip[4] = {10, 0, 0, static_cast<std::uint8_t>(server ? 2 : 1)};
    if (!o.local_ip.empty()) (void)parse_ipv4(o.local_ip, ip);  // validated by the parser
    const rte_ether_addr port_mac = port->mac();
    std::uint8_t mac[6];
    if (o.local_mac.empty() || !parse_mac(o.local_mac, mac)) std::memcpy(mac, port_mac.addr_bytes, 6);
    // The engine's workers, each with its own registry (no two lcores share a lookup cache).
    for (std::uint32_t w = 0; w < o.workers; ++w) memories.push_back(std::make_unique<MemoryRegistry>());
    WorkerGroupConfig wc;
    wc.workers = static_cast<std::uint16_t>(o.workers);
    wc.qps_per_worker = (kMaxQps + o.workers - 1) / o.workers;  // the server learns the client's count later
    for (auto& p : pools) wc.pools.push_back(p.get());
    for (auto& m : memories) wc.memories.push_back(m.get());
    wc.endpoint.port_id = port->id();
    wc.endpoint.pool = pools[0].get();
    wc.endpoint.memory = memories[0].get();
    wc.endpoint.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
    wc.endpoint.local = lab_address(ip, mac);
    group = WorkerGroup::create(wc, err);
    if (!group) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
    // Lab loss at our receive side, every queue (a seed each): the transport sees only the gaps.
    for (std::uint32_t q = 0; o.loss > 0 && q < o.workers; ++q) {
      ImpairmentConfig ic;
      ic.loss = o.loss;
      ic.seed = o.seed + q;
      impairments.push_back(LinkImpairment::attach(port->id(), static_cast<std::uint16_t>(q), ic, pools[q].get(), err));
      if (!impairments.back()) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
    }
    // The rc_pingpong exchange, once per QP (QP i on worker i % N); between droce-echo peers the
    // client says after the first how many QPs follow ("QPS n"). The peer's MAC is not in the
    // exchange, and the memif peer needs none.
    std::uint16_t bound = 0;
    // The exchange's own waits retry EINTR until their deadline: a Ctrl-C now closes the connection.
    set_stop_ends_tcp_waits(true);
    Status s = server ? listener.listen(o.oob_port, bound) : connect_stoppable(o.oob_host, o.oob_port, timeout_ms, oob);
    if (s.ok() && server) s = accept_stoppable(listener, timeout_ms, oob);
    std::uint32_t qps = server ? 1 : o.qps;
    for (std::uint32_t i = 0; s.ok() && i < qps; ++i) {
      RcEndpoint& ep = group->worker(static_cast<std::uint16_t>(i % o.workers)).endpoint();
      const std::uint32_t psn = (server ? 0x200 : 0x100) + i;
      std::uint32_t qpn = 0;
      s = ep.create_qp(echo_qp_attr(o, psn), qpn);
      ConnInfo local, peer;
      local.qpn = qpn;
      local.psn = psn;
      gid_from_ipv4(ip, local.gid);
      if (s.ok()) s = server ? oob.server_read_peer(peer, timeout_ms) : oob.exchange_as_client(local, peer, timeout_ms);
      // The peer's IP comes from its GID; its MAC from --peer-mac (a real peer needs it), else the
      // lab convention 02:00:<IPv4>.
      std::uint8_t peer_ip[4] = {}, peer_mac[6];
      if (s.ok()) s = ipv4_from_gid(peer.gid, peer_ip);
      const wire::L2L3Address remote = lab_address(peer_ip, !o.peer_mac.empty() && parse_mac(o.peer_mac, peer_mac) ? peer_mac : nullptr);
      if (s.ok()) s = ep.connect(qpn, RemoteQp{remote, peer.qpn, peer.psn});
      if (s.ok() && server) s = oob.server_answer(local, timeout_ms);
      if (s.ok()) own_qps.push_back({i % o.workers, qpn});
      if (s.ok() && i == 0 && !o.rc_pingpong()) s = exchange_qp_count(oob, server, o.workers, qps, timeout_ms);
    }
    set_stop_ends_tcp_waits(false);
    // Our own Ctrl-C closed the connection: the exchange's error says "peer closed", not the cause.
    if (stop_requested()) return std::fprintf(stderr, "droce-echo: interrupted during the connection exchange\n"), 1;
    if (!s.ok()) return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    RcEndpoint& ep0 = group->worker(0).endpoint();
    (server ? server_ep : client_ep) = &ep0;
    (server ? server_mem : client_mem) = memories[0].get();
    (server ? server_qpn : client_qpn) = own_qps[0].qpn;
  }

  const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
  const auto stall_tsc = static_cast<std::uint64_t>(o.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  std::unique_ptr<echo::EchoWorker> echo;  // loopback: the server's half of the lab
  if (server_ep != nullptr && lab) {
    echo = std::make_unique<echo::EchoWorker>(*server_ep, *server_mem, o.rc_pingpong());
    echo->add_qp(server_qpn);
  }

  const std::uint64_t total = o.warmup + o.count;
  // The end of a run between two droce-echo processes, over the control connection: the client
  // says END (it polls on until the server's DONE: every reply acknowledged), then BYE when it
  // polls no more; the server stops its port and answers BYE; then the client stops its port. No
  // port is torn down while its peer still polls. A server that ends first says STOP.
  const bool lines = !o.rc_pingpong() && oob.is_open();
  constexpr std::uint32_t kEndWaitMs = 10000;  // each end-of-run step (the peer may be descheduled)
  // Non-blocking look at the control connection from a poll loop: a line, or the peer gone.
  auto peer_said = [&](std::string& line, bool& gone) {
    bool closed = false;
    const bool got = oob.poll_line(line, closed);
    gone = closed;
    return got;
  };

  // ---- the server alone ----
  if (client_ep == nullptr) {
    std::vector<std::unique_ptr<echo::EchoWorker>> ws;
    for (std::uint16_t w = 0; w < o.workers; ++w)
      ws.push_back(std::make_unique<echo::EchoWorker>(group->worker(w).endpoint(), *memories[w], o.rc_pingpong(), &group->worker(w)));
    for (const QpPlace& q : own_qps) ws[q.worker]->add_qp(q.qpn);
    echo::EchoWorkers workers(std::move(ws));
    int rc = 1;
    if (Status s = workers.launch(); !s.ok()) std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str());
    else rc = echo::run_server(o, workers, oob, port.get(), impairments);
    workers.stop();
    group->finish();
    return rc;
  }

  // ---- the client: per QP a request buffer (in its worker's registry) and its state machine ----
  struct ClientQp {
    RcEndpoint* ep = nullptr;
    std::uint32_t qpn = 0;
    std::vector<std::uint8_t> req;
    rc::MemoryRegion mr;
    std::unique_ptr<ClientState> st = std::make_unique<ClientState>();
  };
  LatencyHistogram hist;  // every QP's round trips
  std::vector<ClientQp> cqs;
  if (lab) own_qps = {{0, client_qpn}};
  for (const QpPlace& q : own_qps) {
    ClientQp& c = cqs.emplace_back();
    c.ep = lab ? client_ep : &group->worker(static_cast<std::uint16_t>(q.worker)).endpoint();
    c.qpn = q.qpn;
    c.req.resize(o.size);
    c.st->hist = &hist;
    MemoryRegistry& mem = lab ? *client_mem : *memories[q.worker];
    if (Status s = mem.register_memory(c.req.data(), c.req.size(), rc::kAccessLocalWrite, c.mr); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
  }
  const std::uint64_t all_total = total * cqs.size();
  auto done_total = [&] {
    std::uint64_t n = 0;
    for (const auto& c : cqs) n += c.st->done;
    return n;
  };
  auto poll_all = [&](std::uint64_t now) {
    if (lab) {
      lab->poll(now);
    } else {
      for (std::uint16_t w = 0; w < group->size(); ++w) group->worker(w).poll(now);
    }
    // The loopback lab's server side serves as its endpoint's application stage (EchoWorker).
  };
  // After the last message: keep polling a little so that our final ACKs leave and a peer's
  // retransmission (its ACK from us lost or late) is still answered, instead of leaving the peer
  // to exhaust its retries against a closed port.
  auto linger = [&] {
    const std::uint64_t until = rte_rdtsc() + rte_get_tsc_hz() / 5;
    for (std::uint64_t now = rte_rdtsc(); now < until && !stop_requested(); now = rte_rdtsc()) poll_all(now);
  };
  std::uint64_t send_errors = 0;
  std::string first_send_error;  // the status of the first failed send, for the report
  auto count_send = [&](const rc::Completion& c) {
    if (c.status == rc::WcStatus::kSuccess) return;
    if (send_errors++ == 0) first_send_error = std::string(rc::wc_status_name(c.status));
  };
  std::uint64_t last_progress = rte_rdtsc(), last_done = 0, iter = 0;
  bool stalled = false, server_gone = false;
  std::string server_stop;
  // Every 1024 rounds of a poll loop: has the server stopped the run, or gone?
  auto server_ended = [&] {
    if (!lines || (++iter & 1023) != 0) return false;
    std::string line;
    if (peer_said(line, server_gone)) {
      server_stop = line.rfind("STOP ", 0) == 0 ? line.substr(5, 80) : "unexpected line '" + line.substr(0, 80) + "'";
      return true;
    }
    return server_gone;
  };
  if (lab == nullptr) {
    std::printf("droce-echo client: connected, %llu round trips to go\n", static_cast<unsigned long long>(all_total));
    std::fflush(stdout);
  }
  if (o.thread == "worker") {
    // The application is the worker: one thread, no handoff; each QP one round trip in flight.
    while (!stop_requested() && done_total() < all_total && !server_ended()) {
      poll_all(rte_rdtsc());
      for (auto& q : cqs) {
        rc::Completion c[8];
        for (unsigned n = q.ep->poll_cq(q.qpn, c, 8), i = 0; i < n; ++i) count_send(c[i]);
        client_step(*q.st, o, q.req.data(), ns_per_tsc,
                    [&](std::uint32_t seq) {
                      return q.ep->send_message(q.qpn, q.req.data(), o.size, seq, o.rc_pingpong() ? nullptr : &seq).ok();
                    },
                    [&](MessageView& v) { return q.ep->receive_message(q.qpn, v); },
                    [&](MessageView& v) { q.ep->release(v); });
      }
      const std::uint64_t now = rte_rdtsc();
      if (const std::uint64_t d = done_total(); d != last_done) {
        last_done = d;
        last_progress = now;
      } else if (now - last_progress > stall_tsc) {
        stalled = true;
        break;
      }
    }
    if (o.rc_pingpong() && !stalled) linger();
  } else {
    // The application is another thread: it talks to the worker only through the channel (one
    // QP on one worker: the parser allows nothing else).
    ClientState& st = *cqs[0].st;
    std::vector<std::uint8_t>& req = cqs[0].req;
    const rc::MemoryRegion& req_mr = cqs[0].mr;
    QpChannel channel(256);
    std::atomic<bool> stop{false};
    cpu_set_t others = allowed;
    const unsigned worker_cpu = rte_lcore_to_cpu_id(static_cast<int>(rte_lcore_id()));
    if (CPU_COUNT(&others) > 1) CPU_CLR(worker_cpu, &others);
    std::thread app([&] {
      (void)sched_setaffinity(0, sizeof(others), &others);
      ClientState& s = st;
      while (!stop.load(std::memory_order_relaxed) && s.done < total) {
        rc::Completion c;
        while (channel.poll(c)) count_send(c);
        client_step(s, o, req.data(), ns_per_tsc,
                    [&](std::uint32_t seq) {
                      rc::SendWr w;
                      w.wr_id = seq;
                      w.opcode = rc::WrOpcode::kSendWithImm;
                      w.imm = seq;
                      w.sge = {reinterpret_cast<std::uint64_t>(req.data()), o.size, req_mr.lkey};
                      return channel.post_send(w);
                    },
                    [&](MessageView& v) { return channel.poll_message(v); },
                    [&](MessageView& v) {
                      if (!channel.release(v)) ++s.bad;  // cannot happen: capacity >= rq_depth
                    });
      }
    });
    std::uint64_t seen = 0;
    while (!stop_requested() && st.progress.load(std::memory_order_relaxed) < total && !server_ended()) {
      const std::uint64_t now = rte_rdtsc();
      poll_all(now);
      channel.service(*client_ep, client_qpn);
      // Progress watch: the app thread publishes its count; relaxed is enough for a timeout.
      const std::uint64_t d = st.progress.load(std::memory_order_relaxed);
      if (d != seen) {
        seen = d;
        last_progress = now;
      } else if (now - last_progress > stall_tsc) {
        stalled = true;
        break;
      }
    }
    stop = true;
    app.join();
    for (int i = 0; i < 4; ++i) channel.service(*client_ep, client_qpn);
  }
  std::string problem;
  if (lines && server_gone) {
    problem = "the server disappeared during the run (control connection closed)";
  } else if (lines) {
    // Poll on until the server's DONE (our last ACKs delivered), then BYE once we poll no more.
    std::string line;
    const bool sent = oob.send_line("END " + std::to_string(done_total()), 5000).ok();
    const LineWait w = sent ? wait_line(oob, line, kEndWaitMs, [&] { poll_all(rte_rdtsc()); }, false) : LineWait::kClosed;
    if (w != LineWait::kLine)
      problem = w == LineWait::kClosed ? "the server closed the control connection before the end of the run"
                                       : "no end-of-run answer from the server within 10 s";
    if (!server_stop.empty()) problem = "the server ended the run early (" + server_stop + ")";
    if (w == LineWait::kLine && oob.send_line("BYE", 5000).ok()) (void)wait_line(oob, line, kEndWaitMs, {}, false);
  }
  if (port) port->stop();
  if (problem.empty() && stop_requested()) problem = "interrupted";
  if (lab) lab->finish();
  else group->finish();

  const auto& h = hist;
  std::uint64_t bad = 0;
  for (const auto& c : cqs) bad += c.st->bad;
  std::printf("droce-echo %s (%s thread): %llu round trips of %u bytes after %llu warm-up\n", o.mode.c_str(),
              o.thread.c_str(), static_cast<unsigned long long>(h.count()), o.size,
              static_cast<unsigned long long>(o.warmup));
  std::printf("  RTT ns: min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu\n",
              static_cast<unsigned long long>(h.min()), static_cast<unsigned long long>(h.percentile(0.5)),
              static_cast<unsigned long long>(h.percentile(0.9)), static_cast<unsigned long long>(h.percentile(0.99)),
              static_cast<unsigned long long>(h.percentile(0.999)), static_cast<unsigned long long>(h.max()));
  std::printf("  bad replies %llu, send errors %llu%s%s\n", static_cast<unsigned long long>(bad),
              static_cast<unsigned long long>(send_errors),
              first_send_error.empty() ? "" : (" (first: " + first_send_error + ")").c_str(),
              stalled ? ", STALLED (no reply within --timeout)" : "");
  if (!impairments.empty()) {
    std::uint64_t dropped = 0, frames = 0;
    for (const auto& i : impairments) {
      dropped += i->counters().dropped;
      frames += i->counters().frames;
    }
    std::printf("  impairment dropped %llu of %llu received frames\n", static_cast<unsigned long long>(dropped),
                static_cast<unsigned long long>(frames));
  }
  // The endpoint's own view of the run: what it dropped and why, so a stall can be read.
  const EndpointCounters ec = lab ? client_ep->counters() : group->endpoint_totals();
  nlohmann::json drops = nlohmann::json::object();
  for (std::size_t r = 0; r < wire::kDropReasonCount; ++r)
    if (ec.rx_drops[r] != 0) drops[std::string(wire::drop_reason_name(static_cast<wire::DropReason>(r)))] = ec.rx_drops[r];
  if (stalled || send_errors != 0)
    std::printf("  endpoint: rx frames %llu, linearised %llu, view drops %llu, tx alloc failures %llu, rx drops %s\n",
                static_cast<unsigned long long>(ec.rx_frames), static_cast<unsigned long long>(ec.rx_linearized),
                static_cast<unsigned long long>(ec.rx_view_drops), static_cast<unsigned long long>(ec.tx_alloc_failures),
                drops.dump().c_str());
  if (!o.json.empty()) {
    nlohmann::json j;
    j["endpoint"] = {{"rx_frames", ec.rx_frames}, {"rx_linearized", ec.rx_linearized}, {"rx_view_drops", ec.rx_view_drops},
                     {"tx_alloc_failures", ec.tx_alloc_failures}, {"rx_drops", drops}};
    j["mode"] = o.mode;
    j["thread"] = o.thread;
    j["size"] = o.size;
    j["round_trips"] = h.count();
    j["rtt_ns"] = {{"min", h.min()}, {"p50", h.percentile(0.5)}, {"p90", h.percentile(0.9)}, {"p99", h.percentile(0.99)},
                   {"p999", h.percentile(0.999)}, {"max", h.max()}};
    j["qps"] = cqs.size();
    j["bad_replies"] = bad;
    j["send_errors"] = send_errors;
    j["stalled"] = stalled;
    j["problem"] = problem;
    if (std::string e = droce::apps::write_text_file(o.json, j.dump(2) + "\n"); !e.empty()) {
      std::fprintf(stderr, "droce-echo: %s\n", e.c_str());
      return 1;
    }
  }
  if (!problem.empty()) std::fprintf(stderr, "droce-echo: %s\n", problem.c_str());
  return bad == 0 && send_errors == 0 && !stalled && h.count() == o.count * cqs.size() && problem.empty() ? 0 : 1;
}
