// RC rules one at a time: stimulus (a crafted packet) -> expectation (what the QP sends or completes).
#include <catch2/catch.hpp>

#include <vector>

#include "tests/rc/loopback.h"

using namespace droce;
using namespace droce::test;

namespace {

// A responder QP with a 64 KiB region and a posted receive, ready for crafted requests.
struct Responder {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(65536);
  std::vector<std::uint8_t> rbuf = std::vector<std::uint8_t>(4096);
  rc::MemoryRegion mr, rmr;
  std::unique_ptr<rc::RcQp> qp;
  explicit Responder(std::uint32_t epsn = 100, bool post = true, std::uint32_t max_dest_rd_atomic = 16) {
    mr = *mrs.register_region(mem.data(), mem.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteRead);
    rmr = *mrs.register_region(rbuf.data(), rbuf.size(), rc::kAccessLocalWrite);
    auto a = attr(0x12, 0x11, 1, epsn);
    a.max_dest_rd_atomic = max_dest_rd_atomic;
    qp = std::make_unique<rc::RcQp>(a, mrs);
    REQUIRE(qp->modify(rc::QpState::kInit).ok());
    REQUIRE(qp->modify(rc::QpState::kRtr).ok());
    REQUIRE(qp->modify(rc::QpState::kRts).ok());
    if (post) REQUIRE(qp->post_recv({7, {reinterpret_cast<std::uint64_t>(rbuf.data()), 4096, rmr.lkey}}).ok());
  }
  wire::PacketInfo req(wire::Opcode op, std::uint32_t psn, std::uint32_t len, bool ack_req = true) {
    wire::PacketInfo pi{};
    pi.opcode = static_cast<std::uint8_t>(op);
    pi.psn = psn;
    pi.payload_len = len;
    pi.ack_req = ack_req;
    pi.dest_qpn = 0x12;
    return pi;
  }
  std::vector<rc::TxDescriptor> out(std::size_t max = SIZE_MAX) {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < max && qp->next_packet(0, d)) v.push_back(d);
    return v;
  }
  // A WRITE ONLY of `len` bytes at the start of the region.
  wire::PacketInfo write(std::uint32_t psn, std::uint32_t len) {
    auto pi = req(wire::Opcode::kWriteOnly, psn, len);
    pi.reth_va = reinterpret_cast<std::uint64_t>(mem.data());
    pi.reth_rkey = mr.rkey;
    pi.reth_dma_len = len;
    return pi;
  }
  // A READ request for `len` bytes of the region from `offset`.
  wire::PacketInfo read(std::uint32_t psn, std::uint32_t offset, std::uint32_t len) {
    auto pi = req(wire::Opcode::kReadRequest, psn, 0);
    pi.reth_va = reinterpret_cast<std::uint64_t>(mem.data() + offset);
    pi.reth_rkey = mr.rkey;
    pi.reth_dma_len = len;
    return pi;
  }
};

std::vector<std::uint8_t> payload(std::uint32_t n) { return std::vector<std::uint8_t>(n, 0x5A); }

}  // namespace

TEST_CASE("state machine: only RESET->INIT->RTR->RTS, ERROR and RESET from anywhere", "[rc][state]") {
  rc::MrTable m;
  rc::RcQp qp(attr(1, 2, 0, 0), m);
  CHECK_FALSE(qp.modify(rc::QpState::kRts).ok());
  CHECK_FALSE(qp.modify(rc::QpState::kRtr).ok());
  CHECK(qp.modify(rc::QpState::kInit).ok());
  CHECK_FALSE(qp.modify(rc::QpState::kRts).ok());
  auto bad = attr(1, 2, 0, 0);
  bad.pmtu = 1000;
  CHECK(qp.modify(rc::QpState::kRtr, &bad).message().rfind("pmtu", 0) == 0);
  CHECK(qp.modify(rc::QpState::kRtr).ok());
  CHECK(qp.modify(rc::QpState::kRts).ok());
  CHECK(qp.modify(rc::QpState::kError).ok());
  CHECK(qp.state() == rc::QpState::kError);
  CHECK(qp.modify(rc::QpState::kReset).ok());
}

TEST_CASE("attribute validation names the attribute", "[rc][state]") {
  auto a = attr(1, 2, 0, 0);
  a.retry_cnt = 8;
  CHECK(a.validate().rfind("retry_cnt", 0) == 0);
  a = attr(1, 2, 0, 0);
  a.sq_psn = 1u << 24;
  CHECK(a.validate().rfind("sq_psn", 0) == 0);
  a = attr(1, 2, 0, 0);
  a.timeout = 14;
  CHECK(a.ack_timeout_ns() == 4096ull << 14);  // 4.096 us * 2^14 = 67 ms
}

TEST_CASE("in-order SEND_ONLY with AckReq -> delivered, ACK with the PSN and MSN 1", "[rc][responder]") {
  Responder r;
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].opcode == 0x11);
  CHECK(o[0].psn == 100);
  CHECK(o[0].aeth_syndrome == wire::kAethAckUnlimited);
  CHECK(o[0].aeth_msn == 1);
  rc::Completion c;
  REQUIRE(r.qp->poll_cq(c));
  CHECK(c.byte_len == 64);
  CHECK(r.rbuf[0] == 0x5A);
}

TEST_CASE("no AckReq -> no ACK (coalescing)", "[rc][responder]") {
  Responder r;
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64, false), p.data(), 0);
  CHECK(r.out().empty());
  CHECK(r.qp->rq_epsn() == 101);
}

