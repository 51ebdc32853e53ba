// RC rules for READs and the edge cases a hardware peer punishes, one at a time: stimulus (a crafted
// packet) -> expectation (what the QP sends or completes): READ continuation after an implied NAK, READ
// credits (initiator depth, responder resources), stale responses, repeated NAKs, message length.
#include <catch2/catch.hpp>
#include <vector>

#include "tests/rc/responder_fixture.h"

using namespace droce;
using namespace droce::test;

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

TEST_CASE(
    "READ re-issued after an implied NAK: rxe's continuation positions are accepted (LAST for a one-packet "
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

TEST_CASE(
    "§9.4.4 initiator depth: a READ beyond max_rd_atomic waits, and the SEND behind it too, until a READ "
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

TEST_CASE(
    "responder resources: a new READ while max_dest_rd_atomic READs still have responses to send -> NAK "
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
  CHECK(a.validate().ok());
  a.max_rd_atomic = 256;
  CHECK(a.validate().message().rfind("max_rd_atomic", 0) == 0);
  a.max_rd_atomic = 16;
  a.max_dest_rd_atomic = 1000;
  CHECK(a.validate().message().rfind("max_dest_rd_atomic", 0) == 0);
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

TEST_CASE(
    "duplicate READ whose responses are still queued -> that run resumes from the PSN asked for, no second "
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

TEST_CASE(
    "responder queue at its bound: max_dest_rd_atomic READs, their replays and the ACKs between all leave, "
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

TEST_CASE(
    "§9.7.5.2.1 stale response: an RNR NAK older than the oldest unacknowledged PSN is dropped — nothing "
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

TEST_CASE(
    "§9.7.5.1.1 duplicate SEND without AckReq -> re-ACKed all the same (C9-105), so a lost ACK costs no "
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

TEST_CASE(
    "§9.7.5.1.2 coalescing: a NAK supersedes the ACK queued before it; a NAK still queued is not weakened "
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

TEST_CASE(
    "large READ under loss: the local ACK timer restarts while the READ's responses keep arriving, and the "
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

TEST_CASE(
    "§9.7.5.2.3 implied NAK with READs behind the gap: only the READ missing a response is asked again, the "
    "later READs' responses are placed as they come, completions stay in order",
    "[rc][completer][reissue]") {
  ReadRequester r;
  r.read(1, 0, 2048);     // PSNs 10, 11
  r.read(2, 4096, 2048);  // PSNs 12, 13
  CHECK(r.pull(0).size() == 2);
  r.response(wire::Opcode::kReadRespFirst, 10, std::vector<std::uint8_t>(1024, 1), 1);
  // 11 lost; READ 2's responses arrive (the responder answered it after READ 1).
  r.response(wire::Opcode::kReadRespFirst, 12, std::vector<std::uint8_t>(1024, 3), 2);
  r.response(wire::Opcode::kReadRespLast, 13, std::vector<std::uint8_t>(1024, 4), 3);
  CHECK(r.completed().empty());  // READ 2 is complete, but READ 1 comes first
  auto o = r.pull(4);
  REQUIRE(o.size() == 1);  // READ 1 from its missing response, not READ 2 again
  CHECK(o[0].psn == 11);
  CHECK(o[0].opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRequest));
  CHECK(o[0].reth_len == 1024);
  CHECK(o[0].retransmission);
  CHECK(r.qp.counters().implied_nak_seq_err == 1);
  r.response(wire::Opcode::kReadRespOnly, 11, std::vector<std::uint8_t>(1024, 2), 5);
  CHECK(r.completed() == std::vector<std::uint64_t>{1, 2});
  CHECK(r.buf[1024] == 2);
  CHECK(r.buf[4096] == 3);
  CHECK(r.buf[4096 + 1024] == 4);
  CHECK(r.pull(6).empty());
}

TEST_CASE(
    "§9.7.6.1.3 the ACK timer goes back N even with a READ at the head: nothing came for a whole timeout, "
    "so everything from the oldest unacknowledged PSN is asked again",
    "[rc][completer][reissue][timer]") {
  ReadRequester r;
  r.read(1, 0, 3000);  // PSNs 10..12
  r.send(2, 10);       // PSN 13
  CHECK(r.pull(0).size() == 2);
  r.response(wire::Opcode::kReadRespFirst, 10, std::vector<std::uint8_t>(1024, 1), 1);
  r.qp.on_timer(1 + r.qp.attr().ack_timeout_ns());  // nothing more came
  auto o = r.pull(2 + r.qp.attr().ack_timeout_ns());
  REQUIRE(o.size() == 2);  // the READ from PSN 11, then the SEND again
  CHECK(o[0].psn == 11);
  CHECK(o[1].psn == 13);
  CHECK(r.qp.counters().local_ack_timeout_err == 1);
}

TEST_CASE(
    "§9.7.6.1.3 go-back-N over READs: each READ is asked again from its first missing response, and a READ "
    "with every response placed is not asked again (rxe drops a READ that starts before its last replay)",
    "[rc][completer][reissue][timer]") {
  ReadRequester r;
  r.read(1, 0, 3072);     // PSNs 10..12
  r.read(2, 4096, 3072);  // PSNs 13..15
  r.read(3, 7168, 1024);  // PSN 16
  CHECK(r.pull(0).size() == 3);
  r.response(wire::Opcode::kReadRespFirst, 10, std::vector<std::uint8_t>(1024, 1), 1);
  // 11 lost; 12 arrives: implied NAK, READ 1 asked again from 11 (rxe then replays from there).
  r.response(wire::Opcode::kReadRespLast, 12, std::vector<std::uint8_t>(1024, 3), 2);
  auto o = r.pull(3);
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 11);
  // READ 2 gets its first two responses, READ 3 its only one; then nothing for a whole timeout.
  r.response(wire::Opcode::kReadRespFirst, 13, std::vector<std::uint8_t>(1024, 4), 4);
  r.response(wire::Opcode::kReadRespMiddle, 14, std::vector<std::uint8_t>(1024, 5), 5);
  r.response(wire::Opcode::kReadRespOnly, 16, std::vector<std::uint8_t>(1024, 7), 6);
  const std::uint64_t t = 7 + r.qp.attr().ack_timeout_ns();
  r.qp.on_timer(t);
  o = r.pull(t);
  REQUIRE(o.size() == 2);  // READ 1 from 11 and READ 2 from 15; READ 3 is answered
  CHECK(o[0].psn == 11);
  CHECK(o[0].reth_va == 0x10000 + 1024);
  CHECK(o[0].reth_len == 2048);
  CHECK(o[1].psn == 15);
  CHECK(o[1].reth_va == 0x10000 + 2048);
  CHECK(o[1].reth_len == 1024);
  CHECK(r.qp.counters().local_ack_timeout_err == 1);
  // The answers, as rxe gives them (continuations), complete all three in order.
  r.response(wire::Opcode::kReadRespMiddle, 11, std::vector<std::uint8_t>(1024, 2), t + 1);
  r.response(wire::Opcode::kReadRespLast, 12, std::vector<std::uint8_t>(1024, 3), t + 2);
  r.response(wire::Opcode::kReadRespLast, 15, std::vector<std::uint8_t>(1024, 6), t + 3);
  CHECK(r.completed() == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(r.buf[1024] == 2);
  CHECK(r.buf[4096 + 2048] == 6);
  CHECK(r.buf[7168] == 7);
  CHECK(r.pull(t + 4).empty());
}
