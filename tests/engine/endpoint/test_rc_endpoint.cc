// RC over a real PMD: two RcEndpoints on net_ring ports, joined through a relay that drops frames
// (the transport never knows). Messages arrive exactly once, in order, intact; payloads leave
// from application memory without a copy.
#include <rte_cycles.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "engine/core/mempool.h"
#include "engine/endpoint/qp_channel.h"
#include "engine/endpoint/rc_endpoint.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using droce::test::addr;
using droce::test::Lab;
using droce::test::LabOptions;
using droce::test::pool;

namespace {

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
        if (!lab.qa->post_send(w).ok()) break;
        ++posted;
      }
      while (recvs < kMsgs && recvs - delivered < 64) {
        rc::RecvWr r{static_cast<std::uint64_t>(recvs),
                     {reinterpret_cast<std::uint64_t>(dst.data() + (recvs % 64) * kMax), kMax, dmr.lkey}};
        if (!lab.qb->post_recv(r).ok()) break;
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
    CHECK(lab.a->counters().tx_payload_bytes_copied == 0);  // every payload left from app memory...
    CHECK(lab.a->counters().tx_inline_frames > 0);          // ...or was inlined on purpose (<= 256 B)
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
  REQUIRE(lab.mem_b
              .register_memory(remote.data(), remote.size(),
                               rc::kAccessLocalWrite | rc::kAccessRemoteWrite | rc::kAccessRemoteRead, rmr)
              .ok());
  for (int i = 0; i < 32; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(local.data() + i * 4096), 4096, lmr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + i * 4096);
    w.rkey = rmr.rkey;
    REQUIRE(lab.qa->post_send(w).ok());
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
    REQUIRE(lab.qa->post_send(w).ok());
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

TEST_CASE("the ICRC through the QP's template: another source port verifies in full, a flipped bit drops either way",
          "[engine][transport][icrc]") {
  Lab lab("tit", 0.0);
  std::vector<std::uint8_t> dst(4 * 64), src(32);
  rc::MemoryRegion dmr;
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  for (std::uint32_t i = 0; i < 4; ++i)
    REQUIRE(lab.qb->post_recv({i, {reinterpret_cast<std::uint64_t>(dst.data() + i * 64), 64, dmr.lkey}}).ok());
  // SEND ONLY frames to B's QP from A's address, as A's QP would send them (its first PSN
  // 0xFFFF00), with the UDP source port the test picks; `flip` damages one byte after the ICRC.
  auto inject = [&](std::uint16_t sport, std::uint32_t psn, std::uint8_t fill, int flip) {
    wire::TemplateConfig tc;
    tc.local = addr(1);
    tc.remote = addr(2);
    tc.dest_qpn = lab.qpn_b;
    tc.udp_src_port = sport;
    const auto t = wire::HeaderTemplate::make(tc);
    wire::PacketFields f;
    f.opcode = static_cast<std::uint8_t>(wire::Opcode::kSendOnly);
    f.psn = psn;
    f.ack_req = true;
    f.payload_len = static_cast<std::uint32_t>(src.size());
    std::fill(src.begin(), src.end(), fill);
    std::uint8_t frame[256];
    const auto n = wire::build_frame(t, f, src.data(), frame, sizeof(frame));
    REQUIRE(n != 0);
    if (flip >= 0) frame[flip] ^= 0x10;
    rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
    REQUIRE(m != nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(n)), frame, n);
    REQUIRE(rte_eth_tx_burst(lab.right.a->id(), 0, &m, 1) == 1);
    for (int i = 0; i < 10; ++i) lab.b->poll(rte_rdtsc());
  };
  const auto bad_icrc = [&] { return lab.b->counters().rx_drops[static_cast<int>(wire::DropReason::kBadIcrc)]; };
  constexpr int kPayloadByte = 14 + 20 + 8 + 12 + 5;  // Ethernet, IPv4, UDP, BTH, then the payload
  constexpr int kSourcePortByte = 14 + 20 + 1;
  inject(0xC001, 0xFFFF00, 0xA1, -1);            // the QP's first frame: learned, delivered
  inject(0xC001, 0xFFFF01, 0xA2, kPayloadByte);  // the template's headers, a payload bit: dropped
  CHECK(bad_icrc() == 1);
  inject(0xD00D, 0xFFFF01, 0xA3, -1);               // another source port: the full CRC, delivered
  inject(0xD00D, 0xFFFF02, 0xA4, kSourcePortByte);  // a source port bit flipped after the ICRC: dropped
  CHECK(bad_icrc() == 2);
  inject(0xC001, 0xFFFF02, 0xA5, -1);  // the first port again: delivered
  rc::Completion c;
  std::vector<std::uint8_t> got;
  while (lab.qb->poll_cq(c)) {
    CHECK(c.status == rc::WcStatus::kSuccess);
    CHECK(c.byte_len == src.size());
    got.push_back(dst[c.wr_id * 64]);
  }
  CHECK(got == std::vector<std::uint8_t>{0xA1, 0xA3, 0xA5});
  CHECK(bad_icrc() == 2);
}

