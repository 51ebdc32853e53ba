// Real Linux RDMA-CM traffic of perftest's -R mode (tests/data/pcaps/rxe_write_bw_R_*.pcap, taken
// in the rxe lab by tests/interop/run_interop.sh): ib_write_bw -R in the guest against droce-perf
// -R, once in each role. perftest makes two rdma_cm connections to port 18515 (docs/cm.md,
// "perftest -R"): its comm channel, then the data QP (a data REQ the server refused because it
// did not listen yet is retried). Each runs REQ, REP, RTU; the data
// connection ends in DREQ, DREP; every message names the right communication IDs; and each side
// sends its first request at the Starting PSN the other side put in its REQ or REP.
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "protocols/cm/rdma_cm_header.h"
#include "tests/cm/cm_capture.h"

using namespace droce;

namespace {

constexpr std::uint8_t kGuestIp[4] = {10, 0, 77, 1};  // the lab guest (scripts/rxe-lab/lib.sh)
constexpr std::uint8_t kDroceIp[4] = {10, 0, 77, 3};  // droce on the lab link
constexpr std::uint16_t kPerftestPort = 18515;

// One connection's messages, in capture order.
struct Connection {
  const cm::CmReq* req = nullptr;
  const cm::CmRep* rep = nullptr;
  std::vector<std::string> sequence;  // a resent message counted once
  std::uint32_t client_id = 0, server_id = 0;
};

std::vector<Connection> connections(const test::CmCapture& c, const std::uint8_t* client_ip) {
  std::map<std::uint32_t, Connection> by_client_id;
  std::vector<std::uint32_t> order;
  std::map<std::uint32_t, std::uint32_t> client_of_server;  // server comm ID -> client comm ID
  for (const auto& f : c.cm) {
    const bool from_client = std::memcmp(f.src_ip, client_ip, 4) == 0;
    std::uint32_t cid = 0;
    if (const auto* req = std::get_if<cm::CmReq>(&f.msg.body)) {
      CHECK(from_client);
      cid = req->local_comm_id;
      if (!by_client_id.count(cid)) order.push_back(cid);
      by_client_id[cid].req = req;
      by_client_id[cid].client_id = cid;
    } else {
      cid = from_client ? cm::cm_sender_comm_id(f.msg.body) : cm::cm_receiver_comm_id(f.msg.body);
    }
    REQUIRE(by_client_id.count(cid) == 1);
    Connection& k = by_client_id[cid];
    if (const auto* rep = std::get_if<cm::CmRep>(&f.msg.body)) {
      CHECK_FALSE(from_client);
      k.rep = rep;
      k.server_id = rep->local_comm_id;
    }
    // Each message names the other side's ID (a REQ names none yet).
    if (!std::holds_alternative<cm::CmReq>(f.msg.body) && k.server_id != 0) {
      CHECK(cm::cm_sender_comm_id(f.msg.body) == (from_client ? k.client_id : k.server_id));
      CHECK(cm::cm_receiver_comm_id(f.msg.body) == (from_client ? k.server_id : k.client_id));
    }
    const std::string name = test::cm_attr_name(f.msg.body);
    if (k.sequence.empty() || k.sequence.back() != name) k.sequence.push_back(name);
  }
  std::vector<Connection> out;
  for (std::uint32_t id : order) out.push_back(by_client_id[id]);
  return out;
}

void check_run(const std::string& file, const std::uint8_t* client_ip, const std::uint8_t* server_ip) {
  const test::CmCapture c = test::read_cm_capture(file);
  CHECK(!c.rc.empty());
  // perftest's client sends its data REQs right after the first barrier, and a Linux server may
  // not listen for them yet: such a REQ draws a REJ and the client tries again (docs/cm.md).
  std::vector<Connection> conns;
  for (const Connection& k : connections(c, client_ip)) {
    if (k.sequence == std::vector<std::string>{"REQ", "REJ"}) continue;
    conns.push_back(k);
  }
  REQUIRE(conns.size() == 2);  // the comm channel, then the one data QP
  for (std::size_t i = 0; i < conns.size(); ++i) {
    INFO((i == 0 ? "comm" : "data") << " connection");
    const Connection& k = conns[i];
    REQUIRE(k.req != nullptr);
    REQUIRE(k.rep != nullptr);
    REQUIRE(k.sequence.size() >= 3);
    CHECK(std::vector<std::string>(k.sequence.begin(), k.sequence.begin() + 3) ==
          std::vector<std::string>{"REQ", "REP", "RTU"});
    CHECK(k.req->service_id == cm::rdma_cm_tcp_service_id(kPerftestPort));
    cm::RdmaCmHeader h;
    REQUIRE(cm::parse_rdma_cm_header(k.req->private_data, cm::kReqPrivateBytes, h) == cm::RdmaCmHeaderRefusal::kNone);
    CHECK(std::memcmp(h.src_ip, client_ip, 4) == 0);
    CHECK(std::memcmp(h.dst_ip, server_ip, 4) == 0);
    // Starting PSNs as Linux reads them: each side's first request carries the PSN the other
    // side offered (the client sends from the REP's, the server from the REQ's).
    const test::RcFrame* from_client = test::first_request_to(c, client_ip, k.rep->local_qpn);
    const test::RcFrame* from_server = test::first_request_to(c, server_ip, k.req->local_qpn);
    REQUIRE(from_client != nullptr);
    CHECK(from_client->psn == k.rep->starting_psn);
    if (from_server != nullptr) CHECK(from_server->psn == k.req->starting_psn);
  }
  // The data connection is disconnected: DREQ, then DREP.
  const std::vector<std::string>& d = conns[1].sequence;
  CHECK(d.size() == 5);
  CHECK(d.back() == "DREP");
}

}  // namespace

TEST_CASE("ib_write_bw -R in the guest serving, droce-perf -R the client: two rdma_cm connections, Linux's REPs",
          "[cm][captures]") {
  check_run("rxe_write_bw_R_server.pcap", kDroceIp, kGuestIp);
}

TEST_CASE("ib_write_bw -R in the guest as client, droce-perf -R serving: Linux's REQs, droce's REPs",
          "[cm][captures]") {
  check_run("rxe_write_bw_R_client.pcap", kGuestIp, kDroceIp);
}
