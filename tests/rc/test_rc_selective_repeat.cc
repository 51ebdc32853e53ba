// Selective repeat rules one at a time (docs/selective-repeat.md): crafted SR packets into a
// responder, crafted SACKs into a requester, and what each sends, places or completes.
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/rc/sr_harness.h"

using namespace droce;
using namespace droce::test;
using wire::Opcode;

namespace {

// A selective-repeat responder with a 64 KiB region and `recvs` posted receives of 4 KiB.
struct SrResponder {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(65536);
  std::vector<std::uint8_t> rbuf = std::vector<std::uint8_t>(4 * 4096);
  std::vector<std::uint8_t> data = std::vector<std::uint8_t>(8 * kPmtu);  // what requests carry
  rc::MemoryRegion mr, rmr;
  std::unique_ptr<rc::RcQp> qp;
  explicit SrResponder(int recvs = 2, std::uint32_t epsn = 100) {
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + i / 1024 + 1);
    mr = *mrs.register_region(mem.data(), mem.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteRead);
    rmr = *mrs.register_region(rbuf.data(), rbuf.size(), rc::kAccessLocalWrite);
    qp = std::make_unique<rc::RcQp>(sr_attr(0x12, 0x11, 1, epsn), mrs);
    to_rts(*qp);
    for (int i = 0; i < recvs; ++i) post(i);
  }
  void post(int i) {
    REQUIRE(qp->post_recv({static_cast<std::uint64_t>(7 + i),
                           {reinterpret_cast<std::uint64_t>(rbuf.data() + i * 4096), 4096, rmr.lkey}})
                .ok());
  }
  // Packet `idx` of an SR SEND of `len` bytes with receive sequence number `rsn`.
  wire::PacketInfo send(Opcode o, std::uint32_t psn, std::uint32_t idx, std::uint32_t rsn, std::uint32_t len,
                        bool ack_req = true) {
    wire::PacketInfo pi{};
    pi.opcode = wire::sr_opcode_of(op(o));
    pi.psn = psn;
    pi.ack_req = ack_req;
    pi.dest_qpn = 0x12;
    pi.reth_va = idx * kPmtu;
    pi.reth_rkey = rsn;
    pi.reth_dma_len = len;
    pi.payload_len = len - idx * kPmtu < kPmtu ? len - idx * kPmtu : kPmtu;
    return pi;
  }
  // Packet `idx` of an SR WRITE of `len` bytes to the region's start.
  wire::PacketInfo write(Opcode o, std::uint32_t psn, std::uint32_t idx, std::uint32_t len, bool ack_req = false) {
    wire::PacketInfo pi{};
    pi.opcode = wire::sr_opcode_of(op(o));
    pi.psn = psn;
    pi.ack_req = ack_req;
    pi.dest_qpn = 0x12;
    pi.reth_va = reinterpret_cast<std::uint64_t>(mem.data()) + idx * kPmtu;
    pi.reth_rkey = mr.rkey;
    pi.reth_dma_len = len;
    pi.payload_len = len - idx * kPmtu < kPmtu ? len - idx * kPmtu : kPmtu;
    return pi;
  }
  void feed(const wire::PacketInfo& pi, std::uint32_t idx) { (void)qp->on_packet(pi, data.data() + idx * kPmtu, 0); }
  std::vector<rc::TxDescriptor> out() {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < 64 && qp->next_packet(0, d)) v.push_back(d);
    return v;
  }
  std::vector<rc::Completion> completions() {
    std::vector<rc::Completion> v;
    rc::Completion c;
    while (qp->poll_cq(c)) v.push_back(c);
    return v;
  }
};

}  // namespace

TEST_CASE("SR: an in-order SEND ONLY with AckReq is delivered and acknowledged with an empty SACK", "[rc][sr]") {
  SrResponder r;
  r.feed(r.send(Opcode::kSendOnly, 100, 0, 0, 64), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].opcode == op(Opcode::kSrAck));
  CHECK(o[0].psn == 100);
  CHECK(o[0].aeth_syndrome == wire::kAethAckUnlimited);
  CHECK(o[0].aeth_msn == 1);
  CHECK(sack_bits(o[0]).empty());
  auto c = r.completions();
  REQUIRE(c.size() == 1);
  CHECK(c[0].wr_id == 7);
  CHECK(c[0].byte_len == 64);
  CHECK(std::memcmp(r.rbuf.data(), r.data.data(), 64) == 0);
  CHECK(r.qp->rq_epsn() == 101);
}