TEST_CASE("pcapng capture of a lossy run: every frame sent and received, as on the wire", "[engine][capture]") {
  // DROCE_CAPTURE_OUT names the file (scripts/verify_capture.sh decodes it with tshark and
  // re-checks every ICRC with Scapy); otherwise a temporary file.
  const char* out = std::getenv("DROCE_CAPTURE_OUT");
  const std::string path = out != nullptr ? out : "/tmp/droce-test-capture-" + std::to_string(getpid()) + ".pcapng";
  Lab lab("tcap", 0.05);
  PcapngCapture cap;
  REQUIRE(cap.open(path).ok());
  CHECK(cap.open(path).code() == StatusCode::kBadState);  // once
  PcapngCapture nowhere;
  CHECK(nowhere.open("/nonexistent-droce-dir/x.pcapng").code() == StatusCode::kIo);
  // Capture on A's port: A's requests as sent, B's ACKs/NAKs as received after the lossy relay.
  EndpointConfig ca;
  ca.queues.port_id = lab.left.a->id();
  ca.queues.pool = pool().get();
  ca.queues.memory = &lab.mem_a;
  ca.addresses.local = addr(1);
  ca.recording.capture = &cap;
  const rc::QpAttr qa_attr = lab.qa->attr();  // before the old endpoint (and its QP) goes away
  Status made;
  lab.a = RcEndpoint::create(ca, made);
  INFO(made.message());
  REQUIRE(lab.a);
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
    REQUIRE(lab.qa->post_send(w).ok());
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
  REQUIRE(big.open(path + ".2", 0, 127).ok());
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
        if (c.status == rc::WcStatus::kSuccess)
          ++sent_ok;
        else
          ++bad;
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
  const bool done = lab.run(
      [&] {
        to_a.service(*lab.a, lab.qpn_a);
        to_b.service(*lab.b, lab.qpn_b);
        return (sent_ok + bad >= kMsgs && received >= kMsgs) || bad > 0;
      },
      30);
  stop = true;
  sender.join();
  receiver.join();
  CHECK(done);
  CHECK(bad == 0);
  CHECK(sent_ok == kMsgs);
  CHECK(received == kMsgs);
}

