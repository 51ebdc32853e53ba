// droce-gen: RoCEv2 RC traffic generator — real QPs, go-back-N, every message verified.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>
#include <rte_cycles.h>

#include "apps/droce-gen/options.h"
#include "engine/capture.h"
#include "engine/eal.h"
#include "engine/latency_histogram.h"
#include "engine/loopback_lab.h"
#include "engine/mempool.h"
#include "engine/stop_signal.h"
#include "protocols/wire/icrc.h"

using namespace droce;
using namespace droce::engine;
using gen::Op;

namespace {

// Payload byte i of message `seq` on QP `qp`: a per-position base plus a per-message offset, so
// filling and checking are plain vectorisable loops, and a byte from the wrong message, QP or
// position shows as corruption.
std::vector<std::uint8_t> g_base;
std::uint8_t msg_offset(std::uint32_t qp, std::uint64_t seq) { return static_cast<std::uint8_t>(qp * 29 + seq * 131); }
void fill(std::uint8_t* p, std::uint32_t n, std::uint32_t qp, std::uint64_t seq) {
  const std::uint8_t c = msg_offset(qp, seq);
  for (std::uint32_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(g_base[i] + c);
}
bool check(const std::uint8_t* p, std::uint32_t n, std::uint32_t qp, std::uint64_t seq) {
  const std::uint8_t c = msg_offset(qp, seq);
  std::uint8_t diff = 0;
  for (std::uint32_t i = 0; i < n; ++i) diff |= static_cast<std::uint8_t>(p[i] ^ static_cast<std::uint8_t>(g_base[i] + c));
  return diff == 0;
}

// One QP pair's workload and verification state.
struct Flow {
  rc::RcQp* req = nullptr;  // requester, on endpoint A
  rc::RcQp* rsp = nullptr;  // responder, on endpoint B
  std::vector<std::uint8_t> src, dst;  // A's buffers; B's buffers
  rc::MemoryRegion src_mr, dst_mr;
  std::vector<std::uint64_t> post_tsc;  // per slot
  std::uint64_t posted = 0, completed = 0, expected_rx = 0;
};

struct Totals {
  std::uint64_t messages = 0, bytes = 0, lost = 0, duplicated = 0, out_of_order = 0, corrupted = 0, errors = 0;
};

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = split_args(argc, argv);
  gen::Options opt;
  if (int rc = gen::parse_options(split.app, opt); rc != 0) return rc > 0 ? 0 : 2;
  if (split.eal.empty()) split.eal = {"--no-pci"};
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-gen", split.eal, err);
  if (!eal) return std::fprintf(stderr, "droce-gen: %s\n", err.message().c_str()), 1;
  wire::icrc_init();

  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"gen_pool", 32767, 256, 2176 + 4096, -1}, pool); !s.ok())
    return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), 1;
  PcapngCapture capture;
  LoopbackLabConfig lc;
  lc.pool = pool.get();
  lc.loss = opt.loss;
  lc.seed = opt.seed;
  lc.max_qps = opt.qps;
  auto lab = LoopbackLab::create(lc, err);
  if (!lab) return std::fprintf(stderr, "droce-gen: %s\n", err.message().c_str()), 1;
  if (!opt.pcap.empty()) {
    if (std::string e = capture.open(opt.pcap); !e.empty()) return std::fprintf(stderr, "droce-gen: %s\n", e.c_str()), 1;
    // The lab was built before the capture existed: rebuild it with capture on endpoint A.
    lab.reset();
    lc.capture = &capture;
    lab = LoopbackLab::create(lc, err);
    if (!lab) return std::fprintf(stderr, "droce-gen: %s\n", err.message().c_str()), 1;
  }

  g_base.resize(opt.size);
  for (std::uint32_t i = 0; i < opt.size; ++i) g_base[i] = static_cast<std::uint8_t>(i * 7 + (i >> 8));

  // Connect the QP pairs statically (both ends known in-process).
  std::vector<Flow> flows(opt.qps);
  const std::size_t slots = opt.inflight, bytes = static_cast<std::size_t>(opt.size) * slots;
  for (std::uint32_t i = 0; i < opt.qps; ++i) {
    rc::QpAttr a;
    a.pmtu = opt.mtu;
    a.dest_qpn = 0x11 + i;
    a.sq_psn = (0x123456 * (i + 1)) & 0xFFFFFF;
    a.rq_psn = (0x654321 * (i + 1)) & 0xFFFFFF;
    a.timeout = 10;  // 4 ms: lab RTTs are microseconds
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
    rc::QpAttr b = a;
    std::swap(b.sq_psn, b.rq_psn);
    Flow& f = flows[i];
    if (Status s = lab->a().create_qp(a, LoopbackLab::address(1), f.req); !s.ok())
      return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), 1;
    if (Status s = lab->b().create_qp(b, LoopbackLab::address(0), f.rsp); !s.ok())
      return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), 1;
    f.src.resize(bytes);
    f.dst.resize(bytes);
    f.post_tsc.resize(slots);
    const std::uint32_t remote = rc::kAccessLocalWrite | rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
    if (Status s = lab->memory_a().register_memory(f.src.data(), bytes, rc::kAccessLocalWrite, f.src_mr); !s.ok())
      return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), 1;
    if (Status s = lab->memory_b().register_memory(f.dst.data(), bytes, remote, f.dst_mr); !s.ok())
      return std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str()), 1;
    // READ reads a fixed pattern per remote slot.
    if (opt.op == Op::kRead)
      for (std::size_t s = 0; s < slots; ++s)
        fill(f.dst.data() + s * opt.size, opt.size, i, s);
  }

  const double hz = static_cast<double>(rte_get_tsc_hz());
  LatencyHistogram hist;
  Totals t;
  const std::uint64_t start = rte_rdtsc();
  const auto warm_end = start + static_cast<std::uint64_t>(opt.warmup_s * hz);
  // --count runs until done but never past a hard limit, so a dead peer cannot hang us.
  const double limit_s = opt.count != 0 ? std::max(60.0, opt.duration_s) : opt.duration_s;
  const auto deadline = warm_end + static_cast<std::uint64_t>(limit_s * hz);
  std::uint64_t measured_start = warm_end, next_line = start + static_cast<std::uint64_t>(hz);
  std::uint64_t line_msgs = 0, line_bytes = 0, total_posted = 0;
  bool measuring = opt.warmup_s == 0;

  auto post_one = [&](Flow& f, std::uint32_t qi) {
    const std::uint64_t seq = f.posted;
    const std::size_t slot = seq % slots;
    std::uint8_t* s = f.src.data() + slot * opt.size;
    rc::SendWr w;
    w.wr_id = seq;
    w.imm = static_cast<std::uint32_t>(seq);
    w.sge = {reinterpret_cast<std::uint64_t>(s), opt.size, f.src_mr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(f.dst.data() + slot * opt.size);
    w.rkey = f.dst_mr.rkey;
    if (opt.op == Op::kRead) {
      w.opcode = rc::WrOpcode::kRead;
    } else {
      w.opcode = opt.op == Op::kSend ? rc::WrOpcode::kSendWithImm : rc::WrOpcode::kWriteWithImm;
      fill(s, opt.size, qi, seq);
      rc::RecvWr r{seq, {reinterpret_cast<std::uint64_t>(f.dst.data() + slot * opt.size), opt.size, f.dst_mr.lkey}};
      if (opt.op == Op::kWrite) r.sge = {0, 0, 0};  // WRITE with immediate only consumes a receive
      if (!f.rsp->post_recv(r).empty()) return false;
    }
    if (!f.req->post_send(w).empty()) return false;
    f.post_tsc[slot] = rte_rdtsc();
    ++f.posted;
    ++total_posted;
    return true;
  };

  std::uint64_t now = start;
  while (!stop_requested() && now < deadline) {
    if (!measuring && now >= warm_end) {
      measuring = true;
      measured_start = now;
      t = Totals{};
      hist = LatencyHistogram{};
    }
    for (std::uint32_t i = 0; i < opt.qps; ++i) {
      Flow& f = flows[i];
      while (f.posted - f.completed < slots && (opt.count == 0 || total_posted < opt.count) &&
             f.req->state() == rc::QpState::kRts && post_one(f, i)) {
      }
    }
    lab->poll(now);
    now = rte_rdtsc();
    for (std::uint32_t i = 0; i < opt.qps; ++i) {
      Flow& f = flows[i];
      rc::Completion c;
      // Receiver: sequence and content of every message (SEND data, WRITE target memory).
      while (f.rsp->poll_cq(c)) {
        if (c.status != rc::WcStatus::kSuccess) {
          ++t.errors;
          continue;
        }
        const std::uint64_t seq = c.imm;
        if (seq < (f.expected_rx & 0xFFFFFFFFull)) ++t.duplicated;
        else if (seq > (f.expected_rx & 0xFFFFFFFFull)) {
          t.lost += seq - f.expected_rx;
          ++t.out_of_order;
        }
        if (!check(f.dst.data() + (seq % slots) * opt.size, opt.size, i, seq)) ++t.corrupted;
        f.expected_rx = seq + 1;
      }
      // Requester: completions in order; READ data checked here.
      while (f.req->poll_cq(c)) {
        if (c.status != rc::WcStatus::kSuccess) {
          ++t.errors;
          continue;
        }
        if (c.wr_id != f.completed) ++t.out_of_order;
        const std::size_t slot = c.wr_id % slots;
        if (opt.op == Op::kRead) {
          if (!check(f.src.data() + slot * opt.size, opt.size, i, slot)) ++t.corrupted;
        }
        hist.record(static_cast<std::uint64_t>(static_cast<double>(now - f.post_tsc[slot]) * 1e9 / hz));
        ++f.completed;
        ++t.messages;
        t.bytes += opt.size;
        ++line_msgs;
        line_bytes += opt.size;
      }
    }
    if (t.errors != 0) break;
    if (opt.count != 0 && total_posted >= opt.count) {
      bool all = true;
      for (auto& f : flows) all = all && f.completed == f.posted;
      if (all) break;
    }
    if (now >= next_line) {
      if (!opt.quiet) {
        std::uint64_t retx = 0, naks = 0;
        for (auto& f : flows) {
          retx += f.req->counters().retransmitted_packets;
          naks += f.rsp->counters().naks_sent;
        }
        std::printf("droce-gen: %6.2f Gb/s  %8.3f Mmsg/s  retransmitted %llu  naks %llu  cnps 0  rate line\n",
                    line_bytes * 8.0 / 1e9, line_msgs / 1e6, static_cast<unsigned long long>(retx),
                    static_cast<unsigned long long>(naks));
        std::fflush(stdout);
      }
      line_msgs = line_bytes = 0;
      next_line = now + static_cast<std::uint64_t>(hz);
    }
  }
  const double secs = static_cast<double>(now - measured_start) / hz;
  bool unfinished = false;
  for (auto& f : flows) unfinished |= f.completed != f.posted && t.errors == 0 && opt.count != 0;
  lab->finish();
  capture.close();

  // Counters from both ends.
  std::uint64_t retx = 0, naks_sent = 0, naks_rcvd = 0, rnr = 0, timeouts = 0, dup_req = 0, oos = 0;
  for (auto& f : flows) {
    for (auto* q : {f.req, f.rsp}) {
      retx += q->counters().retransmitted_packets;
      naks_sent += q->counters().naks_sent;
      naks_rcvd += q->counters().naks_received;
      rnr += q->counters().rnr_naks_received;
      timeouts += q->counters().local_ack_timeout_err;
      dup_req += q->counters().duplicate_request;
      oos += q->counters().out_of_sequence;
    }
  }
  const double gbps = secs > 0 ? t.bytes * 8.0 / secs / 1e9 : 0;
  const double mmps = secs > 0 ? t.messages / secs / 1e6 : 0;
  std::printf("---------------------------------------------------------------------------------------\n");
  std::printf(" droce-gen RC %s, %u QP(s), MTU %u, inflight %u, lab loss %g\n", gen::op_name(opt.op), opt.qps,
              opt.mtu, opt.inflight, opt.loss);
  std::printf(" #bytes     #iterations    BW average[Gb/sec]   MsgRate[Mpps]\n");
  std::printf(" %-10u %-14llu %-20.3f %.6f\n", opt.size, static_cast<unsigned long long>(t.messages), gbps, mmps);
  std::printf(" latency ns: min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu\n",
              static_cast<unsigned long long>(hist.min()), static_cast<unsigned long long>(hist.percentile(0.5)),
              static_cast<unsigned long long>(hist.percentile(0.9)), static_cast<unsigned long long>(hist.percentile(0.99)),
              static_cast<unsigned long long>(hist.percentile(0.999)), static_cast<unsigned long long>(hist.max()));
  std::printf(" retransmitted %llu  naks sent %llu / received %llu  rnr naks %llu  ack timeouts %llu  frames dropped by lab %llu\n",
              static_cast<unsigned long long>(retx), static_cast<unsigned long long>(naks_sent),
              static_cast<unsigned long long>(naks_rcvd), static_cast<unsigned long long>(rnr),
              static_cast<unsigned long long>(timeouts), static_cast<unsigned long long>(lab->relay_dropped()));
  std::printf(" verification: lost %llu  duplicated %llu  out of order %llu  corrupted %llu  errors %llu\n",
              static_cast<unsigned long long>(t.lost), static_cast<unsigned long long>(t.duplicated),
              static_cast<unsigned long long>(t.out_of_order), static_cast<unsigned long long>(t.corrupted),
              static_cast<unsigned long long>(t.errors));
  std::printf(" zero-copy TX frames %llu, payload bytes copied on TX %llu\n",
              static_cast<unsigned long long>(lab->a().counters().tx_zero_copy_frames + lab->b().counters().tx_zero_copy_frames),
              static_cast<unsigned long long>(lab->a().counters().tx_payload_bytes_copied + lab->b().counters().tx_payload_bytes_copied));
  std::printf("---------------------------------------------------------------------------------------\n");

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
    j["cnps_sent"] = 0;
    j["cnps_received"] = 0;
    j["lost"] = t.lost;
    j["duplicated"] = t.duplicated;
    j["out_of_order"] = t.out_of_order;
    j["corrupted"] = t.corrupted;
    j["errors"] = t.errors;
    j["ack_timeouts"] = timeouts;
    j["duplicate_requests"] = dup_req;
    j["out_of_sequence"] = oos;
    j["lab_frames_dropped"] = lab->relay_dropped();
    j["config"] = {{"mode", opt.mode}, {"op", gen::op_name(opt.op)}, {"size", opt.size}, {"mtu", opt.mtu},
                   {"qps", opt.qps}, {"inflight", opt.inflight}, {"duration_s", opt.duration_s},
                   {"count", opt.count}, {"warmup_s", opt.warmup_s}, {"loss", opt.loss}, {"seed", opt.seed},
                   {"cc", "none"}};
    std::ofstream out(opt.json);
    out << j.dump(2) << "\n";
    if (!out) return std::fprintf(stderr, "droce-gen: cannot write %s\n", opt.json.c_str()), 1;
  }
  const bool ok = t.errors == 0 && t.lost == 0 && t.duplicated == 0 && t.out_of_order == 0 && t.corrupted == 0 &&
                  !unfinished && t.messages > 0;
  if (!ok) std::fprintf(stderr, "droce-gen: FAILED: transport errors or verification failures (see the report)\n");
  return ok ? 0 : 1;
}
