// RcEndpoint against hostile and heavy input on the net_ring lab: frames from strangers, other
// partitions and over-PMTU requests never reach the application (IBTA §9.6, §10.9.3,
// §9.7.5.1.6); many busy QPs share the TX backlog in turns; a stall of our own process is not
// taken for the network's silence.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <vector>

#include "engine/endpoint/rc_endpoint.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using droce::test::addr;
using droce::test::Lab;
using droce::test::LabOptions;
using droce::test::pool;

namespace {

// Hands a raw frame to B's port as if it came off the wire (from the relay's side of the ring).
void inject_to_b(Lab& lab, const std::uint8_t* frame, std::uint32_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)), frame, len);
  REQUIRE(rte_eth_tx_burst(lab.right.a->id(), 0, &m, 1) == 1);
}

// A SEND ONLY with AckReq for B's QP at the PSN B expects next (A's first), 16 bytes of 0xEE,
// from `from` to `to` with P_Key `pkey`: a frame B would take as A's first message if nothing
// checked where it came from.
std::uint32_t forged_send(const Lab& lab, const wire::L2L3Address& from, const wire::L2L3Address& to, bool ipv6,
                          std::uint16_t pkey, std::uint8_t* out, std::uint32_t room) {
  wire::TemplateConfig tc;
  tc.local = from;
  tc.remote = to;
  tc.ipv6 = ipv6;
  tc.dest_qpn = lab.qpn_b;
  tc.pkey = pkey;
  const auto t = wire::HeaderTemplate::make(tc);
  wire::PacketFields f;
  f.opcode = static_cast<std::uint8_t>(wire::Opcode::kSendOnly);
  f.psn = lab.qa->attr().sq_psn;
  f.ack_req = true;
  f.payload_len = 16;
  const std::vector<std::uint8_t> body(16, 0xEE);
  return wire::build_frame(t, f, body.data(), out, room);
}

std::uint64_t drops(const RcEndpoint& ep, wire::DropReason r) { return ep.counters().rx_drops[static_cast<int>(r)]; }

}  // namespace

TEST_CASE(
    "forged frames with the right QPN and PSN: another source IP, another destination IP, another "
    "destination MAC or another P_Key -> dropped by reason, no ACK, nothing delivered, and the real peer's "
    "message still arrives",
    "[engine][transport][security]") {
  for (const bool ipv6 : {false, true}) {
    INFO("ipv6 " << ipv6);
    LabOptions o;
    o.ipv6 = ipv6;
    o.clock_step_ns = 1'000;
    Lab lab(ipv6 ? "tinj6" : "tinj4", o);
    std::vector<std::uint8_t> rbuf(64, 0), sbuf(16, 0x11);
    rc::MemoryRegion rmr, smr;
    REQUIRE(lab.mem_b.register_memory(rbuf.data(), rbuf.size(), rc::kAccessLocalWrite, rmr).ok());
    REQUIRE(lab.mem_a.register_memory(sbuf.data(), sbuf.size(), rc::kAccessLocalWrite, smr).ok());
    REQUIRE(lab.qb->post_recv({1, {reinterpret_cast<std::uint64_t>(rbuf.data()), 64, rmr.lkey}}).ok());

    const wire::L2L3Address peer = addr(1, ipv6), us = addr(2, ipv6);
    wire::L2L3Address stranger = peer;  // 10.9.9.9 (fd00::909): not B's peer
    stranger.ip[ipv6 ? 14 : 2] = 9;
    stranger.ip[ipv6 ? 15 : 3] = 9;
    if (!ipv6) stranger.ip[1] = 9;
    wire::L2L3Address elsewhere = us;  // an IP that is not B's, at B's MAC
    elsewhere.ip[ipv6 ? 15 : 3] = 77;
    wire::L2L3Address other_mac = us;  // B's IP at a MAC that is not B's
    other_mac.mac[5] = 0x77;

    struct Case {
      wire::L2L3Address from, to;
      std::uint16_t pkey;
      wire::DropReason reason;
      bool promiscuous;  // net_ring ports start promiscuous: the MAC rule needs the mode off
    };
    const Case cases[] = {
        {stranger, us, 0xFFFF, wire::DropReason::kWrongSourceIp, true},
        {peer, elsewhere, 0xFFFF, wire::DropReason::kWrongDestIp, true},
        {peer, other_mac, 0xFFFF, wire::DropReason::kWrongDestMac, false},
        {peer, us, 0x1234, wire::DropReason::kWrongPkey, true},
    };
    for (const Case& c : cases) {
      INFO("reason " << wire::drop_reason_name(c.reason));
      if (c.promiscuous)
        (void)rte_eth_promiscuous_enable(lab.right.b->id());
      else
        REQUIRE(rte_eth_promiscuous_disable(lab.right.b->id()) == 0);
      std::uint8_t frame[256];
      const std::uint32_t n = forged_send(lab, c.from, c.to, ipv6, c.pkey, frame, sizeof(frame));
      REQUIRE(n != 0);
      const std::uint64_t before = drops(*lab.b, c.reason);
      inject_to_b(lab, frame, n);
      for (int i = 0; i < 10; ++i) lab.b->poll(lab.now_tsc());
      CHECK(drops(*lab.b, c.reason) == before + 1);
    }
    (void)rte_eth_promiscuous_enable(lab.right.b->id());
    // Nothing was executed: no ACK left B for anyone, nothing delivered, the ePSN did not move.
    CHECK(lab.b->counters().tx_frames == 0);
    CHECK(lab.qb->counters().acks_sent == 0);
    CHECK(lab.qb->counters().bytes_delivered == 0);
    CHECK(lab.qb->rq_epsn() == lab.qa->attr().sq_psn);
    rc::Completion c;
    CHECK_FALSE(lab.qb->poll_cq(c));

    // The real peer's first message (the PSN the forgeries used) is delivered, with its bytes.
    rc::SendWr w;
    w.wr_id = 5;
    w.sge = {reinterpret_cast<std::uint64_t>(sbuf.data()), 16, smr.lkey};
    REQUIRE(lab.qa->post_send(w).ok());
    REQUIRE(lab.run([&] { return lab.qb->poll_cq(c); }));
    CHECK(c.status == rc::WcStatus::kSuccess);
    CHECK(c.byte_len == 16);
    CHECK(rbuf[0] == 0x11);
    CHECK(rbuf[15] == 0x11);
    REQUIRE(lab.run([&] { return lab.qa->poll_cq(c); }));
    CHECK(c.status == rc::WcStatus::kSuccess);
  }
}

