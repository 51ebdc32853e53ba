// SEND with Invalidate (IBTA §9.3.7, opcodes 0x16/0x17): the requester's packet sequence and IETH,
// the responder's invalidation and completion, and its NAK for a key it may not invalidate.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "tests/rc/responder_fixture.h"

using namespace droce;
using namespace droce::test;

namespace {

// A requester QP in RTS with a registered source buffer, for inspecting what it sends.
struct Requester {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(8192, 0x33);
  rc::MemoryRegion mr;
  std::unique_ptr<rc::RcQp> qp;
  Requester() {
    mr = *mrs.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
    qp = std::make_unique<rc::RcQp>(attr(0x11, 0x12, 100, 1), mrs);
    REQUIRE(qp->modify(rc::QpState::kInit).ok());
    REQUIRE(qp->modify(rc::QpState::kRtr).ok());
    REQUIRE(qp->modify(rc::QpState::kRts).ok());
  }
  std::vector<rc::TxDescriptor> send_with_inv(std::uint32_t len, std::uint32_t key) {
    rc::SendWr wr;
    wr.wr_id = 5;
    wr.opcode = rc::WrOpcode::kSendWithInv;
    wr.invalidate_rkey = key;
    wr.sge = {reinterpret_cast<std::uint64_t>(buf.data()), len, mr.lkey};
    REQUIRE(qp->post_send(wr).ok());
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    for (int n = 0; n < 16 && qp->next_packet(0, d); ++n) v.push_back(d);
    return v;
  }
};

// The descriptor through the engine's field mapping, the wire builder and the parser: what a
// peer would read from the frame.
wire::PacketInfo over_the_wire(const rc::TxDescriptor& d) {
  wire::TemplateConfig c;
  c.local.ip[0] = c.remote.ip[0] = 10;
  c.local.ip[3] = 1;
  c.remote.ip[3] = 2;
  c.dest_qpn = 0x12;
  const auto tmpl = wire::HeaderTemplate::make(c);
  std::vector<std::uint8_t> frame(d.payload_len + wire::kMaxHeaderBytes + 8);
  const auto n =
      wire::build_frame(tmpl, rc::packet_fields(d), d.payload, frame.data(), static_cast<std::uint32_t>(frame.size()));
  wire::PacketInfo pi{};
  REQUIRE(n != 0);
  REQUIRE(wire::parse_frame(frame.data(), n, pi) == wire::DropReason::kNone);
  return pi;
}

constexpr std::uint8_t op(wire::Opcode o) { return static_cast<std::uint8_t>(o); }

}  // namespace

TEST_CASE("requester: one-packet SEND with Invalidate is SEND ONLY with Invalidate carrying the key in its IETH",
          "[rc][requester][inv]") {
  Requester q;
  const auto v = q.send_with_inv(64, 0xAB800007);
  REQUIRE(v.size() == 1);
  CHECK(v[0].opcode == op(wire::Opcode::kSendOnlyInv));
  CHECK(v[0].ieth_rkey == 0xAB800007);
  CHECK(v[0].ack_req);
  const auto pi = over_the_wire(v[0]);
  CHECK(pi.opcode == op(wire::Opcode::kSendOnlyInv));
  CHECK(pi.ieth_rkey == 0xAB800007);
  CHECK(pi.payload_len == 64);
}

TEST_CASE(
    "requester: multi-packet SEND with Invalidate is FIRST, MIDDLE..., LAST with Invalidate; IETH on the last only",
    "[rc][requester][inv]") {
  Requester q;
  const auto v = q.send_with_inv(3 * 1024 + 10, 0x01800002);
  REQUIRE(v.size() == 4);
  CHECK(v[0].opcode == op(wire::Opcode::kSendFirst));
  CHECK(v[1].opcode == op(wire::Opcode::kSendMiddle));
  CHECK(v[2].opcode == op(wire::Opcode::kSendMiddle));
  CHECK(v[3].opcode == op(wire::Opcode::kSendLastInv));
  for (int i = 0; i < 3; ++i) CHECK(v[i].ieth_rkey == 0);
  CHECK(v[3].ieth_rkey == 0x01800002);
  CHECK(v[3].payload_len == 10);
  const auto pi = over_the_wire(v[3]);
  CHECK(pi.opcode == op(wire::Opcode::kSendLastInv));
  CHECK(pi.ieth_rkey == 0x01800002);
  CHECK(pi.psn == 103);
}