TEST_CASE("PSN ahead of ePSN -> one NAK sequence error carrying ePSN, then silent drops", "[rc][responder]") {
  Responder r;
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 102, 64), p.data(), 0);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 103, 64), p.data(), 0);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 104, 64), p.data(), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == 0x60);
  CHECK(o[0].psn == 100);
  CHECK(r.qp->counters().out_of_sequence == 3);
  // Recovery: ePSN arrives, and the next gap gets its own NAK.
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);
  o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == 0x1F);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 105, 64), p.data(), 0);
  o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == 0x60);
  CHECK(o[0].psn == 101);
}

TEST_CASE("duplicate SEND -> re-ACK, no second delivery (C9-105)", "[rc][responder]") {
  Responder r;
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);
  REQUIRE(r.qp->post_recv({8, {reinterpret_cast<std::uint64_t>(r.rbuf.data()), 4096, r.rmr.lkey}}).ok());
  (void)r.out();
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == 0x1F);
  CHECK(o[0].psn == 100);
  int recvs = 0;
  rc::Completion c;
  while (r.qp->poll_cq(c)) ++recvs;
  CHECK(recvs == 1);
  CHECK(r.qp->counters().duplicate_request == 1);
}

TEST_CASE("SEND with no receive posted -> RNR NAK with min_rnr_timer, ePSN unchanged", "[rc][responder]") {
  Responder r(100, false);
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK((o[0].aeth_syndrome & 0xE0) == 0x20);
  CHECK((o[0].aeth_syndrome & 0x1F) == 1);
  CHECK(r.qp->rq_epsn() == 100);
}

TEST_CASE("WRITE with a bad R_Key, out of bounds or without remote-write access -> NAK remote access error",
          "[rc][responder]") {
  for (int variant = 0; variant < 3; ++variant) {
    Responder r;
    auto p = payload(64);
    auto pi = r.req(wire::Opcode::kWriteOnly, 100, 64);
    pi.reth_va = reinterpret_cast<std::uint64_t>(r.mem.data());
    pi.reth_rkey = r.mr.rkey;
    pi.reth_dma_len = 64;
    if (variant == 0) pi.reth_rkey ^= 0x5;
    if (variant == 1) pi.reth_va += 65536 - 10;
    if (variant == 2) {
      pi.reth_rkey = r.rmr.rkey;  // region without remote access
      pi.reth_va = reinterpret_cast<std::uint64_t>(r.rbuf.data());
    }
    r.qp->on_packet(pi, p.data(), 0);
    auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].aeth_syndrome == 0x62);
    CHECK(r.qp->state() == rc::QpState::kError);
  }
}

TEST_CASE("bad opcode sequence or length -> NAK invalid request", "[rc][responder]") {
  auto p = payload(2048);
  {
    Responder r;  // MIDDLE with no message in progress
    r.qp->on_packet(r.req(wire::Opcode::kSendMiddle, 100, 1024), p.data(), 0);
    auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].aeth_syndrome == 0x61);
  }
  {
    Responder r;  // FIRST shorter than the PMTU
    r.qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, 1000), p.data(), 0);
    CHECK(r.out()[0].aeth_syndrome == 0x61);
  }
  {
    Responder r;  // ONLY over the PMTU
    r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 1500), p.data(), 0);
    CHECK(r.out()[0].aeth_syndrome == 0x61);
  }
  {
    Responder r;  // FIRST then a new ONLY before the LAST
    r.qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, 1024, false), p.data(), 0);
    r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 101, 10), p.data(), 0);
    CHECK(r.out()[0].aeth_syndrome == 0x61);
  }
  {
    Responder r;  // message longer than the posted receive
    r.qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, 1024, false), p.data(), 0);
    for (std::uint32_t i = 1; i < 4; ++i) r.qp->on_packet(r.req(wire::Opcode::kSendMiddle, 100 + i, 1024, false), p.data(), 0);
    r.qp->on_packet(r.req(wire::Opcode::kSendLast, 104, 10), p.data(), 0);
    CHECK(r.out()[0].aeth_syndrome == 0x61);
  }
}

TEST_CASE("over-PMTU requests (a peer with a larger PMTU) -> NAK invalid request at their PSN, QP to Error, "
          "nothing delivered",
          "[rc][responder][pmtu]") {
  auto p = payload(4096);
  const std::uint32_t pmtu = 1024;  // the Responder's attr()
  {
    Responder r;  // SEND ONLY of PMTU + 1 bytes
    r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, pmtu + 1), p.data(), 0);
    auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].opcode == static_cast<std::uint8_t>(wire::Opcode::kAck));
    CHECK(o[0].aeth_syndrome == 0x61);
    CHECK(o[0].psn == 100);
    CHECK(r.qp->counters().bytes_delivered == 0);
    CHECK(r.rbuf[0] == 0);
    CHECK(r.qp->state() == rc::QpState::kError);
    rc::Completion c;
    while (r.qp->poll_cq(c)) CHECK(c.status == rc::WcStatus::kWrFlushErr);  // the receive, flushed
  }
  {
    Responder r;  // a FIRST of two PMTUs (the sender's PMTU is 2048)
    r.qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, 2 * pmtu, false), p.data(), 0);
    CHECK(r.out()[0].aeth_syndrome == 0x61);
    CHECK(r.qp->counters().bytes_delivered == 0);
  }
  {
    Responder r;  // a LAST one byte over
    r.qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, pmtu, false), p.data(), 0);
    r.qp->on_packet(r.req(wire::Opcode::kSendLast, 101, pmtu + 1), p.data(), 0);
    auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].aeth_syndrome == 0x61);
    CHECK(o[0].psn == 101);
  }
  {
    Responder r;  // a WRITE ONLY over the PMTU, into a valid region
    auto pi = r.req(wire::Opcode::kWriteOnly, 100, 2 * pmtu);
    pi.reth_va = reinterpret_cast<std::uint64_t>(r.mem.data());
    pi.reth_rkey = r.mr.rkey;
    pi.reth_dma_len = 2 * pmtu;
    r.qp->on_packet(pi, p.data(), 0);
    CHECK(r.out()[0].aeth_syndrome == 0x61);
    CHECK(r.mem[0] == 0);
  }
}

