// UD framing: the SEND ONLY [with immediate] layout with its DETH, the parse back, the UD ICRC
// (variant fields masked, P_Key and DETH covered) and the receiving QP's P_Key and Q_Key rules.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "protocols/wire/build.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/ud.h"

using namespace droce::wire;

namespace {

HeaderTemplate make_template(bool ipv6, bool vlan = false, std::uint16_t pkey = kDefaultPkey) {
  TemplateConfig c;
  const std::uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0A}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0B};
  std::memcpy(c.local.mac, mac_a, 6);
  std::memcpy(c.remote.mac, mac_b, 6);
  if (ipv6) {
    for (int i = 0; i < 16; ++i) {
      c.local.ip[i] = static_cast<std::uint8_t>(0x20 + i);
      c.remote.ip[i] = static_cast<std::uint8_t>(0x40 + i);
    }
  } else {
    const std::uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
    std::memcpy(c.local.ip, a, 4);
    std::memcpy(c.remote.ip, b, 4);
  }
  c.ipv6 = ipv6;
  c.vlan = vlan;
  c.vlan_id = 100;
  c.vlan_pcp = 5;
  c.pkey = pkey;
  c.udp_src_port = 0xC001;
  return HeaderTemplate::make(c);
}

std::vector<std::uint8_t> mad_payload() {
  std::vector<std::uint8_t> p(256);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(i);
  return p;
}

std::vector<std::uint8_t> build(const HeaderTemplate& t, const UdSendFields& f,
                                const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> out(ud_frame_bytes(t, f.with_imm, static_cast<std::uint32_t>(payload.size())) +
                                kMaxHeaderBytes);
  const std::uint32_t n = build_ud_send(t, f, payload.data(), static_cast<std::uint32_t>(payload.size()), out.data(),
                                        static_cast<std::uint32_t>(out.size()));
  REQUIRE(n == ud_frame_bytes(t, f.with_imm, static_cast<std::uint32_t>(payload.size())));
  out.resize(n);
  return out;
}

UdRefusal parse(const std::vector<std::uint8_t>& f, UdPacket& p, bool icrc = true) {
  DropReason why;
  return parse_ud_frame(f.data(), static_cast<std::uint32_t>(f.size()), p, why, icrc);
}

}  // namespace

TEST_CASE("ud: a GMP to QP1 is a SEND ONLY 0x64 with a DETH after the BTH", "[cm][ud]") {
  const HeaderTemplate t = make_template(false);
  UdSendFields f;
  f.src_qpn = 1;
  f.psn = 0x123456;
  const auto payload = mad_payload();
  const auto frame = build(t, f, payload);
  CHECK(frame.size() == 14u + 20 + 8 + 12 + 8 + 256 + 4);
  const std::uint8_t* bth = frame.data() + t.bth_offset;
  CHECK(bth[0] == 0x64);
  CHECK(bth[1] == 0x00);  // SE 0, M 0, pad 0, TVer 0
  CHECK(bth[2] == 0xFF);  // P_Key
  CHECK(bth[3] == 0xFF);
  CHECK(bth[5] == 0x00);  // destination QP 1
  CHECK(bth[6] == 0x00);
  CHECK(bth[7] == 0x01);
  CHECK(bth[8] == 0x00);  // AckReq clear
  CHECK(bth[9] == 0x12);  // PSN
  CHECK(bth[11] == 0x56);
  const std::uint8_t deth[8] = {0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};  // Q_Key, resv, source QP
  CHECK(std::memcmp(bth + 12, deth, 8) == 0);
  CHECK(std::memcmp(bth + 20, payload.data(), payload.size()) == 0);

  UdPacket p;
  REQUIRE(parse(frame, p) == UdRefusal::kNone);
  CHECK(p.opcode == kOpUdSendOnly);
  CHECK(p.dest_qpn == kGsiQpn);
  CHECK(p.src_qpn == 1);
  CHECK(p.qkey == kGsiQkey);
  CHECK(p.pkey == 0xFFFF);
  CHECK(p.psn == 0x123456);
  CHECK_FALSE(p.has_imm);
  CHECK(p.payload_len == 256);
  CHECK(p.payload_offset == t.bth_offset + 20);
  CHECK(p.frame_len == frame.size());
  CHECK(std::memcmp(frame.data() + p.payload_offset, payload.data(), 256) == 0);
  CHECK(ud_accept(p, UdQpRules{}) == UdRefusal::kNone);
}