TEST_CASE(
    "messaging API: zero-copy views over received frames, IPv4 and IPv6, 0 % and 5 % loss, views held "
    "long enough to force RNR",
    "[engine][transport][views]") {
  struct Case {
    bool ipv6;
    double loss;
    bool serialise;  // false: the sender's mbuf chain arrives as is, and the view must copy
  };
  for (const Case& k : {Case{false, 0.0, true}, Case{false, 0.05, true}, Case{true, 0.0, true}, Case{true, 0.05, true},
                        Case{false, 0.01, false}}) {
    {
      const bool ipv6 = k.ipv6;
      const double loss = k.loss;
      INFO("ipv6 " << ipv6 << " loss " << loss << " serialise " << k.serialise);
      const unsigned in_use_before = rte_mempool_in_use_count(pool().get());
      {
        Lab lab(
            "tvw" + std::to_string(ipv6) + std::to_string(static_cast<int>(loss * 100)) + std::to_string(k.serialise),
            LabOptions{loss, ipv6, rc::RecvMode::kMessageViews, 16, k.serialise});
        constexpr int kMsgs = 300;
        constexpr std::uint32_t kMax = 6000;
        std::vector<std::uint8_t> src(32 * kMax);
        rc::MemoryRegion smr;
        REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
        auto size_of = [](int m) { return static_cast<std::uint32_t>((m * 1237) % kMax); };
        int posted = 0, sent_ok = 0, errors = 0, delivered = 0, corrupt = 0, out_of_order = 0;
        std::vector<MessageView> held;
        std::uint64_t fragments = 0;
        const bool done = lab.run([&] {
          while (posted < kMsgs && posted - sent_ok < 32) {
            std::uint8_t* buf = src.data() + (posted % 32) * kMax;
            for (std::uint32_t i = 0; i < size_of(posted); ++i) buf[i] = pat(posted, i);
            const auto seq = static_cast<std::uint32_t>(posted);
            if (!lab.a->send_message(lab.qpn_a, buf, size_of(posted), seq, &seq).ok()) break;
            ++posted;
          }
          rc::Completion c[16];
          for (unsigned n = lab.a->poll_cq(lab.qpn_a, c, 16), i = 0; i < n; ++i)
            (c[i].status == rc::WcStatus::kSuccess ? sent_ok : errors)++;
          MessageView v;
          while (lab.b->receive_message(lab.qpn_b, v)) {
            const int m = static_cast<int>(v.imm);
            out_of_order += !v.has_imm || m != delivered;
            std::uint32_t off = 0;
            bool ok = v.length == size_of(m);
            v.for_each_fragment([&](const std::uint8_t* p, std::uint32_t n) {
              ++fragments;
              for (std::uint32_t i = 0; ok && i < n; ++i) ok = p[i] == pat(m, off + i);
              off += n;
            });
            corrupt += !(ok && off == v.length);
            ++delivered;
            held.push_back(std::move(v));
          }
          // The application holds up to 16 views (all its credits) before giving them back in
          // one go: the peer meets RNR NAKs meanwhile and must recover.
          if (held.size() >= 16 || (delivered == kMsgs && !held.empty())) {
            for (auto& h : held) lab.b->release(h);
            held.clear();
          }
          return errors > 0 || (delivered == kMsgs && sent_ok == kMsgs);
        });
        CHECK(done);
        CHECK(errors == 0);
        CHECK(delivered == kMsgs);
        CHECK(out_of_order == 0);
        CHECK(corrupt == 0);
        CHECK(fragments > static_cast<std::uint64_t>(kMsgs));  // multi-packet messages span frames
        CHECK(lab.b->counters().rx_view_messages == static_cast<std::uint64_t>(kMsgs));
        // Serialised frames: no payload byte copied on receive. A chained frame is copied once;
        // payloads of at most tx_inline_bytes left inside the header mbuf, arrive unchained and
        // are not copied, so the ratio sits just under 1.
        if (k.serialise) {
          CHECK(lab.b->rx_copies_per_byte() == 0.0);
        } else {
          CHECK(lab.b->rx_copies_per_byte() > 0.95);
          CHECK(lab.b->rx_copies_per_byte() < 1.0);
        }
        CHECK(lab.b->views_held() == 0);
        CHECK(lab.qb->counters().rnr_naks_sent > 0);
        if (loss > 0) CHECK(lab.qa->counters().retransmitted_packets > 0);
        lab.a->finish();
        lab.b->finish();
        for (int i = 0; i < 200; ++i) lab.poll();
        lab.a->finish();
        lab.b->finish();
      }
      // Every frame a view took went back to the pool.
      CHECK(rte_mempool_in_use_count(pool().get()) == in_use_before);
    }
  }
}

TEST_CASE("messaging API refuses misuse with a message", "[engine][transport][views]") {
  Lab lab("tvm", LabOptions{0, false, rc::RecvMode::kMessageViews, 16});
  std::vector<std::uint8_t> unregistered(64);
  CHECK(lab.a->send_message(lab.qpn_a, unregistered.data(), 64, 1).message().find("registered") != std::string::npos);
  CHECK_FALSE(lab.b->post_recv(lab.qpn_b, rc::RecvWr{}).ok());  // views QP takes no posted buffers
  CHECK_FALSE(lab.a->post_send(0xABCDEF, rc::SendWr{}).ok());   // unknown QPN
  CHECK_FALSE(lab.a->connect(lab.qpn_a, RemoteQp{}).ok());      // connected already
  MessageView v;
  CHECK_FALSE(lab.b->receive_message(lab.qpn_b, v));
  // ERROR flushes sends with a completion; the views QP's internal credits never surface.
  std::vector<std::uint8_t> src(64);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.a->send_message(lab.qpn_a, src.data(), 64, 9).ok());
  REQUIRE(lab.a->set_error(lab.qpn_a).ok());
  REQUIRE(lab.b->set_error(lab.qpn_b).ok());
  rc::Completion c[8];
  REQUIRE(lab.a->poll_cq(lab.qpn_a, c, 8) == 1);
  CHECK(c[0].status == rc::WcStatus::kWrFlushErr);
  CHECK(lab.b->poll_cq(lab.qpn_b, c, 8) == 0);
}