TEST_CASE("READ request -> FIRST/MIDDLE/LAST responses from the region, AETH on FIRST and LAST; duplicate replays",
          "[rc][responder]") {
  Responder r;
  for (std::size_t i = 0; i < r.mem.size(); ++i) r.mem[i] = static_cast<std::uint8_t>(i);
  auto pi = r.req(wire::Opcode::kReadRequest, 100, 0);
  pi.reth_va = reinterpret_cast<std::uint64_t>(r.mem.data() + 10);
  pi.reth_rkey = r.mr.rkey;
  pi.reth_dma_len = 3000;
  r.qp->on_packet(pi, nullptr, 0);
  auto o = r.out();
  REQUIRE(o.size() == 3);
  CHECK(o[0].opcode == 0x0D);
  CHECK(o[1].opcode == 0x0E);
  CHECK(o[2].opcode == 0x0F);
  CHECK(o[2].psn == 102);
  CHECK(o[2].payload_len == 3000 - 2048);
  CHECK(o[0].payload == r.mem.data() + 10);  // zero copy: straight from the region
  CHECK(r.qp->rq_epsn() == 103);
  // The requester lost the responses and asks again from the second one.
  auto dup = pi;
  dup.psn = 101;
  dup.reth_va += 1024;
  dup.reth_dma_len = 3000 - 1024;
  r.qp->on_packet(dup, nullptr, 0);
  o = r.out();
  REQUIRE(o.size() == 2);
  CHECK(o[0].psn == 101);
  CHECK(o[0].opcode == 0x0D);
  CHECK(o[0].payload == r.mem.data() + 10 + 1024);
}

TEST_CASE("requester segmentation: opcodes, RETH on WRITE FIRST only, AckReq on the last packet", "[rc][requester]") {
  rc::MrTable m;
  std::vector<std::uint8_t> buf(10000);
  auto mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
  auto a = attr(0x11, 0x12, 0xFFFFFE, 1);
  rc::RcQp qp(a, m);
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  REQUIRE(qp.modify(rc::QpState::kRtr).ok());
  REQUIRE(qp.modify(rc::QpState::kRts).ok());
  rc::SendWr w;
  w.opcode = rc::WrOpcode::kWriteWithImm;
  w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), 2500, mr.lkey};
  w.remote_addr = 0x1000;
  w.rkey = 77;
  REQUIRE(qp.post_send(w).ok());
  std::vector<rc::TxDescriptor> o;
  rc::TxDescriptor d;
  while (qp.next_packet(0, d)) o.push_back(d);
  REQUIRE(o.size() == 3);
  CHECK(o[0].opcode == 0x06);
  CHECK(o[0].reth_len == 2500);
  CHECK(o[0].psn == 0xFFFFFE);
  CHECK(o[1].opcode == 0x07);
  CHECK(o[1].psn == 0xFFFFFF);
  CHECK(o[2].opcode == 0x09);
  CHECK(o[2].psn == 0);  // wrapped
  CHECK(o[2].payload_len == 2500 - 2048);
  CHECK(o[2].payload == buf.data() + 2048);  // zero copy: the application's bytes
  CHECK_FALSE(o[0].ack_req);
  CHECK(o[2].ack_req);
  // A bad lkey is refused at post time.
  w.sge.lkey ^= 1;
  CHECK_FALSE(qp.post_send(w).ok());
}

TEST_CASE("coalesced ACK completes several WRs; NAK seq err rewinds mid-message", "[rc][completer]") {
  rc::MrTable m;
  std::vector<std::uint8_t> buf(10000);
  auto mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
  rc::RcQp qp(attr(0x11, 0x12, 10, 1), m);
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  REQUIRE(qp.modify(rc::QpState::kRtr).ok());
  REQUIRE(qp.modify(rc::QpState::kRts).ok());
  for (int i = 0; i < 3; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), i == 2 ? 3000u : 100u, mr.lkey};
    REQUIRE(qp.post_send(w).ok());
  }
  rc::TxDescriptor d;
  int n = 0;
  while (qp.next_packet(0, d)) ++n;
  CHECK(n == 5);  // 1 + 1 + 3 packets, PSNs 10..14
  wire::PacketInfo ack{};
  ack.opcode = 0x11;
  ack.psn = 11;
  ack.aeth_syndrome = 0x1F;
  qp.on_packet(ack, nullptr, 1);
  rc::Completion c;
  REQUIRE(qp.poll_cq(c));
  CHECK(c.wr_id == 0);
  REQUIRE(qp.poll_cq(c));
  CHECK(c.wr_id == 1);
  CHECK_FALSE(qp.poll_cq(c));
  // NAK: PSN 13 expected (the middle packet of the 3-packet SEND was lost).
  wire::PacketInfo nak = ack;
  nak.psn = 13;
  nak.aeth_syndrome = 0x60;
  qp.on_packet(nak, nullptr, 2);
  REQUIRE(qp.next_packet(3, d));
  CHECK(d.psn == 13);
  CHECK(d.opcode == 0x01);  // SEND_MIDDLE: resumed mid-message
  CHECK(d.payload == buf.data() + 1024);
  CHECK(d.retransmission);
  CHECK(qp.counters().packet_seq_err == 1);
  // Ghost ACK for a PSN never sent is ignored.
  ack.psn = 500;
  qp.on_packet(ack, nullptr, 4);
  CHECK(qp.counters().ghost_acks == 1);
}