TEST_CASE("SR: WRITE packets out of order are placed at once, SACKed, and delivered when the gap closes", "[rc][sr]") {
  SrResponder r;
  const std::uint32_t len = 3 * kPmtu;
  r.feed(r.write(Opcode::kWriteLast, 102, 2, len, true), 2);
  r.feed(r.write(Opcode::kWriteMiddle, 101, 1, len), 1);
  // Placed before the first packet came: the bytes are in memory already.
  CHECK(std::memcmp(r.mem.data() + kPmtu, r.data.data() + kPmtu, 2 * kPmtu) == 0);
  CHECK(r.qp->rq_epsn() == 100);
  auto o = r.out();
  REQUIRE(o.size() == 1);  // the two SACKs coalesced: the one that leaves says the latest
  CHECK(o[0].opcode == op(Opcode::kSrAck));
  CHECK(o[0].psn == 99);
  CHECK(sack_bits(o[0]) == std::vector<std::uint32_t>{1, 2});
  CHECK(r.qp->counters().out_of_sequence == 2);
  r.feed(r.write(Opcode::kWriteFirst, 100, 0, len), 0);
  CHECK(r.qp->rq_epsn() == 103);
  CHECK(r.qp->rq_msn() == 1);
  CHECK(std::memcmp(r.mem.data(), r.data.data(), len) == 0);
  o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 102);
  CHECK(sack_bits(o[0]).empty());
  CHECK(r.completions().empty());  // a WRITE without immediate completes nothing at the responder
}

TEST_CASE("SR: SENDs arriving out of order land in the receives their RSNs name and complete in order", "[rc][sr]") {
  SrResponder r;
  // Message A: 2 packets (PSN 100, 101, RSN 0); message B: SEND ONLY with immediate (PSN 102, RSN 1).
  auto b = r.send(Opcode::kSendOnlyImm, 102, 0, 1, 300);
  b.imm_data = 0xBEEF;
  r.feed(b, 4);
  r.feed(r.send(Opcode::kSendLast, 101, 1, 0, kPmtu + 500), 1);
  CHECK(r.completions().empty());
  CHECK(std::memcmp(r.rbuf.data() + 4096, r.data.data() + 4 * kPmtu, 300) == 0);  // B placed in receive 1
  r.feed(r.send(Opcode::kSendFirst, 100, 0, 0, kPmtu + 500, false), 0);
  auto c = r.completions();
  REQUIRE(c.size() == 2);
  CHECK(c[0].wr_id == 7);
  CHECK(c[0].byte_len == kPmtu + 500);
  CHECK_FALSE(c[0].has_imm);
  CHECK(c[1].wr_id == 8);
  CHECK(c[1].byte_len == 300);
  CHECK(c[1].has_imm);
  CHECK(c[1].imm == 0xBEEF);
  CHECK(c[1].opcode == rc::WcOpcode::kRecvWithImm);
  CHECK(std::memcmp(r.rbuf.data(), r.data.data(), kPmtu + 500) == 0);
  CHECK(r.qp->rq_msn() == 2);
}

TEST_CASE("SR: duplicates are never placed or delivered twice, and are answered with a SACK", "[rc][sr]") {
  SrResponder r;
  r.feed(r.send(Opcode::kSendLast, 101, 1, 0, 2 * kPmtu), 1);
  r.feed(r.send(Opcode::kSendLast, 101, 1, 0, 2 * kPmtu), 1);  // held already
  CHECK(r.qp->counters().duplicate_request == 1);
  r.feed(r.send(Opcode::kSendFirst, 100, 0, 0, 2 * kPmtu), 0);
  CHECK(r.completions().size() == 1);
  (void)r.out();
  r.feed(r.send(Opcode::kSendFirst, 100, 0, 0, 2 * kPmtu), 0);  // behind ePSN
  CHECK(r.qp->counters().duplicate_request == 2);
  CHECK(r.completions().empty());
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].opcode == op(Opcode::kSrAck));
  CHECK(o[0].psn == 101);
  CHECK(r.qp->rq_msn() == 1);
}

