// RC over a real PMD: two RcEndpoints on net_ring ports, joined through a relay that drops frames
// (the transport never knows). Messages arrive exactly once, in order, intact; payloads leave
// from application memory without a copy.
#include <catch2/catch.hpp>

#include <rte_cycles.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstring>
#include <random>
#include <vector>

#include "engine/mempool.h"
#include "engine/qp_channel.h"
#include "engine/rc_endpoint.h"
#include "tests/engine/ring_pair.h"

using namespace droce;
using namespace droce::engine;

namespace {

MbufPool& pool() {
  // Deliberately never freed: static destructors run after main() has shut EAL down.
  static MbufPool* p = new MbufPool();
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_rc_pool", 16383, 256, 2176, -1}, *p).ok());
  return *p;
}

// Forwards frames between two ports, dropping each with probability `loss` (seeded).
struct LossyRelay {
  std::uint16_t p1, p2;
  double loss;
  std::mt19937_64 rng{1234};
  std::uint64_t dropped = 0;
  void pump(std::uint16_t from, std::uint16_t to) {
    rte_mbuf* b[32];
    const std::uint16_t n = rte_eth_rx_burst(from, 0, b, 32);
    std::uniform_real_distribution<double> u(0, 1);
    rte_mbuf* keep[32];
    std::uint16_t k = 0;
    for (std::uint16_t i = 0; i < n; ++i) {
      if (u(rng) < loss) {
        rte_pktmbuf_free(b[i]);
        ++dropped;
      } else {
        keep[k++] = b[i];
      }
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

wire::L2L3Address addr(std::uint8_t host) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[5] = host;
  a.ip[0] = 10;
  a.ip[3] = host;
  return a;
}

struct Lab {
  test::RingPair left, right;  // A <-> relay <-> B
  MemoryRegistry mem_a, mem_b;
  std::unique_ptr<RcEndpoint> a, b;
  LossyRelay relay;
  rc::RcQp* qa = nullptr;
  rc::RcQp* qb = nullptr;
  Lab(const std::string& name, double loss)
      : left(name + "l", pool().get()), right(name + "r", pool().get()),
        relay{left.b->id(), right.a->id(), loss} {
    EndpointConfig ca;
    ca.port_id = left.a->id();
    ca.pool = pool().get();
    ca.memory = &mem_a;
    ca.local = addr(1);
    EndpointConfig cb = ca;
    cb.port_id = right.b->id();
    cb.memory = &mem_b;
    cb.local = addr(2);
    a = std::make_unique<RcEndpoint>(ca);
    b = std::make_unique<RcEndpoint>(cb);
    rc::QpAttr qa_attr;
    qa_attr.dest_qpn = 0x11;  // both endpoints number their first QP 0x11
    qa_attr.sq_psn = 0xFFFF00;
    qa_attr.rq_psn = 0x000100;
    qa_attr.timeout = 10;  // ~4 ms
    qa_attr.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
    rc::QpAttr qb_attr = qa_attr;
    std::swap(qb_attr.sq_psn, qb_attr.rq_psn);
    REQUIRE(a->create_qp(qa_attr, addr(2), qa).ok());
    REQUIRE(b->create_qp(qb_attr, addr(1), qb).ok());
  }
  void poll() {
    a->poll(rte_rdtsc());
    relay.poll();
    b->poll(rte_rdtsc());
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

std::uint8_t pat(std::uint32_t m, std::uint32_t i) { return static_cast<std::uint8_t>(m * 131 + i * 3 + (i >> 10)); }

}  // namespace

TEST_CASE("RC SEND over net_ring with 0 %, 1 % and 5 % frame loss: exactly once, in order, intact, zero-copy TX",
          "[engine][transport]") {
  for (double loss : {0.0, 0.01, 0.05}) {
    INFO("loss " << loss);
    Lab lab("trc" + std::to_string(static_cast<int>(loss * 100)), loss);
    constexpr int kMsgs = 400;
    constexpr std::uint32_t kMax = 5000;
    std::vector<std::uint8_t> src(32 * kMax), dst(64 * kMax);
    rc::MemoryRegion smr, dmr;
    REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
    REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
    int posted = 0, recvs = 0, sent_ok = 0, delivered = 0, in_order = 0, corrupt = 0, errors = 0;
    auto size_of = [](int m) { return static_cast<std::uint32_t>((m * 1237) % kMax); };
    const bool done = lab.run([&] {
      while (posted < kMsgs && posted - sent_ok < 32) {
        const int slot = posted % 32;
        for (std::uint32_t i = 0; i < size_of(posted); ++i) src[slot * kMax + i] = pat(posted, i);
        rc::SendWr w;
        w.wr_id = static_cast<std::uint64_t>(posted);
        w.sge = {reinterpret_cast<std::uint64_t>(src.data() + slot * kMax), size_of(posted), smr.lkey};
        if (!lab.qa->post_send(w).empty()) break;
        ++posted;
      }
      while (recvs < kMsgs && recvs - delivered < 64) {
        rc::RecvWr r{static_cast<std::uint64_t>(recvs),
                     {reinterpret_cast<std::uint64_t>(dst.data() + (recvs % 64) * kMax), kMax, dmr.lkey}};
        if (!lab.qb->post_recv(r).empty()) break;
        ++recvs;
      }
      rc::Completion c;
      while (lab.qa->poll_cq(c)) (c.status == rc::WcStatus::kSuccess ? sent_ok : errors)++;
      while (lab.qb->poll_cq(c)) {
        if (c.status != rc::WcStatus::kSuccess) {
          ++errors;
          continue;
        }
        const int m = static_cast<int>(c.wr_id);
        in_order += m == delivered;
        bool ok = c.byte_len == size_of(m);
        for (std::uint32_t i = 0; ok && i < size_of(m); ++i) ok = dst[(m % 64) * kMax + i] == pat(m, i);
        corrupt += !ok;
        ++delivered;
      }
      return errors > 0 || (delivered == kMsgs && sent_ok == kMsgs);
    });
    CHECK(done);
    CHECK(errors == 0);
    CHECK(delivered == kMsgs);
    CHECK(in_order == kMsgs);
    CHECK(corrupt == 0);
    CHECK(lab.a->counters().tx_zero_copy_frames > 0);
    CHECK(lab.a->counters().tx_payload_bytes_copied == 0);  // every payload left from app memory
    if (loss > 0) {
      CHECK(lab.relay.dropped > 0);
      CHECK(lab.qa->counters().retransmitted_packets > 0);
    }
    lab.a->finish();
    lab.b->finish();
    // Nothing still references the application's memory once the frames are gone.
    for (int i = 0; i < 200; ++i) lab.poll();
    CHECK(lab.mem_a.outstanding(smr.lkey) == 0);
  }
}

TEST_CASE("RC WRITE and READ over net_ring with 2 % loss: remote memory equals the source", "[engine][transport]") {
  Lab lab("trw", 0.02);
  std::vector<std::uint8_t> local(128 * 1024), back(128 * 1024), remote(128 * 1024);
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = static_cast<std::uint8_t>(i * 7 + 3);
  rc::MemoryRegion lmr, bmr, rmr;
  REQUIRE(lab.mem_a.register_memory(local.data(), local.size(), rc::kAccessLocalWrite, lmr).ok());
  REQUIRE(lab.mem_a.register_memory(back.data(), back.size(), rc::kAccessLocalWrite, bmr).ok());
  REQUIRE(lab.mem_b.register_memory(remote.data(), remote.size(),
                                    rc::kAccessLocalWrite | rc::kAccessRemoteWrite | rc::kAccessRemoteRead, rmr).ok());
  for (int i = 0; i < 32; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(local.data() + i * 4096), 4096, lmr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + i * 4096);
    w.rkey = rmr.rkey;
    REQUIRE(lab.qa->post_send(w).empty());
  }
  int ok = 0, bad = 0;
  auto drain = [&] {
    rc::Completion c;
    while (lab.qa->poll_cq(c)) (c.status == rc::WcStatus::kSuccess ? ok : bad)++;
    return ok + bad;
  };
  REQUIRE(lab.run([&] { return drain() == 32; }));
  CHECK(bad == 0);
  CHECK(remote == local);
  for (int i = 0; i < 8; ++i) {
    rc::SendWr w;
    w.wr_id = 100 + static_cast<std::uint64_t>(i);
    w.opcode = rc::WrOpcode::kRead;
    w.sge = {reinterpret_cast<std::uint64_t>(back.data() + i * 16384), 16384, bmr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + i * 16384);
    w.rkey = rmr.rkey;
    REQUIRE(lab.qa->post_send(w).empty());
  }
  REQUIRE(lab.run([&] { return drain() == 40; }));
  CHECK(bad == 0);
  CHECK(back == local);
  CHECK(lab.b->counters().tx_zero_copy_frames > 0);  // READ responses straight from the responder's region
}

TEST_CASE("frames for unknown QPNs and corrupted frames are dropped and counted by reason", "[engine][transport]") {
  Lab lab("trd", 0.0);
  rc::MemoryRegion mr;
  std::vector<std::uint8_t> buf(64);
  REQUIRE(lab.mem_a.register_memory(buf.data(), buf.size(), rc::kAccessLocalWrite, mr).ok());
  // A SEND to QPN 0x40 (no such QP on B) built with the wire builder.
  wire::TemplateConfig tc;
  tc.local = addr(1);
  tc.remote = addr(2);
  tc.dest_qpn = 0x40;
  const auto t = wire::HeaderTemplate::make(tc);
  wire::PacketFields f;
  f.opcode = 0x04;
  f.payload_len = 16;
  std::uint8_t frame[256];
  const auto n = wire::build_frame(t, f, buf.data(), frame, sizeof(frame));
  for (int variant = 0; variant < 2; ++variant) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
    auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(n)));
    std::memcpy(p, frame, n);
    if (variant == 1) p[n - 1] ^= 0xFF;  // bad ICRC
    REQUIRE(rte_eth_tx_burst(lab.right.a->id(), 0, &m, 1) == 1);
  }
  for (int i = 0; i < 10; ++i) lab.b->poll(rte_rdtsc());
  CHECK(lab.b->counters().rx_drops[static_cast<int>(wire::DropReason::kUnknownQpn)] == 1);
  CHECK(lab.b->counters().rx_drops[static_cast<int>(wire::DropReason::kBadIcrc)] == 1);
}

