// Real Linux RDMA-CM traffic (tests/data/pcaps/rxe_rping_*.pcap, taken in the rxe lab by
// tests/interop/run_interop.sh): rdma-core's rping in the guest against droce-rping, once in
// each role. Every frame to or from QP1 parses as UD (ICRC verified), carries a GSI datagram
// (source and destination QP 1, Q_Key 0x80010000) and decodes as a CM MAD; the REQ carries the
// rdma_cm header (IBTA Annex A11) for RDMA_PS_TCP port 7174; the connection runs REQ, REP, RTU,
// then DREQ, DREP, each naming the other side's communication ID.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "protocols/cm/cm_messages.h"
#include "protocols/cm/rdma_cm_header.h"
#include "protocols/wire/ud.h"
#include "tests/cm/cm_capture.h"

using namespace droce;

namespace {

constexpr std::uint8_t kGuestIp[4] = {10, 0, 77, 1};  // the lab guest (scripts/rxe-lab/lib.sh)
constexpr std::uint8_t kDroceIp[4] = {10, 0, 77, 3};  // droce on the lab link
constexpr std::uint16_t kRpingPort = 7174;

using Capture = test::CmCapture;

Capture read_capture(const std::string& name) { return test::read_cm_capture(name); }
const char* attr_name(const cm::CmBody& b) { return test::cm_attr_name(b); }

// The messages in order, a resent one (the same message again) counted once.
std::vector<std::string> sequence(const Capture& c) {
  std::vector<std::string> out;
  const cm::CmBody* last = nullptr;
  for (const auto& f : c.cm) {
    const bool repeat = last != nullptr && last->index() == f.msg.body.index() &&
                        cm::cm_sender_comm_id(*last) == cm::cm_sender_comm_id(f.msg.body);
    if (!repeat) out.emplace_back(attr_name(f.msg.body));
    last = &f.msg.body;
  }
  return out;
}

// `client_ip` sent the REQ to `server_ip`; the whole exchange checks out.
void check_connection(const Capture& c, const std::uint8_t* client_ip, const std::uint8_t* server_ip,
                      const char* disconnecting_side_ip_name, const std::uint8_t* dreq_ip) {
  INFO("DREQ from " << disconnecting_side_ip_name);
  CHECK(!c.rc.empty());
  CHECK(sequence(c) == std::vector<std::string>{"REQ", "REP", "RTU", "DREQ", "DREP"});
  REQUIRE(!c.cm.empty());
  REQUIRE(std::holds_alternative<cm::CmReq>(c.cm.front().msg.body));
  const auto& req = std::get<cm::CmReq>(c.cm.front().msg.body);
  CHECK(std::memcmp(c.cm.front().src_ip, client_ip, 4) == 0);
  // RDMA_PS_TCP: 0x0000000001060000 + port (A11.2.1).
  CHECK(req.service_id == 0x0000000001060000ull + kRpingPort);
  CHECK(req.service_id == cm::rdma_cm_tcp_service_id(kRpingPort));
  CHECK(req.transport_service_type == cm::kTransportRc);
  cm::RdmaCmHeader h;
  REQUIRE(cm::parse_rdma_cm_header(req.private_data, cm::kReqPrivateBytes, h) == cm::RdmaCmHeaderRefusal::kNone);
  CHECK_FALSE(h.ipv6);
  CHECK(std::memcmp(h.src_ip, client_ip, 4) == 0);
  CHECK(std::memcmp(h.dst_ip, server_ip, 4) == 0);
  CHECK(h.src_port != 0);  // the active side's bound (ephemeral) port
  // The GIDs of the primary path are the IPv4-mapped addresses (A17).
  std::uint8_t gid[16];
  cm::roce_gid_from_ip(client_ip, false, gid);
  CHECK(std::memcmp(req.primary.local_gid, gid, 16) == 0);
  cm::roce_gid_from_ip(server_ip, false, gid);
  CHECK(std::memcmp(req.primary.remote_gid, gid, 16) == 0);
  // Each later message names the other side's communication ID.
  const std::uint32_t client_id = req.local_comm_id;
  std::uint32_t server_id = 0;
  for (const auto& f : c.cm) {
    const bool from_client = std::memcmp(f.src_ip, client_ip, 4) == 0;
    if (std::holds_alternative<cm::CmRep>(f.msg.body)) {
      CHECK_FALSE(from_client);
      server_id = cm::cm_sender_comm_id(f.msg.body);
    }
    if (std::holds_alternative<cm::CmReq>(f.msg.body)) continue;
    CHECK(cm::cm_sender_comm_id(f.msg.body) == (from_client ? client_id : server_id));
    CHECK(cm::cm_receiver_comm_id(f.msg.body) == (from_client ? server_id : client_id));
    if (std::holds_alternative<cm::CmRtu>(f.msg.body)) CHECK(from_client);
    if (std::holds_alternative<cm::CmDreq>(f.msg.body)) CHECK(std::memcmp(f.src_ip, dreq_ip, 4) == 0);
  }
  CHECK(server_id != 0);
  // Starting PSNs as Linux reads them (docs/cm.md): each side sends from the PSN the other side
  // put in its REQ or REP, so the first request to each QP carries that PSN.
  const cm::CmRep* rep = nullptr;
  for (const auto& f : c.cm)
    if (const auto* r = std::get_if<cm::CmRep>(&f.msg.body)) rep = r;
  REQUIRE(rep != nullptr);
  const test::RcFrame* from_client = test::first_request_to(c, client_ip, rep->local_qpn);
  const test::RcFrame* from_server = test::first_request_to(c, server_ip, req.local_qpn);
  REQUIRE(from_client != nullptr);
  REQUIRE(from_server != nullptr);
  CHECK(from_client->psn == rep->starting_psn);
  CHECK(from_server->psn == req.starting_psn);
}

}  // namespace

TEST_CASE("rping -s in the guest, droce-rping the client: Linux's REP, droce's REQ/RTU/DREQ", "[cm][captures]") {
  const Capture c = read_capture("rxe_rping_server.pcap");
  check_connection(c, kDroceIp, kGuestIp, "droce (the client)", kDroceIp);
}

TEST_CASE("rping -c in the guest, droce-rping the server: Linux's REQ/RTU/DREQ, droce's REP/DREP", "[cm][captures]") {
  const Capture c = read_capture("rxe_rping_client.pcap");
  check_connection(c, kGuestIp, kDroceIp, "rping (the client)", kGuestIp);
}