TEST_CASE("remote access NAK -> REM_ACCESS_ERR, QP to Error, later WRs flushed", "[rc][completer]") {
  rc::MrTable m;
  std::vector<std::uint8_t> buf(100);
  auto mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
  rc::RcQp qp(attr(0x11, 0x12, 10, 1), m);
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  REQUIRE(qp.modify(rc::QpState::kRtr).ok());
  REQUIRE(qp.modify(rc::QpState::kRts).ok());
  for (int i = 0; i < 2; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), 50, mr.lkey};
    REQUIRE(qp.post_send(w).ok());
  }
  rc::TxDescriptor d;
  while (qp.next_packet(0, d)) {
  }
  wire::PacketInfo nak{};
  nak.opcode = 0x11;
  nak.psn = 10;
  nak.aeth_syndrome = 0x62;
  qp.on_packet(nak, nullptr, 1);
  rc::Completion c;
  REQUIRE(qp.poll_cq(c));
  CHECK(c.status == rc::WcStatus::kRemAccessErr);
  REQUIRE(qp.poll_cq(c));
  CHECK(c.status == rc::WcStatus::kWrFlushErr);
  CHECK(qp.state() == rc::QpState::kError);
  CHECK_FALSE(qp.post_send(rc::SendWr{}).ok());
}

// ---- message-view receive mode: the responder keeps nothing itself and says what to keep ----

namespace {
std::unique_ptr<rc::RcQp> view_qp(rc::MrTable& mrs, std::uint32_t credits, std::uint32_t max_bytes) {
  auto a = attr(0x12, 0x11, 1, 100);
  a.recv_mode = rc::RecvMode::kMessageViews;
  a.max_message_bytes = max_bytes;
  auto qp = std::make_unique<rc::RcQp>(a, mrs);
  REQUIRE(qp->modify(rc::QpState::kInit).ok());
  REQUIRE(qp->modify(rc::QpState::kRtr).ok());
  REQUIRE(qp->modify(rc::QpState::kRts).ok());
  for (std::uint32_t i = 0; i < credits; ++i) {
    rc::RecvWr credit;
    credit.sge.length = max_bytes;
    REQUIRE(qp->post_recv(credit).ok());  // a credit has no buffer and needs no key
  }
  return qp;
}
}  // namespace

TEST_CASE("views: FIRST/MIDDLE/LAST answer keep, keep, keep-end; nothing copied, no receive completion",
          "[rc][responder][views]") {
  Responder r(100, false);
  auto qp = view_qp(r.mrs, 1, 8192);
  auto p = payload(1024);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, 1024, false), p.data(), 0) == rc::RxDelivery::kKeep);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendMiddle, 101, 1024, false), p.data(), 0) == rc::RxDelivery::kKeep);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendLast, 102, 10), p.data(), 0) == rc::RxDelivery::kKeepEnd);
  rc::Completion c;
  CHECK_FALSE(qp->poll_cq(c));
  CHECK(qp->counters().bytes_copied == 0);
  CHECK(qp->counters().bytes_delivered == 2058);
  CHECK(qp->rq_msn() == 1);
}

TEST_CASE("views: duplicates and out-of-sequence packets are never kept", "[rc][responder][views]") {
  Responder r(100, false);
  auto qp = view_qp(r.mrs, 4, 8192);
  auto p = payload(64);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0) == rc::RxDelivery::kKeepEnd);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0) == rc::RxDelivery::kNone);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendOnly, 103, 64), p.data(), 0) == rc::RxDelivery::kNone);
  CHECK(qp->counters().duplicate_request == 1);
  CHECK(qp->counters().out_of_sequence == 1);
}

TEST_CASE("views: zero-length SEND and WRITE with immediate end a message with nothing to keep",
          "[rc][responder][views]") {
  Responder r(100, false);
  auto qp = view_qp(r.mrs, 4, 8192);
  auto p = payload(64);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 0), p.data(), 0) == rc::RxDelivery::kEnd);
  auto w = r.req(wire::Opcode::kWriteOnlyImm, 101, 64);
  w.reth_va = reinterpret_cast<std::uint64_t>(r.mem.data());
  w.reth_rkey = r.mr.rkey;
  w.reth_dma_len = 64;
  CHECK(qp->on_packet(w, p.data(), 0) == rc::RxDelivery::kEnd);
  CHECK(r.mem[0] == 0x5A);  // WRITE still lands in the region
}

TEST_CASE("views: no credit -> RNR NAK; over max_message_bytes -> invalid request", "[rc][responder][views]") {
  Responder r(100, false);
  auto qp = view_qp(r.mrs, 0, 1500);
  auto p = payload(1024);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0) == rc::RxDelivery::kNone);
  rc::TxDescriptor d;
  REQUIRE(qp->next_packet(0, d));
  CHECK((d.aeth_syndrome & 0x60) == 0x20);  // RNR NAK
  rc::RecvWr credit;
  credit.sge.length = 1500;
  REQUIRE(qp->post_recv(credit).ok());
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, 1024, false), p.data(), 0) == rc::RxDelivery::kKeep);
  CHECK(qp->on_packet(r.req(wire::Opcode::kSendLast, 101, 1000), p.data(), 0) == rc::RxDelivery::kNone);
  REQUIRE(qp->next_packet(0, d));
  CHECK(d.aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
  CHECK(qp->state() == rc::QpState::kError);
}