TEST_CASE("SR: the window is 128 PSNs from ePSN; beyond it a packet is dropped, counted", "[rc][sr][window]") {
  SrResponder r;
  r.feed(r.write(Opcode::kWriteOnly, 100 + wire::kSrWindow, 0, 64), 0);
  CHECK(r.qp->counters().sr_beyond_window == 1);
  CHECK(r.out().empty());
  r.feed(r.write(Opcode::kWriteOnly, 100 + wire::kSrWindow - 1, 0, 64), 0);
  CHECK(r.qp->counters().sr_beyond_window == 1);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(sack_bits(o[0]) == std::vector<std::uint32_t>{wire::kSrWindow - 1});
}

TEST_CASE("SR: a SEND whose receive is not posted is dropped unheld, RNR-NAKed at ePSN", "[rc][sr][rnr]") {
  SrResponder r(0);
  r.feed(r.send(Opcode::kSendOnly, 101, 0, 1, 64), 0);  // out of order, receive 1 not posted
  CHECK(r.out().empty());
  r.feed(r.send(Opcode::kSendOnly, 100, 0, 0, 64), 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].opcode == op(Opcode::kAck));
  CHECK((o[0].aeth_syndrome & wire::kAethTypeMask) == wire::kAethTypeRnrNak);
  CHECK(o[0].psn == 100);
  r.post(0);
  r.post(1);
  r.feed(r.send(Opcode::kSendOnly, 100, 0, 0, 64), 0);
  r.feed(r.send(Opcode::kSendOnly, 101, 0, 1, 64), 0);
  CHECK(r.completions().size() == 2);
  CHECK(r.qp->rq_epsn() == 102);
}

TEST_CASE("SR: a WRITE with immediate finding no receive at delivery is RNR-NAKed and delivered on resend",
          "[rc][sr][rnr]") {
  SrResponder r(0);
  auto w = r.write(Opcode::kWriteOnlyImm, 100, 0, 64, true);
  w.imm_data = 5;
  r.feed(w, 0);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK((o[0].aeth_syndrome & wire::kAethTypeMask) == wire::kAethTypeRnrNak);
  CHECK(r.qp->rq_epsn() == 100);
  r.post(0);
  r.feed(w, 0);
  auto c = r.completions();
  REQUIRE(c.size() == 1);
  CHECK(c[0].imm == 5);
  CHECK(r.qp->rq_epsn() == 101);
}

TEST_CASE("SR: a SEND packet whose offset breaks its message is an invalid request (fatal)", "[rc][sr]") {
  SrResponder r;
  auto p = r.send(Opcode::kSendMiddle, 101, 1, 0, 3 * kPmtu);
  p.reth_va = 100;  // not a whole number of PMTUs
  r.feed(p, 1);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
  CHECK(r.qp->state() == rc::QpState::kError);
}

TEST_CASE("SR: a WRITE packet outside its R_Key's region is a remote access error", "[rc][sr]") {
  SrResponder r;
  auto p = r.write(Opcode::kWriteMiddle, 105, 1, 3 * kPmtu);
  p.reth_va = reinterpret_cast<std::uint64_t>(r.mem.data()) + r.mem.size() - 10;
  r.feed(p, 1);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kRemoteAccessError));
  CHECK(r.qp->state() == rc::QpState::kError);
}

TEST_CASE("recovery mismatch: SR opcodes at a go-back-N QP and RC requests at an SR QP are dropped, counted",
          "[rc][sr]") {
  SrResponder r;
  wire::PacketInfo rc_send{};
  rc_send.opcode = op(Opcode::kSendOnly);
  rc_send.psn = 100;
  rc_send.payload_len = 8;
  rc_send.ack_req = true;
  r.feed(rc_send, 0);
  CHECK(r.qp->counters().recovery_mismatch == 1);
  CHECK(r.qp->rq_epsn() == 100);
  CHECK(r.out().empty());

  rc::MrTable m;
  rc::RcQp gbn(attr(0x12, 0x11, 1, 100), m);
  REQUIRE(gbn.modify(rc::QpState::kInit).ok());
  REQUIRE(gbn.modify(rc::QpState::kRtr).ok());
  REQUIRE(gbn.modify(rc::QpState::kRts).ok());
  (void)gbn.on_packet(r.write(Opcode::kWriteOnly, 100, 0, 64, true), r.data.data(), 0);
  wire::PacketInfo sack{};
  sack.opcode = op(Opcode::kSrAck);
  sack.psn = 0;
  sack.payload_len = wire::kSackBytes;
  std::uint8_t zero[wire::kSackBytes] = {};
  (void)gbn.on_packet(sack, zero, 0);
  CHECK(gbn.counters().recovery_mismatch == 2);
  CHECK(gbn.rq_epsn() == 100);
  rc::TxDescriptor d;
  CHECK_FALSE(gbn.next_packet(0, d));
}

