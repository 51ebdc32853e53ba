// The passive side: the service table's REJ for unknown services, REQ -> (MRA) -> REP -> RTU,
// repeated REQs, a peer that never sends the RTU, REQs refused on their own rules, and a whole
// connection between an active and a passive side that only see each other's MADs.
#include <catch2/catch.hpp>
#include <cstring>

#include "protocols/cm/cm_listener.h"
#include "protocols/cm/rdma_cm_header.h"
#include "tests/cm/cm_test_util.h"

using namespace droce::cm;
using namespace droce::cm::test;

namespace {

constexpr std::uint32_t kCommA = 0xA0000001;
constexpr std::uint32_t kCommB = 0xB0000002;
constexpr std::uint32_t kQpA = 0x101;
constexpr std::uint32_t kQpB = 0x202;
constexpr std::uint64_t kService = rdma_cm_tcp_service_id(7174);

CmReq sample_req() {
  CmReq r;
  r.local_comm_id = kCommA;
  r.service_id = kService;
  r.local_ca_guid = 0xAAAA;
  r.local_qpn = kQpA;
  r.starting_psn = 0x1234;
  r.responder_resources = 4;
  r.initiator_depth = 8;
  r.remote_cm_response_timeout = 12;
  r.local_cm_response_timeout = 11;
  r.retry_count = 6;
  r.rnr_retry_count = 3;
  r.path_mtu = 4;
  r.max_cm_retries = 2;
  r.primary.local_ack_timeout = 15;
  return r;
}

template <class M>
CmMessage msg(const M& body, std::uint64_t tid = 0x7777) {
  return decode(encode(body, tid));
}

struct Passive {
  CmLocalConfig cfg = config(kQpB, 0x999);
  CmConnection c{CmRole::kPassive, cfg, kCommB};

  CmOutput take(const CmReq& r = sample_req(), std::uint64_t now = 1000) { return c.on_message(msg(r), now); }
};

CmRtu rtu() {
  CmRtu r;
  r.local_comm_id = kCommA;
  r.remote_comm_id = kCommB;
  return r;
}

}  // namespace

TEST_CASE("cm listener: a REQ for a service nobody listens for gets REJ(Invalid Service ID)", "[cm][passive]") {
  CmListener l;
  REQUIRE(l.listen(kService));
  CHECK(l.listen(kService));
  std::uint8_t rej[kMadBytes];
  CHECK(l.take(msg(sample_req()), kCommB, rej));
  CmReq other = sample_req();
  other.service_id = rdma_cm_tcp_service_id(1);
  CHECK_FALSE(l.take(msg(other, 0xABCDEF), kCommB, rej));
  const CmMessage m = decode(rej);
  CHECK(m.header.tid == 0xABCDEF);
  const auto& r = std::get<CmRej>(m.body);
  CHECK(r.reason == static_cast<std::uint16_t>(RejReason::kInvalidServiceId));
  CHECK(r.remote_comm_id == kCommA);
  CHECK(r.local_comm_id == kCommB);
  CHECK(r.message == RejTarget::kReq);
  l.unlisten(kService);
  CHECK_FALSE(l.listening(kService));
  for (std::uint32_t i = 0; i < CmListener::kMaxServices; ++i) CHECK(l.listen(i));
  CHECK_FALSE(l.listen(1000));
}