TEST_CASE("check_pkey off -> a frame of another partition from the real peer is taken",
          "[engine][transport][security]") {
  LabOptions o;
  o.clock_step_ns = 1'000;
  o.tune_b = [](EndpointConfig& c) { c.addresses.check_pkey = false; };
  Lab lab("tpkoff", o);
  std::vector<std::uint8_t> rbuf(64, 0);
  rc::MemoryRegion rmr;
  REQUIRE(lab.mem_b.register_memory(rbuf.data(), rbuf.size(), rc::kAccessLocalWrite, rmr).ok());
  REQUIRE(lab.qb->post_recv({1, {reinterpret_cast<std::uint64_t>(rbuf.data()), 64, rmr.lkey}}).ok());
  // P_Key checks off: a frame of partition 0x1234 from the real peer is taken.
  std::uint8_t frame[256];
  const std::uint32_t n = forged_send(lab, addr(1), addr(2), false, 0x1234, frame, sizeof(frame));
  inject_to_b(lab, frame, n);
  rc::Completion c;
  REQUIRE(lab.run([&] { return lab.qb->poll_cq(c); }));
  CHECK(c.status == rc::WcStatus::kSuccess);
  CHECK(rbuf[0] == 0xEE);
}

namespace {

struct QpPair {
  std::uint32_t a = 0, b = 0;
};

// One more connected QP pair between the lab's endpoints (IPv4 lab addresses).
QpPair add_pair(Lab& lab, const rc::QpAttr& on_a, const rc::QpAttr& on_b) {
  QpPair p;
  REQUIRE(lab.a->create_qp(on_a, p.a).ok());
  REQUIRE(lab.b->create_qp(on_b, p.b).ok());
  REQUIRE(lab.a->connect(p.a, RemoteQp{addr(2), p.b, on_b.sq_psn}).ok());
  REQUIRE(lab.b->connect(p.b, RemoteQp{addr(1), p.a, on_a.sq_psn}).ok());
  return p;
}

rc::QpAttr pair_attr(std::uint32_t pmtu, std::uint32_t sq_psn) {
  rc::QpAttr a;
  a.pmtu = pmtu;
  a.sq_psn = sq_psn;
  a.timeout = 14;  // 67 ms
  a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
  return a;
}

}  // namespace