TEST_CASE("SR QPs refuse what SR does not carry: a READ longer than sr_bdp_pkts packets, an SRQ, message views",
          "[rc][sr]") {
  rc::MrTable m;
  std::vector<std::uint8_t> buf(128 * kPmtu + 1);
  auto mr = *m.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
  rc::RcQp qp(sr_attr(1, 2, 0, 0), m);
  rc::SharedRecvQueue srq(16, m);
  CHECK_FALSE(qp.attach_srq(&srq).ok());
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  REQUIRE(qp.modify(rc::QpState::kRtr).ok());
  REQUIRE(qp.modify(rc::QpState::kRts).ok());
  rc::SendWr w;
  w.opcode = rc::WrOpcode::kRead;
  w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), 128 * kPmtu + 1, mr.lkey};
  CHECK(qp.post_send(w).message().find("sr_bdp_pkts") != std::string::npos);
  w.sge.length = 128 * kPmtu;  // all its PSNs in flight at once: at most the BDP cap
  CHECK(qp.post_send(w).ok());
  w.opcode = rc::WrOpcode::kFetchAdd;
  w.sge.length = 8;
  CHECK(qp.post_send(w).ok());
  auto a = sr_attr(1, 2, 0, 0);
  a.recv_mode = rc::RecvMode::kMessageViews;
  CHECK(a.validate().message().rfind("recovery", 0) == 0);
  a = sr_attr(1, 2, 0, 0);
  a.sr_bdp_pkts = 129;
  CHECK(a.validate().message().rfind("sr_bdp_pkts", 0) == 0);
  CHECK(attr(1, 2, 0, 0).recovery == rc::Recovery::kGoBackN);  // the default
  // Fixed once the QP is past INIT: both ends agreed on it before the first packet.
  auto back = qp.attr();
  back.recovery = rc::Recovery::kGoBackN;
  CHECK(qp.modify(rc::QpState::kRts, &back).message().rfind("recovery", 0) == 0);
}

namespace {

// An SR requester with one WRITE of `pkts` packets posted. `adaptive_rto` false: the plain IBTA
// timer (the timeout tests below; the probes under it are test_rc_loss_timers.cc's).
struct SrRequester {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(64 * kPmtu);
  rc::MemoryRegion mr;
  std::unique_ptr<rc::RcQp> qp;
  explicit SrRequester(std::uint32_t pkts, std::uint32_t bdp = 128, bool adaptive_rto = true) {
    mr = *mrs.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
    auto a = sr_attr(0x11, 0x12, 500, 1);
    a.sr_bdp_pkts = bdp;
    a.adaptive_rto = adaptive_rto;
    qp = std::make_unique<rc::RcQp>(a, mrs);
    to_rts(*qp);
    rc::SendWr w;
    w.wr_id = 1;
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data()), pkts * kPmtu, mr.lkey};
    w.remote_addr = 0x100000;
    w.rkey = 0x77;
    REQUIRE(qp->post_send(w).ok());
  }
  std::vector<rc::TxDescriptor> out(std::uint64_t now = 0, std::size_t max = 256) {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < max && qp->next_packet(now, d)) v.push_back(d);
    return v;
  }
  // A SACK acknowledging through `cum` and holding ePSN + each of `bits`.
  void sack(std::uint32_t cum, std::initializer_list<std::uint32_t> bits, std::uint64_t now = 0) {
    std::uint64_t words[2] = {0, 0};
    for (std::uint32_t b : bits) words[b / 64] |= std::uint64_t{1} << (b % 64);
    std::uint8_t bitmap[16];
    for (int i = 0; i < 2; ++i) {
      const std::uint64_t be = __builtin_bswap64(words[i]);
      std::memcpy(bitmap + 8 * i, &be, 8);
    }
    wire::PacketInfo pi{};
    pi.opcode = op(Opcode::kSrAck);
    pi.psn = cum;
    pi.aeth_syndrome = wire::kAethAckUnlimited;
    pi.payload_len = wire::kSackBytes;
    (void)qp->on_packet(pi, bitmap, now);
  }
};

}  // namespace

