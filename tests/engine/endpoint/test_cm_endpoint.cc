// RDMA-CM over QP1 between two endpoints (engine/endpoint/endpoint_cm.h): REQ/REP/RTU connect
// QPs with the agreed parameters and data flows; DREQ/DREP end it mid-transfer with flushed work;
// a REQ for an unlistened port, a consumer's REJ, a peer that never answers and one that never
// sends the RTU each end in a clear event; malformed QP1 frames are counted, never acted on.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "protocols/cm/cm_messages.h"
#include "protocols/cm/rdma_cm_header.h"
#include "protocols/wire/ud.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;

namespace {

constexpr std::uint64_t kStepNs = 100'000;  // each lab poll moves the endpoints' clock 100 us
constexpr std::uint16_t kPort = 7174;

LabOptions on_test_clock() {
  LabOptions o;
  o.clock_step_ns = kStepNs;
  return o;
}

rc::QpAttr qp_attr(std::uint32_t sq_psn, std::uint32_t rd, std::uint32_t dest_rd) {
  rc::QpAttr a;
  a.sq_psn = sq_psn;
  a.max_rd_atomic = rd;
  a.max_dest_rd_atomic = dest_rd;
  a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
  return a;
}

// Polls until `ep` has an event (bounded); the event, or kind kClosed with conn 0 on none.
CmEndpointEvent wait_event(Lab& lab, RcEndpoint& ep, int max_polls = 200000) {
  CmEndpointEvent e;
  for (int i = 0; i < max_polls; ++i) {
    if (ep.cm_next_event(e)) return e;
    lab.poll();
  }
  e.conn = 0;
  return e;
}

// A UD frame to A's QP1 as if from host 9 of the lab subnet (the relay's end of A's link).
void inject_to_a(Lab& lab, const std::uint8_t* mad, std::uint32_t qkey = wire::kGsiQkey, bool corrupt_icrc = false,
                 std::uint8_t from_host = 9) {
  wire::TemplateConfig tc;
  tc.local = addr(from_host);
  tc.remote = addr(1);
  tc.dest_qpn = wire::kGsiQpn;
  const wire::HeaderTemplate t = wire::HeaderTemplate::make(tc);
  wire::UdSendFields f;
  f.qkey = qkey;
  std::uint8_t frame[512];
  const std::uint32_t n = wire::build_ud_send(t, f, mad, cm::kMadBytes, frame, sizeof(frame));
  REQUIRE(n > 0);
  if (corrupt_icrc) frame[n - 1] ^= 0xFF;
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(n)), frame, n);
  REQUIRE(rte_eth_tx_burst(lab.left.b->id(), 0, &m, 1) == 1);
}

// What A sent on its link since the last call (its frames never reach B: nobody relays them):
// the CM messages among them, decoded.
std::vector<cm::CmMessage> a_sent_cm(Lab& lab) {
  std::vector<cm::CmMessage> out;
  rte_mbuf* got[32];
  for (;;) {
    const std::uint16_t n = rte_eth_rx_burst(lab.left.b->id(), 0, got, 32);
    if (n == 0) break;
    for (std::uint16_t i = 0; i < n; ++i) {
      wire::UdPacket p;
      wire::DropReason fr{};
      cm::CmMessage m;
      if (wire::parse_ud_frame(rte_pktmbuf_mtod(got[i], const std::uint8_t*), got[i]->data_len, p, fr) ==
              wire::UdRefusal::kNone &&
          cm::decode_cm(rte_pktmbuf_mtod(got[i], const std::uint8_t*) + p.payload_offset, p.payload_len, m) ==
              cm::MadRefusal::kNone)
        out.push_back(m);
      rte_pktmbuf_free(got[i]);
    }
  }
  return out;
}

// How many of `sent` are messages of kind T (CmReq, CmRep, ...).
template <typename T>
std::size_t count_of(const std::vector<cm::CmMessage>& sent) {
  return static_cast<std::size_t>(std::count_if(
      sent.begin(), sent.end(), [](const cm::CmMessage& m) { return std::holds_alternative<T>(m.body); }));
}

// A alone on the test clock: `ns` of polls, nothing relayed.
void run_a_alone(Lab& lab, std::uint64_t ns) {
  for (std::uint64_t t = 0; t < ns; t += kStepNs) {
    lab.advance_ns(kStepNs);
    lab.a->poll(lab.now_tsc());
  }
}