TEST_CASE("after an RNR NAK the packets already in flight behind it are dropped without a sequence NAK",
          "[rc][responder][rnr]") {
  Responder r(100, false);  // no receive posted
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 101, 64), p.data(), 0);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 102, 64), p.data(), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);  // the RNR NAK only
  CHECK((o[0].aeth_syndrome & 0x60) == 0x20);
  CHECK(o[0].psn == 100);
  CHECK(r.qp->counters().out_of_sequence == 2);
  // Once a receive is posted the retried PSN is accepted, and a later gap is NAKed again.
  REQUIRE(r.qp->post_recv({7, {reinterpret_cast<std::uint64_t>(r.rbuf.data()), 4096, r.rmr.lkey}}).ok());
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);
  o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::kAethAckUnlimited);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 105, 64), p.data(), 0);
  o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kPsnSequenceError));
  CHECK(o[0].psn == 101);
}

namespace {
// A requester QP (PSNs from 10, PMTU 1024) with READ work requests into `buf`.
struct ReadRequester {
  rc::MrTable m;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(8192);
  rc::MemoryRegion mr;
  rc::RcQp qp;
  static rc::QpAttr with_depth(std::uint32_t max_rd_atomic, std::uint8_t retry_cnt) {
    auto a = attr(0x11, 0x12, 10, 1);
    a.max_rd_atomic = max_rd_atomic;
    a.retry_cnt = retry_cnt;
    return a;
  }
  explicit ReadRequester(std::uint32_t max_rd_atomic = 16, std::uint8_t retry_cnt = 7)
      : qp(with_depth(max_rd_atomic, retry_cnt), m) {
    mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
    REQUIRE(qp.modify(rc::QpState::kInit).ok());
    REQUIRE(qp.modify(rc::QpState::kRtr).ok());
    REQUIRE(qp.modify(rc::QpState::kRts).ok());
  }
  void read(std::uint64_t id, std::uint32_t off, std::uint32_t len) {
    rc::SendWr w;
    w.wr_id = id;
    w.opcode = rc::WrOpcode::kRead;
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data() + off), len, mr.lkey};
    w.remote_addr = 0x10000;
    w.rkey = 0x99;
    REQUIRE(qp.post_send(w).ok());
  }
  void response(wire::Opcode op, std::uint32_t psn, const std::vector<std::uint8_t>& data, std::uint64_t now) {
    wire::PacketInfo pi{};
    pi.opcode = static_cast<std::uint8_t>(op);
    pi.psn = psn;
    pi.payload_len = static_cast<std::uint32_t>(data.size());
    pi.aeth_syndrome = 0x1F;
    qp.on_packet(pi, data.data(), now);
  }
  void send(std::uint64_t id, std::uint32_t len) {
    rc::SendWr w;
    w.wr_id = id;
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), len, mr.lkey};
    REQUIRE(qp.post_send(w).ok());
  }
  // An ACK (syndrome 0x1F), NAK or RNR NAK for `psn`.
  void ack(std::uint32_t psn, std::uint8_t syndrome, std::uint64_t now) {
    wire::PacketInfo pi{};
    pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kAck);
    pi.psn = psn;
    pi.aeth_syndrome = syndrome;
    qp.on_packet(pi, nullptr, now);
  }
  std::vector<rc::TxDescriptor> pull(std::uint64_t now, std::size_t max = SIZE_MAX) {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < max && qp.next_packet(now, d)) v.push_back(d);
    return v;
  }
  std::vector<std::uint64_t> completed() {
    std::vector<std::uint64_t> ids;
    rc::Completion c;
    while (qp.poll_cq(c)) {
      CHECK(c.status == rc::WcStatus::kSuccess);
      ids.push_back(c.wr_id);
    }
    return ids;
  }
};
}  // namespace

TEST_CASE("READ re-issued after an implied NAK: rxe's continuation positions are accepted (LAST for a one-packet "
          "READ, MIDDLE..LAST mid-message)",
          "[rc][completer]") {
  ReadRequester r;
  r.read(1, 0, 100);     // PSN 10, one packet
  r.read(2, 1024, 100);  // PSN 11, one packet
  rc::TxDescriptor d;
  while (r.qp.next_packet(0, d)) {
  }
  // The ONLY response for PSN 10 is lost; PSN 11's arrives: implied NAK, READ 1 is re-issued.
  r.response(wire::Opcode::kReadRespOnly, 11, std::vector<std::uint8_t>(100, 2), 1);
  REQUIRE(r.qp.next_packet(2, d));
  CHECK(d.psn == 10);
  CHECK(d.retransmission);
  while (r.qp.next_packet(2, d)) {
  }
  // rxe replays its response resource: READ RESPONSE LAST, not ONLY.
  r.response(wire::Opcode::kReadRespLast, 10, std::vector<std::uint8_t>(100, 1), 3);
  r.response(wire::Opcode::kReadRespLast, 11, std::vector<std::uint8_t>(100, 2), 4);
  rc::Completion c;
  REQUIRE(r.qp.poll_cq(c));
  CHECK(c.wr_id == 1);
  CHECK(c.status == rc::WcStatus::kSuccess);
  REQUIRE(r.qp.poll_cq(c));
  CHECK(c.wr_id == 2);
  CHECK(c.status == rc::WcStatus::kSuccess);
  CHECK(r.buf[0] == 1);
  CHECK(r.buf[1024 + 99] == 2);
  CHECK(r.qp.counters().implied_nak_seq_err == 1);

  // Mid-message: FIRST arrives, MIDDLE is lost, LAST shows the gap; re-issued from the MIDDLE.
  ReadRequester m;
  m.read(3, 0, 3000);  // PSNs 10..12
  while (m.qp.next_packet(0, d)) {
  }
  m.response(wire::Opcode::kReadRespFirst, 10, std::vector<std::uint8_t>(1024, 7), 1);
  m.response(wire::Opcode::kReadRespLast, 12, std::vector<std::uint8_t>(952, 9), 2);
  REQUIRE(m.qp.next_packet(3, d));
  CHECK(d.psn == 11);
  CHECK(d.reth_len == 3000 - 1024);
  m.response(wire::Opcode::kReadRespMiddle, 11, std::vector<std::uint8_t>(1024, 8), 4);
  m.response(wire::Opcode::kReadRespLast, 12, std::vector<std::uint8_t>(952, 9), 5);
  REQUIRE(m.qp.poll_cq(c));
  CHECK(c.wr_id == 3);
  CHECK(c.status == rc::WcStatus::kSuccess);
  CHECK(m.buf[1024] == 8);
  CHECK(m.buf[2999] == 9);

  // An original (not re-issued) one-packet READ answered LAST is still refused (§9.7.5.2.2).
  ReadRequester o;
  o.read(4, 0, 100);
  while (o.qp.next_packet(0, d)) {
  }
  o.response(wire::Opcode::kReadRespLast, 10, std::vector<std::uint8_t>(100, 1), 1);
  CHECK_FALSE(o.qp.poll_cq(c));
  CHECK(o.qp.counters().duplicate_responses == 1);
}

