// The active side: REQ -> (MRA) -> REP -> RTU, REJ, REQ timeouts and retries, and
// disconnection both ways with DREQ retries and TimeWait.
#include <catch2/catch.hpp>
#include <cstring>

#include "protocols/cm/rdma_cm_header.h"
#include "tests/cm/cm_test_util.h"

using namespace droce::cm;
using namespace droce::cm::test;

namespace {

constexpr std::uint32_t kCommA = 0x0A0A0A0A;
constexpr std::uint32_t kCommB = 0x0B0B0B0B;
constexpr std::uint32_t kQpA = 0x11;
constexpr std::uint32_t kQpB = 0x22;

struct Active {
  CmLocalConfig cfg = config(kQpA, 0x100);
  CmConnection c{CmRole::kActive, cfg, kCommA};
  std::uint8_t pd[kRdmaCmHeaderBytes] = {};

  CmOutput connect(std::uint64_t now = 1000) {
    RdmaCmHeader h;
    h.src_port = 40000;
    h.src_ip[0] = 10;
    h.src_ip[3] = 1;
    h.dst_ip[0] = 10;
    h.dst_ip[3] = 2;
    write_rdma_cm_header(h, pd);
    CmConnectParams p;
    p.service_id = rdma_cm_tcp_service_id(7174);
    p.path_mtu = 3;
    p.primary.hop_limit = 64;
    p.private_data = pd;
    p.private_len = sizeof(pd);
    return c.connect(p, now);
  }
};

CmMessage rep_for(const CmConnection& a, std::uint8_t resp_res = 2, std::uint8_t init_depth = 3) {
  CmRep rep;
  rep.local_comm_id = kCommB;
  rep.remote_comm_id = a.local_comm_id();
  rep.local_qpn = kQpB;
  rep.starting_psn = 0x777;
  rep.responder_resources = resp_res;
  rep.initiator_depth = init_depth;
  rep.rnr_retry_count = 5;
  return decode(encode(rep, 0x55));
}

template <class M>
CmMessage msg(const M& body, std::uint64_t tid = 0x99) {
  return decode(encode(body, tid));
}

// An active connection brought to kEstablished.
void establish(Active& a) {
  (void)a.connect();
  const CmOutput o = a.c.on_message(rep_for(a.c), 2000);
  REQUIRE(a.c.state() == CmState::kEstablished);
  REQUIRE(o.has_event(CmEventKind::kEstablished));
}

}  // namespace

TEST_CASE("cm active: connect sends a REQ with this side's QP and the rdma_cm header", "[cm][active]") {
  Active a;
  const CmOutput o = a.connect(1000);
  REQUIRE(o.mad_count == 1);
  CHECK(o.event_count == 0);
  CHECK(a.c.state() == CmState::kReqSent);
  CHECK(a.c.deadline() == 1000 + cm_wait_ns(10, 8));
  const CmMessage m = out_msg(o);
  const auto& req = std::get<CmReq>(m.body);
  CHECK(m.header.tid >> 32 == kCommA);
  CHECK(req.local_comm_id == kCommA);
  CHECK(req.service_id == 0x0000000001061C06ull);
  CHECK(req.local_qpn == kQpA);
  CHECK(req.starting_psn == 0x100);
  // No alternate path: all 44 bytes zero (MAD data 96..139). Linux takes a non-zero alternate
  // LID for an alternate path and rejects the REQ for its zero GID (REJ 18).
  for (std::uint32_t b = 96; b < 140; ++b) CHECK(o.mads[0][kMadHeaderBytes + b] == 0);
  CHECK(req.responder_resources == 16);
  CHECK(req.initiator_depth == 16);
  CHECK(req.transport_service_type == kTransportRc);
  CHECK(req.path_mtu == 3);
  CHECK(req.retry_count == 7);
  CHECK(req.rnr_retry_count == 7);
  CHECK(req.max_cm_retries == 3);
  CHECK(req.remote_cm_response_timeout == 10);
  CHECK(req.local_cm_response_timeout == 10);
  CHECK(req.primary.local_ack_timeout == 14);
  CHECK(req.primary.hop_limit == 64);
  CHECK(req.local_ca_guid == a.cfg.ca_guid);
  RdmaCmHeader h;
  REQUIRE(parse_rdma_cm_header(req.private_data, kReqPrivateBytes, h) == RdmaCmHeaderRefusal::kNone);
  CHECK(h.src_port == 40000);
  CHECK(h.dst_ip[3] == 2);
}

