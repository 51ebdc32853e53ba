// The two-endpoint RC lab of the engine tests: A <-> net_ring <-> relay <-> net_ring <-> B. The
// relay models the wire: it drops frames (seeded), serialises chains, and can mark CE like a
// congested switch; the transport never knows.
#pragma once

#include <rte_cycles.h>
#include <rte_ip.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "engine/core/mempool.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/lab/drop_rule.h"
#include "tests/engine/ring_pair.h"

namespace droce::test {

using namespace droce::engine;

inline MbufPool& pool() {
  // Deliberately never freed: static destructors run after main() has shut EAL down.
  static MbufPool* p = new MbufPool();
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_rc_pool", 16383, 256, 2176, -1}, *p).ok());
  return *p;
}

// Forwards frames between two ports, dropping each with probability `loss` (seeded).
struct LossyRelay {
  std::uint16_t p1, p2;
  double loss;
  // A real wire serialises a frame: the receiver gets one buffer, not the sender's mbuf chain
  // (net_ring would otherwise hand over the sender's segments, including its application memory).
  bool serialise = false;
  std::mt19937_64 rng{1234};
  std::uint64_t dropped = 0;
  // Marks every Nth ECN-capable IPv4 frame from p1 to p2 CE, as a switch whose queue crossed
  // its threshold would (0: never). The ICRC does not cover the TOS byte; the IP checksum does.
  std::uint32_t ce_every = 0;
  bool ce_from_p2 = false;  // mark the other direction instead (READ response data, B to A)
  std::uint64_t ect_seen = 0, ce_marked = 0;
  // A switch's deterministic drop (engine/lab/drop_rule.h) on the frames from p1 to p2 (none: off).
  engine::DropRule* drop_rule = nullptr;
  // The UDP source port of the last IPv4 UDP frame each way (from p1, from p2): which flow a QP is.
  std::uint16_t last_udp_sport[2] = {0, 0};
  // And the IP TOS byte (DSCP and ECN) of the last such frame each way from each source port.
  std::map<std::uint16_t, std::uint8_t> last_tos[2] = {};
  void note_sport(std::uint16_t from, const rte_mbuf* m) {
    const auto* f = rte_pktmbuf_mtod(m, const std::uint8_t*);
    if (m->data_len < 38 || f[12] != 0x08 || f[13] != 0x00 || f[23] != IPPROTO_UDP) return;
    const std::uint32_t l4 = 14 + 4 * (f[14] & 0x0F);
    if (m->data_len < l4 + 2) return;
    const auto sport = static_cast<std::uint16_t>(f[l4] << 8 | f[l4 + 1]);
    last_udp_sport[from == p1 ? 0 : 1] = sport;
    last_tos[from == p1 ? 0 : 1][sport] = f[15];
  }
  void maybe_mark(rte_mbuf* m) {
    auto* f = rte_pktmbuf_mtod(m, std::uint8_t*);
    if (m->data_len < 34 || f[12] != 0x08 || f[13] != 0x00 || (f[15] & 3) != wire::kEcnEct0) return;
    if (++ect_seen % ce_every != 0) return;
    f[15] |= wire::kEcnCe;
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(f + 14);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    ++ce_marked;
  }
  void pump(std::uint16_t from, std::uint16_t to) {
    rte_mbuf* b[32];
    const std::uint16_t n = rte_eth_rx_burst(from, 0, b, 32);
    std::uniform_real_distribution<double> u(0, 1);
    rte_mbuf* keep[32];
    std::uint16_t k = 0;
    for (std::uint16_t i = 0; i < n; ++i) {
      const std::uint16_t kept_before = k;
      note_sport(from, b[i]);
      const bool ruled = drop_rule != nullptr && from == p1 &&
                         drop_rule->drops(rte_pktmbuf_mtod(b[i], const std::uint8_t*), b[i]->data_len);
      if (ruled || u(rng) < loss) {
        rte_pktmbuf_free(b[i]);
        ++dropped;
      } else if (serialise && b[i]->nb_segs > 1) {
        rte_mbuf* flat = rte_pktmbuf_alloc(b[i]->pool);
        void* dst = flat != nullptr ? rte_pktmbuf_append(flat, static_cast<std::uint16_t>(b[i]->pkt_len)) : nullptr;
        if (dst != nullptr) {
          rte_pktmbuf_read(b[i], 0, b[i]->pkt_len, dst);  // copies: the chain is not contiguous
          keep[k++] = flat;
        } else {
          if (flat != nullptr) rte_pktmbuf_free(flat);
          ++dropped;
        }
        rte_pktmbuf_free(b[i]);
      } else {
        keep[k++] = b[i];
      }
      if (ce_every != 0 && from == (ce_from_p2 ? p2 : p1) && k > kept_before) maybe_mark(keep[k - 1]);
    }
    const std::uint16_t sent = rte_eth_tx_burst(to, 0, keep, k);
    for (std::uint16_t i = sent; i < k; ++i) rte_pktmbuf_free(keep[i]);
    dropped += k - sent;
  }
  void poll() {
    pump(p1, p2);
    pump(p2, p1);
  }
};

inline wire::L2L3Address addr(std::uint8_t host, bool ipv6 = false) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[5] = host;
  if (ipv6) {
    a.ip[0] = 0xfd;  // fd00::host, a unique-local address
    a.ip[15] = host;
  } else {
    a.ip[0] = 10;
    a.ip[3] = host;
  }
  return a;
}