// ---- READ credits: initiator depth (max_rd_atomic) and responder resources (max_dest_rd_atomic) ----

TEST_CASE("§9.4.4 initiator depth: a READ beyond max_rd_atomic waits, and the SEND behind it too, until a READ "
          "completes",
          "[rc][requester][credits]") {
  ReadRequester r(/*max_rd_atomic=*/2);
  r.read(1, 0, 100);     // PSN 10
  r.read(2, 1024, 100);  // PSN 11
  r.read(3, 2048, 100);  // PSN 12: no credit left
  r.send(4, 10);         // PSN 13: behind it, in order
  auto o = r.pull(0);
  REQUIRE(o.size() == 2);
  CHECK(o[0].psn == 10);
  CHECK(o[1].psn == 11);
  r.response(wire::Opcode::kReadRespOnly, 10, std::vector<std::uint8_t>(100, 1), 1);
  CHECK(r.completed() == std::vector<std::uint64_t>{1});
  o = r.pull(2);
  REQUIRE(o.size() == 2);  // one credit back: READ 3, then the SEND behind it
  CHECK(o[0].psn == 12);
  CHECK(o[0].opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRequest));
  CHECK(o[1].psn == 13);
  CHECK(r.pull(3).empty());  // READs 2 and 3 hold both credits
}

TEST_CASE("§9.4.4 initiator depth: a READ re-issued after a loss keeps its credit, it does not take a second",
          "[rc][requester][credits]") {
  ReadRequester r(/*max_rd_atomic=*/1);
  r.read(1, 0, 3000);  // PSNs 10..12
  r.read(2, 4096, 100);
  CHECK(r.pull(0).size() == 1);
  r.response(wire::Opcode::kReadRespFirst, 10, std::vector<std::uint8_t>(1024, 1), 1);
  r.response(wire::Opcode::kReadRespLast, 12, std::vector<std::uint8_t>(952, 3), 2);  // 11 lost
  auto o = r.pull(3);
  REQUIRE(o.size() == 1);  // the re-issue of READ 1 from PSN 11, not READ 2
  CHECK(o[0].psn == 11);
  r.response(wire::Opcode::kReadRespMiddle, 11, std::vector<std::uint8_t>(1024, 2), 4);
  r.response(wire::Opcode::kReadRespLast, 12, std::vector<std::uint8_t>(952, 3), 5);
  CHECK(r.completed() == std::vector<std::uint64_t>{1});
  o = r.pull(6);
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 13);
}

TEST_CASE("max_rd_atomic 0: posting a READ is refused with a clear error", "[rc][requester][credits]") {
  ReadRequester r(/*max_rd_atomic=*/0);
  rc::SendWr w;
  w.opcode = rc::WrOpcode::kRead;
  w.sge = {reinterpret_cast<std::uint64_t>(r.buf.data()), 100, r.mr.lkey};
  CHECK(r.qp.post_send(w).message().find("max_rd_atomic") != std::string::npos);
}

TEST_CASE("responder resources: a new READ while max_dest_rd_atomic READs still have responses to send -> NAK "
          "invalid request after them, QP to Error",
          "[rc][responder][credits]") {
  Responder r(100, true, /*max_dest_rd_atomic=*/2);
  r.qp->on_packet(r.read(100, 0, 100), nullptr, 0);
  r.qp->on_packet(r.read(101, 1024, 100), nullptr, 0);
  r.qp->on_packet(r.read(102, 2048, 100), nullptr, 0);  // the requester exceeded its depth
  auto o = r.out();
  REQUIRE(o.size() == 3);
  CHECK(o[0].opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRespOnly));
  CHECK(o[1].opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRespOnly));
  CHECK(o[2].opcode == static_cast<std::uint8_t>(wire::Opcode::kAck));
  CHECK(o[2].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
  CHECK(o[2].psn == 102);
  CHECK(r.qp->state() == rc::QpState::kError);
}

TEST_CASE("responder resources: a READ's resource frees when its last response has left", "[rc][responder][credits]") {
  Responder r(100, true, /*max_dest_rd_atomic=*/2);
  r.qp->on_packet(r.read(100, 0, 3000), nullptr, 0);  // PSNs 100..102
  r.qp->on_packet(r.read(103, 4096, 100), nullptr, 0);
  CHECK(r.out(2).size() == 2);  // READ 100 is still sending: both resources in use
  CHECK(r.out(1).size() == 1);  // its LAST has left: one resource free
  r.qp->on_packet(r.read(104, 8192, 100), nullptr, 0);
  auto o = r.out();
  REQUIRE(o.size() == 2);
  CHECK(o[0].psn == 103);
  CHECK(o[1].psn == 104);
  CHECK(o[1].opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRespOnly));
  CHECK(r.qp->state() == rc::QpState::kRts);
}