TEST_CASE("cm passive: REQ -> accept -> REP -> RTU establishes with the agreed parameters", "[cm][passive]") {
  Passive p;
  CmOutput o = p.take();
  CHECK(p.c.state() == CmState::kReqRcvd);
  REQUIRE(o.event_count == 1);
  CHECK(o.events[0].kind == CmEventKind::kReqReceived);
  CHECK(o.mad_count == 0);
  CHECK(p.c.req().service_id == kService);

  const std::uint8_t reply[3] = {1, 2, 3};
  o = p.c.accept(reply, 3, 2000);
  CHECK(p.c.state() == CmState::kRepSent);
  CHECK(p.c.deadline() == 2000 + cm_wait_ns(11, 8));  // the REQ's local CM response timeout
  const CmMessage m = out_msg(o);
  CHECK(m.header.tid == 0x7777);  // the REQ's transaction
  const auto& rep = std::get<CmRep>(m.body);
  CHECK(rep.local_comm_id == kCommB);
  CHECK(rep.remote_comm_id == kCommA);
  CHECK(rep.local_qpn == kQpB);
  CHECK(rep.starting_psn == 0x999);
  CHECK(rep.responder_resources == 8);  // min(ours 16, their initiator depth 8)
  CHECK(rep.initiator_depth == 4);      // min(ours 16, their responder resources 4)
  CHECK(rep.rnr_retry_count == 7);
  CHECK(rep.local_ca_guid == p.cfg.ca_guid);
  CHECK(rep.private_data[2] == 3);

  const CmQpParams& q = p.c.qp_params();
  CHECK(q.local_qpn == kQpB);
  CHECK(q.remote_qpn == kQpA);
  // The REQ's Starting PSN is where we send from; the REP's (ours) where the client sends from.
  CHECK(q.send_psn == 0x1234);
  CHECK(q.expected_psn == 0x999);
  CHECK(q.max_dest_rd_atomic == 8);
  CHECK(q.max_rd_atomic == 4);
  CHECK(q.path_mtu == 4);
  CHECK(q.retry_count == 6);
  CHECK(q.rnr_retry == 3);
  CHECK(q.local_ack_timeout == 15);

  o = p.c.on_message(msg(rtu()), 3000);
  CHECK(p.c.state() == CmState::kEstablished);
  CHECK(o.has_event(CmEventKind::kEstablished));
  CHECK(p.c.deadline() == 0);
  o = p.c.on_message(msg(rtu()), 3001);  // a late duplicate
  CHECK(o.event_count == 0);
}

TEST_CASE("cm passive: a repeated REQ gets the same REP again", "[cm][passive]") {
  Passive p;
  (void)p.take();
  CmOutput o = p.take(sample_req(), 1500);
  CHECK(o.mad_count == 0);  // no answer decided yet
  const CmOutput rep = p.c.accept(nullptr, 0, 2000);
  o = p.take(sample_req(), 2500);
  REQUIRE(o.mad_count == 1);
  CHECK(std::memcmp(o.mads[0], rep.mads[0], kMadBytes) == 0);
  CHECK(p.c.state() == CmState::kRepSent);
  CmReq stranger = sample_req();
  stranger.local_comm_id = 5;
  o = p.take(stranger, 2600);
  CHECK(o.mad_count == 0);
  CHECK(o.note != nullptr);
}

TEST_CASE("cm passive: a peer that never sends the RTU: REP resent, then REJ(Timeout)", "[cm][passive]") {
  Passive p;
  (void)p.take();
  (void)p.c.accept(nullptr, 0, 2000);
  std::uint64_t now = p.c.deadline();
  for (int i = 0; i < 2; ++i) {  // the REQ allowed 2 CM retries
    const CmOutput o = p.c.on_timer(now);
    REQUIRE(o.mad_count == 1);
    CHECK(std::holds_alternative<CmRep>(out_msg(o).body));
    now = p.c.deadline();
  }
  const CmOutput o = p.c.on_timer(now);
  CHECK(p.c.state() == CmState::kClosed);
  CHECK(o.has_event(CmEventKind::kTimedOut));
  const auto rej = std::get<CmRej>(out_msg(o).body);
  CHECK(rej.reason == static_cast<std::uint16_t>(RejReason::kTimeout));
  CHECK(rej.remote_comm_id == kCommA);
}

TEST_CASE("cm passive: traffic on the QP stands for a lost RTU", "[cm][passive]") {
  Passive p;
  (void)p.take();
  (void)p.c.accept(nullptr, 0, 2000);
  const CmOutput o = p.c.on_qp_traffic(2100);
  CHECK(p.c.state() == CmState::kEstablished);
  CHECK(o.has_event(CmEventKind::kEstablished));
  CHECK(p.c.on_qp_traffic(2200).note != nullptr);
}

TEST_CASE("cm passive: REQs that break their own rules are rejected before the consumer sees them", "[cm][passive]") {
  Passive p;
  CmReq r = sample_req();
  SECTION("not RC") {
    r.transport_service_type = kTransportUc;
    const CmOutput o = p.take(r);
    CHECK(std::get<CmRej>(out_msg(o).body).reason == static_cast<std::uint16_t>(RejReason::kInvalidTransportType));
    CHECK(o.has_event(CmEventKind::kRejected));
    CHECK(p.c.state() == CmState::kClosed);
  }
  SECTION("an MTU code we cannot use") {
    r.path_mtu = 6;
    const CmOutput o = p.take(r);
    CHECK(std::get<CmRej>(out_msg(o).body).reason == static_cast<std::uint16_t>(RejReason::kInvalidMtu));
    CHECK(p.c.state() == CmState::kClosed);
  }
  SECTION("an MTU above our largest") {
    p.cfg.max_path_mtu = 3;
    CmConnection c(CmRole::kPassive, p.cfg, kCommB);
    const CmOutput o = c.on_message(msg(r), 1);
    CHECK(std::get<CmRej>(out_msg(o).body).reason == static_cast<std::uint16_t>(RejReason::kInvalidMtu));
    CHECK(c.state() == CmState::kClosed);
  }
}