TEST_CASE(
    "a SEND larger than the responder's PMTU -> NAK invalid request at once, the sender fails with "
    "remote invalid request before any ACK timeout, nothing delivered",
    "[engine][transport][pmtu]") {
  LabOptions o;
  o.clock_step_ns = 10'000;
  Lab lab("tpmtu", o);
  const rc::QpAttr big = pair_attr(2048, 0x10), small = pair_attr(1024, 0x20);
  const QpPair p = add_pair(lab, big, small);
  std::vector<std::uint8_t> src(2048, 0x3C), dst(4096, 0);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  REQUIRE(lab.b->post_recv(p.b, rc::RecvWr{1, {reinterpret_cast<std::uint64_t>(dst.data()), 4096, dmr.lkey}}).ok());
  rc::SendWr w;
  w.wr_id = 9;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 2048, smr.lkey};  // one SEND ONLY at PMTU 2048
  REQUIRE(lab.a->post_send(p.a, w).ok());
  const std::uint64_t t0 = lab.now_ns();
  rc::Completion c;
  REQUIRE(lab.run([&] { return lab.a->poll_cq(p.a, &c, 1) == 1; }));
  CHECK(c.wr_id == 9);
  CHECK(c.status == rc::WcStatus::kRemInvReqErr);
  CHECK(lab.now_ns() - t0 < big.ack_timeout_ns());
  const rc::RcQp* sender = lab.a->qp(p.a);
  const rc::RcQp* responder = lab.b->qp(p.b);
  CHECK(sender->counters().local_ack_timeout_err == 0);
  CHECK(sender->counters().retransmitted_packets == 0);
  CHECK(responder->counters().resp_invalid_request == 1);
  CHECK(responder->counters().naks_sent == 1);
  CHECK(responder->counters().bytes_delivered == 0);
  CHECK(responder->state() == rc::QpState::kError);
  CHECK(drops(*lab.b, wire::DropReason::kPayloadOverPmtu) == 0);
  CHECK(dst[0] == 0);
  // The receive was flushed, never completed with data.
  while (lab.b->poll_cq(p.b, &c, 1) == 1) CHECK(c.status != rc::WcStatus::kSuccess);
}

TEST_CASE(
    "READ responses larger than the requester's PMTU -> dropped and counted, never placed, and the READ "
    "fails by its retry limit",
    "[engine][transport][pmtu]") {
  LabOptions o;
  o.clock_step_ns = 50'000;  // 8 ACK timeouts of 67 ms in ~11,000 polls
  Lab lab("tpmtur", o);
  rc::QpAttr small = pair_attr(1024, 0x10), big = pair_attr(2048, 0x20);
  small.retry_cnt = 1;
  const QpPair p = add_pair(lab, small, big);
  std::vector<std::uint8_t> local(2048, 0), remote(2048, 0x6B);
  rc::MemoryRegion lmr, rmr;
  REQUIRE(lab.mem_a.register_memory(local.data(), local.size(), rc::kAccessLocalWrite, lmr).ok());
  REQUIRE(
      lab.mem_b.register_memory(remote.data(), remote.size(), rc::kAccessLocalWrite | rc::kAccessRemoteRead, rmr).ok());
  rc::SendWr w;
  w.wr_id = 4;
  w.opcode = rc::WrOpcode::kRead;
  w.sge = {reinterpret_cast<std::uint64_t>(local.data()), 2048, lmr.lkey};
  w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data());
  w.rkey = rmr.rkey;
  REQUIRE(lab.a->post_send(p.a, w).ok());
  rc::Completion c;
  REQUIRE(lab.run([&] { return lab.a->poll_cq(p.a, &c, 1) == 1; }));
  CHECK(c.status != rc::WcStatus::kSuccess);
  CHECK(drops(*lab.a, wire::DropReason::kPayloadOverPmtu) >= 1);
  CHECK(local == std::vector<std::uint8_t>(2048, 0));
}

