// Parser: build -> parse round trips for every opcode, and one rejection test per drop reason.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "protocols/wire/build.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/parse.h"

using namespace droce::wire;

namespace {

TemplateConfig config(bool ipv6 = false, bool vlan = false) {
  TemplateConfig c;
  const std::uint8_t lm[6] = {0x02, 0, 0, 0x77, 0, 3}, rm[6] = {0x52, 0x54, 0, 0x77, 0, 1};
  std::memcpy(c.local.mac, lm, 6);
  std::memcpy(c.remote.mac, rm, 6);
  if (ipv6) {
    for (int i = 0; i < 16; ++i) {
      c.local.ip[i] = static_cast<std::uint8_t>(0x20 + i);
      c.remote.ip[i] = static_cast<std::uint8_t>(0x40 + i);
    }
  } else {
    const std::uint8_t l[4] = {10, 0, 77, 3}, r[4] = {10, 0, 77, 1};
    std::memcpy(c.local.ip, l, 4);
    std::memcpy(c.remote.ip, r, 4);
  }
  c.ipv6 = ipv6;
  c.vlan = vlan;
  c.vlan_id = 100;
  c.vlan_pcp = 3;
  c.dest_qpn = 0x11;
  c.udp_src_port = roce_udp_src_port(0x11, 0x11);
  return c;
}

std::vector<std::uint8_t> frame_for(std::uint8_t opcode, std::uint32_t payload_len, bool ipv6 = false,
                                    bool vlan = false) {
  const auto t = HeaderTemplate::make(config(ipv6, vlan));
  PacketFields f;
  f.opcode = opcode;
  f.psn = 0xFFFFFE;
  f.ack_req = true;
  f.payload_len = opcode_info(opcode).has_payload ? payload_len : 0;
  f.reth_va = 0x1122334455667788ull;
  f.reth_rkey = 0xCAFEBABE;
  f.reth_len = 4096;
  f.aeth_syndrome = 0x1F;
  f.aeth_msn = 0xABCDEF;
  f.imm = 0xDEADBEEF;
  f.ieth_rkey = 0x01020304;
  f.atomic_va = 0x8000;
  f.atomic_rkey = 7;
  f.atomic_swap_add = 5;
  f.atomic_compare = 9;
  f.atomic_ack_orig = 0x42;
  std::vector<std::uint8_t> payload(f.payload_len);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i ^ 0x3C);
  std::vector<std::uint8_t> out(10000);
  const auto n = build_frame(t, f, payload.data(), out.data(), static_cast<std::uint32_t>(out.size()));
  REQUIRE(n > 0);
  out.resize(n);
  return out;
}

DropReason parse(const std::vector<std::uint8_t>& f, PacketInfo& pi, const ParseOptions& o = {}) {
  return parse_frame(f.data(), static_cast<std::uint32_t>(f.size()), pi, o);
}

// Rewrites the ICRC after a header edit, so the edit itself is what the parser judges.
void refresh_icrc(std::vector<std::uint8_t>& f, std::uint32_t l3 = 14, bool ipv6 = false) {
  const auto n = static_cast<std::uint32_t>(f.size());
  icrc_store(f.data() + n - 4, icrc_compute(f.data() + l3, n - 4 - l3, ipv6));
}

}  // namespace

TEST_CASE("every valid opcode round-trips build -> parse with all its header fields", "[wire][parse]") {
  for (int opc = 0; opc < 256; ++opc) {
    const auto& op = opcode_info(static_cast<std::uint8_t>(opc));
    if (!op.valid()) continue;
    for (bool ipv6 : {false, true}) {
      for (bool vlan : {false, true}) {
        for (std::uint32_t len : {0u, 1u, 3u, 4u, 1024u}) {
          auto f = frame_for(static_cast<std::uint8_t>(opc), len, ipv6, vlan);
          PacketInfo pi;
          INFO(op.name << " ipv6=" << ipv6 << " vlan=" << vlan << " len=" << len);
          // droce's selective-repeat opcodes (manufacturer-specific) parse only when accepted.
          ParseOptions sr;
          sr.accept_droce_sr = true;
          if (is_manufacturer_opcode(static_cast<std::uint8_t>(opc))) CHECK(parse(f, pi) == DropReason::kUnknownOpcode);
          REQUIRE(parse(f, pi, sr) == DropReason::kNone);
          CHECK(pi.opcode == opc);
          CHECK(pi.psn == 0xFFFFFE);
          CHECK(pi.dest_qpn == 0x11);
          CHECK(pi.ack_req);
          CHECK(pi.ipv6 == ipv6);
          CHECK(pi.has_vlan == vlan);
          CHECK(pi.payload_len == (op.has_payload ? len : 0u));
          CHECK(pi.pad_count == (op.has_payload ? pad_for(len) : 0u));
          CHECK(pi.udp_src_port == roce_udp_src_port(0x11, 0x11));
          CHECK(pi.ecn == kEcnEct0);
          if (vlan) CHECK((pi.vlan_id == 100 && pi.vlan_pcp == 3));
          if (op.headers & kHdrReth)
            CHECK((pi.reth_va == 0x1122334455667788ull && pi.reth_rkey == 0xCAFEBABE && pi.reth_dma_len == 4096));
          if (op.headers & kHdrAeth) CHECK((pi.aeth_syndrome == 0x1F && pi.aeth_msn == 0xABCDEF));
          if (op.headers & kHdrImmDt) CHECK(pi.imm_data == 0xDEADBEEF);
          if (op.headers & kHdrIeth) CHECK(pi.ieth_rkey == 0x01020304);
          if (op.headers & kHdrAtomicEth)
            CHECK((pi.atomic_va == 0x8000 && pi.atomic_rkey == 7 && pi.atomic_swap_add == 5 && pi.atomic_compare == 9));
          if (op.headers & kHdrAtomicAckEth) CHECK(pi.atomic_ack_orig == 0x42);
          if (op.has_payload && len > 0) CHECK(f[pi.payload_offset] == (0 ^ 0x3C));
        }
      }
    }
  }
}