TEST_CASE("cm active: a REP establishes; the RTU goes out and the agreed QP parameters come out", "[cm][active]") {
  Active a;
  (void)a.connect();
  const CmOutput o = a.c.on_message(rep_for(a.c, 2, 3), 2000);
  CHECK(a.c.state() == CmState::kEstablished);
  CHECK(a.c.deadline() == 0);
  REQUIRE(o.event_count == 1);
  CHECK(o.events[0].kind == CmEventKind::kEstablished);
  const CmMessage rtu = out_msg(o);
  CHECK(std::get<CmRtu>(rtu.body).local_comm_id == kCommA);
  CHECK(std::get<CmRtu>(rtu.body).remote_comm_id == kCommB);
  CHECK(rtu.header.tid == a.c.req().local_comm_id * (std::uint64_t{1} << 32));  // the REQ's transaction
  const CmQpParams& q = a.c.qp_params();
  CHECK(q.local_qpn == kQpA);
  CHECK(q.remote_qpn == kQpB);
  // Each Starting PSN is its sender's receive PSN: ours went in the REQ, the peer's send PSN
  // came in the REP (as Linux's CM sets rq_psn and sq_psn).
  CHECK(q.send_psn == 0x777);
  CHECK(q.expected_psn == 0x100);
  CHECK(q.max_rd_atomic == 2);       // our 16, capped by the peer's responder resources
  CHECK(q.max_dest_rd_atomic == 3);  // our 16, capped by the peer's initiator depth
  CHECK(q.path_mtu == 3);
  CHECK(q.retry_count == 7);
  CHECK(q.rnr_retry == 5);  // what the REP asked of us
  CHECK(q.local_ack_timeout == 14);
  CHECK(a.c.remote_comm_id() == kCommB);
}

TEST_CASE("cm active: a repeated REP gets the RTU again; a stranger's REP nothing", "[cm][active]") {
  Active a;
  establish(a);
  CmOutput o = a.c.on_message(rep_for(a.c), 3000);
  CHECK(o.mad_count == 1);
  CHECK(o.event_count == 0);
  CHECK(std::holds_alternative<CmRtu>(out_msg(o).body));
  CmRep other;
  other.remote_comm_id = 0x12345678;
  o = a.c.on_message(msg(other), 3000);
  CHECK(o.mad_count == 0);
  CHECK(o.note != nullptr);
}

TEST_CASE("cm active: REQ resent at each timeout, then REJ(Timeout) and closed", "[cm][active]") {
  Active a;
  (void)a.connect(1000);
  const std::uint64_t wait = cm_wait_ns(10, 8);
  CmOutput o = a.c.on_timer(1000 + wait - 1);
  CHECK(o.mad_count == 0);
  CHECK(a.c.state() == CmState::kReqSent);
  std::uint64_t now = 1000 + wait;
  for (std::uint32_t i = 1; i <= 3; ++i) {
    o = a.c.on_timer(now);
    REQUIRE(o.mad_count == 1);
    CHECK(std::holds_alternative<CmReq>(out_msg(o).body));
    CHECK(a.c.retries() == i);
    CHECK(a.c.deadline() == now + wait);
    now += wait;
  }
  o = a.c.on_timer(now);
  CHECK(a.c.state() == CmState::kClosed);
  REQUIRE(o.event_count == 1);
  CHECK(o.events[0].kind == CmEventKind::kTimedOut);
  CHECK(o.events[0].timed_out);
  const auto rej = std::get<CmRej>(out_msg(o).body);
  CHECK(rej.reason == static_cast<std::uint16_t>(RejReason::kTimeout));
  CHECK(rej.local_comm_id == kCommA);
  CHECK(rej.ari_length == 8);
  CHECK(a.c.deadline() == 0);
}

