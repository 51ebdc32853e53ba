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
#include "tests/common/pcap_frames.h"

using namespace droce;

namespace {

constexpr std::uint8_t kGuestIp[4] = {10, 0, 77, 1};  // the lab guest (scripts/rxe-lab/lib.sh)
constexpr std::uint8_t kDroceIp[4] = {10, 0, 77, 3};  // droce on the lab link
constexpr std::uint16_t kRpingPort = 7174;

struct CmFrame {
  cm::CmMessage msg;
  std::uint8_t src_ip[4] = {};
};

struct Capture {
  std::vector<CmFrame> cm;
  int rc_frames = 0;  // RoCEv2 frames that are not UD: the pings themselves
};

Capture read_capture(const std::string& name) {
  Capture c;
  test::for_each_pcap_frame(name, [&](const u_char* data, std::uint32_t caplen, int n) {
    INFO(name << " frame " << n);
    wire::UdPacket u;
    wire::DropReason why = wire::DropReason::kNone;
    const wire::UdRefusal r = wire::parse_ud_frame(data, caplen, u, why, true);
    // ARP shares the captures.
    if (r == wire::UdRefusal::kFrame &&
        (why == wire::DropReason::kNotIp || why == wire::DropReason::kNotUdp || why == wire::DropReason::kNotRocePort))
      return;
    if (r == wire::UdRefusal::kNotUd) {
      ++c.rc_frames;
      return;
    }
    REQUIRE(r == wire::UdRefusal::kNone);
    CHECK(u.dest_qpn == 1);
    CHECK(u.src_qpn == 1);
    CHECK(u.qkey == 0x80010000u);
    CHECK(u.pkey == 0xFFFF);
    CmFrame f;
    std::memcpy(f.src_ip, u.src_ip, 4);
    REQUIRE(cm::decode_cm(data + u.payload_offset, u.payload_len, f.msg) == cm::MadRefusal::kNone);
    c.cm.push_back(f);
  });
  return c;
}

const char* attr_name(const cm::CmBody& b) {
  constexpr const char* kNames[] = {"REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP"};
  return kNames[b.index()];
}

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
  CHECK(c.rc_frames > 0);
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