// A REQ from host `from_host`'s (9's) QP 0x99 for `port`, as librdmacm writes it.
void make_req(std::uint8_t* mad, std::uint16_t port, std::uint32_t comm_id = 0x1234, std::uint8_t from_host = 9) {
  cm::CmReq req;
  req.local_comm_id = comm_id;
  req.service_id = cm::rdma_cm_tcp_service_id(port);
  req.local_ca_guid = 0x0200000000000000ull | from_host;
  req.local_qpn = 0x99;
  req.responder_resources = 4;
  req.initiator_depth = 4;
  req.starting_psn = 0x777;
  req.retry_count = 7;
  req.rnr_retry_count = 7;
  req.path_mtu = 3;
  req.max_cm_retries = 2;
  req.local_cm_response_timeout = 18;
  req.remote_cm_response_timeout = 18;
  req.primary.local_ack_timeout = 14;
  cm::RdmaCmHeader h;
  h.src_port = 40000;
  std::memcpy(h.src_ip, addr(from_host).ip, 4);
  std::memcpy(h.dst_ip, addr(1).ip, 4);
  REQUIRE(cm::write_rdma_cm_req_private(h, nullptr, 0, req.private_data) > 0);
  cm::encode_cm(req, std::uint64_t{comm_id} << 32, mad);
}

}  // namespace