TEST_CASE("pcapng capture of a lossy run: every frame sent and received, as on the wire", "[engine][capture]") {
  // DROCE_CAPTURE_OUT names the file (scripts/verify_capture.sh decodes it with tshark and
  // re-checks every ICRC with Scapy); otherwise a temporary file.
  const char* out = std::getenv("DROCE_CAPTURE_OUT");
  const std::string path = out != nullptr ? out : "/tmp/droce-test-capture-" + std::to_string(getpid()) + ".pcapng";
  Lab lab("tcap", 0.05);
  PcapngCapture cap;
  REQUIRE(cap.open(path).empty());
  // Capture on A's port: A's requests as sent, B's ACKs/NAKs as received after the lossy relay.
  EndpointConfig ca;
  ca.port_id = lab.left.a->id();
  ca.pool = pool().get();
  ca.memory = &lab.mem_a;
  ca.local = addr(1);
  ca.capture = &cap;
  const rc::QpAttr qa_attr = lab.qa->attr();  // before the old endpoint (and its QP) goes away
  lab.a = std::make_unique<RcEndpoint>(ca);
  const Status st = lab.a->create_qp(qa_attr, addr(2), lab.qa);
  INFO(st.message());
  REQUIRE(st.ok());
  std::vector<std::uint8_t> src(64 * 1024), dst(64 * 1024);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 5 + 1);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  for (int i = 0; i < 16; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(src.data() + i * 4096), 4096, smr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data() + i * 4096);
    w.rkey = dmr.rkey;
    REQUIRE(lab.qa->post_send(w).empty());
  }
  int done = 0;
  REQUIRE(lab.run([&] {
    rc::Completion c;
    while (lab.qa->poll_cq(c)) done += c.status == rc::WcStatus::kSuccess;
    return done == 16;
  }));
  CHECK(dst == src);
  cap.close();
  CHECK(cap.captured() > 64);  // 64 WRITE packets at least once, plus ACKs
  CHECK(cap.dropped() == 0);
  // More frames than the capture pool holds: copies must go back to the pool after each write.
  PcapngCapture big;
  REQUIRE(big.open(path + ".2", 0, 127).empty());
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(rte_pktmbuf_append(m, 100) != nullptr);
  std::memset(rte_pktmbuf_mtod(m, void*), 0, 100);
  for (int i = 0; i < 1000; ++i) big.capture(lab.left.a->id(), 0, &m, 1, CaptureDirection::kTx, rte_rdtsc());
  big.close();
  rte_pktmbuf_free(m);
  CHECK(big.captured() == 1000);
  CHECK(big.dropped() == 0);
  std::remove((path + ".2").c_str());
  if (out == nullptr) std::remove(path.c_str());
}