TEST_CASE("ud: with immediate, IPv6, VLAN and an odd payload length", "[cm][ud]") {
  const HeaderTemplate t = make_template(true, true);
  UdSendFields f;
  f.dest_qpn = 0x000ABC;
  f.src_qpn = 0x123456;
  f.qkey = 0x11111111;
  f.with_imm = true;
  f.imm = 0xDEADBEEF;
  f.se = true;
  const std::vector<std::uint8_t> payload = {1, 2, 3, 4, 5};
  const auto frame = build(t, f, payload);
  const std::uint8_t* bth = frame.data() + t.bth_offset;
  CHECK(bth[0] == 0x65);
  CHECK(bth[1] == (0x80 | (3 << 4)));  // SE, pad count 3
  CHECK(bth[20] == 0xDE);              // ImmDt after the DETH
  CHECK(bth[23] == 0xEF);
  UdPacket p;
  REQUIRE(parse(frame, p) == UdRefusal::kNone);
  CHECK(p.ipv6);
  CHECK(p.has_vlan);
  CHECK(p.vlan_id == 100);
  CHECK(p.se);
  CHECK(p.has_imm);
  CHECK(p.imm == 0xDEADBEEF);
  CHECK(p.src_qpn == 0x123456);
  CHECK(p.dest_qpn == 0x000ABC);
  CHECK(p.payload_len == 5);
  CHECK(std::memcmp(frame.data() + p.payload_offset, payload.data(), 5) == 0);
  UdQpRules qp;
  qp.qpn = 0x000ABC;
  qp.qkey = 0x11111111;
  CHECK(ud_accept(p, qp) == UdRefusal::kNone);
}

TEST_CASE("ud: the ICRC masks the variant fields and covers P_Key, DETH and payload", "[cm][ud][icrc]") {
  const HeaderTemplate t = make_template(true);
  const auto frame = build(t, UdSendFields{}, mad_payload());
  const std::uint32_t l3 = t.l3_offset, bth = t.bth_offset;
  UdPacket p;
  SECTION("variant fields: traffic class, flow label, hop limit, UDP checksum, FECN/BECN") {
    auto f = frame;
    f[l3] = static_cast<std::uint8_t>(f[l3] | 0x0F);
    f[l3 + 1] = 0xAB;
    f[l3 + 3] = 0x77;
    f[l3 + 7] = 3;
    f[bth - 2] = 0x12;
    f[bth + 4] = 0xC0;
    CHECK(parse(f, p) == UdRefusal::kNone);
  }
  SECTION("invariant fields") {
    for (const std::uint32_t off : {bth + 2, bth + 12, bth + 19, bth + 20 + 100, l3 + 8}) {
      auto f = frame;
      f[off] ^= 0x01;
      INFO("offset " << off);
      CHECK(parse(f, p) == UdRefusal::kBadIcrc);
      CHECK(parse(f, p, false) == UdRefusal::kNone);
    }
  }
}

TEST_CASE("ud: what is not a UD packet, or is a broken one", "[cm][ud]") {
  const HeaderTemplate t = make_template(false);
  UdPacket p;
  DropReason why = DropReason::kNone;
  SECTION("an RC SEND") {
    PacketFields pf;
    pf.opcode = static_cast<std::uint8_t>(Opcode::kSendOnly);
    pf.payload_len = 8;
    std::uint8_t payload[8] = {};
    std::vector<std::uint8_t> f(256);
    const std::uint32_t n = build_frame(t, pf, payload, f.data(), static_cast<std::uint32_t>(f.size()));
    REQUIRE(n != 0);
    CHECK(parse_ud_frame(f.data(), n, p, why) == UdRefusal::kNotUd);
  }
  SECTION("a truncated frame names the parser's rule") {
    const auto f = build(t, UdSendFields{}, mad_payload());
    CHECK(parse_ud_frame(f.data(), 30, p, why) == UdRefusal::kFrame);
    CHECK(why == DropReason::kTruncatedIp);
  }
  SECTION("a DETH cut short") {
    // An RC SEND ONLY of 4 bytes relabelled as UD: 4 bytes after the BTH, the DETH needs 8.
    PacketFields pf;
    pf.opcode = static_cast<std::uint8_t>(Opcode::kSendOnly);
    pf.payload_len = 4;
    std::uint8_t payload[4] = {};
    std::vector<std::uint8_t> f(256);
    const std::uint32_t n = build_frame(t, pf, payload, f.data(), static_cast<std::uint32_t>(f.size()));
    f[t.bth_offset] = kOpUdSendOnly;
    CHECK(parse_ud_frame(f.data(), n, p, why, false) == UdRefusal::kTruncatedDeth);
    f[t.bth_offset] = kOpUdSendOnlyImm;
    CHECK(parse_ud_frame(f.data(), n, p, why, false) == UdRefusal::kTruncatedDeth);
  }
  SECTION("a pad count larger than the payload") {
    auto f = build(t, UdSendFields{}, {});
    f[t.bth_offset + 1] = 0x30;
    CHECK(parse_ud_frame(f.data(), static_cast<std::uint32_t>(f.size()), p, why, false) == UdRefusal::kBadPadCount);
  }
  CHECK(ud_refusal_name(UdRefusal::kBadQkey) == "bad_qkey");
}