TEST_CASE(
    "cm: REQ/REP/RTU connect QPs with the agreed parameters; data flows; DREQ mid-transfer flushes; TimeWait closes",
    "[engine][cm]") {
  Lab lab("cmok", on_test_clock());
  REQUIRE(lab.b->cm_listen(kPort).ok());
  std::uint32_t qa = 0, qb = 0, ca = 0;
  REQUIRE(lab.a->create_qp(qp_attr(0x123, 4, 8), qa).ok());
  const std::uint8_t hello[] = "hello";
  CmConnectTo to;
  to.peer = addr(2);
  to.port = kPort;
  to.private_data = hello;
  to.private_len = sizeof(hello);
  REQUIRE(lab.a->cm_connect(qa, to, ca).ok());
  CHECK(lab.a->cm_state(ca) == cm::CmState::kReqSent);

  const CmEndpointEvent req = wait_event(lab, *lab.b);
  REQUIRE(req.conn != 0);
  REQUIRE(req.kind == CmEndpointEventKind::kConnectRequest);
  CHECK(req.port == kPort);
  CHECK(req.peer_port >= 32768);
  CHECK(std::memcmp(req.peer.ip, addr(1).ip, 4) == 0);
  CHECK(std::memcmp(req.peer.mac, addr(1).mac, 6) == 0);
  CHECK(req.params.remote_qpn == qa);
  CHECK(req.params.send_psn == 0x123);
  CHECK(req.params.path_mtu == 3);  // the QP's 1024
  CHECK(std::memcmp(req.private_data, hello, sizeof(hello)) == 0);

  REQUIRE(lab.b->create_qp(qp_attr(0x456, 2, 16), qb).ok());
  const std::uint8_t answer[] = "welcome";
  REQUIRE(lab.b->cm_accept(req.conn, qb, answer, sizeof(answer)).ok());
  // rdma_accept's order: B's QP is ready before its REP leaves.
  CHECK(lab.b->qp(qb)->state() == rc::QpState::kRts);
  const CmEndpointEvent ea = wait_event(lab, *lab.a);
  REQUIRE(ea.kind == CmEndpointEventKind::kEstablished);
  CHECK(ea.conn == ca);
  CHECK(ea.qpn == qa);
  CHECK(ea.private_len == cm::kRepPrivateBytes);
  CHECK(std::memcmp(ea.private_data, answer, sizeof(answer)) == 0);
  const CmEndpointEvent eb = wait_event(lab, *lab.b);
  REQUIRE(eb.kind == CmEndpointEventKind::kEstablished);
  CHECK(eb.conn == req.conn);

  // The agreed parameters (docs/cm.md): READ credits capped by the other side's. Each side's
  // Starting PSN (its QP's sq_psn, 0x123 and 0x456) is the one it expects: the peer sends from it.
  const rc::QpAttr& aa = lab.a->qp(qa)->attr();
  const rc::QpAttr& ab = lab.b->qp(qb)->attr();
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kRts);
  CHECK(aa.dest_qpn == qb);
  CHECK(ab.dest_qpn == qa);
  CHECK(aa.rq_psn == 0x123);
  CHECK(ab.sq_psn == 0x123);
  CHECK(ab.rq_psn == 0x456);
  CHECK(aa.sq_psn == 0x456);
  CHECK(aa.max_rd_atomic == 4);       // min(A's depth 4, B's resources 16)
  CHECK(aa.max_dest_rd_atomic == 2);  // min(A's resources 8, B's depth 2)
  CHECK(ab.max_rd_atomic == 2);
  CHECK(ab.max_dest_rd_atomic == 4);
  CHECK(aa.pmtu == 1024);
  CHECK(ab.pmtu == 1024);

  // SENDs A -> B over the connection, every byte checked; then B disconnects with work still
  // posted on A.
  constexpr std::uint32_t kMsg = 3000, kMsgs = 64;
  std::vector<std::uint8_t> src(kMsg * kMsgs), dst(kMsg * kMsgs, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 1);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  for (std::uint32_t i = 0; i < kMsgs; ++i) {
    REQUIRE(
        lab.b->post_recv(qb, rc::RecvWr{i, {reinterpret_cast<std::uint64_t>(dst.data() + i * kMsg), kMsg, dmr.lkey}})
            .ok());
    rc::SendWr w;
    w.wr_id = i;
    w.sge = {reinterpret_cast<std::uint64_t>(src.data() + i * kMsg), kMsg, smr.lkey};
    REQUIRE(lab.a->post_send(qa, w).ok());
  }
  std::uint32_t received = 0;
  rc::Completion c[32];
  for (int i = 0; i < 20000 && received < kMsgs / 2; ++i) {
    lab.poll();
    const unsigned n = lab.b->poll_cq(qb, c, 32);
    for (unsigned k = 0; k < n; ++k) {
      REQUIRE(c[k].status == rc::WcStatus::kSuccess);
      CHECK(std::memcmp(dst.data() + c[k].wr_id * kMsg, src.data() + c[k].wr_id * kMsg, kMsg) == 0);
      ++received;
    }
  }
  REQUIRE(received >= kMsgs / 2);
  REQUIRE(lab.b->cm_disconnect(req.conn).ok());
  CHECK(lab.b->qp(qb)->state() == rc::QpState::kError);
  const CmEndpointEvent da = wait_event(lab, *lab.a);
  REQUIRE(da.kind == CmEndpointEventKind::kDisconnected);
  CHECK(da.by_peer);
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kError);
  const CmEndpointEvent db = wait_event(lab, *lab.b);
  REQUIRE(db.kind == CmEndpointEventKind::kDisconnected);
  CHECK_FALSE(db.by_peer);
  // Every SEND A posted completes: delivered ones succeeded (or flushed when their ACK was
  // lost to the disconnect), the rest flushed; none twice, none missing.
  std::uint32_t done = 0, ok = 0;
  for (int i = 0; i < 1000 && done < kMsgs; ++i) {
    lab.poll();
    const unsigned n = lab.a->poll_cq(qa, c, 32);
    for (unsigned k = 0; k < n; ++k) {
      ++done;
      ok += c[k].status == rc::WcStatus::kSuccess;
    }
  }
  CHECK(done == kMsgs);
  CHECK(ok <= received + 32);
  // TimeWait, then both slots are free again.
  const CmEndpointEvent xa = wait_event(lab, *lab.a);
  CHECK(xa.kind == CmEndpointEventKind::kClosed);
  const CmEndpointEvent xb = wait_event(lab, *lab.b);
  CHECK(xb.kind == CmEndpointEventKind::kClosed);
  CHECK(lab.a->cm_state(ca) == cm::CmState::kClosed);
  const CmCounters& cma = lab.a->cm_counters();
  const CmCounters& cmb = lab.b->cm_counters();
  CHECK(cma.mads_sent == 3);  // REQ, RTU, DREP
  CHECK(cmb.mads_sent == 2);  // REP, DREQ
  CHECK(cma.mads_received == 2);
  CHECK(cmb.mads_received == 3);
  CHECK(cma.unknown_connection + cmb.unknown_connection + cma.wrong_peer + cmb.wrong_peer == 0);
  // QP1's frames are no RoCE drops.
  CHECK(lab.a->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kUnknownOpcode)] == 0);
  CHECK(lab.b->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kUnknownOpcode)] == 0);
}