TEST_CASE("application threads hand work to the worker through lock-free SPSC channels", "[engine][channel]") {
  Lab lab("tch", 0.01);
  constexpr int kMsgs = 3000;
  constexpr std::uint32_t kSize = 1500;
  std::vector<std::uint8_t> src(64 * kSize), dst(128 * kSize);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  QpChannel to_a(256), to_b(256);
  std::atomic<bool> stop{false};
  std::atomic<int> sent_ok{0}, received{0}, bad{0};
  // Sender thread: posts SENDs, at most 64 outstanding (its buffer slots), through the channel.
  std::thread sender([&] {
    int posted = 0, done = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (done < kMsgs && !stop && std::chrono::steady_clock::now() < end) {
      if (posted < kMsgs && posted - done < 64) {
        const int slot = posted % 64;
        std::memset(src.data() + slot * kSize, posted & 0xFF, kSize);
        rc::SendWr w;
        w.wr_id = static_cast<std::uint64_t>(posted);
        w.sge = {reinterpret_cast<std::uint64_t>(src.data() + slot * kSize), kSize, smr.lkey};
        if (to_a.post_send(w)) ++posted;
      }
      rc::Completion c;
      while (to_a.poll(c)) {
        ++done;
        if (c.status == rc::WcStatus::kSuccess) ++sent_ok;
        else ++bad;
      }
    }
  });
  // Receiver thread: keeps receives posted and checks each message.
  std::thread receiver([&] {
    int posted = 0, got = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (got < kMsgs && !stop && std::chrono::steady_clock::now() < end) {
      if (posted < kMsgs && posted - got < 128) {
        rc::RecvWr r{static_cast<std::uint64_t>(posted),
                     {reinterpret_cast<std::uint64_t>(dst.data() + (posted % 128) * kSize), kSize, dmr.lkey}};
        if (to_b.post_recv(r)) ++posted;
      }
      rc::Completion c;
      while (to_b.poll(c)) {
        const auto m = static_cast<int>(c.wr_id);
        const std::uint8_t* p = dst.data() + (m % 128) * kSize;
        if (c.status != rc::WcStatus::kSuccess || m != got || c.byte_len != kSize || p[0] != (m & 0xFF) ||
            p[kSize - 1] != (m & 0xFF))
          ++bad;
        ++got;
        ++received;
      }
    }
  });
  // This thread is the worker: the datapath never waits on the application threads.
  const bool done = lab.run([&] {
    to_a.service(*lab.qa);
    to_b.service(*lab.qb);
    return (sent_ok + bad >= kMsgs && received >= kMsgs) || bad > 0;
  }, 30);
  stop = true;
  sender.join();
  receiver.join();
  CHECK(done);
  CHECK(bad == 0);
  CHECK(sent_ok == kMsgs);
  CHECK(received == kMsgs);
}