TEST_CASE("64 QPs with 64 KiB WRITEs share the TX backlog -> every QP transmits in its turn, none times out",
          "[engine][transport][fairness]") {
  LabOptions o;
  o.clock_step_ns = 10'000;  // 32 frames of 1 KiB per 10 us: ~26 Gb/s through the relay
  Lab lab("tfair", o);
  constexpr std::uint32_t kQps = 64, kMsgs = 4, kSize = 65536;
  std::vector<std::uint32_t> qpns{lab.qpn_a}, peers{lab.qpn_b};
  for (std::uint32_t i = 1; i < kQps; ++i) {
    const QpPair p = add_pair(lab, pair_attr(1024, 0x1000 * i), pair_attr(1024, 0x800 * i));
    qpns.push_back(p.a);
    peers.push_back(p.b);
  }
  std::vector<std::uint8_t> src(std::size_t{kQps} * kMsgs * kSize), dst(src.size(), 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 13 + (i >> 16));
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  for (std::uint32_t q = 0; q < kQps; ++q)
    for (std::uint32_t m = 0; m < kMsgs; ++m) {
      const std::uint64_t off = (std::uint64_t{q} * kMsgs + m) * kSize;
      rc::SendWr w;
      w.wr_id = m;
      w.opcode = rc::WrOpcode::kWrite;
      w.sge = {reinterpret_cast<std::uint64_t>(src.data()) + off, kSize, smr.lkey};
      w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data()) + off;
      w.rkey = dmr.rkey;
      REQUIRE(lab.a->post_send(qpns[q], w).ok());
    }
  // One relay pass per poll of each side: B drains what the relay brings, so nothing is lost on
  // the way and any retransmission would be the transport's own doing.
  auto step = [&] {
    lab.clock_tsc += lab.step_tsc;
    lab.a->poll(lab.now_tsc());
    lab.relay.poll();
    lab.b->poll(lab.now_tsc());
  };
  // 100 polls move ~3,200 frames, far fewer than the 16,384 posted: the backlog stays full, and
  // a QP that never gets a turn in that time is starved.
  for (int i = 0; i < 100; ++i) step();
  std::uint32_t silent = 0;
  for (std::uint32_t q = 0; q < kQps; ++q) silent += lab.a->qp(qpns[q])->counters().packets_sent == 0;
  CHECK(silent == 0);

  std::uint32_t done = 0, failed = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (done + failed < kQps * kMsgs && std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 64; ++i) step();
    for (std::uint32_t q = 0; q < kQps; ++q) {
      rc::Completion c[8];
      const unsigned n = lab.a->poll_cq(qpns[q], c, 8);
      for (unsigned k = 0; k < n; ++k) (c[k].status == rc::WcStatus::kSuccess ? done : failed)++;
    }
  }
  CHECK(failed == 0);
  REQUIRE(done == kQps * kMsgs);
  CHECK(dst == src);
  CHECK(lab.relay.dropped == 0);
  std::uint64_t timeouts = 0, resent = 0;
  for (std::uint32_t q = 0; q < kQps; ++q) {
    timeouts += lab.a->qp(qpns[q])->counters().local_ack_timeout_err;
    resent += lab.a->qp(qpns[q])->counters().retransmitted_packets;
  }
  CHECK(timeouts == 0);
  CHECK(resent == 0);
}

TEST_CASE(
    "the process stalls 100 ms while READ responses wait in its RX ring -> no ACK timeout (our own absence "
    "is not the network's silence)",
    "[engine][transport][timers]") {
  LabOptions o;
  o.clock_step_ns = 20'000;
  Lab lab("tstall", o);
  constexpr std::uint32_t kQps = 8, kMsgs = 2, kSize = 65536;
  std::vector<std::uint32_t> qpns;
  for (std::uint32_t i = 0; i < kQps; ++i)
    qpns.push_back(add_pair(lab, pair_attr(1024, 0x100 * i), pair_attr(1024, 0x80 * i)).a);
  std::vector<std::uint8_t> remote(std::size_t{kQps} * kMsgs * kSize), local(remote.size(), 0);
  for (std::size_t i = 0; i < remote.size(); ++i) remote[i] = static_cast<std::uint8_t>(i * 7 + (i >> 12));
  rc::MemoryRegion rmr, lmr;
  REQUIRE(
      lab.mem_b.register_memory(remote.data(), remote.size(), rc::kAccessLocalWrite | rc::kAccessRemoteRead, rmr).ok());
  REQUIRE(lab.mem_a.register_memory(local.data(), local.size(), rc::kAccessLocalWrite, lmr).ok());
  for (std::uint32_t q = 0; q < kQps; ++q)
    for (std::uint32_t m = 0; m < kMsgs; ++m) {
      const std::uint64_t off = (std::uint64_t{q} * kMsgs + m) * kSize;
      rc::SendWr w;
      w.wr_id = m;
      w.opcode = rc::WrOpcode::kRead;
      w.sge = {reinterpret_cast<std::uint64_t>(local.data()) + off, kSize, lmr.lkey};
      w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data()) + off;
      w.rkey = rmr.rkey;
      REQUIRE(lab.a->post_send(qpns[q], w).ok());
    }
  auto step = [&] {
    lab.clock_tsc += lab.step_tsc;
    lab.a->poll(lab.now_tsc());
    lab.relay.poll();
    lab.b->poll(lab.now_tsc());
  };
  // The responses of all 8 QPs are on their way (B's backlog, the rings) when A stops polling
  // for 100 ms, longer than the 67 ms ACK timeout.
  for (int i = 0; i < 8; ++i) step();
  lab.advance_ns(100'000'000);
  std::uint32_t done = 0, failed = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (done + failed < kQps * kMsgs && std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 16; ++i) step();
    for (std::uint32_t q = 0; q < kQps; ++q) {
      rc::Completion c[4];
      const unsigned n = lab.a->poll_cq(qpns[q], c, 4);
      for (unsigned k = 0; k < n; ++k) (c[k].status == rc::WcStatus::kSuccess ? done : failed)++;
    }
  }
  CHECK(failed == 0);
  REQUIRE(done == kQps * kMsgs);
  CHECK(local == remote);
  std::uint64_t timeouts = 0;
  for (std::uint32_t q = 0; q < kQps; ++q) timeouts += lab.a->qp(qpns[q])->counters().local_ack_timeout_err;
  CHECK(timeouts == 0);
}
