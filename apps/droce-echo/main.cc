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

#include "engine/default_port.h"
#include "engine/eal.h"
#include "engine/latency_histogram.h"
#include "engine/loopback_lab.h"
#include "engine/mempool.h"
#include "engine/oob_exchange.h"
#include "engine/port.h"
#include "engine/qp_channel.h"
#include "engine/rc_endpoint.h"
#include "engine/stop_signal.h"
#include "protocols/wire/icrc.h"

using namespace droce;
using namespace droce::engine;

namespace {

struct Options {
  std::string mode = "loopback";  // loopback | server | client
  std::string thread = "worker";  // worker | app
  std::uint32_t size = 64;
  std::uint64_t count = 100000;
  std::uint64_t warmup = 1000;
  std::uint16_t oob_port = 18516;
  std::string oob_host = "127.0.0.1";
  double timeout_s = 30;
  std::string json;
};

void usage(const Options& d) {
  std::printf(
      "usage: droce-echo [EAL options] -- [options]\n"
      "A request/response service on droce's messaging API: the server echoes every message, the\n"
      "client sends one at a time and reports round-trip times. With no EAL options, loopback runs\n"
      "both in this process over net_ring; server/client use net_memif on /tmp/droce-echo.sock.\n\n"
      "  --mode loopback|server|client  (default %s)\n"
      "  --thread worker|app      client logic on the worker lcore, polling inline, or on an application\n"
      "                           thread handing work over through QpChannel (default %s)\n"
      "  --size BYTES             message size, 1..65536 (default %u)\n"
      "  --count N                measured round trips (default %llu)\n"
      "  --warmup N               round trips before measuring (default %llu)\n"
      "  --oob-port N             TCP port of the connection exchange (default %u)\n"
      "  --oob-host HOST          the server's host, for the client (default %s)\n"
      "  --timeout S              give up after this long without progress (default %g)\n"
      "  --json FILE              results as JSON (rtt_ns p50/p90/p99/p999/max)\n",
      d.mode.c_str(), d.thread.c_str(), d.size, static_cast<unsigned long long>(d.count),
      static_cast<unsigned long long>(d.warmup), d.oob_port, d.oob_host.c_str(), d.timeout_s);
}

int parse(const std::vector<std::string>& args, Options& o) {
  const Options d;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      usage(d);
      return 1;
    }
    if (i + 1 >= args.size()) return std::fprintf(stderr, "droce-echo: %s needs a value (or is unknown; see --help)\n", a.c_str()), -1;
    const std::string v = args[++i];
    char* end = nullptr;
    const double n = std::strtod(v.c_str(), &end);
    const bool num = !v.empty() && *end == '\0';
    auto bad = [&](const char* what) { return std::fprintf(stderr, "droce-echo: %s: '%s' %s\n", a.c_str(), v.c_str(), what), -1; };
    if (a == "--mode") {
      if (v != "loopback" && v != "server" && v != "client") return bad("is not loopback, server or client");
      o.mode = v;
    } else if (a == "--thread") {
      if (v != "worker" && v != "app") return bad("is not worker or app");
      o.thread = v;
    } else if (a == "--size") {
      if (!num || n < 1 || n > 65536) return bad("is not a size in 1..65536");
      o.size = static_cast<std::uint32_t>(n);
    } else if (a == "--count" || a == "--warmup") {
      if (!num || n < (a == "--count" ? 1 : 0) || n > 1e10) return bad("is not a count");
      (a == "--count" ? o.count : o.warmup) = static_cast<std::uint64_t>(n);
    } else if (a == "--oob-port") {
      if (!num || n < 1 || n > 65535) return bad("is not a TCP port");
      o.oob_port = static_cast<std::uint16_t>(n);
    } else if (a == "--oob-host") {
      o.oob_host = v;
    } else if (a == "--timeout") {
      if (!num || n < 0.1 || n > 3600) return bad("is not a number of seconds in [0.1, 3600]");
      o.timeout_s = n;
    } else if (a == "--json") {
      o.json = v;
    } else {
      return std::fprintf(stderr, "droce-echo: unknown option '%s' (see --help)\n", a.c_str()), -1;
    }
  }
  if (o.mode == "server" && o.thread == "app")
    return std::fprintf(stderr, "droce-echo: --thread app is the client's; the server always echoes on its worker\n"), -1;
  return 0;
}