TEST_CASE("cm passive: the consumer rejects; or asks for time with an MRA first", "[cm][passive]") {
  Passive p;
  (void)p.take();
  SECTION("reject") {
    const CmOutput o = p.c.reject(RejReason::kConsumerReject, 2000);
    const CmMessage m = out_msg(o);
    CHECK(m.header.tid == 0x7777);
    CHECK(std::get<CmRej>(m.body).reason == 28);
    CHECK(std::get<CmRej>(m.body).message == RejTarget::kReq);
    CHECK(p.c.state() == CmState::kClosed);
    CHECK(o.events[0].kind == CmEventKind::kRejected);
    CHECK_FALSE(o.events[0].by_peer);
  }
  SECTION("MRA, a repeated REQ gets the MRA again, then accept") {
    CmOutput o = p.c.send_mra(18, 1500);
    const auto mra = std::get<CmMra>(out_msg(o).body);
    CHECK(mra.service_timeout == 18);
    CHECK(mra.message == MraTarget::kReq);
    CHECK(mra.remote_comm_id == kCommA);
    CHECK(p.c.state() == CmState::kMraReqSent);
    o = p.take(sample_req(), 1600);
    CHECK(std::holds_alternative<CmMra>(out_msg(o).body));
    o = p.c.accept(nullptr, 0, 1700);
    CHECK(std::holds_alternative<CmRep>(out_msg(o).body));
    CHECK(p.c.state() == CmState::kRepSent);
  }
  SECTION("the active side gives up with a REJ") {
    CmRej rej;
    rej.local_comm_id = kCommA;
    rej.remote_comm_id = kCommB;
    rej.reason = 4;
    const CmOutput o = p.c.on_message(msg(rej), 1500);
    CHECK(p.c.state() == CmState::kClosed);
    CHECK(o.has_event(CmEventKind::kRejected));
  }
}

TEST_CASE("cm passive: an MRA for our REP stretches the RTU wait", "[cm][passive]") {
  Passive p;
  (void)p.take();
  (void)p.c.accept(nullptr, 0, 2000);
  CmMra mra;
  mra.local_comm_id = kCommA;
  mra.remote_comm_id = kCommB;
  mra.message = MraTarget::kRep;
  mra.service_timeout = 20;
  (void)p.c.on_message(msg(mra), 2500);
  CHECK(p.c.state() == CmState::kMraRepRcvd);
  CHECK(p.c.deadline() == 2500 + cm_wait_ns(20, 8));
  CHECK(p.c.on_message(msg(rtu()), 3000).has_event(CmEventKind::kEstablished));
}

TEST_CASE("cm: an active and a passive side connect and disconnect through MADs alone", "[cm][pair]") {
  CmListener listener;
  REQUIRE(listener.listen(kService));
  CmConnection a(CmRole::kActive, config(kQpA, 0x10), kCommA);
  CmConnection b(CmRole::kPassive, config(kQpB, 0x20), kCommB);
  CmConnectParams cp;
  cp.service_id = kService;
  cp.path_mtu = 3;
  std::uint64_t now = 100;

  CmOutput o = a.connect(cp, now);
  CmMessage req = out_msg(o);
  std::uint8_t rej[kMadBytes];
  REQUIRE(listener.take(req, kCommB, rej));
  o = b.on_message(req, ++now);
  REQUIRE(o.has_event(CmEventKind::kReqReceived));
  o = b.accept(nullptr, 0, ++now);
  o = a.on_message(out_msg(o), ++now);
  REQUIRE(o.has_event(CmEventKind::kEstablished));
  o = b.on_message(out_msg(o), ++now);
  REQUIRE(o.has_event(CmEventKind::kEstablished));
  CHECK(a.qp_params().remote_qpn == kQpB);
  CHECK(b.qp_params().remote_qpn == kQpA);
  CHECK(a.qp_params().expected_psn == b.qp_params().send_psn);
  CHECK(b.qp_params().expected_psn == a.qp_params().send_psn);
  CHECK(a.qp_params().max_rd_atomic <= b.qp_params().max_dest_rd_atomic);
  CHECK(b.qp_params().max_rd_atomic <= a.qp_params().max_dest_rd_atomic);
  CHECK(a.qp_params().path_mtu == b.qp_params().path_mtu);

  // The passive side disconnects mid-transfer.
  o = b.disconnect(++now);
  o = a.on_message(out_msg(o), ++now);
  REQUIRE(o.has_event(CmEventKind::kDisconnected));
  o = b.on_message(out_msg(o), ++now);
  REQUIRE(o.has_event(CmEventKind::kDisconnected));
  CHECK(a.state() == CmState::kTimeWait);
  CHECK(b.state() == CmState::kTimeWait);
  CHECK(a.on_timer(a.deadline()).has_event(CmEventKind::kClosed));
  CHECK(b.on_timer(b.deadline()).has_event(CmEventKind::kClosed));
}