TEST_CASE("cm active: an MRA stretches the wait without spending a retry", "[cm][active]") {
  Active a;
  (void)a.connect(1000);
  CmMra mra;
  mra.local_comm_id = kCommB;
  mra.remote_comm_id = kCommA;
  mra.message = MraTarget::kReq;
  mra.service_timeout = 16;
  CmOutput o = a.c.on_message(msg(mra), 5000);
  CHECK(o.mad_count == 0);
  CHECK(a.c.state() == CmState::kMraReqRcvd);
  CHECK(a.c.deadline() == 5000 + cm_wait_ns(16, 8));
  CHECK(a.c.retries() == 0);
  o = a.c.on_message(rep_for(a.c), 6000);
  CHECK(a.c.state() == CmState::kEstablished);
  SECTION("an MRA for a REP is not ours to take") {
    Active b;
    (void)b.connect(1000);
    mra.message = MraTarget::kRep;
    o = b.c.on_message(msg(mra), 5000);
    CHECK(b.c.state() == CmState::kReqSent);
    CHECK(o.note != nullptr);
  }
  SECTION("after the MRA's wait the REQ goes again") {
    Active b;
    (void)b.connect(1000);
    mra.message = MraTarget::kReq;
    (void)b.c.on_message(msg(mra), 5000);
    o = b.c.on_timer(b.c.deadline());
    REQUIRE(o.mad_count == 1);
    CHECK(b.c.state() == CmState::kReqSent);
    CHECK(b.c.retries() == 1);
  }
}

TEST_CASE("cm active: a REJ ends the attempt with the peer's reason", "[cm][active]") {
  Active a;
  (void)a.connect();
  CmRej rej;
  rej.local_comm_id = kCommB;
  rej.remote_comm_id = kCommA;
  rej.reason = static_cast<std::uint16_t>(RejReason::kInvalidServiceId);
  const CmOutput o = a.c.on_message(msg(rej), 2000);
  CHECK(a.c.state() == CmState::kClosed);
  REQUIRE(o.event_count == 1);
  CHECK(o.events[0].kind == CmEventKind::kRejected);
  CHECK(o.events[0].by_peer);
  CHECK(o.events[0].reject_reason == 8);
  CHECK(o.mad_count == 0);
  CHECK(a.c.deadline() == 0);
}

