// Real Linux RDMA-CM traffic from the rxe lab's captures (tests/data/pcaps/rxe_*.pcap): every
// QP1 frame parsed as UD (ICRC verified) and decoded as a CM MAD, every other RoCEv2 frame parsed
// by the RC parser (ICRC verified) and kept as (source IP, destination QP, PSN), ARP skipped.
// Shared by the captures' tests.
#pragma once

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "protocols/cm/cm_messages.h"
#include "protocols/wire/parse.h"
#include "protocols/wire/ud.h"
#include "tests/common/pcap_frames.h"

namespace droce::test {

struct CmFrame {
  cm::CmMessage msg;
  std::uint8_t src_ip[4] = {};
};

struct RcFrame {
  std::uint8_t src_ip[4] = {};
  std::uint32_t dest_qpn = 0;
  std::uint32_t psn = 0;
  std::uint8_t opcode = 0;
  bool request = false;  // a request (its PSN is the sender's); else an ACK or a response (the requester's)
};

struct CmCapture {
  std::vector<CmFrame> cm;
  std::vector<RcFrame> rc;  // the RC traffic the connections carried
};

inline CmCapture read_cm_capture(const std::string& name) {
  CmCapture c;
  for_each_pcap_frame(name, [&](const u_char* data, std::uint32_t caplen, int n) {
    INFO(name << " frame " << n);
    wire::UdPacket u;
    wire::DropReason why = wire::DropReason::kNone;
    const wire::UdRefusal r = wire::parse_ud_frame(data, caplen, u, why, true);
    // ARP shares the captures.
    if (r == wire::UdRefusal::kFrame &&
        (why == wire::DropReason::kNotIp || why == wire::DropReason::kNotUdp || why == wire::DropReason::kNotRocePort))
      return;
    if (r == wire::UdRefusal::kNotUd) {
      wire::PacketInfo pi;
      REQUIRE(wire::parse_frame(data, caplen, pi) == wire::DropReason::kNone);
      RcFrame f;
      std::memcpy(f.src_ip, pi.src_ip, 4);
      f.dest_qpn = pi.dest_qpn;
      f.psn = pi.psn;
      f.opcode = pi.opcode;
      f.request = pi.op().is_request;
      c.rc.push_back(f);
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

inline const char* cm_attr_name(const cm::CmBody& b) {
  constexpr const char* kNames[] = {"REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP"};
  return kNames[b.index()];
}

// The first request `from` sent to `qpn`: its PSN is where that side started sending (ACKs and
// responses carry the PSNs of the other side's requests).
inline const RcFrame* first_request_to(const CmCapture& c, const std::uint8_t* from, std::uint32_t qpn) {
  for (const RcFrame& f : c.rc)
    if (f.request && f.dest_qpn == qpn && std::memcmp(f.src_ip, from, 4) == 0) return &f;
  return nullptr;
}

}  // namespace droce::test