TEST_CASE("cm passive: a REQ its consumer never answers is freed by the CM's own timer (REJ Timeout)",
          "[cm][passive][hardening]") {
  Passive p;
  (void)p.take(sample_req(), 1000);
  // The active side tries 1 + 2 times, each waiting its remote CM response timeout (12) plus the
  // packet lifetime both ways: past that it has given up.
  const std::uint64_t wait = 3 * cm_wait_ns(12, 8);
  CHECK(cm_consumer_wait_ns(12, 2, 8) == wait);
  REQUIRE(p.c.deadline() == 1000 + wait);
  CHECK(p.c.on_timer(1000 + wait - 1).event_count == 0);
  CHECK(p.c.state() == CmState::kReqRcvd);
  const CmOutput o = p.c.on_timer(1000 + wait);
  CHECK(p.c.state() == CmState::kClosed);
  CHECK(o.has_event(CmEventKind::kTimedOut));
  const CmMessage m = out_msg(o);
  const auto& rej = std::get<CmRej>(m.body);
  CHECK(rej.reason == static_cast<std::uint16_t>(RejReason::kTimeout));
  CHECK(rej.remote_comm_id == kCommA);
  CHECK(p.c.deadline() == 0);
}

TEST_CASE("cm passive: after our MRA the REQ waits service_timeout per try, then the slot is freed",
          "[cm][passive][hardening]") {
  Passive p;
  (void)p.take(sample_req(), 1000);
  (void)p.c.send_mra(14, 2000);
  CHECK(p.c.state() == CmState::kMraReqSent);
  REQUIRE(p.c.deadline() == 2000 + 3 * cm_wait_ns(14, 8));
  CHECK(p.c.on_timer(p.c.deadline()).has_event(CmEventKind::kTimedOut));
  CHECK(p.c.state() == CmState::kClosed);
}

TEST_CASE("cm passive: a forged REQ's 2.4-hour timeouts are capped at rdma_cm's 4.3 s", "[cm][passive][hardening]") {
  Passive p;
  CmReq r = sample_req();
  r.local_cm_response_timeout = 31;
  r.remote_cm_response_timeout = 31;
  r.max_cm_retries = 15;
  (void)p.take(r, 1000);
  CHECK(p.c.deadline() == 1000 + 16 * cm_wait_ns(kMaxPeerCmResponseTimeout, 8));
  (void)p.c.accept(nullptr, 0, 2000);
  CHECK(p.c.deadline() == 2000 + cm_wait_ns(kMaxPeerCmResponseTimeout, 8));  // the REP's resend
}

TEST_CASE("cm passive: abandon() drops a half-open connection with REJ Timeout; an established one stays",
          "[cm][passive][hardening]") {
  Passive p;
  (void)p.take();
  CHECK(p.c.half_open());
  (void)p.c.accept(nullptr, 0, 2000);
  CHECK(p.c.half_open());
  Passive q;
  (void)q.take();
  (void)q.c.accept(nullptr, 0, 2000);
  (void)q.c.on_message(msg(rtu()), 3000);
  REQUIRE(q.c.state() == CmState::kEstablished);
  CHECK_FALSE(q.c.half_open());
  CmOutput o = q.c.abandon(4000);
  CHECK(o.mad_count == 0);
  CHECK(q.c.state() == CmState::kEstablished);

  o = p.c.abandon(4000);
  CHECK(p.c.state() == CmState::kClosed);
  CHECK(o.has_event(CmEventKind::kTimedOut));
  CHECK(std::get<CmRej>(out_msg(o).body).reason == static_cast<std::uint16_t>(RejReason::kTimeout));
  CmConnection active(CmRole::kActive, config(kQpA, 1), kCommA);
  CHECK_FALSE(active.half_open());
}