rc::QpAttr echo_qp_attr(std::uint32_t psn) {
  rc::QpAttr a;
  a.pmtu = 4096;
  a.sq_psn = psn;
  a.timeout = 10;
  a.rnr_retry = 7;
  a.min_rnr_timer = 1;
  a.recv_mode = rc::RecvMode::kMessageViews;  // requests and replies arrive as zero-copy views
  a.max_message_bytes = 65536;
  a.rq_depth = 64;
  return a;
}

// The service: every received message goes back with the same immediate data. The reply is
// copied out of the view into registered memory (a view's frames are not registered memory).
class EchoServer {
 public:
  EchoServer(RcEndpoint& ep, MemoryRegistry& mem, std::uint32_t qpn) : ep_(ep), qpn_(qpn), buf_(kSlots * 65536) {
    (void)mem.register_memory(buf_.data(), buf_.size(), rc::kAccessLocalWrite, mr_);
  }
  void serve() {
    rc::Completion c[16];
    for (unsigned n = ep_.poll_cq(qpn_, c, 16), i = 0; i < n; ++i) {
      --outstanding_;
      if (c[i].status != rc::WcStatus::kSuccess) ++errors_;
    }
    MessageView v;
    while (outstanding_ < kSlots && ep_.receive_message(qpn_, v)) {
      std::uint8_t* slot = buf_.data() + (next_++ % kSlots) * 65536;
      const std::uint32_t len = v.copy_to(slot, 65536);
      const std::uint32_t imm = v.imm;
      ep_.release(v);
      if (ep_.send_message(qpn_, slot, len, next_, &imm).ok()) ++outstanding_;
      else ++errors_;
      ++echoed_;
    }
  }
  [[nodiscard]] std::uint64_t echoed() const { return echoed_; }
  [[nodiscard]] std::uint64_t errors() const { return errors_; }

 private:
  static constexpr std::uint32_t kSlots = 32;
  RcEndpoint& ep_;
  std::uint32_t qpn_;
  std::vector<std::uint8_t> buf_;
  rc::MemoryRegion mr_;
  std::uint64_t next_ = 0, echoed_ = 0, errors_ = 0;
  std::uint32_t outstanding_ = 0;
};

std::uint8_t pat(std::uint64_t seq, std::uint32_t i) { return static_cast<std::uint8_t>(seq * 31 + i); }

// The client's state machine, the same in both thread modes: the transport calls differ only in
// whether they go to the endpoint directly or through the channel.
struct ClientState {
  std::uint64_t seq = 0, done = 0, bad = 0;
  bool waiting = false;
  std::uint64_t t0 = 0;
  LatencyHistogram hist;
  std::atomic<std::uint64_t> progress{0};  // `done`, published for the worker's stall watch
};