TEST_CASE("responder: SEND ONLY with Invalidate -> receive completes 'with invalidate' and the key is invalid",
          "[rc][responder][inv]") {
  Responder r;
  std::vector<std::uint8_t> target(4096);
  const auto tmr =
      *r.mrs.register_region(target.data(), target.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteInvalidate);
  auto p = payload(64);
  auto pi = r.req(wire::Opcode::kSendOnlyInv, 100, 64);
  pi.ieth_rkey = tmr.rkey;
  CHECK(r.qp->on_packet(pi, p.data(), 0) == rc::RxDelivery::kNone);
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::kAethAckUnlimited);
  rc::Completion c;
  REQUIRE(r.qp->poll_cq(c));
  CHECK(c.status == rc::WcStatus::kSuccess);
  CHECK(c.is_recv);
  CHECK(c.opcode == rc::WcOpcode::kRecvWithInv);
  CHECK(c.has_invalidate);
  CHECK(c.invalidated_rkey == tmr.rkey);
  CHECK_FALSE(c.has_imm);
  CHECK(c.byte_len == 64);
  CHECK(r.rbuf[0] == 0x5A);
  CHECK(r.mrs.check_remote(tmr.rkey, reinterpret_cast<std::uint64_t>(target.data()), 8, rc::kAccessRemoteWrite,
                           nullptr) == rc::MrCheck::kBadKey);
  // The L_Key is untouched: local use of the region goes on.
  CHECK(r.mrs.check_local(tmr.lkey, reinterpret_cast<std::uint64_t>(target.data()), 8, 0, nullptr) == rc::MrCheck::kOk);

  // A WRITE through the invalidated key: NAK remote access error (§9.7.5.1.3).
  auto w = r.req(wire::Opcode::kWriteOnly, 101, 8);
  w.reth_va = reinterpret_cast<std::uint64_t>(target.data());
  w.reth_rkey = tmr.rkey;
  w.reth_dma_len = 8;
  r.qp->on_packet(w, p.data(), 0);
  o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kRemoteAccessError));
  CHECK(r.qp->counters().resp_remote_access_errors == 1);
  CHECK(target[0] == 0);
}

TEST_CASE("responder: FIRST then LAST with Invalidate -> the key is invalidated at the last packet",
          "[rc][responder][inv]") {
  Responder r;
  std::vector<std::uint8_t> target(64);
  const auto tmr = *r.mrs.register_region(target.data(), target.size(), rc::kAccessRemoteInvalidate);
  auto p = payload(1024);
  r.qp->on_packet(r.req(wire::Opcode::kSendFirst, 100, 1024, false), p.data(), 0);
  CHECK(r.mrs.check_remote(tmr.rkey, reinterpret_cast<std::uint64_t>(target.data()), 8, 0, nullptr) ==
        rc::MrCheck::kOk);
  auto last = r.req(wire::Opcode::kSendLastInv, 101, 10);
  last.ieth_rkey = tmr.rkey;
  r.qp->on_packet(last, p.data(), 0);
  rc::Completion c;
  REQUIRE(r.qp->poll_cq(c));
  CHECK(c.status == rc::WcStatus::kSuccess);
  CHECK(c.opcode == rc::WcOpcode::kRecvWithInv);
  CHECK(c.invalidated_rkey == tmr.rkey);
  CHECK(c.byte_len == 1034);
  CHECK(r.mrs.check_remote(tmr.rkey, reinterpret_cast<std::uint64_t>(target.data()), 8, 0, nullptr) ==
        rc::MrCheck::kBadKey);
}

TEST_CASE("responder: a duplicate SEND with Invalidate is re-ACKed, not executed again", "[rc][responder][inv]") {
  Responder r;
  REQUIRE(r.qp->post_recv({8, {reinterpret_cast<std::uint64_t>(r.rbuf.data()), 4096, r.rmr.lkey}}).ok());
  std::vector<std::uint8_t> target(64);
  const auto tmr = *r.mrs.register_region(target.data(), target.size(), rc::kAccessRemoteInvalidate);
  auto p = payload(16);
  auto pi = r.req(wire::Opcode::kSendOnlyInv, 100, 16);
  pi.ieth_rkey = tmr.rkey;
  r.qp->on_packet(pi, p.data(), 0);
  r.qp->on_packet(pi, p.data(), 0);  // its ACK was lost: the requester sends it again (C9-105)
  const auto o = r.out();
  REQUIRE(o.size() == 1);  // coalesced: one ACK for PSN 100
  CHECK(o[0].aeth_syndrome == wire::kAethAckUnlimited);
  CHECK(o[0].psn == 100);
  CHECK(r.qp->counters().duplicate_request == 1);
  CHECK(r.qp->counters().resp_invalidate_errors == 0);
  CHECK(r.qp->state() == rc::QpState::kRts);
  rc::Completion c;
  REQUIRE(r.qp->poll_cq(c));
  CHECK_FALSE(r.qp->poll_cq(c));  // one receive consumed, not two
}