TEST_CASE("SR requester: every packet carries its own placement in an SR opcode", "[rc][sr][requester]") {
  SrRequester q(3);
  auto o = q.out();
  REQUIRE(o.size() == 3);
  CHECK(o[0].opcode == op(Opcode::kSrWriteFirst));
  CHECK(o[1].opcode == op(Opcode::kSrWriteMiddle));
  CHECK(o[2].opcode == op(Opcode::kSrWriteLast));
  for (std::uint32_t i = 0; i < 3; ++i) {
    CHECK(o[i].psn == 500 + i);
    CHECK(o[i].reth_va == 0x100000 + i * kPmtu);
    CHECK(o[i].reth_rkey == 0x77);
    CHECK(o[i].reth_len == 3 * kPmtu);
    CHECK(o[i].payload == q.buf.data() + i * kPmtu);
  }
}

TEST_CASE("SR requester: a SACK's gaps below its highest held PSN are resent, once, and nothing else",
          "[rc][sr][requester]") {
  SrRequester q(6);
  REQUIRE(q.out().size() == 6);  // PSN 500..505
  // ePSN 501 (500 delivered); held: 503 and 505. Missing below the highest held: 501, 502, 504.
  q.sack(500, {2, 4});
  auto o = q.out();
  REQUIRE(o.size() == 3);
  CHECK(o[0].psn == 501);
  CHECK(o[1].psn == 502);
  CHECK(o[2].psn == 504);
  for (const auto& d : o) {
    CHECK(d.retransmission);
    CHECK(d.ack_req);
  }
  CHECK(q.qp->counters().retransmitted_packets == 3);
  CHECK(q.qp->counters().sr_resent_on_sack == 3);
  // The same SACK again (or a later one with the gaps still open) asks nothing more: the timer
  // catches a lost resend.
  q.sack(500, {2, 4});
  CHECK(q.out().empty());
  // Everything delivered: the WRITE completes.
  q.sack(505, {});
  rc::Completion c;
  REQUIRE(q.qp->poll_cq(c));
  CHECK(c.status == rc::WcStatus::kSuccess);
  CHECK(q.qp->sq_una() == 506);
}

TEST_CASE("SR requester: a resend overtaken by a later send while still missing is resent again",
          "[rc][sr][requester]") {
  SrRequester q(8);
  REQUIRE(q.out(0, 4).size() == 4);  // 500..503
  q.sack(499, {2, 3});               // 502, 503 held: 500, 501 lost
  auto o = q.out(0, 2);
  REQUIRE(o.size() == 2);
  CHECK(o[0].psn == 500);
  CHECK(o[1].psn == 501);
  o = q.out(0, 1);  // a new packet, sent after both resends
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 504);
  // 504 arrived and 500, 501 still did not: their resends were lost too.
  q.sack(499, {2, 3, 4});
  o = q.out(0, 2);
  REQUIRE(o.size() == 2);
  CHECK(o[0].psn == 500);
  CHECK(o[1].psn == 501);
  CHECK(o[0].retransmission);
  CHECK(q.qp->counters().sr_resent_on_sack == 4);
  CHECK(q.qp->counters().local_ack_timeout_err == 0);
  // Nothing newer held: no third resend.
  q.sack(499, {2, 3, 4});
  CHECK(q.out(0, 1)[0].psn == 505);
}

TEST_CASE("SR requester: at most sr_bdp_pkts PSNs in flight; acknowledgement opens room", "[rc][sr][window]") {
  SrRequester q(10, 4);
  CHECK(q.out().size() == 4);
  q.sack(501, {});  // two delivered
  auto o = q.out();
  REQUIRE(o.size() == 2);
  CHECK(o[0].psn == 504);
  CHECK(o[1].psn == 505);
  // A SACK holding packets beyond a gap opens no room: the cap counts from sq.una.
  q.sack(501, {1, 2, 3});  // 503..505 held
  o = q.out();
  REQUIRE(o.size() == 1);  // only the resend of 502
  CHECK(o[0].psn == 502);
  CHECK(o[0].retransmission);
}