TEST_CASE("cm: recovery_at_rep sets the active QP's recovery from the REP before it leaves INIT", "[engine][cm]") {
  // The passive side answers 'S' (it set its QP to selective repeat) or anything else (go-back-N):
  // the active QP, created go-back-N, follows the REP, as droce-rping's offer and acceptance do.
  for (const bool sr : {true, false}) {
    Lab lab(sr ? "cmsr" : "cmgbn", on_test_clock());
    REQUIRE(lab.b->cm_listen(kPort).ok());
    std::uint32_t qa = 0, qb = 0, ca = 0;
    REQUIRE(lab.a->create_qp(qp_attr(0x123, 4, 4), qa).ok());
    CmConnectTo to;
    to.peer = addr(2);
    to.port = kPort;
    to.recovery_at_rep = [](const std::uint8_t* rep, std::uint32_t len) {
      return len > 0 && rep[0] == 'S' ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN;
    };
    REQUIRE(lab.a->cm_connect(qa, to, ca).ok());
    const CmEndpointEvent req = wait_event(lab, *lab.b);
    REQUIRE(req.kind == CmEndpointEventKind::kConnectRequest);
    REQUIRE(lab.b->create_qp(qp_attr(0x456, 4, 4), qb).ok());
    if (sr) REQUIRE(lab.b->set_recovery(qb, rc::Recovery::kSelectiveRepeat).ok());
    const std::uint8_t answer[] = {static_cast<std::uint8_t>(sr ? 'S' : 0)};
    REQUIRE(lab.b->cm_accept(req.conn, qb, answer, sizeof(answer)).ok());
    const CmEndpointEvent ea = wait_event(lab, *lab.a);
    REQUIRE(ea.kind == CmEndpointEventKind::kEstablished);
    CHECK(lab.a->qp(qa)->state() == rc::QpState::kRts);
    CHECK(lab.a->qp(qa)->attr().recovery == (sr ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN));
  }
}

TEST_CASE("cm: a REQ for a port nobody listens on, and one the consumer refuses, end in REJ", "[engine][cm]") {
  Lab lab("cmrej", on_test_clock());
  REQUIRE(lab.b->cm_listen(kPort).ok());
  std::uint32_t qa = 0, ca = 0;
  REQUIRE(lab.a->create_qp(qp_attr(1, 4, 4), qa).ok());
  CmConnectTo to;
  to.peer = addr(2);
  to.port = kPort + 1;
  REQUIRE(lab.a->cm_connect(qa, to, ca).ok());
  CmEndpointEvent e = wait_event(lab, *lab.a);
  REQUIRE(e.kind == CmEndpointEventKind::kRejected);
  CHECK(e.by_peer);
  CHECK(e.reject_reason == static_cast<std::uint16_t>(cm::RejReason::kInvalidServiceId));
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kInit);  // never connected: reusable
  CHECK(lab.b->cm_counters().rejects_sent == 1);
  e = wait_event(lab, *lab.a);
  CHECK(e.kind == CmEndpointEventKind::kClosed);

  // The same QP again, to the listened port: the consumer says no.
  to.port = kPort;
  REQUIRE(lab.a->cm_connect(qa, to, ca).ok());
  const CmEndpointEvent req = wait_event(lab, *lab.b);
  REQUIRE(req.kind == CmEndpointEventKind::kConnectRequest);
  REQUIRE(lab.b->cm_reject(req.conn).ok());
  e = wait_event(lab, *lab.a);
  REQUIRE(e.kind == CmEndpointEventKind::kRejected);
  CHECK(e.reject_reason == static_cast<std::uint16_t>(cm::RejReason::kConsumerReject));
  // Bad calls say why.
  CHECK(lab.b->cm_accept(req.conn, 1).code() == StatusCode::kNotFound);
  CHECK(lab.a->cm_disconnect(0x5555).code() == StatusCode::kNotFound);
  CHECK(lab.a->cm_listen(0).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("cm: a peer that never answers: the REQ is resent, then the connection times out", "[engine][cm]") {
  Lab lab("cmsilent", on_test_clock());
  std::uint32_t qa = 0, ca = 0;
  REQUIRE(lab.a->create_qp(qp_attr(1, 4, 4), qa).ok());
  CmConnectTo to;
  to.peer = addr(7);  // nobody
  to.port = kPort;
  REQUIRE(lab.a->cm_connect(qa, to, ca).ok());
  // 15 retries (rdma_cm's default) of a wait of about 2 x 4.3 s: bounded by 300 s of test clock.
  CmEndpointEvent e;
  bool got = false;
  for (int i = 0; i < 3000 && !got; ++i) {
    run_a_alone(lab, 100'000'000);
    got = lab.a->cm_next_event(e);
  }
  REQUIRE(got);
  CHECK(e.kind == CmEndpointEventKind::kTimedOut);
  const std::vector<cm::CmMessage> sent = a_sent_cm(lab);
  CHECK(count_of<cm::CmReq>(sent) == 1 + 15);
  CHECK(count_of<cm::CmRej>(sent) == 1);  // REJ(Timeout) as §12.9.6 asks
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kInit);
  CHECK(lab.a->cm_state(ca) == cm::CmState::kClosed);
}