TEST_CASE("responder: a key it may not invalidate -> NAK invalid request, counted, QP in error",
          "[rc][responder][inv]") {
  std::vector<std::uint8_t> target(64);
  SECTION("region registered without kAccessRemoteInvalidate") {
    Responder r;
    auto p = payload(16);
    auto pi = r.req(wire::Opcode::kSendOnlyInv, 100, 16);
    pi.ieth_rkey = r.mr.rkey;
    r.qp->on_packet(pi, p.data(), 0);
    const auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
    CHECK(o[0].psn == 100);
    CHECK(r.qp->counters().resp_invalidate_errors == 1);
    CHECK(r.qp->counters().resp_invalid_request == 1);
    CHECK(r.qp->state() == rc::QpState::kError);
    // The key was not invalidated.
    CHECK(r.mrs.check_remote(r.mr.rkey, reinterpret_cast<std::uint64_t>(r.mem.data()), 8, rc::kAccessRemoteWrite,
                             nullptr) == rc::MrCheck::kOk);
    // The receive the message consumed completes with the error, not with success.
    rc::Completion c;
    REQUIRE(r.qp->poll_cq(c));
    CHECK(c.wr_id == 7);
    CHECK(c.is_recv);
    CHECK(c.status == rc::WcStatus::kRemInvReqErr);
    CHECK_FALSE(c.has_invalidate);
    CHECK_FALSE(r.qp->poll_cq(c));
  }
  SECTION("unknown key") {
    Responder r;
    auto p = payload(16);
    auto pi = r.req(wire::Opcode::kSendOnlyInv, 100, 16);
    pi.ieth_rkey = 0x00DEAD00;
    r.qp->on_packet(pi, p.data(), 0);
    const auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
    CHECK(r.qp->counters().resp_invalidate_errors == 1);
  }
  SECTION("a key already invalidated") {
    Responder r;
    REQUIRE(r.qp->post_recv({8, {reinterpret_cast<std::uint64_t>(r.rbuf.data()), 4096, r.rmr.lkey}}).ok());
    const auto tmr = *r.mrs.register_region(target.data(), target.size(), rc::kAccessRemoteInvalidate);
    auto p = payload(16);
    auto pi = r.req(wire::Opcode::kSendOnlyInv, 100, 16);
    pi.ieth_rkey = tmr.rkey;
    r.qp->on_packet(pi, p.data(), 0);
    pi.psn = 101;
    r.qp->on_packet(pi, p.data(), 0);
    const auto o = r.out();
    REQUIRE(o.size() == 1);  // the NAK superseded the queued ACK (it acknowledges PSN 100 too)
    CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
    CHECK(o[0].psn == 101);
    CHECK(r.qp->counters().resp_invalidate_errors == 1);
    // The first receive completed; the second, consumed by the refused message, has the error.
    rc::Completion c;
    REQUIRE(r.qp->poll_cq(c));
    CHECK(c.status == rc::WcStatus::kSuccess);
    REQUIRE(r.qp->poll_cq(c));
    CHECK(c.wr_id == 8);
    CHECK(c.status == rc::WcStatus::kRemInvReqErr);
  }
}

TEST_CASE("responder views: SEND with Invalidate ends a view and invalidates the key", "[rc][responder][views][inv]") {
  Responder r(100, false);
  auto a = attr(0x12, 0x11, 1, 100);
  a.recv_mode = rc::RecvMode::kMessageViews;
  a.max_message_bytes = 4096;
  rc::RcQp qp(a, r.mrs);
  REQUIRE(qp.modify(rc::QpState::kInit).ok());
  REQUIRE(qp.modify(rc::QpState::kRtr).ok());
  REQUIRE(qp.modify(rc::QpState::kRts).ok());
  rc::RecvWr credit;
  credit.sge.length = 4096;
  REQUIRE(qp.post_recv(credit).ok());
  std::vector<std::uint8_t> target(64);
  const auto tmr = *r.mrs.register_region(target.data(), target.size(), rc::kAccessRemoteInvalidate);
  auto p = payload(32);
  auto pi = r.req(wire::Opcode::kSendOnlyInv, 100, 32);
  pi.ieth_rkey = tmr.rkey;
  CHECK(qp.on_packet(pi, p.data(), 0) == rc::RxDelivery::kKeepEnd);
  CHECK(r.mrs.check_remote(tmr.rkey, reinterpret_cast<std::uint64_t>(target.data()), 8, 0, nullptr) ==
        rc::MrCheck::kBadKey);
}

