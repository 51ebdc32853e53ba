// droce-gen: RoCEv2 RC traffic generator — real QPs, go-back-N, every message verified.
// Loopback (both ends here), client (requesters) or server (responders, the verifying end).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "apps/droce-gen/options.h"
#include "apps/common/output_file.h"
#include "apps/droce-gen/workload.h"
#include "apps/common/address_text.h"
#include "apps/common/oob_waits.h"
#include "engine/core/capture.h"
#include "apps/common/default_port.h"
#include "engine/core/eal.h"
#include "apps/common/latency_histogram.h"
#include "engine/lab/link_impairment.h"
#include "engine/lab/loopback_lab.h"
#include "engine/core/mempool.h"
#include "engine/exchange/oob_exchange.h"
#include "engine/core/port.h"
#include "engine/core/stop_signal.h"
#include "protocols/wire/icrc.h"

using namespace droce;
using namespace droce::engine;
using gen::Mode;
using gen::Op;

namespace {

constexpr const char* kDefaultSocket = "/tmp/droce-gen.sock";

int fail(const std::string& msg) {
  std::fprintf(stderr, "droce-gen: %s\n", msg.c_str());
  return 1;
}

wire::L2L3Address make_address(const std::string& ip, const std::uint8_t* mac) {
  std::uint8_t a[4] = {};
  (void)gen::parse_ipv4(ip, a);
  return lab_address(a, mac);
}

// Everything one run owns besides EAL: the lab or our port, the endpoint(s), impairment.
struct Setup {
  std::unique_ptr<LoopbackLab> lab;  // loopback
  std::unique_ptr<Port> port;        // client/server
  std::unique_ptr<MemoryRegistry> memory;
  std::unique_ptr<RcEndpoint> endpoint;
  std::vector<std::unique_ptr<LinkImpairment>> impairments;
  RcEndpoint* req_ep = nullptr;  // where requesters live (loopback A, client)
  RcEndpoint* rsp_ep = nullptr;  // where responders live (loopback B, server)
  MemoryRegistry* req_mem = nullptr;
  MemoryRegistry* rsp_mem = nullptr;
  void poll(std::uint64_t now) {
    if (lab) lab->poll(now);
    else endpoint->poll(now);
  }
  void finish() {
    if (lab) lab->finish();
    else if (endpoint) endpoint->finish();
  }
  [[nodiscard]] ImpairmentCounters impaired() const {
    ImpairmentCounters t;
    for (const auto& i : impairments) {
      t.dropped += i->counters().dropped + i->counters().burst_dropped;
      t.duplicated += i->counters().duplicated;
      t.reordered += i->counters().reordered;
    }
    return t;
  }
};

rc::QpAttr qp_attr(const gen::Options& o, std::uint32_t i, bool requester_side) {
  rc::QpAttr a;
  a.pmtu = o.mtu;
  a.sq_psn = (o.psn + 0x10000 * i) & 0xFFFFFF;
  if (o.mode == Mode::kLoopback && !requester_side) a.sq_psn = (o.remote_psn + 0x20000 * i + 0x800000) & 0xFFFFFF;
  a.timeout = o.qp_timeout;
  a.retry_cnt = o.retry_cnt;
  a.rnr_retry = 7;
  a.min_rnr_timer = 1;  // 0.01 ms: a busy receiver is back quickly in a lab
  a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
  a.sq_depth = 256;
  a.rq_depth = 256;
  return a;
}

// The workload must be the same on both sides: the client announces it, the server checks.
std::string config_line(const gen::Options& o) {
  return "CONFIG op=" + std::string(gen::op_name(o.op)) + " size=" + gen::sizes_text(o.sizes) +
         " mtu=" + std::to_string(o.mtu) + " qps=" + std::to_string(o.qps) +
         " inflight=" + std::to_string(o.inflight);
}

// The client's run length: the server waits for the client's end-of-run line as long as the
// client may run (its --duration or its --count limit, after its warm-up).
std::string run_line(double limit_s, double warmup_s) {
  char b[96];
  std::snprintf(b, sizeof(b), "RUN limit_s=%.3f warmup_s=%.3f", limit_s, warmup_s);
  return b;
}

// Strict: the whole line, finite values within a year.
bool parse_run_line(const std::string& line, double& limit_s, double& warmup_s) {
  int used = 0;
  if (std::sscanf(line.c_str(), "RUN limit_s=%lf warmup_s=%lf%n", &limit_s, &warmup_s, &used) != 2 ||
      static_cast<std::size_t>(used) != line.size())
    return false;
  constexpr double kYear = 365.0 * 86400;
  return limit_s >= 0 && limit_s <= kYear && warmup_s >= 0 && warmup_s <= kYear;
}

// verbs' enum name of a completion status (ibv_wc_status), as people search for it.
const char* wc_status_enum_name(rc::WcStatus s) {
  switch (s) {
    case rc::WcStatus::kSuccess: return "IBV_WC_SUCCESS";
    case rc::WcStatus::kLocLenErr: return "IBV_WC_LOC_LEN_ERR";
    case rc::WcStatus::kLocQpOpErr: return "IBV_WC_LOC_QP_OP_ERR";
    case rc::WcStatus::kLocProtErr: return "IBV_WC_LOC_PROT_ERR";
    case rc::WcStatus::kWrFlushErr: return "IBV_WC_WR_FLUSH_ERR";
    case rc::WcStatus::kRemInvReqErr: return "IBV_WC_REM_INV_REQ_ERR";
    case rc::WcStatus::kRemAccessErr: return "IBV_WC_REM_ACCESS_ERR";
    case rc::WcStatus::kRemOpErr: return "IBV_WC_REM_OP_ERR";
    case rc::WcStatus::kRetryExcErr: return "IBV_WC_RETRY_EXC_ERR";
    case rc::WcStatus::kRnrRetryExcErr: return "IBV_WC_RNR_RETRY_EXC_ERR";
  }
  return "IBV_WC_GENERAL_ERR";
}

// One line for the first failed completion: which QP, which status, after how many retries.
std::string failure_text(std::uint32_t index, std::uint32_t qpn, const rc::Completion& c, const rc::QpAttr& a) {
  char b[224];
  const int n = std::snprintf(b, sizeof(b), "QP %u (QPN %#08x): %s completion %s (%s)", index, qpn,
                              c.is_recv ? "receive" : "send", wc_status_enum_name(c.status), rc::wc_status_name(c.status));
  std::string t(b, static_cast<std::size_t>(std::max(n, 0)) < sizeof(b) ? static_cast<std::size_t>(std::max(n, 0)) : sizeof(b) - 1);
  if (c.status == rc::WcStatus::kRetryExcErr)
    t += " after " + std::to_string(a.retry_cnt) + " retries (local ACK timeout " + std::to_string(a.timeout) +
         ", --qp-timeout/--retry-cnt)";
  else if (c.status == rc::WcStatus::kRnrRetryExcErr)
    t += " after " + std::to_string(a.rnr_retry) + " RNR retries";
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = split_args(argc, argv);
  gen::Options opt;
  if (int rc = gen::parse_options(split.app, opt); rc != 0) return rc > 0 ? 0 : 2;
  const bool default_port = split.eal.empty();
  if (default_port) split.eal = default_pair_eal_args(opt.mode == Mode::kServer);
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-gen", split.eal, err);
  if (!eal) return fail(err.message());
  wire::icrc_init();

  const std::uint32_t max_size = opt.max_size();
  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"gen_pool", 32767, 256, 2176 + 4096, -1}, pool); !s.ok())
    return fail(s.message());
  PcapngCapture capture;
  if (!opt.pcap.empty())
    if (std::string e = capture.open(opt.pcap); !e.empty()) return fail(e);

  // Addresses: the client (and loopback A) is 10.0.0.1, the server 10.0.0.2, unless given.
  const bool server = opt.mode == Mode::kServer;
  const std::string local_ip = !opt.local_ip.empty() ? opt.local_ip : server ? "10.0.0.2" : "10.0.0.1";
  const std::string peer_ip = !opt.peer_ip.empty() ? opt.peer_ip : server ? "10.0.0.1" : "10.0.0.2";
  std::uint8_t peer_mac[6];
  const bool have_peer_mac = !opt.peer_mac.empty() && gen::parse_mac(opt.peer_mac, peer_mac);

  ImpairmentConfig imp;
  imp.loss = opt.loss;
  imp.duplicate = opt.duplicate;
  imp.reorder = opt.reorder;
  imp.burst_start = opt.burst_start;
  imp.burst_frames = opt.burst_frames;
  imp.seed = opt.seed;

  Setup st;
  if (opt.mode == Mode::kLoopback) {
    LoopbackLabConfig lc;
    lc.pool = pool.get();
    lc.max_qps = opt.qps;
    lc.capture = opt.pcap.empty() ? nullptr : &capture;
    lc.dcqcn_reaction_point = opt.cc == "dcqcn";
    lc.dcqcn = opt.dcqcn;
    lc.pfc_priority = opt.pfc_priority;
    st.lab = LoopbackLab::create(lc, err);
    if (!st.lab) return fail(err.message());
    st.req_ep = &st.lab->a();
    st.rsp_ep = &st.lab->b();
    st.req_mem = &st.lab->memory_a();
    st.rsp_mem = &st.lab->memory_b();
    if (imp.any()) {
      for (std::uint16_t p : {st.lab->port_id_a(), st.lab->port_id_b()}) {
        imp.seed = opt.seed * 2 + p;
        auto li = LinkImpairment::attach(p, 0, imp, pool.get(), err);
        if (!li) return fail(err.message());
        st.impairments.push_back(std::move(li));
      }
    }
  } else {
    PortConfig pc;
    pc.rx_pool = pool.get();
    pc.promiscuous = true;
    if (Status s = pair_port_devargs(default_port, server, kDefaultSocket, pc.devargs); !s.ok()) return fail(s.message());
    st.port = Port::open(pc, err);
    if (!st.port) return fail(err.message());
    const auto wait_ms = static_cast<std::uint32_t>(opt.connect_timeout_s * 1000);
    if (Status s = st.port->wait_link_up(wait_ms); !s.ok()) return fail(s.message());
    // Before the first burst: a peer that ends (even killed) must not tear the rings down under us.
    if (Status s = st.port->hold_peer_events(5000); !s.ok()) std::fprintf(stderr, "droce-gen: warning: %s\n", s.message().c_str());
    st.memory = std::make_unique<MemoryRegistry>();
    EndpointConfig ec;
    ec.port_id = st.port->id();
    ec.pool = pool.get();
    ec.memory = st.memory.get();
    ec.qpn_base = opt.local_qpn;
    ec.max_qps = opt.qps;
    ec.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
    ec.capture = opt.pcap.empty() ? nullptr : &capture;
    ec.dcqcn_reaction_point = opt.cc == "dcqcn";
    ec.dcqcn = opt.dcqcn;
    ec.pfc_priority = opt.pfc_priority;
    const rte_ether_addr mac = st.port->mac();
    ec.local = make_address(local_ip, mac.addr_bytes);
    st.endpoint = std::make_unique<RcEndpoint>(ec);
    (server ? st.rsp_ep : st.req_ep) = st.endpoint.get();
    (server ? st.rsp_mem : st.req_mem) = st.memory.get();
    if (imp.any()) {
      auto li = LinkImpairment::attach(st.port->id(), 0, imp, pool.get(), err);
      if (!li) return fail(err.message());
      st.impairments.push_back(std::move(li));
    }
  }

  const gen::Pattern pattern(max_size);
  const std::uint32_t slots = opt.inflight;
  const std::size_t slot_bytes = max_size, bytes = slot_bytes * slots;
  std::vector<gen::Requester> reqs(st.req_ep != nullptr ? opt.qps : 0);
  std::vector<gen::Responder> rsps(st.rsp_ep != nullptr ? opt.qps : 0);
  const std::uint32_t remote_access = rc::kAccessLocalWrite | rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
  for (std::uint32_t i = 0; i < opt.qps; ++i) {
    if (!reqs.empty()) {
      auto& r = reqs[i];
      r.ep = st.req_ep;
      r.index = i;
      r.buf.resize(bytes);
      r.post_tsc.resize(slots);
      if (Status s = st.req_ep->create_qp(qp_attr(opt, i, true), r.qpn); !s.ok()) return fail(s.message());
      if (Status s = st.req_mem->register_memory(r.buf.data(), bytes, rc::kAccessLocalWrite, r.mr); !s.ok())
        return fail(s.message());
    }
    if (!rsps.empty()) {
      auto& r = rsps[i];
      r.ep = st.rsp_ep;
      r.index = i;
      r.buf.resize(bytes);
      if (Status s = st.rsp_ep->create_qp(qp_attr(opt, i, false), r.qpn); !s.ok()) return fail(s.message());
      if (Status s = st.rsp_mem->register_memory(r.buf.data(), bytes, remote_access, r.mr); !s.ok())
        return fail(s.message());
      // READ serves a fixed pattern per slot.
      if (opt.op == Op::kRead)
        for (std::uint32_t s = 0; s < slots; ++s) pattern.fill(r.buf.data() + s * slot_bytes, max_size, i, s);
    }
  }

  // ---- connect ----
  OobConnection oob;
  RcPingpongServer listener;
  const auto timeout_ms = static_cast<std::uint32_t>(opt.connect_timeout_s * 1000);
  // How long the client may run: --count runs until done but never past a hard limit, so a dead
  // peer cannot hang us. A server learns the client's figures from its RUN line.
  double run_limit_s = opt.count != 0 ? std::max(60.0, opt.duration_s) : opt.duration_s;
  double run_warmup_s = opt.warmup_s;
  bool run_from_client = false;
  // The exchange's own waits retry EINTR until their deadline: a Ctrl-C now closes the connection.
  set_stop_ends_tcp_waits(true);
  auto exchange_fail = [&](const std::string& msg) {
    // Our own Ctrl-C closed the connection: the exchange's error says "peer closed", not the cause.
    return fail(stop_requested() ? std::string("interrupted during the connection exchange") : msg);
  };
  if (opt.mode == Mode::kLoopback) {
    for (std::uint32_t i = 0; i < opt.qps; ++i) {
      auto& q = reqs[i];
      auto& r = rsps[i];
      const auto qa = st.req_ep->qp(q.qpn)->attr();
      const auto ra = st.rsp_ep->qp(r.qpn)->attr();
      if (Status s = st.req_ep->connect(q.qpn, RemoteQp{LoopbackLab::address(1), r.qpn, ra.sq_psn}); !s.ok())
        return fail(s.message());
      if (Status s = st.rsp_ep->connect(r.qpn, RemoteQp{LoopbackLab::address(0), q.qpn, qa.sq_psn}); !s.ok())
        return fail(s.message());
      q.remote_va = reinterpret_cast<std::uint64_t>(r.buf.data());
      q.rkey = r.mr.rkey;
      q.remote_slots = slots;
    }
  } else {
    const wire::L2L3Address peer_static = make_address(peer_ip, have_peer_mac ? peer_mac : nullptr);
    if (opt.oob_port != 0) {
      if (server) {
        std::uint16_t bound = 0;
        if (Status s = listener.listen(opt.oob_port, bound); !s.ok()) return fail(s.message());
        if (!opt.quiet) std::printf("droce-gen: server waiting for a client on TCP port %u\n", bound);
        std::fflush(stdout);
        if (Status s = accept_stoppable(listener, timeout_ms, oob); !s.ok()) return exchange_fail(s.message());
      } else if (Status s = connect_stoppable(opt.oob_host, opt.oob_port, timeout_ms, oob); !s.ok()) {
        return exchange_fail(s.message());
      }
      std::uint8_t our_ip[4];
      (void)gen::parse_ipv4(local_ip, our_ip);
      for (std::uint32_t i = 0; i < opt.qps; ++i) {
        const std::uint32_t qpn = server ? rsps[i].qpn : reqs[i].qpn;
        RcEndpoint& ep = server ? *st.rsp_ep : *st.req_ep;
        ConnInfo local, peer;
        local.qpn = qpn;
        local.psn = ep.qp(qpn)->attr().sq_psn;
        gid_from_ipv4(our_ip, local.gid);
        Status s = server ? oob.server_read_peer(peer, timeout_ms) : oob.exchange_as_client(local, peer, timeout_ms);
        if (!s.ok()) return exchange_fail("exchange for QP " + std::to_string(i) + ": " + s.message());
        wire::L2L3Address remote = peer_static;
        std::uint8_t pip[4];
        if (Status g = ipv4_from_gid(peer.gid, pip); !g.ok()) return fail(g.message());
        if (!have_peer_mac) remote = make_address(std::to_string(pip[0]) + "." + std::to_string(pip[1]) + "." +
                                                      std::to_string(pip[2]) + "." + std::to_string(pip[3]), nullptr);
        std::memcpy(remote.ip, pip, 4);
        if (Status c = ep.connect(qpn, RemoteQp{remote, peer.qpn, peer.psn}); !c.ok()) return fail(c.message());
        if (server) {
          // As rc_pingpong: connect first, then answer and wait for "done".
          if (Status a = oob.server_answer(local, timeout_ms); !a.ok()) return exchange_fail(a.message());
        }
        // After the first QP's exchange (the part ibv_rc_pingpong also speaks), droce's own line:
        // the client's workload, which the server must be running too.
        // Then how long it will run, so that the server waits for it as long as it may take.
        if (i == 0 && !server) {
          if (Status s = oob.send_line(config_line(opt), timeout_ms); !s.ok()) return exchange_fail(s.message());
          if (Status s = oob.send_line(run_line(run_limit_s, run_warmup_s), timeout_ms); !s.ok())
            return exchange_fail(s.message());
        } else if (i == 0) {
          std::string line;
          if (Status s = recv_line_stoppable(oob, line, timeout_ms, "the client's workload line"); !s.ok())
            return exchange_fail(s.message());
          if (line != config_line(opt))
            return fail("the client runs '" + line.substr(std::min<std::size_t>(7, line.size())) + "' but this server '" +
                        config_line(opt).substr(7) + "': start both with the same workload options");
          if (Status s = recv_line_stoppable(oob, line, timeout_ms, "the client's run length"); !s.ok())
            return exchange_fail(s.message());
          if (!parse_run_line(line, run_limit_s, run_warmup_s))
            return fail("the client sent '" + line.substr(0, 80) + "' where its run length was expected (is it this droce-gen?)");
          run_from_client = true;
        }
      }
      // Then the responder's buffers (WRITE target, READ source) for each QP.
      if (server) {
        for (auto& r : rsps) {
          const std::string mr = format_mr_line(MrLine{reinterpret_cast<std::uint64_t>(r.buf.data()), r.mr.rkey, slots});
          if (Status s = oob.send_line(mr, timeout_ms); !s.ok()) return exchange_fail(s.message());
        }
      } else {
        for (auto& q : reqs) {
          std::string line;
          if (Status s = recv_line_stoppable(oob, line, timeout_ms, "the server's buffer keys"); !s.ok())
            return exchange_fail(s.message());
          MrLine mr;
          if (Status s = parse_mr_line(line, mr); !s.ok())
            return fail("the server's buffer keys: " + s.message() + " (is it droce-gen?)");
          q.remote_va = mr.vaddr;
          q.rkey = mr.rkey;
          q.remote_slots = mr.slots;
        }
      }
    } else {
      for (std::uint32_t i = 0; i < opt.qps; ++i) {
        const std::uint32_t qpn = server ? rsps[i].qpn : reqs[i].qpn;
        RcEndpoint& ep = server ? *st.rsp_ep : *st.req_ep;
        if (Status c = ep.connect(qpn, RemoteQp{peer_static, opt.remote_qpn + i, (opt.remote_psn + 0x10000 * i) & 0xFFFFFF});
            !c.ok())
          return fail(c.message());
      }
    }
  }

  // From here a Ctrl-C ends the run and the end-of-run lines still flow.
  set_stop_ends_tcp_waits(false);
  if (stop_requested()) return fail("interrupted during the connection exchange");

  // ---- run ----
  const double hz = static_cast<double>(rte_get_tsc_hz());
  LatencyHistogram hist;
  gen::Totals t;
  std::FILE* csv = nullptr;
  if (!opt.csv.empty()) {
    csv = std::fopen(opt.csv.c_str(), "w");
    if (csv == nullptr) return fail("cannot write " + opt.csv);
    std::fprintf(csv, "time_s,goodput_gbps,msg_rate_mps,retransmitted_packets,naks_sent,naks_received,rnr_naks\n");
  }
  auto counters_sum = [&](auto field) {
    std::uint64_t v = 0;
    for (auto& q : reqs) v += field(q.ep->qp(q.qpn)->counters());
    for (auto& r : rsps) v += field(r.ep->qp(r.qpn)->counters());
    return v;
  };
  // Endpoint counters (CNPs, PFC) over this process's endpoints, once each.
  std::vector<RcEndpoint*> eps;
  for (RcEndpoint* e : {st.req_ep, st.rsp_ep})
    if (e != nullptr && std::find(eps.begin(), eps.end(), e) == eps.end()) eps.push_back(e);
  auto ep_sum = [&](auto field) {
    std::uint64_t v = 0;
    for (RcEndpoint* e : eps) v += field(e->counters());
    return v;
  };
  // The DCQCN rate of the requesters' QPs: "line" without congestion control, else min..max.
  auto rate_text = [&]() -> std::string {
    if (opt.cc != "dcqcn" || reqs.empty()) return "line (cc none)";
    double lo = 1e300, hi = 0;
    for (auto& q : reqs) {
      const double r = q.ep->dcqcn_state(q.qpn)->rate_bps() / 1e9;
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
    char b[64];
    std::snprintf(b, sizeof(b), lo == hi ? "%.3f Gb/s" : "%.3f..%.3f Gb/s", lo, hi);
    return b;
  };
  const std::uint64_t start = rte_rdtsc();
  const auto warm_end = start + static_cast<std::uint64_t>(opt.warmup_s * hz);
  // A server waits for the client's end-of-run line as long as the client may run (its warm-up and
  // run length), plus the connect time and a margin for a busy machine.
  const double limit_s = server ? (run_from_client ? run_warmup_s : opt.warmup_s) + run_limit_s + opt.connect_timeout_s + 10
                                : opt.warmup_s + run_limit_s;
  const auto deadline = start + static_cast<std::uint64_t>(limit_s * hz);
  std::uint64_t measured_start = warm_end, next_line = start + static_cast<std::uint64_t>(hz);
  std::uint64_t line_msgs = 0, line_bytes = 0, total_posted = 0, first_rx = 0, last_rx = 0;
  bool measuring = opt.warmup_s == 0;
  // Offered load: a token per message, refilled at the configured rate, at most `inflight` saved.
  const double avg_size = [&] {
    double s = 0;
    for (auto v : opt.sizes) s += v;
    return s / static_cast<double>(opt.sizes.size());
  }();
  const double msg_rate = opt.msg_rate > 0 ? opt.msg_rate : opt.rate_gbps > 0 ? opt.rate_gbps * 1e9 / 8 / avg_size : 0;
  const double tsc_per_msg = msg_rate > 0 ? hz / msg_rate : 0;
  double tokens = 1;
  std::uint64_t last_refill = start;
  std::string end_line, server_stop, first_failure;
  bool peer_ended = false, peer_gone = false;
  auto note_failure = [&](std::uint32_t index, RcEndpoint& ep, std::uint32_t qpn, const rc::Completion& c) {
    if (first_failure.empty()) first_failure = failure_text(index, qpn, c, ep.qp(qpn)->attr());
  };

  auto post_one = [&](gen::Requester& q) {
    const std::uint64_t seq = q.posted;
    const std::uint32_t size = opt.size_of(seq);
    const std::size_t slot = seq % slots;
    std::uint8_t* s = q.buf.data() + slot * slot_bytes;
    rc::SendWr w;
    w.wr_id = seq;
    w.imm = static_cast<std::uint32_t>(seq);
    w.sge = {reinterpret_cast<std::uint64_t>(s), size, q.mr.lkey};
    w.remote_addr = q.remote_va + (seq % q.remote_slots) * slot_bytes;
    w.rkey = q.rkey;
    if (opt.op == Op::kRead) {
      w.opcode = rc::WrOpcode::kRead;
    } else {
      w.opcode = opt.op == Op::kSend ? rc::WrOpcode::kSendWithImm : rc::WrOpcode::kWriteWithImm;
      pattern.fill(s, size, q.index, seq);
    }
    if (!q.ep->post_send(q.qpn, w).ok()) return false;
    q.post_tsc[slot] = rte_rdtsc();
    ++q.posted;
    ++total_posted;
    return true;
  };
  auto keep_receives_posted = [&](gen::Responder& r) {
    if (opt.op == Op::kRead) return;
    while (r.recv_posted - r.received < slots) {
      const std::size_t slot = r.recv_posted % slots;
      rc::RecvWr w{r.recv_posted, {reinterpret_cast<std::uint64_t>(r.buf.data() + slot * slot_bytes), max_size, r.mr.lkey}};
      if (opt.op == Op::kWrite) w.sge = {0, 0, 0};  // WRITE with immediate only consumes a receive
      if (!r.ep->post_recv(r.qpn, w).ok()) break;
      ++r.recv_posted;
    }
  };

  std::uint64_t now = start;
  std::uint64_t iter = 0;
  while (!stop_requested() && now < deadline) {
    if (!measuring && now >= warm_end) {
      measuring = true;
      measured_start = now;
      t = gen::Totals{};
      hist = LatencyHistogram{};
    }
    if (tsc_per_msg > 0) {
      tokens = std::min<double>(tokens + static_cast<double>(now - last_refill) / tsc_per_msg, opt.inflight);
      last_refill = now;
    }
    for (auto& q : reqs) {
      while (q.posted - q.completed < slots && (opt.count == 0 || total_posted < opt.count) &&
             (tsc_per_msg == 0 || tokens >= 1) && q.ep->qp(q.qpn)->state() == rc::QpState::kRts && post_one(q)) {
        if (tsc_per_msg > 0) tokens -= 1;
      }
    }
    for (auto& r : rsps) keep_receives_posted(r);
    st.poll(now);
    now = rte_rdtsc();
    rc::Completion cs[32];
    // Responder: sequence and content of every message (SEND data, WRITE target memory).
    for (auto& r : rsps) {
      for (unsigned n = r.ep->poll_cq(r.qpn, cs, 32), k = 0; k < n; ++k) {
        const rc::Completion& c = cs[k];
        if (c.status != rc::WcStatus::kSuccess) {
          ++t.errors;
          note_failure(r.index, *r.ep, r.qpn, c);
          continue;
        }
        ++r.received;
        const std::uint64_t seq = c.imm;
        const std::uint64_t want = r.expected & 0xFFFFFFFFull;
        if (seq < want) {
          ++t.duplicated;
        } else if (seq > want) {
          t.lost += seq - want;
          ++t.out_of_order;
        }
        const std::uint32_t size = opt.size_of(seq);
        const std::uint8_t* p = opt.op == Op::kSend ? r.buf.data() + (c.wr_id % slots) * slot_bytes
                                                    : r.buf.data() + (seq % slots) * slot_bytes;
        if ((opt.op == Op::kSend && c.byte_len != size) || !pattern.check(p, size, r.index, seq)) ++t.corrupted;
        r.expected = seq + 1;
        if (server) {
          ++t.messages;
          t.bytes += size;
          ++line_msgs;
          line_bytes += size;
          if (first_rx == 0) first_rx = now;
          last_rx = now;
        }
      }
    }
    // Requester: completions in order; READ data checked here; latency from post to completion.
    for (auto& q : reqs) {
      for (unsigned n = q.ep->poll_cq(q.qpn, cs, 32), k = 0; k < n; ++k) {
        const rc::Completion& c = cs[k];
        ++q.completed;
        if (c.status != rc::WcStatus::kSuccess) {
          ++t.errors;
          note_failure(q.index, *q.ep, q.qpn, c);
          continue;
        }
        if (c.wr_id != q.completed - 1) ++t.out_of_order;
        const std::size_t slot = c.wr_id % slots;
        const std::uint32_t size = opt.size_of(c.wr_id);
        if (opt.op == Op::kRead && !pattern.check(q.buf.data() + slot * slot_bytes, size, q.index, c.wr_id % q.remote_slots))
          ++t.corrupted;
        hist.record(static_cast<std::uint64_t>(static_cast<double>(now - q.post_tsc[slot]) * 1e9 / hz));
        ++q.completed_ok;
        ++t.messages;
        t.bytes += size;
        ++line_msgs;
        line_bytes += size;
      }
    }
    if (t.errors != 0) break;
    if (!server && opt.count != 0 && total_posted >= opt.count) {
      bool all = true;
      for (auto& q : reqs) all = all && q.completed == q.posted;
      if (all) break;
    }
    // The server ends when the client says so (or is gone); statically, after --duration of traffic
    // or --count messages. The client ends early when the server stops the run or is gone.
    if ((++iter & 1023) == 0 && oob.is_open()) {
      bool closed = false;
      std::string line;
      if (oob.poll_line(line, closed)) {
        if (server) {
          end_line = line;
          peer_ended = true;
          break;
        }
        server_stop = line.rfind("STOP ", 0) == 0 ? line.substr(5, 80) : "unexpected line '" + line.substr(0, 80) + "'";
        break;
      }
      if (closed) {
        peer_gone = true;
        break;
      }
    }
    if (server && !oob.is_open() && (iter & 1023) == 0) {
      if ((opt.count != 0 && t.messages >= opt.count) ||
          (first_rx != 0 && now - first_rx > static_cast<std::uint64_t>(opt.duration_s * hz)))
        break;
    }
    if (now >= next_line) {
      const double gbps = static_cast<double>(line_bytes) * 8.0 / 1e9, mmps = static_cast<double>(line_msgs) / 1e6;
      const auto retx = counters_sum([](const rc::RcCounters& c) { return c.retransmitted_packets; });
      const auto naks_s = counters_sum([](const rc::RcCounters& c) { return c.naks_sent; });
      const auto naks_r = counters_sum([](const rc::RcCounters& c) { return c.naks_received; });
      const auto rnr = counters_sum([](const rc::RcCounters& c) { return c.rnr_naks_received; });
      if (!opt.quiet) {
        const auto cnp_s = ep_sum([](const EndpointCounters& c) { return c.np_cnp_sent; });
        const auto cnp_r = ep_sum([](const EndpointCounters& c) { return c.rp_cnp_handled + c.rp_cnp_ignored; });
        std::printf("droce-gen: %7.3f Gb/s  %8.4f Mmsg/s  retransmitted %llu  naks %llu/%llu  cnps %llu/%llu  rate: %s\n",
                    gbps, mmps, static_cast<unsigned long long>(retx), static_cast<unsigned long long>(naks_s),
                    static_cast<unsigned long long>(naks_r), static_cast<unsigned long long>(cnp_s),
                    static_cast<unsigned long long>(cnp_r), rate_text().c_str());
        std::fflush(stdout);
      }
      if (csv != nullptr)
        std::fprintf(csv, "%.3f,%.6f,%.6f,%llu,%llu,%llu,%llu\n", static_cast<double>(now - start) / hz, gbps, mmps,
                     static_cast<unsigned long long>(retx), static_cast<unsigned long long>(naks_s),
                     static_cast<unsigned long long>(naks_r), static_cast<unsigned long long>(rnr));
      line_msgs = line_bytes = 0;
      next_line = now + static_cast<std::uint64_t>(hz);
    }
  }
  const bool interrupted = stop_requested();
  double secs = static_cast<double>(now - measured_start) / hz;
  if (server && first_rx != 0) secs = static_cast<double>(last_rx - std::max(first_rx, measured_start)) / hz;
  bool unfinished = false;
  for (auto& q : reqs) unfinished |= q.completed != q.posted && t.errors == 0 && opt.count != 0;
  if (csv != nullptr) std::fclose(csv);

  // ---- end of run: the client tells the server what it sent; the server answers what arrived.
  // Then the goodbye, so that no port is torn down while its peer still polls: the client stops
  // polling and says BYE; the server stops polling, stops its port and answers BYE; the client
  // stops its port. (A server that ends first says STOP; the client then ends the same way.) ----
  std::string problem;
  std::uint64_t peer_received = 0;
  constexpr std::uint32_t kEndWaitMs = 10000;  // each end-of-run step (the peer may be descheduled)
  auto keep_polling = [&] { st.poll(rte_rdtsc()); };
  if (server && oob.is_open() && !peer_ended && !peer_gone) {
    // We end first (Ctrl-C or the deadline): ask the client to end, and keep serving until it has.
    if (oob.send_line(interrupted ? "STOP interrupted" : "STOP deadline", 5000).ok()) {
      std::string line;
      const LineWait w = wait_line(oob, line, kEndWaitMs, keep_polling, false);
      if (w == LineWait::kLine) {
        end_line = line;
        peer_ended = true;
      }
      peer_gone = w == LineWait::kClosed;
    }
  }
  if (opt.mode == Mode::kClient && peer_gone) {
    problem = "the server disappeared during the run (control connection closed)";
  } else if (opt.mode == Mode::kClient && oob.is_open()) {
    std::vector<std::uint64_t> counts;
    for (auto& q : reqs) counts.push_back(q.completed_ok);
    const std::string line = format_end_line(counts);
    std::string result;
    Status s = oob.send_line(line, 5000);
    // Keep answering the server's retransmissions while it finishes (a bounded wait).
    if (s.ok()) {
      switch (wait_line(oob, result, kEndWaitMs, keep_polling, false)) {
        case LineWait::kLine: break;
        case LineWait::kClosed: s = Status::error("the server closed the connection before reporting"); break;
        default: s = Status::error("no end-of-run report from the server within 10 s"); break;
      }
    }
    ResultLine r;
    if (s.ok()) s = parse_result_line(result, r);
    if (s.ok()) {
      peer_received = r.received;
      t.lost += r.lost;
      t.duplicated += r.duplicated;
      t.out_of_order += r.out_of_order;
      t.corrupted += r.corrupted;
      t.errors += r.errors;
    } else {
      problem = "the server's end-of-run report: " + s.message();
    }
    if (!server_stop.empty()) problem = "the server ended the run early (" + server_stop + ")";
    // We poll no more: the server may stop its port now. Its BYE says it has.
    if (oob.send_line("BYE", 5000).ok()) {
      std::string bye;
      (void)wait_line(oob, bye, kEndWaitMs, {}, false);
    }
  }
  if (server && oob.is_open()) {
    if (peer_gone) {
      problem = "the client disappeared before the end of the run (control connection closed)";
    } else if (!peer_ended) {
      problem = interrupted ? "interrupted" : "no end-of-run line from the client before the deadline";
    } else {
      // Every message the client saw acknowledged must have arrived here. Its counts are strict
      // (digits only, one per QP, bounded): a peer's "-5" is an error, not 2^64 - 5.
      std::vector<std::uint64_t> counts;
      if (Status e = parse_end_line(end_line, rsps.size(), counts); !e.ok()) {
        problem = "malformed end-of-run line from the client: " + e.message();
        counts.clear();
      }
      std::uint64_t sent_ok = 0;
      for (std::size_t i = 0; i < counts.size(); ++i) {
        if (opt.op != Op::kRead && counts[i] > rsps[i].expected) t.lost += counts[i] - rsps[i].expected;
        sent_ok += counts[i];
      }
      if (opt.op == Op::kRead) t.messages = sent_ok;  // READs complete at the client; the server only served
      const std::string res = format_result_line(ResultLine{t.messages, t.lost, t.duplicated, t.out_of_order,
                                                            t.corrupted, t.errors});
      // Keep serving until the client has stopped polling (its BYE): it may still be retransmitting.
      if (Status s = oob.send_line(res, 5000); !s.ok()) {
        problem = s.message();
      } else {
        std::string bye;
        (void)wait_line(oob, bye, kEndWaitMs, keep_polling, false);
      }
    }
  }
  // The client polls no more (or is gone): stop our port before saying so.
  if (st.port) st.port->stop();
  if (server && oob.is_open() && peer_ended) (void)oob.send_line("BYE", 1000);
  if (problem.empty() && interrupted) problem = "interrupted";
  if (!first_failure.empty()) problem += (problem.empty() ? "" : "; first failed completion: ") + first_failure;
  st.finish();
  capture.close();

  // ---- report ----
  const auto sum = [&](auto f) { return counters_sum(f); };
  const auto retx = sum([](const rc::RcCounters& c) { return c.retransmitted_packets; });
  const auto naks_sent = sum([](const rc::RcCounters& c) { return c.naks_sent; });
  const auto naks_rcvd = sum([](const rc::RcCounters& c) { return c.naks_received; });
  const auto rnr = sum([](const rc::RcCounters& c) { return c.rnr_naks_received; });
  const auto timeouts = sum([](const rc::RcCounters& c) { return c.local_ack_timeout_err; });
  const auto dup_req = sum([](const rc::RcCounters& c) { return c.duplicate_request; });
  const auto oos = sum([](const rc::RcCounters& c) { return c.out_of_sequence; });
  const ImpairmentCounters lab = st.impaired();
  std::uint64_t zc = 0, copied_tx = 0, inlined = 0;
  for (RcEndpoint* ep : {st.req_ep, st.rsp_ep}) {
    if (ep == nullptr || (ep == st.rsp_ep && ep == st.req_ep)) continue;
    zc += ep->counters().tx_zero_copy_frames;
    copied_tx += ep->counters().tx_payload_bytes_copied;
    inlined += ep->counters().tx_inline_frames;
  }
  const double gbps = secs > 0 ? static_cast<double>(t.bytes) * 8.0 / secs / 1e9 : 0;
  const double mmps = secs > 0 ? static_cast<double>(t.messages) / secs / 1e6 : 0;
  std::printf("---------------------------------------------------------------------------------------\n");
  std::printf(" droce-gen %s: RC %s, %u QP(s), MTU %u, inflight %u, impairment loss %g dup %g reorder %g\n",
              gen::mode_name(opt.mode), gen::op_name(opt.op), opt.qps, opt.mtu, opt.inflight, opt.loss, opt.duplicate,
              opt.reorder);
  std::printf(" #bytes     #iterations    BW average[Gb/sec]   MsgRate[Mpps]\n");
  std::printf(" %-10s %-14llu %-20.3f %.6f\n", gen::sizes_text(opt.sizes).c_str(),
              static_cast<unsigned long long>(t.messages), gbps, mmps);
  if (!server)
    std::printf(" latency ns (post to completion): min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu\n",
                static_cast<unsigned long long>(hist.min()), static_cast<unsigned long long>(hist.percentile(0.5)),
                static_cast<unsigned long long>(hist.percentile(0.9)), static_cast<unsigned long long>(hist.percentile(0.99)),
                static_cast<unsigned long long>(hist.percentile(0.999)), static_cast<unsigned long long>(hist.max()));
  std::printf(" retransmitted %llu  naks sent %llu / received %llu  rnr naks %llu  ack timeouts %llu\n",
              static_cast<unsigned long long>(retx), static_cast<unsigned long long>(naks_sent),
              static_cast<unsigned long long>(naks_rcvd), static_cast<unsigned long long>(rnr),
              static_cast<unsigned long long>(timeouts));
  std::printf(" impairment: dropped %llu (bursts included)  duplicated %llu  reordered %llu\n",
              static_cast<unsigned long long>(lab.dropped), static_cast<unsigned long long>(lab.duplicated),
              static_cast<unsigned long long>(lab.reordered));
  std::printf(" verification%s: lost %llu  duplicated %llu  out of order %llu  corrupted %llu  errors %llu\n",
              opt.mode == Mode::kClient ? " (both ends)" : "", static_cast<unsigned long long>(t.lost),
              static_cast<unsigned long long>(t.duplicated), static_cast<unsigned long long>(t.out_of_order),
              static_cast<unsigned long long>(t.corrupted), static_cast<unsigned long long>(t.errors));
  std::printf(" zero-copy TX frames %llu, inline TX frames (payload <= 256 B) %llu, payload bytes copied on TX %llu\n",
              static_cast<unsigned long long>(zc), static_cast<unsigned long long>(inlined),
              static_cast<unsigned long long>(copied_tx));
  std::printf("---------------------------------------------------------------------------------------\n");
  if (!problem.empty()) std::fprintf(stderr, "droce-gen: %s\n", problem.c_str());

  if (!opt.json.empty()) {
    nlohmann::json j;
    j["messages"] = t.messages;
    j["bytes"] = t.bytes;
    j["duration_s"] = secs;
    j["goodput_gbps"] = gbps;
    j["msg_rate_mps"] = mmps;
    j["latency_ns"] = {{"min", hist.min()}, {"p50", hist.percentile(0.5)}, {"p90", hist.percentile(0.9)},
                       {"p99", hist.percentile(0.99)}, {"p999", hist.percentile(0.999)}, {"max", hist.max()}};
    j["retransmitted_packets"] = retx;
    j["naks_sent"] = naks_sent;
    j["naks_received"] = naks_rcvd;
    j["rnr_naks"] = rnr;
    j["cnps_sent"] = ep_sum([](const EndpointCounters& c) { return c.np_cnp_sent; });
    j["cnps_received"] = ep_sum([](const EndpointCounters& c) { return c.rp_cnp_handled + c.rp_cnp_ignored; });
    j["np_ecn_marked_roce_packets"] = ep_sum([](const EndpointCounters& c) { return c.np_ecn_marked_roce_packets; });
    j["rp_cnp_handled"] = ep_sum([](const EndpointCounters& c) { return c.rp_cnp_handled; });
    j["rp_cnp_ignored"] = ep_sum([](const EndpointCounters& c) { return c.rp_cnp_ignored; });
    j["pfc_pause_frames"] = ep_sum([](const EndpointCounters& c) { return c.pfc_pause_frames; });
    j["pfc_paused_ns"] = ep_sum([](const EndpointCounters& c) { return c.pfc_paused_ns; });
    if (opt.cc == "dcqcn") {
      nlohmann::json rates = nlohmann::json::array();
      for (auto& q : reqs) rates.push_back(q.ep->dcqcn_state(q.qpn)->rate_bps() / 1e9);
      j["dcqcn_rate_gbps"] = rates;
    }
    j["lost"] = t.lost;
    j["duplicated"] = t.duplicated;
    j["out_of_order"] = t.out_of_order;
    j["corrupted"] = t.corrupted;
    j["errors"] = t.errors;
    j["ack_timeouts"] = timeouts;
    j["duplicate_requests"] = dup_req;
    j["out_of_sequence"] = oos;
    j["impairment"] = {{"dropped", lab.dropped}, {"duplicated", lab.duplicated}, {"reordered", lab.reordered}};
    j["peer_received"] = peer_received;
    j["problem"] = problem;
    j["config"] = {{"mode", gen::mode_name(opt.mode)}, {"op", gen::op_name(opt.op)}, {"size", opt.sizes},
                   {"mtu", opt.mtu}, {"qps", opt.qps}, {"inflight", opt.inflight}, {"duration_s", opt.duration_s},
                   {"count", opt.count}, {"warmup_s", opt.warmup_s}, {"qp_timeout", opt.qp_timeout}, {"retry_cnt", opt.retry_cnt}, {"rate_gbps", opt.rate_gbps},
                   {"msg_rate", opt.msg_rate}, {"loss", opt.loss}, {"duplicate", opt.duplicate},
                   {"reorder", opt.reorder}, {"burst_start", opt.burst_start},
                   {"burst_frames", opt.burst_frames}, {"seed", opt.seed}, {"cc", opt.cc}, {"preset", opt.preset}, {"line_gbps", opt.line_gbps}, {"local_ip", local_ip},
                   {"peer_ip", peer_ip}, {"oob_port", opt.oob_port}};
    if (std::string e = droce::apps::write_text_file(opt.json, j.dump(2) + "\n"); !e.empty()) return fail(e);
  }
  const bool ok = t.errors == 0 && t.lost == 0 && t.duplicated == 0 && t.out_of_order == 0 && t.corrupted == 0 &&
                  !unfinished && t.messages > 0 && problem.empty() && !interrupted;
  if (!ok) std::fprintf(stderr, "droce-gen: FAILED: transport errors, verification failures or an incomplete run (see the report)\n");
  return ok ? 0 : 1;
}