TEST_CASE("ud: the receiving QP's destination, P_Key and Q_Key rules", "[cm][ud]") {
  UdPacket p;
  p.dest_qpn = kGsiQpn;
  p.pkey = 0xFFFF;
  p.qkey = kGsiQkey;
  UdQpRules gsi;
  CHECK(ud_accept(p, gsi) == UdRefusal::kNone);
  SECTION("another QP") {
    p.dest_qpn = 2;
    CHECK(ud_accept(p, gsi) == UdRefusal::kWrongQp);
  }
  SECTION("a Q_Key other than the GSI's") {
    p.qkey = 0x80010001;
    CHECK(ud_accept(p, gsi) == UdRefusal::kBadQkey);
  }
  SECTION("invalid P_Keys") {
    p.pkey = 0x8000;
    CHECK(ud_accept(p, gsi) == UdRefusal::kBadPkey);
    p.pkey = 0x0000;
    CHECK(ud_accept(p, gsi) == UdRefusal::kBadPkey);
  }
  SECTION("a limited member talks to the full default partition, not to another limited member") {
    p.pkey = 0x7FFF;
    CHECK(ud_accept(p, gsi) == UdRefusal::kNone);
    const std::uint16_t limited[] = {0x7FFF};
    UdQpRules qp;
    qp.pkeys = limited;
    qp.pkey_count = 1;
    CHECK(ud_accept(p, qp) == UdRefusal::kBadPkey);
  }
  SECTION("QP1 takes any P_Key of the port's table") {
    const std::uint16_t table[] = {0xFFFF, 0x8123, 0x0000};
    UdQpRules qp;
    qp.pkeys = table;
    qp.pkey_count = 3;
    p.pkey = 0x8123;
    CHECK(ud_accept(p, qp) == UdRefusal::kNone);
    p.pkey = 0x0123;
    CHECK(ud_accept(p, qp) == UdRefusal::kNone);
    p.pkey = 0x8124;
    CHECK(ud_accept(p, qp) == UdRefusal::kBadPkey);
  }
}

TEST_CASE("ud: a GMP reply goes to the request's source QP with its P_Key", "[cm][ud]") {
  const HeaderTemplate t = make_template(false, false, 0xFFFF);
  UdSendFields req;
  req.src_qpn = 1;
  req.psn = 9;
  auto frame = build(t, req, mad_payload());
  frame[t.bth_offset + 2] = 0x80;  // the request came on partition 0x8001 (ICRC not checked below)
  frame[t.bth_offset + 3] = 0x01;
  UdPacket p;
  REQUIRE(parse(frame, p, false) == UdRefusal::kNone);
  const UdSendFields r = gsi_reply_fields(p);
  CHECK(r.dest_qpn == 1);
  CHECK(r.src_qpn == kGsiQpn);
  CHECK(r.qkey == kGsiQkey);
  CHECK(r.pkey == 0x8001);
  const auto reply = build(t, r, mad_payload());
  UdPacket q;
  REQUIRE(parse(reply, q) == UdRefusal::kNone);  // the P_Key is set before the ICRC
  CHECK(q.pkey == 0x8001);
  CHECK(q.dest_qpn == 1);
}

TEST_CASE("ud: the builder refuses a buffer too small", "[cm][ud]") {
  const HeaderTemplate t = make_template(false);
  std::vector<std::uint8_t> out(200);
  const auto payload = mad_payload();
  CHECK(build_ud_send(t, UdSendFields{}, payload.data(), 256, out.data(), 200) == 0);
}
