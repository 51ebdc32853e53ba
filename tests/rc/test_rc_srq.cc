// Shared receive queue: QPs that take their receives from one SRQ, in order, each message into its
// own WQE; RNR NAK when it is empty; the limit event; what attaching refuses; a QP's error flushes
// only the WQE it took.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "tests/rc/responder_fixture.h"

using namespace droce;
using namespace droce::test;
using rc::WcStatus;

namespace {

constexpr std::uint8_t op(wire::Opcode o) { return static_cast<std::uint8_t>(o); }

// Two responder QPs (QPNs 0x21, 0x22, ePSN 100 each) on one SRQ of 8 WQEs with 2 KiB buffers.
struct SrqPair {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> bufs = std::vector<std::uint8_t>(8 * 2048);
  rc::MemoryRegion mr;
  rc::SharedRecvQueue srq{8, mrs};
  std::unique_ptr<rc::RcQp> qp[2];
  SrqPair() {
    mr = *mrs.register_region(bufs.data(), bufs.size(), rc::kAccessLocalWrite);
    for (int i = 0; i < 2; ++i) {
      qp[i] = std::make_unique<rc::RcQp>(attr(0x21 + static_cast<std::uint32_t>(i), 0x11, 1, 100), mrs);
      REQUIRE(qp[i]->attach_srq(&srq).ok());
      REQUIRE(qp[i]->modify(rc::QpState::kInit).ok());
      REQUIRE(qp[i]->modify(rc::QpState::kRtr).ok());
      REQUIRE(qp[i]->modify(rc::QpState::kRts).ok());
    }
  }
  void post(std::uint64_t id) {
    REQUIRE(srq.post_recv({id, {reinterpret_cast<std::uint64_t>(bufs.data() + id * 2048), 2048, mr.lkey}}).ok());
  }
  void send(int q, wire::Opcode o, std::uint32_t psn, std::uint32_t len, std::uint8_t fill) {
    wire::PacketInfo pi{};
    pi.opcode = op(o);
    pi.psn = psn;
    pi.payload_len = len;
    pi.ack_req = true;
    const std::vector<std::uint8_t> p(len, fill);
    qp[q]->on_packet(pi, p.data(), 0);
  }
  std::vector<rc::TxDescriptor> out(int q) {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < 16 && qp[q]->next_packet(0, d)) v.push_back(d);
    return v;
  }
  std::vector<rc::Completion> cq(int q) {
    std::vector<rc::Completion> v;
    rc::Completion c;
    while (qp[q]->poll_cq(c)) v.push_back(c);
    return v;
  }
};

}  // namespace

TEST_CASE("SRQ: two QPs take their receives from one queue in order, each message into its own WQE", "[rc][srq]") {
  SrqPair s;
  for (std::uint64_t id = 0; id < 4; ++id) s.post(id);
  // QP 0 starts a two-packet SEND; QP 1's SEND arrives in between and takes the next WQE.
  s.send(0, wire::Opcode::kSendFirst, 100, 1024, 0xA1);
  s.send(1, wire::Opcode::kSendOnly, 100, 300, 0xB1);
  s.send(0, wire::Opcode::kSendLast, 101, 200, 0xA2);
  s.send(1, wire::Opcode::kSendOnly, 101, 10, 0xB2);
  auto c0 = s.cq(0), c1 = s.cq(1);
  REQUIRE(c0.size() == 1);
  REQUIRE(c1.size() == 2);
  CHECK(c0[0].wr_id == 0);
  CHECK(c0[0].byte_len == 1224);
  CHECK(c0[0].qp_num == 0x21);
  CHECK(c1[0].wr_id == 1);
  CHECK(c1[0].byte_len == 300);
  CHECK(c1[0].qp_num == 0x22);
  CHECK(c1[1].wr_id == 2);
  CHECK(s.bufs[0] == 0xA1);
  CHECK(s.bufs[1024] == 0xA2);  // QP 0's second packet went on in its own WQE
  CHECK(s.bufs[2048] == 0xB1);
  CHECK(s.bufs[2 * 2048] == 0xB2);
  CHECK(s.srq.posted() == 1);
  CHECK(s.srq.taken() == 3);
}