TEST_CASE("an application thread receives message views through the channel and releases them back",
          "[engine][channel][views]") {
  Lab lab("tcv", LabOptions{0.01, false, rc::RecvMode::kMessageViews, 64, true});
  constexpr int kMsgs = 2000;
  constexpr std::uint32_t kSize = 3000;
  std::vector<std::uint8_t> src(32 * kSize);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  QpChannel to_b(256);
  std::atomic<bool> stop{false};
  std::atomic<int> received{0}, bad{0};
  std::thread receiver([&] {
    int got = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (got < kMsgs && !stop && std::chrono::steady_clock::now() < end) {
      MessageView v;
      while (to_b.poll_message(v)) {
        bool ok = v.length == kSize && v.imm == static_cast<std::uint32_t>(got);
        v.for_each_fragment([&](const std::uint8_t* p, std::uint32_t n) {
          for (std::uint32_t i = 0; ok && i < n; ++i) ok = p[i] == static_cast<std::uint8_t>(got);
        });
        bad += !ok;
        if (!to_b.release(v)) ++bad;
        ++got;
        ++received;
      }
    }
  });
  int posted = 0, done_sends = 0;
  const bool done = lab.run(
      [&] {
        to_b.service(*lab.b, lab.qpn_b);
        while (posted < kMsgs && posted - done_sends < 32) {
          std::uint8_t* buf = src.data() + (posted % 32) * kSize;
          std::memset(buf, posted & 0xFF, kSize);
          const auto seq = static_cast<std::uint32_t>(posted);
          if (!lab.a->send_message(lab.qpn_a, buf, kSize, seq, &seq).ok()) break;
          ++posted;
        }
        rc::Completion c[16];
        for (unsigned n = lab.a->poll_cq(lab.qpn_a, c, 16), i = 0; i < n; ++i) {
          ++done_sends;
          if (c[i].status != rc::WcStatus::kSuccess) ++bad;
        }
        return (done_sends == kMsgs && received == kMsgs) || bad > 0;
      },
      30);
  stop = true;
  receiver.join();
  for (int i = 0; i < 10; ++i) to_b.service(*lab.b, lab.qpn_b);  // take the last releases back
  CHECK(done);
  CHECK(bad == 0);
  CHECK(received == kMsgs);
  CHECK(lab.b->views_held() == 0);
  CHECK(lab.b->rx_copies_per_byte() == 0.0);
}

namespace {

LabOptions clocked_lab() {
  LabOptions o;
  o.clock_step_ns = 10'000;  // timers on the test's clock: no timeout on a busy machine
  return o;
}

// The lab's QP pair plus `extra` more, each A-side QP with its B-side peer.
struct CqLab {
  Lab lab;
  std::vector<std::uint32_t> a_qpns, b_qpns;
  CqLab(const std::string& name, std::uint32_t extra) : lab(name, clocked_lab()) {
    a_qpns.push_back(lab.qpn_a);
    b_qpns.push_back(lab.qpn_b);
    for (std::uint32_t i = 1; i <= extra; ++i) {
      rc::QpAttr at;
      at.sq_psn = 0x1000 * i;
      at.timeout = 14;
      at.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
      rc::QpAttr bt = at;
      bt.sq_psn = 0x800 * i;
      std::uint32_t qa = 0, qb = 0;
      REQUIRE(lab.a->create_qp(at, qa).ok());
      REQUIRE(lab.b->create_qp(bt, qb).ok());
      REQUIRE(lab.a->connect(qa, RemoteQp{addr(2), qb, bt.sq_psn}).ok());
      REQUIRE(lab.b->connect(qb, RemoteQp{addr(1), qa, at.sq_psn}).ok());
      a_qpns.push_back(qa);
      b_qpns.push_back(qb);
    }
  }
  [[nodiscard]] std::size_t index_of_a(std::uint32_t qpn) const {
    for (std::size_t i = 0; i < a_qpns.size(); ++i)
      if (a_qpns[i] == qpn) return i;
    return a_qpns.size();
  }
};

}  // namespace