TEST_CASE("max_dest_rd_atomic 0: every READ -> NAK invalid request (rxe: too many RDMA READ requests)",
          "[rc][responder][credits]") {
  Responder r(100, true, /*max_dest_rd_atomic=*/0);
  r.qp->on_packet(r.read(100, 0, 100), nullptr, 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
}

TEST_CASE("READ credits are validated: 0..255, the verbs and CM field width", "[rc][state][credits]") {
  auto a = attr(1, 2, 0, 0);
  a.max_rd_atomic = 0;
  a.max_dest_rd_atomic = 255;
  CHECK(a.validate().empty());
  a.max_rd_atomic = 256;
  CHECK(a.validate().rfind("max_rd_atomic", 0) == 0);
  a.max_rd_atomic = 16;
  a.max_dest_rd_atomic = 1000;
  CHECK(a.validate().rfind("max_dest_rd_atomic", 0) == 0);
  // The responder's queue is sized from it: it may change until the QP receives, not after.
  rc::MrTable m;
  rc::RcQp qp(attr(1, 2, 0, 0), m);
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  auto b = qp.attr();
  b.max_dest_rd_atomic = 4;
  CHECK(qp.modify(rc::QpState::kRtr, &b).ok());
  b.max_dest_rd_atomic = 8;
  CHECK(qp.modify(rc::QpState::kRts, &b).message().rfind("max_dest_rd_atomic", 0) == 0);
}

TEST_CASE("duplicate READ whose responses are still queued -> that run resumes from the PSN asked for, no second "
          "copy queued",
          "[rc][responder][credits]") {
  Responder r;
  r.qp->on_packet(r.read(100, 0, 3000), nullptr, 0);  // PSNs 100..102
  CHECK(r.out(2).size() == 2);                        // FIRST and MIDDLE have left
  r.qp->on_packet(r.read(100, 0, 3000), nullptr, 0);  // the requester asks again from the start
  auto o = r.out();
  REQUIRE(o.size() == 3);
  CHECK(o[0].psn == 100);
  CHECK(o[0].opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRespFirst));
  CHECK(o[2].psn == 102);
  CHECK(o[2].opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRespLast));
}

TEST_CASE("responder queue at its bound: max_dest_rd_atomic READs, their replays and the ACKs between all leave, "
          "in PSN order",
          "[rc][responder][credits]") {
  Responder r(100, true, /*max_dest_rd_atomic=*/2);
  auto p = payload(64);
  std::uint32_t psn = 100;
  // ACK, READ, ACK, READ, ACK, then duplicates of both READs (replays once theirs have left).
  r.qp->on_packet(r.write(psn, 8), p.data(), 0);
  r.qp->on_packet(r.read(++psn, 0, 100), nullptr, 0);
  r.qp->on_packet(r.write(++psn, 8), p.data(), 0);
  r.qp->on_packet(r.read(++psn, 1024, 100), nullptr, 0);
  r.qp->on_packet(r.write(++psn, 8), p.data(), 0);
  auto o = r.out();
  REQUIRE(o.size() == 5);
  for (std::size_t i = 0; i < o.size(); ++i) CHECK(o[i].psn == 100 + i);
  r.qp->on_packet(r.read(101, 0, 100), nullptr, 0);
  r.qp->on_packet(r.write(100, 8), p.data(), 0);  // duplicate: re-ACK
  r.qp->on_packet(r.read(103, 1024, 100), nullptr, 0);
  r.qp->on_packet(r.write(102, 8), p.data(), 0);
  r.qp->on_packet(r.read(101, 0, 100), nullptr, 0);  // already queued: merged
  o = r.out();
  REQUIRE(o.size() == 4);  // replay 101, re-ACK, replay 103, re-ACK
  CHECK(o[0].psn == 101);
  CHECK(o[2].psn == 103);
  CHECK(o[3].aeth_syndrome == wire::kAethAckUnlimited);
  CHECK(r.qp->state() == rc::QpState::kRts);
}

// ---- edge cases a hardware peer punishes ----

TEST_CASE("§9.7.5.2.1 stale response: an RNR NAK older than the oldest unacknowledged PSN is dropped — nothing "
          "rewinds, posted-but-unsent requests still go, the ACK timer stays armed",
          "[rc][completer][stale]") {
  ReadRequester r;
  r.send(1, 100);  // PSN 10
  r.send(2, 100);  // PSN 11
  CHECK(r.pull(0).size() == 2);
  r.ack(11, wire::kAethAckUnlimited, 1);
  CHECK(r.completed() == std::vector<std::uint64_t>{1, 2});
  r.send(3, 100);  // PSN 12: sent
  r.send(4, 100);  // PSN 13: posted, not yet sent
  CHECK(r.pull(2, 1).size() == 1);
  r.ack(10, wire::rnr_nak_syndrome(1), 3);  // a delayed copy of an RNR NAK for PSN 10
  CHECK(r.qp.next_timer_ns() != UINT64_MAX);
  auto o = r.pull(4);
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 13);
  CHECK_FALSE(o[0].retransmission);
  CHECK(r.qp.counters().duplicate_responses == 1);
  r.ack(13, wire::kAethAckUnlimited, 5);
  CHECK(r.completed() == std::vector<std::uint64_t>{3, 4});
}