TEST_CASE("SRQ: empty -> RNR NAK (§9.7.5.1.5), and the resent SEND takes the WQE posted meanwhile", "[rc][srq][rnr]") {
  SrqPair s;
  s.send(0, wire::Opcode::kSendOnly, 100, 64, 1);
  auto o = s.out(0);
  REQUIRE(o.size() == 1);
  CHECK((o[0].aeth_syndrome & wire::kAethTypeMask) == wire::kAethTypeRnrNak);
  CHECK(s.qp[0]->rq_epsn() == 100);
  CHECK(s.srq.empty_takes() == 1);
  s.post(5);
  s.send(0, wire::Opcode::kSendOnly, 100, 64, 1);
  o = s.out(0);
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::kAethAckUnlimited);
  auto c = s.cq(0);
  REQUIRE(c.size() == 1);
  CHECK(c[0].wr_id == 5);
}

TEST_CASE("SRQ limit: the event fires once when a take leaves fewer WQEs than the limit, then disarms", "[rc][srq]") {
  SrqPair s;
  for (std::uint64_t id = 0; id < 4; ++id) s.post(id);
  REQUIRE(s.srq.arm_limit(3).ok());
  CHECK_FALSE(s.srq.arm_limit(9).ok());  // above the depth
  REQUIRE(s.srq.arm_limit(3).ok());
  s.send(0, wire::Opcode::kSendOnly, 100, 8, 1);  // 3 left: not below 3
  CHECK_FALSE(s.srq.take_limit_event());
  s.send(1, wire::Opcode::kSendOnly, 100, 8, 1);  // 2 left
  CHECK(s.srq.take_limit_event());
  CHECK_FALSE(s.srq.take_limit_event());          // read once
  s.send(0, wire::Opcode::kSendOnly, 101, 8, 1);  // disarmed: no second event
  CHECK_FALSE(s.srq.take_limit_event());
  CHECK(s.srq.limit_events() == 1);
  CHECK(s.srq.limit() == 0);
}

TEST_CASE(
    "SRQ: attaching is refused once the QP can receive and for message-view QPs; post_recv on an SRQ QP is "
    "refused; a QP's error flushes only the WQE it took",
    "[rc][srq]") {
  SrqPair s;
  CHECK_FALSE(s.qp[0]->attach_srq(&s.srq).ok());  // in RTS
  CHECK(s.qp[0]
            ->post_recv({1, {reinterpret_cast<std::uint64_t>(s.bufs.data()), 64, s.mr.lkey}})
            .message()
            .find("shared receive queue") != std::string::npos);
  auto a = attr(0x30, 0x11, 1, 100);
  a.recv_mode = rc::RecvMode::kMessageViews;
  rc::RcQp views(a, s.mrs);
  CHECK_FALSE(views.attach_srq(&s.srq).ok());
  CHECK_FALSE(s.srq.post_recv({1, {reinterpret_cast<std::uint64_t>(s.bufs.data()), 64, 0x777}}).ok());  // bad lkey

  for (std::uint64_t id = 0; id < 3; ++id) s.post(id);
  s.send(0, wire::Opcode::kSendFirst, 100, 1024, 1);  // QP 0 takes WQE 0
  REQUIRE(s.qp[0]->modify(rc::QpState::kError).ok());
  auto c = s.cq(0);
  REQUIRE(c.size() == 1);
  CHECK(c[0].wr_id == 0);
  CHECK(c[0].status == WcStatus::kWrFlushErr);
  CHECK(s.srq.posted() == 2);  // the others stay for QP 1
  s.send(1, wire::Opcode::kSendOnly, 100, 8, 1);
  c = s.cq(1);
  REQUIRE(c.size() == 1);
  CHECK(c[0].wr_id == 1);
}