TEST_CASE(
    "one completion queue per endpoint: poll_cq(out, max) drains every QP's completions, each naming its QP, "
    "each QP's in order",
    "[engine][transport][cq]") {
  CqLab t("tcq", 3);
  constexpr std::uint32_t kMsgs = 5;
  std::vector<std::uint8_t> src(4096), dst(4096 * 4);
  rc::MemoryRegion smr, dmr;
  REQUIRE(t.lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(
      t.lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  for (std::uint32_t q = 0; q < t.a_qpns.size(); ++q)
    for (std::uint32_t m = 0; m < kMsgs; ++m) {
      rc::SendWr w;
      w.wr_id = q * 100 + m;
      w.opcode = rc::WrOpcode::kWrite;
      w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 64, smr.lkey};
      w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data() + q * 4096);
      w.rkey = dmr.rkey;
      REQUIRE(t.lab.a->post_send(t.a_qpns[q], w).ok());
    }
  // Three at a time, so a QP's completions span calls: the next call goes on where one stopped.
  std::vector<std::vector<std::uint64_t>> got(t.a_qpns.size());
  std::uint32_t total = 0, foreign = 0, failed = 0;
  REQUIRE(t.lab.run([&] {
    rc::Completion c[3];
    for (unsigned n = t.lab.a->poll_cq(c, 3), k = 0; k < n; ++k) {
      ++total;
      failed += c[k].status != rc::WcStatus::kSuccess;
      const std::size_t i = t.index_of_a(c[k].qp_num);
      if (i == t.a_qpns.size()) {
        ++foreign;
        continue;
      }
      got[i].push_back(c[k].wr_id);
    }
    return total >= t.a_qpns.size() * kMsgs;
  }));
  CHECK(foreign == 0);
  CHECK(failed == 0);
  CHECK(total == t.a_qpns.size() * kMsgs);
  for (std::uint32_t q = 0; q < t.a_qpns.size(); ++q) {
    std::vector<std::uint64_t> want;
    for (std::uint32_t m = 0; m < kMsgs; ++m) want.push_back(q * 100 + m);
    CHECK(got[q] == want);
  }
  // Nothing is returned twice: neither form has anything left.
  rc::Completion c[8];
  CHECK(t.lab.a->poll_cq(c, 8) == 0);
  for (const std::uint32_t qpn : t.a_qpns) CHECK(t.lab.a->poll_cq(qpn, c, 8) == 0);
}

TEST_CASE("endpoint CQ and per-QP polling mixed: a completion is returned once, by whichever polls first",
          "[engine][transport][cq]") {
  CqLab t("tcqmix", 1);
  std::vector<std::uint8_t> src(256), dst(256);
  rc::MemoryRegion smr, dmr;
  REQUIRE(t.lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(
      t.lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  auto write = [&](std::uint32_t qpn, std::uint64_t id) {
    rc::SendWr w;
    w.wr_id = id;
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 16, smr.lkey};
    w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data());
    w.rkey = dmr.rkey;
    REQUIRE(t.lab.a->post_send(qpn, w).ok());
  };
  rc::Completion c[4];
  // QP 0's completion taken through its own CQ: the endpoint's then has nothing for it.
  write(t.a_qpns[0], 7);
  REQUIRE(t.lab.run([&] { return t.lab.a->qp(t.a_qpns[0])->has_completions(); }));
  REQUIRE(t.lab.a->poll_cq(t.a_qpns[0], c, 4) == 1);
  CHECK(c[0].wr_id == 7);
  CHECK(c[0].qp_num == t.a_qpns[0]);
  CHECK(t.lab.a->poll_cq(c, 4) == 0);
  // Then QP 1's, through the endpoint's.
  write(t.a_qpns[1], 8);
  unsigned n = 0;
  REQUIRE(t.lab.run([&] { return (n = t.lab.a->poll_cq(c, 4)) > 0; }));
  REQUIRE(n == 1);
  CHECK(c[0].wr_id == 8);
  CHECK(c[0].qp_num == t.a_qpns[1]);
  CHECK(t.lab.a->poll_cq(t.a_qpns[1], c, 4) == 0);
}