TEST_CASE("cm: a Linux REQ's Starting PSN is the PSN we send at; our REP's is the one we receive at", "[engine][cm]") {
  // rxe's ib_write_bw -R sent its first SEND at our REP's Starting PSN (Linux's cm_rep_handler
  // takes it as its sq_psn) and received at its REQ's; reading them the other way round, every
  // SEND looked like a duplicate and was ACKed without a completion.
  Lab lab("cmpsn", on_test_clock());
  REQUIRE(lab.a->cm_listen(kPort).ok());
  std::uint8_t mad[cm::kMadBytes];
  make_req(mad, kPort);  // Starting PSN 0x777
  inject_to_a(lab, mad);
  run_a_alone(lab, kStepNs);
  CmEndpointEvent e;
  REQUIRE(lab.a->cm_next_event(e));
  REQUIRE(e.kind == CmEndpointEventKind::kConnectRequest);
  CHECK(e.params.send_psn == 0x777);
  std::uint32_t qa = 0;
  REQUIRE(lab.a->create_qp(qp_attr(0x5A5A5, 16, 16), qa).ok());
  REQUIRE(lab.a->cm_accept(e.conn, qa).ok());
  run_a_alone(lab, kStepNs);
  CHECK(lab.a->qp(qa)->attr().sq_psn == 0x777);
  CHECK(lab.a->qp(qa)->attr().rq_psn == 0x5A5A5);
  const cm::CmRep* rep = nullptr;
  const std::vector<cm::CmMessage> sent = a_sent_cm(lab);
  for (const auto& m : sent)
    if (const auto* r = std::get_if<cm::CmRep>(&m.body); r != nullptr && rep == nullptr) rep = r;
  REQUIRE(rep != nullptr);
  CHECK(rep->starting_psn == 0x5A5A5);
}

TEST_CASE("cm: an active side that never sends the RTU: the REP is resent, then the QP goes to ERROR", "[engine][cm]") {
  Lab lab("cmnortu", on_test_clock());
  REQUIRE(lab.a->cm_listen(kPort).ok());
  std::uint8_t mad[cm::kMadBytes];
  make_req(mad, kPort);
  inject_to_a(lab, mad);
  run_a_alone(lab, kStepNs);
  CmEndpointEvent e;
  REQUIRE(lab.a->cm_next_event(e));
  REQUIRE(e.kind == CmEndpointEventKind::kConnectRequest);
  CHECK(e.params.remote_qpn == 0x99);
  CHECK(e.peer_port == 40000);
  std::uint32_t qa = 0;
  REQUIRE(lab.a->create_qp(qp_attr(5, 16, 16), qa).ok());
  REQUIRE(lab.a->cm_accept(e.conn, qa).ok());
  CHECK(lab.a->qp(qa)->attr().max_rd_atomic == 4);
  // The REQ repeated (its REP "lost") gets the same REP again, not a second connection.
  inject_to_a(lab, mad);
  run_a_alone(lab, kStepNs);
  CHECK(lab.a->cm_counters().mads_received == 2);
  bool got = false;
  for (int i = 0; i < 3000 && !got; ++i) {
    run_a_alone(lab, 100'000'000);
    got = lab.a->cm_next_event(e);
  }
  REQUIRE(got);
  CHECK(e.kind == CmEndpointEventKind::kTimedOut);
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kError);
  const std::vector<cm::CmMessage> sent = a_sent_cm(lab);
  CHECK(count_of<cm::CmRep>(sent) == 1 + 1 + 2);  // the REP, its repeat for the repeated REQ, then max CM retries (2)
  CHECK(count_of<cm::CmRej>(sent) == 1);
}