TEST_CASE("loopback: SEND with Invalidate end to end, 1 and 4 packets; sender completes as a SEND",
          "[rc][loopback][inv]") {
  const std::uint32_t len = GENERATE(64u, 3u * 1024u + 10u);
  Loopback lb(attr(0x11, 0x12, 100, 200), attr(0x12, 0x11, 200, 100));
  connect(lb);
  std::vector<std::uint8_t> src(4096), dst(4096), target(256);
  for (std::uint32_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7);
  const auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  const auto dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
  const auto tmr =
      *lb.ep(1).mrs.register_region(target.data(), target.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteInvalidate);
  REQUIRE(lb.qp(1).post_recv({9, {reinterpret_cast<std::uint64_t>(dst.data()), 4096, dmr.lkey}}).ok());
  rc::SendWr wr;
  wr.wr_id = 1;
  wr.opcode = rc::WrOpcode::kSendWithInv;
  wr.invalidate_rkey = tmr.rkey;
  wr.sge = {reinterpret_cast<std::uint64_t>(src.data()), len, smr.lkey};
  REQUIRE(lb.qp(0).post_send(wr).ok());
  rc::Completion sc{}, rcv{};
  bool got_s = false, got_r = false;
  REQUIRE(lb.run(
      [&] {
        if (!got_s) got_s = lb.qp(0).poll_cq(sc);
        if (!got_r) got_r = lb.qp(1).poll_cq(rcv);
        return got_s && got_r;
      },
      1000));
  CHECK(sc.status == rc::WcStatus::kSuccess);
  CHECK(sc.opcode == rc::WcOpcode::kSend);
  CHECK_FALSE(sc.is_recv);
  CHECK_FALSE(sc.has_invalidate);
  CHECK(rcv.status == rc::WcStatus::kSuccess);
  CHECK(rcv.opcode == rc::WcOpcode::kRecvWithInv);
  CHECK(rcv.has_invalidate);
  CHECK(rcv.invalidated_rkey == tmr.rkey);
  CHECK(rcv.byte_len == len);
  CHECK(std::memcmp(src.data(), dst.data(), len) == 0);

  // A WRITE through the invalidated key: the sender's WRITE completes with remote access error.
  rc::SendWr w;
  w.wr_id = 2;
  w.opcode = rc::WrOpcode::kWrite;
  w.remote_addr = reinterpret_cast<std::uint64_t>(target.data());
  w.rkey = tmr.rkey;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 16, smr.lkey};
  REQUIRE(lb.qp(0).post_send(w).ok());
  rc::Completion wc{};
  REQUIRE(lb.run([&] { return lb.qp(0).poll_cq(wc); }, 1000));
  CHECK(wc.wr_id == 2);
  CHECK(wc.status == rc::WcStatus::kRemAccessErr);
  CHECK(lb.qp(1).counters().resp_remote_access_errors == 1);
  CHECK(target[0] == 0);
}

TEST_CASE("loopback: SEND with Invalidate of a key not allowed -> sender completes with remote invalid request",
          "[rc][loopback][inv]") {
  Loopback lb(attr(0x11, 0x12, 100, 200), attr(0x12, 0x11, 200, 100));
  connect(lb);
  std::vector<std::uint8_t> src(64), dst(64), target(64);
  const auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  const auto dmr = *lb.ep(1).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
  const auto tmr = *lb.ep(1).mrs.register_region(target.data(), target.size(), rc::kAccessRemoteWrite);
  REQUIRE(lb.qp(1).post_recv({9, {reinterpret_cast<std::uint64_t>(dst.data()), 64, dmr.lkey}}).ok());
  rc::SendWr wr;
  wr.wr_id = 1;
  wr.opcode = rc::WrOpcode::kSendWithInv;
  wr.invalidate_rkey = tmr.rkey;
  wr.sge = {reinterpret_cast<std::uint64_t>(src.data()), 64, smr.lkey};
  REQUIRE(lb.qp(0).post_send(wr).ok());
  rc::Completion sc{};
  REQUIRE(lb.run([&] { return lb.qp(0).poll_cq(sc); }, 1000));
  CHECK(sc.wr_id == 1);
  CHECK(sc.status == rc::WcStatus::kRemInvReqErr);
  CHECK(lb.qp(1).counters().resp_invalidate_errors == 1);
  CHECK(lb.qp(1).state() == rc::QpState::kError);
  rc::Completion rcv{};
  REQUIRE(lb.qp(1).poll_cq(rcv));
  CHECK(rcv.wr_id == 9);
  CHECK(rcv.status == rc::WcStatus::kRemInvReqErr);
  CHECK(lb.ep(1).mrs.check_remote(tmr.rkey, reinterpret_cast<std::uint64_t>(target.data()), 8, rc::kAccessRemoteWrite,
                                  nullptr) == rc::MrCheck::kOk);
}