TEST_CASE("§9.7.5.2.4 sequence NAK: a second NAK for the PSN already resent from costs no retry and rewinds nothing",
          "[rc][completer][seqnak]") {
  ReadRequester r(16, /*retry_cnt=*/1);
  r.send(1, 100);  // PSN 10
  r.send(2, 100);  // PSN 11
  r.send(3, 100);  // PSN 12
  CHECK(r.pull(0).size() == 3);
  r.ack(11, wire::nak_syndrome(wire::NakCode::kPsnSequenceError), 1);  // 11 lost: the one retry
  auto o = r.pull(2);
  REQUIRE(o.size() == 2);
  CHECK(o[0].psn == 11);
  CHECK(o[1].psn == 12);
  r.ack(11, wire::nak_syndrome(wire::NakCode::kPsnSequenceError), 3);  // the same NAK, duplicated
  CHECK(r.qp.state() == rc::QpState::kRts);
  CHECK(r.pull(4).empty());
  r.ack(12, wire::kAethAckUnlimited, 5);
  CHECK(r.completed() == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(r.qp.counters().packet_seq_err == 2);
}

TEST_CASE("§9.7.5.1.1 duplicate SEND without AckReq -> re-ACKed all the same (C9-105), so a lost ACK costs no "
          "timeout",
          "[rc][responder][duplicate]") {
  Responder r;
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64, false), p.data(), 0);
  CHECK(r.out().empty());  // coalesced: no AckReq
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64, false), p.data(), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::kAethAckUnlimited);
  CHECK(o[0].psn == 100);
  CHECK(r.qp->counters().bytes_delivered == 64);
}

TEST_CASE("§9.7.5.1.2 coalescing: a NAK supersedes the ACK queued before it; a NAK still queued is not weakened "
          "by the re-ACK of a later duplicate",
          "[rc][responder][duplicate]") {
  Responder r;
  auto p = payload(64);
  {
    Responder a;
    a.qp->on_packet(a.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);  // ACK 100 queued
    a.qp->on_packet(a.req(wire::Opcode::kSendOnly, 102, 64), p.data(), 0);  // NAK 101 acknowledges 100 too
    auto o = a.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kPsnSequenceError));
    CHECK(o[0].psn == 101);
    CHECK(o[0].aeth_msn == 1);
  }
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64, false), p.data(), 0);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 102, 64, false), p.data(), 0);  // 101 lost: NAK 101
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64, false), p.data(), 0);  // duplicate: ACK 100
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kPsnSequenceError));
  CHECK(o[0].psn == 101);
}

TEST_CASE("§9.4 message length: SEND, WRITE and READ longer than 2^31 bytes are refused at post_send",
          "[rc][requester][length]") {
  rc::MrTable m;
  std::uint8_t byte = 0;
  // A 4 GiB registration that is never touched: post_send only checks bounds.
  auto big = *m.register_region(&byte, std::uint64_t{1} << 32, rc::kAccessLocalWrite);
  rc::RcQp qp(attr(0x11, 0x12, 10, 1), m);
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  REQUIRE(qp.modify(rc::QpState::kRtr).ok());
  REQUIRE(qp.modify(rc::QpState::kRts).ok());
  for (auto op : {rc::WrOpcode::kSend, rc::WrOpcode::kSendWithImm, rc::WrOpcode::kWrite, rc::WrOpcode::kWriteWithImm,
                  rc::WrOpcode::kRead}) {
    rc::SendWr w;
    w.opcode = op;
    w.sge = {reinterpret_cast<std::uint64_t>(&byte), (1u << 31) + 1, big.lkey};
    CHECK(qp.post_send(w).message().find("2^31") != std::string::npos);
  }
  rc::SendWr w;
  w.sge = {reinterpret_cast<std::uint64_t>(&byte), 1u << 31, big.lkey};
  CHECK(qp.post_send(w).ok());  // exactly 2^31 is allowed
}

TEST_CASE("large READ under loss: the local ACK timer restarts while the READ's responses keep arriving, and the "
          "re-issued READ is not re-issued again before its answer",
          "[rc][completer][timer]") {
  ReadRequester r;  // timeout 8: 1.05 ms
  const std::uint64_t us = 1000;
  r.read(1, 0, 8192);  // PSNs 10..17
  int requests = static_cast<int>(r.pull(0).size());
  auto at = [&](wire::Opcode op, std::uint32_t psn, std::uint64_t t) {
    r.response(op, psn, std::vector<std::uint8_t>(1024, static_cast<std::uint8_t>(psn)), t);
    r.qp.on_timer(t);
    requests += static_cast<int>(r.pull(t).size());
  };
  at(wire::Opcode::kReadRespFirst, 10, 100 * us);
  at(wire::Opcode::kReadRespMiddle, 12, 200 * us);  // 11 lost: implied NAK, re-issued from 11
  CHECK(requests == 2);
  // The rest of the first stream keeps the responder busy longer than one timeout.
  std::uint64_t t = 200 * us;
  for (std::uint32_t psn = 13; psn <= 16; ++psn) at(wire::Opcode::kReadRespMiddle, psn, t += 300 * us);
  at(wire::Opcode::kReadRespLast, 17, t += 300 * us);
  CHECK(requests == 2);
  // Then the answer to the re-issued READ (rxe continues the message: MIDDLE..LAST).
  for (std::uint32_t psn = 11; psn <= 16; ++psn) at(wire::Opcode::kReadRespMiddle, psn, t += 100 * us);
  at(wire::Opcode::kReadRespLast, 17, t += 100 * us);
  CHECK(requests == 2);
  CHECK(r.qp.counters().local_ack_timeout_err == 0);
  CHECK(r.completed() == std::vector<std::uint64_t>{1});
  CHECK(r.buf[1024] == 11);
  CHECK(r.buf[8191] == 17);
}