TEST_CASE("cm: malformed or foreign QP1 frames are counted and change nothing", "[engine][cm]") {
  Lab lab("cmbad", on_test_clock());
  REQUIRE(lab.a->cm_listen(kPort).ok());
  std::uint8_t mad[cm::kMadBytes];
  make_req(mad, kPort);
  inject_to_a(lab, mad, wire::kGsiQkey, true);  // bad ICRC
  inject_to_a(lab, mad, 0x1234);                // not the GSI Q_Key
  std::uint8_t bad[cm::kMadBytes];
  std::memcpy(bad, mad, sizeof(bad));
  bad[0] = 2;  // base version
  inject_to_a(lab, bad);
  std::memcpy(bad, mad, sizeof(bad));
  bad[1] = 0x81;  // not the CM class
  inject_to_a(lab, bad);
  // A REQ whose rdma_cm header names another source address than the frame's.
  cm::CmReq spoof;
  cm::CmMessage decoded;
  REQUIRE(cm::decode_cm(mad, sizeof(mad), decoded) == cm::MadRefusal::kNone);
  spoof = std::get<cm::CmReq>(decoded.body);
  spoof.private_data[19] = 99;  // source IP 10.0.0.99
  cm::encode_cm(spoof, decoded.header.tid, bad);
  inject_to_a(lab, bad);
  // An RTU and a DREQ naming no connection of ours; the DREQ still gets its DREP.
  cm::CmRtu rtu;
  rtu.local_comm_id = 1;
  rtu.remote_comm_id = 0xABCDEF;
  cm::encode_cm(rtu, 1, bad);
  inject_to_a(lab, bad);
  cm::CmDreq dreq;
  dreq.local_comm_id = 2;
  dreq.remote_comm_id = 0xABCDEF;
  cm::encode_cm(dreq, 2, bad);
  inject_to_a(lab, bad);
  run_a_alone(lab, 10 * kStepNs);
  CmEndpointEvent e;
  CHECK_FALSE(lab.a->cm_next_event(e));
  const CmCounters& c = lab.a->cm_counters();
  CHECK(c.ud_refused[static_cast<std::size_t>(wire::UdRefusal::kBadIcrc)] == 1);
  CHECK(c.ud_refused[static_cast<std::size_t>(wire::UdRefusal::kBadQkey)] == 1);
  CHECK(c.mad_refused[static_cast<std::size_t>(cm::MadRefusal::kBadBaseVersion)] == 1);
  CHECK(c.mad_refused[static_cast<std::size_t>(cm::MadRefusal::kNotCm)] == 1);
  CHECK(c.bad_rdma_cm_header == 1);
  CHECK(c.unknown_connection == 2);
  const std::vector<cm::CmMessage> sent = a_sent_cm(lab);
  CHECK(count_of<cm::CmRej>(sent) == 1);   // the spoofed REQ
  CHECK(count_of<cm::CmDrep>(sent) == 1);  // the stray DREQ
  CHECK(lab.a->cm_state(0xABCDEF) == cm::CmState::kClosed);
}

// The CM under attack (docs/hardening.md): forged REQs free their slots by the CM's own timers
// and cannot lock a real client out; a DREQ or REJ from an address other than the connection's
// peer is dropped and counted.

TEST_CASE("cm under attack: 64 forged REQs nobody completes are freed by the CM's own timer",
          "[engine][cm][hardening]") {
  Lab lab("cmreqto", on_test_clock());
  REQUIRE(lab.a->cm_listen(kPort).ok());
  for (std::uint32_t i = 0; i < EndpointCm::kMaxConnections; ++i) {
    std::uint8_t mad[cm::kMadBytes];
    const auto host = static_cast<std::uint8_t>(10 + i);
    make_req(mad, kPort, 0x50000000 + i, host);
    inject_to_a(lab, mad, wire::kGsiQkey, false, host);
  }
  run_a_alone(lab, kStepNs);
  // The consumer never answers. make_req's REQ: 3 tries of (4096 ns << 18) + 2 x our packet
  // lifetime (4096 ns << 16) each, about 4.8 s; 10 s of test clock in 10 ms steps.
  std::uint32_t requests = 0, timed_out = 0;
  CmEndpointEvent e;
  for (int step = 0; step < 1000 && timed_out < EndpointCm::kMaxConnections; ++step) {
    lab.advance_ns(10'000'000);
    lab.a->poll(lab.now_tsc());
    while (lab.a->cm_next_event(e)) {
      requests += e.kind == CmEndpointEventKind::kConnectRequest;
      timed_out += e.kind == CmEndpointEventKind::kTimedOut && e.timed_out;
    }
  }
  CHECK(requests == EndpointCm::kMaxConnections);
  CHECK(timed_out == EndpointCm::kMaxConnections);
  const std::vector<cm::CmMessage> sent = a_sent_cm(lab);
  CHECK(count_of<cm::CmRej>(sent) == EndpointCm::kMaxConnections);  // REJ (Timeout) each
  for (const auto& m : sent)
    if (const auto* r = std::get_if<cm::CmRej>(&m.body))
      CHECK(r->reason == static_cast<std::uint16_t>(cm::RejReason::kTimeout));
  // Every slot is free again: a new REQ is taken, not refused.
  std::uint8_t mad[cm::kMadBytes];
  make_req(mad, kPort, 0x60000000, 9);
  inject_to_a(lab, mad);
  run_a_alone(lab, kStepNs);
  REQUIRE(lab.a->cm_next_event(e));
  CHECK(e.kind == CmEndpointEventKind::kConnectRequest);
  CHECK(lab.a->cm_counters().table_full == 0);
}