TEST_CASE("cm active: disconnect sends a DREQ; the DREP leads through TimeWait to closed", "[cm][active][dreq]") {
  Active a;
  establish(a);
  CmOutput o = a.c.disconnect(10'000);
  CHECK(a.c.state() == CmState::kDreqSent);
  const CmMessage dreq = out_msg(o);
  CHECK(std::get<CmDreq>(dreq.body).remote_qpn == kQpB);
  CHECK(std::get<CmDreq>(dreq.body).remote_comm_id == kCommB);
  CmDrep drep;
  drep.local_comm_id = kCommB;
  drep.remote_comm_id = kCommA;
  o = a.c.on_message(msg(drep, dreq.header.tid), 11'000);
  CHECK(a.c.state() == CmState::kTimeWait);
  REQUIRE(o.event_count == 1);
  CHECK(o.events[0].kind == CmEventKind::kDisconnected);
  CHECK_FALSE(o.events[0].timed_out);
  CHECK(a.c.deadline() > 11'000);
  o = a.c.on_timer(a.c.deadline());
  CHECK(a.c.state() == CmState::kClosed);
  CHECK(o.has_event(CmEventKind::kClosed));
  CHECK(a.c.disconnect(1).note != nullptr);
}

TEST_CASE("cm active: an unanswered DREQ is resent, then the side disconnects anyway", "[cm][active][dreq]") {
  Active a;
  establish(a);
  (void)a.c.disconnect(10'000);
  std::uint64_t now = a.c.deadline();
  for (int i = 0; i < 3; ++i) {
    const CmOutput o = a.c.on_timer(now);
    REQUIRE(o.mad_count == 1);
    CHECK(std::holds_alternative<CmDreq>(out_msg(o).body));
    now = a.c.deadline();
  }
  const CmOutput o = a.c.on_timer(now);
  CHECK(o.mad_count == 0);
  REQUIRE(o.event_count == 1);
  CHECK(o.events[0].kind == CmEventKind::kDisconnected);
  CHECK(o.events[0].timed_out);
  CHECK(a.c.state() == CmState::kTimeWait);
}

TEST_CASE("cm active: the peer's DREQ gets a DREP, again if repeated; crossing DREQs both end", "[cm][active][dreq]") {
  Active a;
  establish(a);
  CmDreq dreq;
  dreq.local_comm_id = kCommB;
  dreq.remote_comm_id = kCommA;
  dreq.remote_qpn = kQpA;
  SECTION("DREQ mid-transfer") {
    CmOutput o = a.c.on_message(msg(dreq, 0x4242), 20'000);
    CHECK(a.c.state() == CmState::kTimeWait);
    REQUIRE(o.event_count == 1);
    CHECK(o.events[0].kind == CmEventKind::kDisconnected);
    CHECK(o.events[0].by_peer);
    const CmMessage drep = out_msg(o);
    CHECK(drep.header.tid == 0x4242);
    CHECK(std::get<CmDrep>(drep.body).remote_comm_id == kCommB);
    o = a.c.on_message(msg(dreq, 0x4242), 21'000);
    CHECK(o.event_count == 0);
    CHECK(std::holds_alternative<CmDrep>(out_msg(o).body));
  }
  SECTION("a DREQ naming another QP is not ours") {
    dreq.remote_qpn = kQpA + 1;
    const CmOutput o = a.c.on_message(msg(dreq), 20'000);
    CHECK(o.mad_count == 0);
    CHECK(a.c.state() == CmState::kEstablished);
  }
  SECTION("both sides send a DREQ at once") {
    (void)a.c.disconnect(20'000);
    const CmOutput o = a.c.on_message(msg(dreq), 20'500);
    CHECK(std::holds_alternative<CmDrep>(out_msg(o).body));
    CHECK(a.c.state() == CmState::kTimeWait);
    CHECK(o.has_event(CmEventKind::kDisconnected));
  }
}

TEST_CASE("cm active: calls out of turn change nothing and say why", "[cm][active]") {
  Active a;
  std::uint8_t big[kReqPrivateBytes + 1] = {};
  CmConnectParams p;
  p.private_data = big;
  p.private_len = sizeof(big);
  CHECK(a.c.connect(p, 1).note != nullptr);
  p.private_len = 0;
  p.path_mtu = 6;
  CHECK(a.c.connect(p, 1).note != nullptr);
  CHECK(a.c.state() == CmState::kIdle);
  CHECK(a.c.accept(nullptr, 0, 1).note != nullptr);
  CHECK(a.c.on_timer(5).note != nullptr);
  (void)a.connect();
  CHECK(a.connect().note != nullptr);  // a second connect
  CmReq req;
  CHECK(a.c.on_message(msg(req), 2).note != nullptr);  // an active side takes no REQ
  CHECK(cm_state_name(CmState::kMraReqRcvd) == "mra_req_rcvd");
}

TEST_CASE("cm active: the DREQ is a transaction of its own", "[cm][active][dreq]") {
  Active a;
  establish(a);
  const CmMessage dreq = out_msg(a.c.disconnect(10'000));
  CHECK(dreq.header.tid == ((std::uint64_t{kCommA} << 32) | 1));
  CHECK(dreq.header.tid != out_msg(a.c.on_message(rep_for(a.c), 10'001)).header.tid);  // the RTU's
}
