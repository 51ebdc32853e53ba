// RC rules one at a time: stimulus (a crafted packet) -> expectation (what the QP sends or completes).
#include <catch2/catch.hpp>
#include <vector>

#include "tests/rc/responder_fixture.h"

using namespace droce;
using namespace droce::test;

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
  CHECK(a.validate().code() == StatusCode::kInvalidArgument);
  CHECK(a.validate().message().rfind("retry_cnt", 0) == 0);
  a = attr(1, 2, 0, 0);
  a.sq_psn = 1u << 24;
  CHECK(a.validate().message().rfind("sq_psn", 0) == 0);
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

TEST_CASE("WRITE with immediate over two packets: the receive completes with the RETH's DMA length as byte_len",
          "[rc][responder]") {
  // ibv_wc.byte_len of IBV_WC_RECV_RDMA_WITH_IMM is the length the WRITE placed (rxe: resp.length).
  Responder r;
  auto p = payload(1024);
  auto first = r.req(wire::Opcode::kWriteFirst, 100, 1024, false);
  first.reth_va = reinterpret_cast<std::uint64_t>(r.mem.data());
  first.reth_rkey = r.mr.rkey;
  first.reth_dma_len = 1024 + 500;
  r.qp->on_packet(first, p.data(), 0);
  auto last = r.req(wire::Opcode::kWriteLastImm, 101, 500);
  last.imm_data = 0xC0FFEE;
  r.qp->on_packet(last, p.data(), 0);
  rc::Completion c;
  REQUIRE(r.qp->poll_cq(c));
  CHECK(c.opcode == rc::WcOpcode::kRecvWithImm);
  CHECK(c.wr_id == 7);
  CHECK(c.byte_len == 1024 + 500);
  CHECK(c.imm == 0xC0FFEE);
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
    for (std::uint32_t i = 1; i < 4; ++i)
      r.qp->on_packet(r.req(wire::Opcode::kSendMiddle, 100 + i, 1024, false), p.data(), 0);
    r.qp->on_packet(r.req(wire::Opcode::kSendLast, 104, 10), p.data(), 0);
    CHECK(r.out()[0].aeth_syndrome == 0x61);
  }
}

TEST_CASE(
    "over-PMTU requests (a peer with a larger PMTU) -> NAK invalid request at their PSN, QP to Error, "
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

TEST_CASE(
    "a message its owner could not keep: NAK remote operational error instead of the accepted ACK, QP to "
    "Error, and the requester's work request fails with a remote operation error",
    "[rc][responder][views]") {
  Responder r;
  auto p = payload(64);
  r.qp->on_packet(r.req(wire::Opcode::kSendOnly, 100, 64), p.data(), 0);  // accepted, its ACK queued
  r.qp->fail_accepted_message(100);
  auto o = r.out();
  REQUIRE(o.size() == 1);  // the NAK supersedes the ACK still queued
  CHECK(o[0].psn == 100);
  CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kRemoteOperationalError));
  CHECK(r.qp->state() == rc::QpState::kError);
  CHECK(r.qp->counters().resp_remote_operational_errors == 1);
  r.qp->fail_accepted_message(101);  // already in Error: nothing more
  CHECK(r.out().empty());

  Loopback lb(attr(0x11, 0x12, 100, 1), attr(0x12, 0x11, 1, 100));
  connect(lb);
  std::vector<std::uint8_t> src(64);
  auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  rc::SendWr w;
  w.wr_id = 9;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 64, smr.lkey};
  REQUIRE(lb.qp(0).post_send(w).ok());
  rc::TxDescriptor d;
  REQUIRE(lb.qp(0).next_packet(0, d));
  wire::PacketInfo nak{};
  nak.opcode = static_cast<std::uint8_t>(wire::Opcode::kAck);
  nak.psn = 100;
  nak.aeth_syndrome = wire::nak_syndrome(wire::NakCode::kRemoteOperationalError);
  lb.qp(0).on_packet(nak, nullptr, 0);
  rc::Completion c;
  REQUIRE(lb.qp(0).poll_cq(c));
  CHECK(c.wr_id == 9);
  CHECK(c.status == rc::WcStatus::kRemOpErr);
}