TEST_CASE("cm under attack: a REQ flood from forged addresses cannot lock out a real client",
          "[engine][cm][hardening]") {
  Lab lab("cmflood", on_test_clock());
  REQUIRE(lab.a->cm_listen(kPort).ok());
  std::uint32_t forged = 0;
  // REQs from forged hosts 10..249, each with its own communication ID, never completed.
  const auto flood = [&](std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i, ++forged) {
      std::uint8_t mad[cm::kMadBytes];
      const auto host = static_cast<std::uint8_t>(10 + forged % 240);
      make_req(mad, kPort, 0x70000000 + forged, host);
      inject_to_a(lab, mad, wire::kGsiQkey, false, host);
    }
  };
  // A's consumer answers only the real client; the forged REQs wait as long as the CM lets them
  // (the worst case: the slots are held, not answered).
  std::uint32_t qa = 0, evicted_events = 0;
  bool a_accepted = false;
  const auto serve_a = [&] {
    CmEndpointEvent e;
    while (lab.a->cm_next_event(e)) {
      if (e.kind == CmEndpointEventKind::kConnectRequest && std::memcmp(e.peer.ip, addr(2).ip, 4) == 0) {
        REQUIRE_FALSE(a_accepted);
        REQUIRE(lab.a->create_qp(qp_attr(0x300, 4, 4), qa).ok());
        REQUIRE(lab.a->cm_accept(e.conn, qa).ok());
        a_accepted = true;
      }
      evicted_events += e.kind == CmEndpointEventKind::kTimedOut;
    }
  };
  flood(EndpointCm::kMaxConnections);  // the table is full of half-open connections
  lab.poll();
  serve_a();
  std::uint32_t qb = 0, cb = 0;
  REQUIRE(lab.b->create_qp(qp_attr(0x400, 4, 4), qb).ok());
  CmConnectTo to;
  to.peer = addr(1);
  to.port = kPort;
  REQUIRE(lab.b->cm_connect(qb, to, cb).ok());
  // The flood goes on, 4 forged REQs per poll (a whole table's worth every 16 polls), while B
  // connects. Bounded at 2,000 polls (0.2 s of test clock: B's REQ is never even resent).
  bool established = false;
  for (int i = 0; i < 2000 && !established; ++i) {
    flood(4);
    lab.poll();
    serve_a();
    CmEndpointEvent e;
    while (lab.b->cm_next_event(e)) {
      REQUIRE(e.kind == CmEndpointEventKind::kEstablished);
      established = true;
    }
  }
  REQUIRE(established);
  CHECK(a_accepted);
  CHECK(lab.b->qp(qb)->state() == rc::QpState::kRts);
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kRts);
  const CmCounters& ca = lab.a->cm_counters();
  CHECK(forged > EndpointCm::kMaxConnections);
  CHECK(ca.table_full == 0);
  CHECK(ca.half_open_evicted > 0);
  // Every REQ, forged or B's, got a slot: the ones not evicted are still held.
  CHECK(ca.half_open_evicted + EndpointCm::kMaxConnections >= forged + 1);
  // Each evicted connection told its consumer (timed_out) and its peer (REJ Timeout).
  serve_a();
  CHECK(evicted_events == ca.half_open_evicted);
  // The real connection survives the flood that follows: established ones are never evicted.
  for (int i = 0; i < 40; ++i) {
    flood(4);
    lab.poll();
    serve_a();
  }
  CHECK(lab.b->cm_state(cb) == cm::CmState::kEstablished);
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kRts);
}