template <typename Send, typename Receive, typename Release>
void client_step(ClientState& s, const Options& o, std::uint8_t* buf, double ns_per_tsc, Send send, Receive receive,
                 Release release) {
  if (!s.waiting && s.done < o.warmup + o.count) {
    for (std::uint32_t i = 0; i < o.size; ++i) buf[i] = pat(s.seq, i);
    s.t0 = rte_rdtsc();
    if (send(static_cast<std::uint32_t>(s.seq))) s.waiting = true;
  }
  MessageView v;
  if (s.waiting && receive(v)) {
    const std::uint64_t rtt = static_cast<std::uint64_t>(static_cast<double>(rte_rdtsc() - s.t0) * ns_per_tsc);
    bool ok = v.imm == static_cast<std::uint32_t>(s.seq) && v.length == o.size;
    std::uint32_t off = 0;
    v.for_each_fragment([&](const std::uint8_t* p, std::uint32_t n) {
      for (std::uint32_t i = 0; ok && i < n; ++i) ok = p[i] == pat(s.seq, off + i);
      off += n;
    });
    s.bad += !ok;
    release(v);
    if (s.done >= o.warmup) s.hist.record(rtt);
    ++s.done;
    s.progress.store(s.done, std::memory_order_relaxed);
    ++s.seq;
    s.waiting = false;
  }
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
  if (int r = parse(split.app, o); r != 0) return r > 0 ? 0 : 2;
  const bool defaults = split.eal.empty();
  // Loopback with an application thread needs the worker and that thread on two CPUs; a server
  // beside a client on one machine takes the last CPU.
  if (defaults) split.eal = default_pair_eal_args(o.mode == "server");
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-echo", split.eal, err);
  if (!eal) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
  wire::icrc_init();
  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"echo_pool", 16383, 256, 2176 + 4096, -1}, pool); !s.ok())
    return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;

  // ---- wiring: the lab, or our port and endpoint ----
  std::unique_ptr<LoopbackLab> lab;
  std::unique_ptr<Port> port;
  MemoryRegistry own_mem;
  std::unique_ptr<RcEndpoint> own_ep;
  RcEndpoint* client_ep = nullptr;
  RcEndpoint* server_ep = nullptr;
  MemoryRegistry* client_mem = nullptr;
  MemoryRegistry* server_mem = nullptr;
  std::uint32_t client_qpn = 0, server_qpn = 0;
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  if (o.mode == "loopback") {
    LoopbackLabConfig lc;
    lc.pool = pool.get();
    lc.max_qps = 1;
    lab = LoopbackLab::create(lc, err);
    if (!lab) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
    client_ep = &lab->a();
    server_ep = &lab->b();
    client_mem = &lab->memory_a();
    server_mem = &lab->memory_b();
    if (!client_ep->create_qp(echo_qp_attr(0x100), client_qpn).ok() ||
        !server_ep->create_qp(echo_qp_attr(0x200), server_qpn).ok() ||
        !client_ep->connect(client_qpn, RemoteQp{LoopbackLab::address(1), server_qpn, 0x200}).ok() ||
        !server_ep->connect(server_qpn, RemoteQp{LoopbackLab::address(0), client_qpn, 0x100}).ok())
      return std::fprintf(stderr, "droce-echo: cannot connect the loopback QPs\n"), 1;
  } else {
    const bool server = o.mode == "server";
    PortConfig pc;
    pc.rx_pool = pool.get();
    pc.promiscuous = true;
    if (Status s = pair_port_devargs(defaults, server, "/tmp/droce-echo.sock", pc.devargs); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    port = Port::open(pc, err);
    if (!port) return std::fprintf(stderr, "droce-echo: %s\n", err.message().c_str()), 1;
    if (Status s = port->wait_link_up(timeout_ms); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s (is the peer running?)\n", s.message().c_str()), 1;
    EndpointConfig ec;
    ec.port_id = port->id();
    ec.pool = pool.get();
    ec.memory = &own_mem;
    ec.max_qps = 1;
    const std::uint8_t ip[4] = {10, 0, 0, static_cast<std::uint8_t>(server ? 2 : 1)};
    std::memcpy(ec.local.ip, ip, 4);
    const rte_ether_addr mac = port->mac();
    std::memcpy(ec.local.mac, mac.addr_bytes, 6);
    own_ep = std::make_unique<RcEndpoint>(ec);
    std::uint32_t qpn = 0;
    if (Status s = own_ep->create_qp(echo_qp_attr(server ? 0x200 : 0x100), qpn); !s.ok())
      return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    // The rc_pingpong exchange; the peer's MAC is not in it, and the memif peer needs none.
    ConnInfo local, peer;
    local.qpn = qpn;
    local.psn = server ? 0x200 : 0x100;
    gid_from_ipv4(ip, local.gid);
    OobConnection oob;
    RcPingpongServer listener;
    std::uint16_t bound = 0;
    Status s = server ? listener.listen(o.oob_port, bound) : OobConnection::connect(o.oob_host, o.oob_port, timeout_ms, oob);
    if (s.ok() && server) s = listener.accept(timeout_ms, oob);
    if (s.ok()) s = server ? oob.server_read_peer(peer, timeout_ms) : oob.exchange_as_client(local, peer, timeout_ms);
    wire::L2L3Address remote;
    if (s.ok()) s = ipv4_from_gid(peer.gid, remote.ip);
    remote.mac[0] = 0x02;
    std::memcpy(remote.mac + 2, remote.ip, 4);
    if (s.ok()) s = own_ep->connect(qpn, RemoteQp{remote, peer.qpn, peer.psn});
    if (s.ok() && server) s = oob.server_answer(local, timeout_ms);
    if (!s.ok()) return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
    (server ? server_ep : client_ep) = own_ep.get();
    (server ? server_mem : client_mem) = &own_mem;
    (server ? server_qpn : client_qpn) = qpn;
  }

  const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
  const auto stall_tsc = static_cast<std::uint64_t>(o.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  std::unique_ptr<EchoServer> echo;
  if (server_ep != nullptr) echo = std::make_unique<EchoServer>(*server_ep, *server_mem, server_qpn);

  // ---- the server alone: echo until stopped or idle for --timeout after the first message ----
  if (client_ep == nullptr) {
    std::uint64_t last = rte_rdtsc(), seen = 0;
    while (!stop_requested()) {
      const std::uint64_t now = rte_rdtsc();
      server_ep->poll(now);
      echo->serve();
      if (echo->echoed() != seen) {
        seen = echo->echoed();
        last = now;
      } else if (now - last > stall_tsc) {
        break;
      }
    }
    server_ep->finish();
    std::printf("droce-echo server: echoed %llu messages, %llu errors\n", static_cast<unsigned long long>(echo->echoed()),
                static_cast<unsigned long long>(echo->errors()));
    return echo->errors() == 0 && echo->echoed() > 0 ? 0 : 1;
  }

  // ---- the client ----
  std::vector<std::uint8_t> req(o.size);
  rc::MemoryRegion req_mr;
  if (Status s = client_mem->register_memory(req.data(), req.size(), rc::kAccessLocalWrite, req_mr); !s.ok())
    return std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str()), 1;
  auto poll_all = [&](std::uint64_t now) {
    if (lab) lab->poll(now);
    else client_ep->poll(now);
    if (echo) echo->serve();
  };
  ClientState st;
  std::uint64_t send_errors = 0;
  const std::uint64_t total = o.warmup + o.count;
  std::uint64_t last_progress = rte_rdtsc(), last_done = 0;
  bool stalled = false;
  if (o.thread == "worker") {
    // The application is the worker: one thread, no handoff.
    while (!stop_requested() && st.done < total) {
      poll_all(rte_rdtsc());
      rc::Completion c[8];
      for (unsigned n = client_ep->poll_cq(client_qpn, c, 8), i = 0; i < n; ++i)
        send_errors += c[i].status != rc::WcStatus::kSuccess;
      client_step(st, o, req.data(), ns_per_tsc,
                  [&](std::uint32_t seq) { return client_ep->send_message(client_qpn, req.data(), o.size, seq, &seq).ok(); },
                  [&](MessageView& v) { return client_ep->receive_message(client_qpn, v); },
                  [&](MessageView& v) { client_ep->release(v); });
      const std::uint64_t now = rte_rdtsc();
      if (st.done != last_done) {
        last_done = st.done;
        last_progress = now;
      } else if (now - last_progress > stall_tsc) {
        stalled = true;
        break;
      }
    }
  } else {
    // The application is another thread: it talks to the worker only through the channel.
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
        while (channel.poll(c)) send_errors += c.status != rc::WcStatus::kSuccess;
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
    while (!stop_requested() && st.progress.load(std::memory_order_relaxed) < total) {
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
  if (lab) lab->finish();
  else client_ep->finish();

  const auto& h = st.hist;
  std::printf("droce-echo %s (%s thread): %llu round trips of %u bytes after %llu warm-up\n", o.mode.c_str(),
              o.thread.c_str(), static_cast<unsigned long long>(h.count()), o.size,
              static_cast<unsigned long long>(o.warmup));
  std::printf("  RTT ns: min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu\n",
              static_cast<unsigned long long>(h.min()), static_cast<unsigned long long>(h.percentile(0.5)),
              static_cast<unsigned long long>(h.percentile(0.9)), static_cast<unsigned long long>(h.percentile(0.99)),
              static_cast<unsigned long long>(h.percentile(0.999)), static_cast<unsigned long long>(h.max()));
  std::printf("  bad replies %llu, send errors %llu%s\n", static_cast<unsigned long long>(st.bad),
              static_cast<unsigned long long>(send_errors), stalled ? ", STALLED (no reply within --timeout)" : "");
  if (!o.json.empty()) {
    nlohmann::json j;
    j["mode"] = o.mode;
    j["thread"] = o.thread;
    j["size"] = o.size;
    j["round_trips"] = h.count();
    j["rtt_ns"] = {{"min", h.min()}, {"p50", h.percentile(0.5)}, {"p90", h.percentile(0.9)}, {"p99", h.percentile(0.99)},
                   {"p999", h.percentile(0.999)}, {"max", h.max()}};
    j["bad_replies"] = st.bad;
    j["send_errors"] = send_errors;
    j["stalled"] = stalled;
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  return st.bad == 0 && send_errors == 0 && !stalled && h.count() == o.count ? 0 : 1;
}