TEST_CASE("endpoint CQ: receive completions name the receiving QP; work flushed by ERROR reaches it at once",
          "[engine][transport][cq]") {
  CqLab t("tcqrx", 1);
  std::vector<std::uint8_t> src(256), dst(1024);
  rc::MemoryRegion smr, dmr;
  REQUIRE(t.lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(t.lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  // B's second QP receives one SEND.
  REQUIRE(t.lab.b->post_recv(t.b_qpns[1], rc::RecvWr{41, {reinterpret_cast<std::uint64_t>(dst.data()), 256, dmr.lkey}})
              .ok());
  rc::SendWr w;
  w.wr_id = 42;
  w.opcode = rc::WrOpcode::kSend;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 32, smr.lkey};
  REQUIRE(t.lab.a->post_send(t.a_qpns[1], w).ok());
  rc::Completion c[4];
  unsigned n = 0;
  REQUIRE(t.lab.run([&] { return (n = t.lab.b->poll_cq(c, 4)) > 0; }));
  REQUIRE(n == 1);
  CHECK(c[0].is_recv);
  CHECK(c[0].wr_id == 41);
  CHECK(c[0].byte_len == 32);
  CHECK(c[0].qp_num == t.b_qpns[1]);
  // Receives posted on B's first QP, then ERROR: both flush to the endpoint's CQ without a poll().
  for (std::uint64_t id = 50; id < 52; ++id)
    REQUIRE(
        t.lab.b->post_recv(t.b_qpns[0], rc::RecvWr{id, {reinterpret_cast<std::uint64_t>(dst.data()), 256, dmr.lkey}})
            .ok());
  REQUIRE(t.lab.b->set_error(t.b_qpns[0]).ok());
  n = t.lab.b->poll_cq(c, 4);
  REQUIRE(n == 2);
  for (unsigned k = 0; k < n; ++k) {
    CHECK(c[k].status == rc::WcStatus::kWrFlushErr);
    CHECK(c[k].qp_num == t.b_qpns[0]);
    CHECK(c[k].wr_id == 50 + k);
  }
}

TEST_CASE("post_send and post_recv answer with a code a program can act on: queue full, bad state, bad key, not found",
          "[engine][transport][status]") {
  LabOptions o = clocked_lab();
  o.b_recv_mode = rc::RecvMode::kMessageViews;
  Lab lab("tstatus", o);
  std::vector<std::uint8_t> src(64), unregistered(64);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  rc::SendWr w;
  w.opcode = rc::WrOpcode::kSend;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 16, smr.lkey};
  // The send queue (sq_depth 256) fills without a poll: the 257th is back-pressure, with static text.
  for (std::uint32_t i = 0; i < lab.qa->attr().sq_depth; ++i) REQUIRE(lab.a->post_send(lab.qpn_a, w).ok());
  const Status full = lab.a->post_send(lab.qpn_a, w);
  CHECK(full.code() == StatusCode::kQueueFull);
  CHECK(full.message() == "post_send: send queue full");
  CHECK(lab.a->post_send(lab.qpn_a + 100, w).code() == StatusCode::kNotFound);
  rc::SendWr bad = w;
  bad.sge = {reinterpret_cast<std::uint64_t>(unregistered.data()), 16, smr.lkey};
  CHECK(lab.b->post_send(lab.qpn_b, bad).code() == StatusCode::kBadKey);
  CHECK(lab.a->send_message(lab.qpn_a, unregistered.data(), 16, 1).code() == StatusCode::kBadKey);
  CHECK(lab.b->post_recv(lab.qpn_b, rc::RecvWr{1, {}}).code() == StatusCode::kInvalidArgument);  // a view QP
  REQUIRE(lab.b->set_error(lab.qpn_b).ok());
  CHECK(lab.b->post_send(lab.qpn_b, w).code() == StatusCode::kBadState);
  CHECK(std::string(to_string(StatusCode::kQueueFull)) == "queue full");
}