struct LabOptions {
  double loss = 0;
  bool ipv6 = false;
  rc::RecvMode b_recv_mode = rc::RecvMode::kPostedBuffers;
  std::uint32_t b_rq_depth = 256;
  bool serialise = false;
  std::uint32_t ce_every = 0;                        // relay marks every Nth A->B data frame CE
  bool ce_b_to_a = false;                            // ... every Nth B->A frame instead
  std::function<void(EndpointConfig&)> tune_a = {};  // adjust A's config before creation
  std::function<void(EndpointConfig&)> tune_b = {};
  // Time: 0 runs the endpoints on the TSC (wall time); otherwise on a clock the test controls,
  // starting at the TSC reading after set-up and moving this many ns per poll() (and by
  // advance_ns()), so timers, pacing and DCQCN recovery do not depend on the machine's speed.
  std::uint64_t clock_step_ns = 0;
  // Both QPs' loss recovery (docs/selective-repeat.md) and, for selective repeat, the cap on PSNs in flight.
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  std::uint32_t sr_bdp_pkts = rc::kSrMaxBdpPkts;
  std::optional<rc::Recovery> b_recovery = {};  // B's, where it differs from A's
};

struct Lab {
  test::RingPair left, right;  // A <-> relay <-> B
  MemoryRegistry mem_a, mem_b;
  std::unique_ptr<RcEndpoint> a, b;
  LossyRelay relay;
  rc::RcQp* qa = nullptr;
  rc::RcQp* qb = nullptr;
  std::uint32_t qpn_a = 0, qpn_b = 0;
  std::uint64_t step_tsc = 0;  // 0: wall time
  std::uint64_t clock_tsc = 0;
  Lab(const std::string& name, double loss) : Lab(name, LabOptions{loss}) {}
  Lab(const std::string& name, const LabOptions& o)
      : left(name + "l", pool().get()),
        right(name + "r", pool().get()),
        relay{left.b->id(), right.a->id(), o.loss, o.serialise} {
    EndpointConfig ca;
    ca.queues.port_id = left.a->id();
    ca.queues.pool = pool().get();
    ca.queues.memory = &mem_a;
    ca.addresses.local = addr(1, o.ipv6);
    ca.addresses.ipv6 = o.ipv6;
    EndpointConfig cb = ca;
    cb.queues.port_id = right.b->id();
    cb.queues.memory = &mem_b;
    cb.addresses.local = addr(2, o.ipv6);
    if (o.tune_a) o.tune_a(ca);
    if (o.tune_b) o.tune_b(cb);
    relay.ce_every = o.ce_every;
    relay.ce_from_p2 = o.ce_b_to_a;
    Status made;
    a = RcEndpoint::create(ca, made);
    INFO(made.message());
    REQUIRE(a);
    b = RcEndpoint::create(cb, made);
    INFO(made.message());
    REQUIRE(b);
    // The verbs-style sequence: create (INIT), then connect with the peer's address, QPN and PSN.
    rc::QpAttr qa_attr;
    qa_attr.sq_psn = 0xFFFF00;  // the first PSNs wrap through 2^24
    qa_attr.timeout = 14;       // ~67 ms, as rxe and perftest use
    qa_attr.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
    qa_attr.recovery = o.recovery;
    qa_attr.sr_bdp_pkts = o.sr_bdp_pkts;
    rc::QpAttr qb_attr = qa_attr;
    qb_attr.sq_psn = 0x000100;
    qb_attr.recv_mode = o.b_recv_mode;
    qb_attr.rq_depth = o.b_rq_depth;
    qb_attr.recovery = o.b_recovery.value_or(o.recovery);
    REQUIRE(a->create_qp(qa_attr, qpn_a).ok());
    REQUIRE(b->create_qp(qb_attr, qpn_b).ok());
    REQUIRE(a->connect(qpn_a, RemoteQp{addr(2, o.ipv6), qpn_b, qb_attr.sq_psn}).ok());
    REQUIRE(b->connect(qpn_b, RemoteQp{addr(1, o.ipv6), qpn_a, qa_attr.sq_psn}).ok());
    qa = a->qp(qpn_a);
    qb = b->qp(qpn_b);
    step_tsc = ns_to_tsc(o.clock_step_ns);
    clock_tsc = rte_rdtsc();
  }
  static std::uint64_t ns_to_tsc(std::uint64_t ns) {
    return static_cast<std::uint64_t>(static_cast<double>(ns) * static_cast<double>(rte_get_tsc_hz()) / 1e9);
  }
  // The time the endpoints see now (the TSC, or the test's clock).
  [[nodiscard]] std::uint64_t now_tsc() const { return step_tsc == 0 ? rte_rdtsc() : clock_tsc; }
  // The test's clock in ns as the endpoints convert it.
  [[nodiscard]] std::uint64_t now_ns() const { return a->now_ns(now_tsc()); }
  void advance_ns(std::uint64_t ns) { clock_tsc += ns_to_tsc(ns); }
  void poll() {
    clock_tsc += step_tsc;
    a->poll(now_tsc());
    relay.poll();
    b->poll(now_tsc());
    relay.poll();
  }
  template <typename Done>
  bool run(Done done, int seconds = 20) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      for (int i = 0; i < 64; ++i) poll();
    }
    return true;
  }
};

// The sending half of a test that streams `total` SENDs of `size` bytes one way, A to B: message i
// comes from src + i * size with immediate i; at most `window` are unacknowledged; A's completions
// are counted as they come.
struct SendStream {
  const std::uint8_t* src = nullptr;
  std::uint32_t size = 0;
  int total = 0;
  int window = 32;
  int posted = 0, acked = 0, failed = 0;
  void step(Lab& lab) {
    while (posted < total && posted - acked < window) {
      const auto seq = static_cast<std::uint32_t>(posted);
      if (!lab.a->send_message(lab.qpn_a, src + static_cast<std::size_t>(posted) * size, size, seq, &seq).ok()) break;
      ++posted;
    }
    rc::Completion c[16];
    for (unsigned n = lab.a->poll_cq(lab.qpn_a, c, 16), i = 0; i < n; ++i)
      (c[i].status == rc::WcStatus::kSuccess ? acked : failed)++;
  }
};

}  // namespace droce::test
