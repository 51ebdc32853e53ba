// A QP's own header fields over a real PMD (two RcEndpoints on net_ring ports through the test
// relay, which records what leaves each port): the UDP source port its owner sets, RoCEv2's ECMP
// entropy (IBTA A17.3.3), and its own DSCP, its frames' traffic class; unset, the derived port
// and the endpoint's DSCP.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "engine/endpoint/rc_endpoint.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using droce::test::addr;
using droce::test::Lab;

namespace {

std::uint8_t pat(std::uint32_t m, std::uint32_t i) { return static_cast<std::uint8_t>(m * 131 + i * 3 + (i >> 10)); }

}  // namespace

TEST_CASE("set_udp_src_port: a QP sends from the port its owner set, derived from the QP pair when unset",
          "[engine][transport][entropy]") {
  // RoCEv2's ECMP entropy is the UDP source port (IBTA A17.3.3): the lab's first pair derives it
  // as Linux does; a second pair is given one port per end while in INIT, and every frame each
  // end sends (data one way, ACKs the other) carries that end's port.
  Lab lab("tusp", 0.0);
  const std::uint16_t derived = wire::roce_udp_src_port(lab.qpn_a, lab.qpn_b);
  CHECK(lab.a->udp_src_port(lab.qpn_a) == derived);
  CHECK(lab.b->udp_src_port(lab.qpn_b) == derived);  // symmetric in the QPNs
  rc::QpAttr qa_attr = lab.qa->attr();
  rc::QpAttr qb_attr = lab.qb->attr();
  std::uint32_t qpn_a = 0, qpn_b = 0;
  REQUIRE(lab.a->create_qp(qa_attr, qpn_a).ok());
  REQUIRE(lab.b->create_qp(qb_attr, qpn_b).ok());
  CHECK(lab.a->udp_src_port(qpn_a) == 0);  // not set, not connected: not known yet
  REQUIRE(lab.a->set_udp_src_port(qpn_a, 50001).ok());
  REQUIRE(lab.b->set_udp_src_port(qpn_b, 50002).ok());
  CHECK(lab.a->set_udp_src_port(lab.qpn_a, 50003).code() == StatusCode::kBadState);  // connected: its flow is fixed
  CHECK(lab.a->set_udp_src_port(0xABCDEF, 50003).code() == StatusCode::kNotFound);
  REQUIRE(lab.a->connect(qpn_a, RemoteQp{addr(2), qpn_b, qb_attr.sq_psn}).ok());
  REQUIRE(lab.b->connect(qpn_b, RemoteQp{addr(1), qpn_a, qa_attr.sq_psn}).ok());
  CHECK(lab.a->udp_src_port(qpn_a) == 50001);
  CHECK(lab.a->udp_src_port(lab.qpn_a) == derived);  // the other QP keeps its own
  std::vector<std::uint8_t> src(3000), dst(3000);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = pat(5, static_cast<std::uint32_t>(i));
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  rc::RcQp* qa = lab.a->qp(qpn_a);
  rc::RcQp* qb = lab.b->qp(qpn_b);
  REQUIRE(qb->post_recv(rc::RecvWr{1, {reinterpret_cast<std::uint64_t>(dst.data()), 3000, dmr.lkey}}).ok());
  rc::SendWr w;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 3000, smr.lkey};
  REQUIRE(qa->post_send(w).ok());
  rc::Completion ca, cb;
  bool got_a = false, got_b = false;
  REQUIRE(lab.run([&] {
    got_a = got_a || qa->poll_cq(ca);
    got_b = got_b || qb->poll_cq(cb);
    return got_a && got_b;
  }));
  CHECK(ca.status == rc::WcStatus::kSuccess);
  CHECK(cb.byte_len == 3000);
  CHECK(dst == src);
  CHECK(lab.relay.last_udp_sport[0] == 50001);  // A's data
  CHECK(lab.relay.last_udp_sport[1] == 50002);  // B's ACK
  std::vector<RcEndpoint::ConnectedQp> cq;
  lab.a->connected_qps(cq);
  REQUIRE(cq.size() == 2);
  CHECK(cq[1].udp_src_port == 50001);
}