TEST_CASE("rxe's UDP source port rule: QPN 0x11 -> 49441, 0x13 -> 49513", "[wire][build]") {
  CHECK(roce_udp_src_port(0x11, 0x11) == 49441);
  CHECK(roce_udp_src_port(0x13, 0x13) == 49513);
}

TEST_CASE("CNP is built per A17.9.3: opcode 0x81, BECN, DestQP, 16 zero bytes, Not-ECT, DSCP 48", "[wire][build]") {
  const auto t = HeaderTemplate::make(config());
  std::uint8_t out[256];
  const auto n = build_cnp(t, 0x123456, 48, out, sizeof(out));
  REQUIRE(n == 14 + 20 + 8 + 12 + 16 + 4);
  PacketInfo pi;
  REQUIRE(parse_frame(out, n, pi) == DropReason::kNone);
  CHECK(pi.opcode == 0x81);
  CHECK(pi.becn);
  CHECK(pi.dest_qpn == 0x123456);
  CHECK(pi.ecn == kEcnNotEct);
  CHECK(pi.dscp == 48);
  for (int i = 0; i < 16; ++i) CHECK(out[14 + 20 + 8 + 12 + i] == 0);
}

TEST_CASE("ACK/NAK carry the syndrome and MSN and are Not-ECT", "[wire][build]") {
  const auto t = HeaderTemplate::make(config());
  std::uint8_t out[256];
  const auto n = build_ack(t, 77, nak_syndrome(NakCode::kPsnSequenceError), 5, out, sizeof(out));
  PacketInfo pi;
  REQUIRE(parse_frame(out, n, pi) == DropReason::kNone);
  CHECK(pi.opcode == 0x11);
  CHECK(pi.psn == 77);
  CHECK(pi.aeth_syndrome == 0x60);
  CHECK(pi.aeth_msn == 5);
  CHECK(pi.ecn == kEcnNotEct);
}

TEST_CASE("truncating a valid frame at any byte gives a drop reason, never a crash", "[wire][parse]") {
  for (std::uint8_t opc : {0x00, 0x06, 0x0B, 0x0C, 0x0D, 0x11, 0x12, 0x13, 0x81}) {
    for (bool vlan : {false, true}) {
      const auto f = frame_for(opc, 300, false, vlan);
      for (std::size_t cut = 0; cut < f.size(); ++cut) {
        std::vector<std::uint8_t> t(f.begin(), f.begin() + cut);
        PacketInfo pi;
        CHECK(parse(t, pi) != DropReason::kNone);
      }
    }
  }
}

TEST_CASE("Ethernet minimum-size padding after the packet is ignored", "[wire][parse]") {
  auto f = frame_for(0x11, 0);  // a 62-byte ACK; pad to 64 as a NIC would
  f.resize(f.size() + 10, 0);
  PacketInfo pi;
  CHECK(parse(f, pi) == DropReason::kNone);
  CHECK(pi.frame_len == f.size() - 10);
}