TEST_CASE("cm under attack: a DREQ or REJ from an address other than the peer's is dropped and counted",
          "[engine][cm][hardening]") {
  Lab lab("cmforge", on_test_clock());
  REQUIRE(lab.b->cm_listen(kPort).ok());
  std::uint32_t qa = 0, qb = 0, ca = 0;
  REQUIRE(lab.a->create_qp(qp_attr(0x10, 4, 4), qa).ok());
  CmConnectTo to;
  to.peer = addr(2);
  to.port = kPort;
  REQUIRE(lab.a->cm_connect(qa, to, ca).ok());
  const CmEndpointEvent req = wait_event(lab, *lab.b);
  REQUIRE(req.kind == CmEndpointEventKind::kConnectRequest);
  REQUIRE(lab.b->create_qp(qp_attr(0x20, 4, 4), qb).ok());
  REQUIRE(lab.b->cm_accept(req.conn, qb).ok());
  REQUIRE(wait_event(lab, *lab.a).kind == CmEndpointEventKind::kEstablished);
  REQUIRE(wait_event(lab, *lab.b).kind == CmEndpointEventKind::kEstablished);

  // A DREQ exactly as B would send it (B's and A's communication IDs, A's QPN), from host 9.
  cm::CmDreq dreq;
  dreq.local_comm_id = req.conn;
  dreq.remote_comm_id = ca;
  dreq.remote_qpn = qa;
  std::uint8_t mad[cm::kMadBytes];
  cm::encode_cm(dreq, 0xD0000001ull, mad);
  const std::uint64_t wrong_before = lab.a->cm_counters().wrong_peer;
  inject_to_a(lab, mad, wire::kGsiQkey, false, 9);
  run_a_alone(lab, kStepNs);
  CHECK(lab.a->cm_counters().wrong_peer == wrong_before + 1);
  CHECK(lab.a->cm_state(ca) == cm::CmState::kEstablished);
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kRts);
  CmEndpointEvent e;
  CHECK_FALSE(lab.a->cm_next_event(e));
  CHECK(count_of<cm::CmDrep>(a_sent_cm(lab)) == 0);
  // The same DREQ from B's address is B's: A disconnects (the rule, not the message, refused it).
  inject_to_a(lab, mad, wire::kGsiQkey, false, 2);
  run_a_alone(lab, kStepNs);
  REQUIRE(lab.a->cm_next_event(e));
  CHECK(e.kind == CmEndpointEventKind::kDisconnected);
  CHECK(e.by_peer);
  CHECK(lab.a->qp(qa)->state() == rc::QpState::kError);

  // A REJ for a REQ A holds (from host 9), sent from host 8: dropped; from host 9 it rejects.
  REQUIRE(lab.a->cm_listen(kPort).ok());
  make_req(mad, kPort, 0x1234, 9);
  inject_to_a(lab, mad, wire::kGsiQkey, false, 9);
  run_a_alone(lab, kStepNs);
  CmEndpointEvent r;
  for (int i = 0; i < 16 && lab.a->cm_next_event(r) && r.kind != CmEndpointEventKind::kConnectRequest; ++i) {
  }
  REQUIRE(r.kind == CmEndpointEventKind::kConnectRequest);
  cm::CmRej rej;
  rej.local_comm_id = 0x1234;
  rej.remote_comm_id = r.conn;
  rej.message = cm::RejTarget::kRep;
  rej.reason = static_cast<std::uint16_t>(cm::RejReason::kConsumerReject);
  cm::encode_cm(rej, 0x1234ull << 32, mad);
  const std::uint64_t wrong_mid = lab.a->cm_counters().wrong_peer;
  inject_to_a(lab, mad, wire::kGsiQkey, false, 8);
  run_a_alone(lab, kStepNs);
  CHECK(lab.a->cm_counters().wrong_peer == wrong_mid + 1);
  CHECK(lab.a->cm_state(r.conn) == cm::CmState::kReqRcvd);
  inject_to_a(lab, mad, wire::kGsiQkey, false, 9);
  run_a_alone(lab, kStepNs);
  CHECK(lab.a->cm_state(r.conn) == cm::CmState::kClosed);
}