TEST_CASE("set_dscp: two QPs of one endpoint send with their own DSCP, their ACKs too; unset, the endpoint's",
          "[engine][transport][dscp]") {
  // One endpoint carries a bulk flow and a latency flow in two traffic classes (RFC 2474 §3): the
  // lab's first pair keeps the endpoints' DSCP (0), a second pair is given 26 at A and 46 at B.
  // Each pair sends from its own UDP source port, so the frames each way are told apart by it.
  Lab lab("tdscp", 0.0);
  const std::uint16_t first_port = lab.a->udp_src_port(lab.qpn_a);
  rc::QpAttr qa_attr = lab.qa->attr();
  rc::QpAttr qb_attr = lab.qb->attr();
  std::uint32_t qpn_a = 0, qpn_b = 0;
  REQUIRE(lab.a->create_qp(qa_attr, qpn_a).ok());
  REQUIRE(lab.b->create_qp(qb_attr, qpn_b).ok());
  REQUIRE(lab.a->set_udp_src_port(qpn_a, 50011).ok());
  REQUIRE(lab.b->set_udp_src_port(qpn_b, 50012).ok());
  REQUIRE(lab.a->set_dscp(qpn_a, 26).ok());
  REQUIRE(lab.b->set_dscp(qpn_b, 46).ok());
  CHECK(lab.a->set_dscp(qpn_a, 64).code() == StatusCode::kInvalidArgument);
  CHECK(lab.a->set_dscp(lab.qpn_a, 10).code() == StatusCode::kBadState);  // connected: its template is built
  CHECK(lab.a->set_dscp(0xABCDEF, 10).code() == StatusCode::kNotFound);
  REQUIRE(lab.a->connect(qpn_a, RemoteQp{addr(2), qpn_b, qb_attr.sq_psn}).ok());
  REQUIRE(lab.b->connect(qpn_b, RemoteQp{addr(1), qpn_a, qa_attr.sq_psn}).ok());
  std::vector<std::uint8_t> src(3000), dst(2 * 3000);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = pat(7, static_cast<std::uint32_t>(i));
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  // A SEND on each pair, each answered by an ACK.
  rc::RcQp* senders[2] = {lab.qa, lab.a->qp(qpn_a)};
  rc::RcQp* receivers[2] = {lab.qb, lab.b->qp(qpn_b)};
  for (int k = 0; k < 2; ++k) {
    REQUIRE(receivers[k]
                ->post_recv(rc::RecvWr{1, {reinterpret_cast<std::uint64_t>(dst.data() + k * 3000), 3000, dmr.lkey}})
                .ok());
    rc::SendWr w;
    w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 3000, smr.lkey};
    REQUIRE(senders[k]->post_send(w).ok());
  }
  rc::Completion c;
  int sent = 0, received = 0;
  REQUIRE(lab.run([&] {
    for (int k = 0; k < 2; ++k) {
      if (senders[k]->poll_cq(c) && c.status == rc::WcStatus::kSuccess) ++sent;
      if (receivers[k]->poll_cq(c) && c.byte_len == 3000) ++received;
    }
    return sent == 2 && received == 2;
  }));
  CHECK(std::equal(src.begin(), src.end(), dst.begin()));
  CHECK(std::equal(src.begin(), src.end(), dst.begin() + 3000));
  // TOS = DSCP << 2 | ECN (RFC 2474 §3, RFC 3168 §5): data leaves ECT(0), ACKs Not-ECT.
  const auto tos = [&](int way, std::uint16_t port) {
    const auto it = lab.relay.last_tos[way].find(port);
    return it == lab.relay.last_tos[way].end() ? -1 : int{it->second};
  };
  CHECK(tos(0, 50011) == (26 << 2 | wire::kEcnEct0));      // A's data on the second pair
  CHECK(tos(1, 50012) == 46 << 2);                         // B's ACK on it
  CHECK(tos(0, first_port) == (0 << 2 | wire::kEcnEct0));  // the first pair: the endpoint's DSCP
  CHECK(tos(1, first_port) == 0);
}