TEST_CASE("each malformed header is dropped with its own reason", "[wire][parse]") {
  PacketInfo pi;
  auto base = frame_for(0x04, 64);  // SEND_ONLY, IPv4, no VLAN: l3 at 14, udp at 34, bth at 42

  SECTION("bad ICRC") {
    auto f = base;
    f[50] ^= 0xFF;
    CHECK(parse(f, pi) == DropReason::kBadIcrc);
    ParseOptions o;
    o.verify_icrc = false;
    CHECK(parse(f, pi, o) == DropReason::kNone);
  }
  SECTION("not IP (ARP)") {
    auto f = base;
    f[12] = 0x08;
    f[13] = 0x06;
    CHECK(parse(f, pi) == DropReason::kNotIp);
  }
  SECTION("stacked VLAN tags") {
    auto f = frame_for(0x04, 64, false, true);
    f[16] = 0x81;
    f[17] = 0x00;
    CHECK(parse(f, pi) == DropReason::kStackedVlan);
    f = base;
    f[12] = 0x88;
    f[13] = 0xA8;
    CHECK(parse(f, pi) == DropReason::kStackedVlan);
  }
  SECTION("IP version") {
    auto f = base;
    f[14] = 0x55;
    CHECK(parse(f, pi) == DropReason::kBadIpVersion);
  }
  SECTION("IP header length and options") {
    auto f = base;
    f[14] = 0x44;
    CHECK(parse(f, pi) == DropReason::kBadIpHeaderLength);
    f[14] = 0x46;
    CHECK(parse(f, pi) == DropReason::kIpOptions);
  }
  SECTION("IP total length beyond the frame") {
    auto f = base;
    f[16] = 0x7F;
    CHECK(parse(f, pi) == DropReason::kBadIpTotalLength);
  }
  SECTION("IP checksum") {
    auto f = base;
    f[24] ^= 0x01;
    CHECK(parse(f, pi) == DropReason::kBadIpChecksum);
  }
  SECTION("IP fragments") {
    ParseOptions o;
    o.verify_ip_checksum = false;
    auto f = base;
    f[20] = 0x20;  // MF
    CHECK(parse(f, pi, o) == DropReason::kIpFragment);
    f[20] = 0x00;
    f[21] = 0x10;  // offset
    CHECK(parse(f, pi, o) == DropReason::kIpFragment);
  }
  SECTION("not UDP") {
    ParseOptions o;
    o.verify_ip_checksum = false;
    auto f = base;
    f[23] = 6;
    CHECK(parse(f, pi, o) == DropReason::kNotUdp);
  }
  SECTION("UDP port other than 4791") {
    auto f = base;
    f[37] = 0xB8;
    CHECK(parse(f, pi) == DropReason::kNotRocePort);
  }
  SECTION("UDP length disagreeing with IP") {
    auto f = base;
    f[39] ^= 0x04;
    CHECK(parse(f, pi) == DropReason::kBadUdpLength);
  }
  SECTION("BTH TVer != 0") {
    auto f = base;
    f[43] |= 0x01;
    refresh_icrc(f);
    CHECK(parse(f, pi) == DropReason::kBadTver);
  }
  SECTION("unknown opcodes (reserved RC and other transports)") {
    for (int opc : {0x15, 0x18, 0x1F, 0x20, 0x64, 0x80, 0x82, 0xFF}) {
      auto f = base;
      f[42] = static_cast<std::uint8_t>(opc);
      refresh_icrc(f);
      CHECK(parse(f, pi) == DropReason::kUnknownOpcode);
    }
  }
  SECTION("pad count larger than the payload or misaligned payload") {
    auto f = frame_for(0x04, 0);                               // empty SEND_ONLY
    f[43] = static_cast<std::uint8_t>((f[43] & 0xCF) | 0x30);  // PadCnt 3 with no payload
    refresh_icrc(f);
    CHECK(parse(f, pi) == DropReason::kBadPadCount);
    auto g = frame_for(0x11, 0);  // ACK with a pad count
    g[43] = static_cast<std::uint8_t>(g[43] | 0x10);
    refresh_icrc(g);
    CHECK(parse(g, pi) == DropReason::kBadPadCount);
  }
  SECTION("ext headers cut short") {
    auto f = frame_for(0x0C, 0);  // READ request: RETH
    // Claim 8 bytes less in IP and UDP lengths and drop them from the frame.
    f.erase(f.begin() + 42 + 12 + 8, f.begin() + 42 + 12 + 16);
    f[17] = static_cast<std::uint8_t>(f[17] - 8);
    f[39] = static_cast<std::uint8_t>(f[39] - 8);
    f[24] = f[25] = 0;
    std::uint32_t sum = 0;
    for (int i = 14; i < 34; i += 2) sum += static_cast<std::uint32_t>(f[i] << 8 | f[i + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    f[24] = static_cast<std::uint8_t>(~sum >> 8);
    f[25] = static_cast<std::uint8_t>(~sum);
    refresh_icrc(f);
    CHECK(parse(f, pi) == DropReason::kTruncatedExtHeaders);
  }
  SECTION("P_Key mismatch when partition checking is on") {
    ParseOptions o;
    o.check_pkey = true;
    o.pkey = 0x8001;
    CHECK(parse(base, pi, o) == DropReason::kWrongPkey);
    o.pkey = 0xFFFF;
    CHECK(parse(base, pi, o) == DropReason::kNone);
  }
  SECTION("MigReq bit set is accepted") {
    auto f = base;
    f[43] |= 0x40;
    refresh_icrc(f);
    CHECK(parse(f, pi) == DropReason::kNone);
    CHECK(pi.mig_req);
  }
}

TEST_CASE("random bit flips never crash the parser and are caught by some check", "[wire][parse]") {
  const auto base = frame_for(0x0A, 777);
  std::uint32_t state = 12345;
  int caught = 0;
  for (int i = 0; i < 20000; ++i) {
    auto f = base;
    state = state * 1664525u + 1013904223u;
    const std::size_t bit = state % (f.size() * 8);
    f[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    PacketInfo pi;
    const DropReason r = parse(f, pi);
    // Flips in the masked/variant fields (TOS, TTL, UDP checksum, FECN/BECN) and in
    // MAC addresses are invisible to the ICRC by design; everything else must be caught.
    if (r != DropReason::kNone) ++caught;
  }
  CHECK(caught > 18000);
}