TEST_CASE("SR requester: the ACK timeout resends every PSN the responder does not hold, spending a retry",
          "[rc][sr][timeout]") {
  SrRequester q(5, 128, /*adaptive_rto=*/false);
  REQUIRE(q.out(0).size() == 5);
  q.sack(499, {1, 3});  // held: 501, 503
  (void)q.out(0);       // resends 500, 502
  const std::uint64_t t = q.qp->next_timer_ns();
  REQUIRE(t != UINT64_MAX);
  q.qp->on_timer(t);
  CHECK(q.qp->counters().local_ack_timeout_err == 1);
  auto o = q.out(t);
  REQUIRE(o.size() == 3);
  CHECK(o[0].psn == 500);
  CHECK(o[1].psn == 502);
  CHECK(o[2].psn == 504);
  CHECK(q.qp->state() == rc::QpState::kRts);
}

TEST_CASE("SR requester: a timeout with every PSN in flight shown held resends the oldest, for a fresh SACK",
          "[rc][sr][timeout]") {
  SrRequester q(3, 128, /*adaptive_rto=*/false);
  REQUIRE(q.out(0).size() == 3);  // 500..502
  q.sack(499, {1, 2});            // 501, 502 held; 500 resent
  REQUIRE(q.out(0).size() == 1);
  // A plain ACK through 500 (no snapshot): 501 and 502 still look held, and are all in flight.
  wire::PacketInfo ack{};
  ack.opcode = op(Opcode::kAck);
  ack.psn = 500;
  ack.aeth_syndrome = wire::kAethAckUnlimited;
  (void)q.qp->on_packet(ack, nullptr, 0);
  REQUIRE(q.qp->sq_una() == 501);
  CHECK(q.out(0).empty());
  const std::uint64_t t = q.qp->next_timer_ns();
  q.qp->on_timer(t);
  auto o = q.out(t);
  REQUIRE_FALSE(o.empty());
  CHECK(o[0].psn == 501);  // the oldest unacknowledged
}

TEST_CASE(
    "SR requester: an RNR NAK resends, after the RNR wait, its PSN and what the responder does not hold "
    "behind it",
    "[rc][sr][rnr]") {
  SrRequester q(5);
  REQUIRE(q.out(0).size() == 5);  // 500..504
  q.sack(500, {2});               // 503 held; 501, 502 resent
  REQUIRE(q.out(0).size() == 2);
  wire::PacketInfo nak{};
  nak.opcode = op(Opcode::kAck);
  nak.psn = 501;
  nak.aeth_syndrome = wire::rnr_nak_syndrome(1);  // 10 us
  (void)q.qp->on_packet(nak, nullptr, 1000);
  CHECK(q.out(2000).empty());
  auto o = q.out(1000 + 10000);
  REQUIRE(o.size() == 3);
  CHECK(o[0].psn == 501);
  CHECK(o[1].psn == 502);
  CHECK(o[2].psn == 504);  // 503 is held: not resent
  CHECK(q.qp->counters().rnr_naks_received == 1);
}

TEST_CASE("SR requester: a PSN a SACK showed held and a later SACK (or an RNR NAK) does not is resent",
          "[rc][sr][requester]") {
  SrRequester q(6);
  REQUIRE(q.out(0).size() == 6);  // 500..505
  q.sack(499, {2, 3});            // 502, 503 held: 500, 501 resent
  REQUIRE(q.out(0).size() == 2);
  q.sack(499, {3});  // 502 released by the responder (a WRITE with immediate without a receive)
  auto o = q.out(0);
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 502);
  // An RNR NAK for a PSN a SACK showed held: resent after the wait, with what is not held behind it.
  q.sack(502, {1});  // 500..502 delivered, 504 held
  wire::PacketInfo nak{};
  nak.opcode = op(Opcode::kAck);
  nak.psn = 504;
  nak.aeth_syndrome = wire::rnr_nak_syndrome(1);
  (void)q.qp->on_packet(nak, nullptr, 0);
  o = q.out(20000);
  REQUIRE(o.size() == 2);  // the NAK acknowledges 503 (everything before its PSN, §9.7.5.2.4)
  CHECK(o[0].psn == 504);
  CHECK(o[1].psn == 505);
  CHECK(q.qp->sq_una() == 504);
}

TEST_CASE("SR requester: SACKs for PSNs never sent, or older than known, change nothing", "[rc][sr]") {
  SrRequester q(3);
  REQUIRE(q.out().size() == 3);
  q.sack(503, {});
  CHECK(q.qp->counters().ghost_acks == 1);
  q.sack(501, {});
  q.sack(498, {1});
  CHECK(q.qp->counters().duplicate_responses == 1);
  CHECK(q.qp->sq_una() == 502);
  CHECK(q.out().empty());
}
