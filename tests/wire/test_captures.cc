// Real Linux Soft-RoCE captures (tests/data/pcaps): every RoCEv2 frame parses and its ICRC verifies.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "protocols/wire/parse.h"
#include "tests/common/pcap_frames.h"

using namespace droce::wire;

namespace {

struct CaptureStats {
  int frames = 0;
  int roce = 0;
  int rejected = 0;
  int ipv6 = 0;  // RoCEv2 frames over IPv6
  std::map<int, int> opcodes;
  std::map<int, int> syndromes;  // of ACK packets
  std::vector<std::uint32_t> qpns;
};

CaptureStats read_capture(const std::string& name) {
  CaptureStats s;
  droce::test::for_each_pcap_frame(name, [&](const u_char* data, std::uint32_t caplen, int) {
    ++s.frames;
    PacketInfo pi;
    const DropReason r = parse_frame(data, caplen, pi);
    // TCP (the out-of-band exchange) and ARP share the captures: only UDP 4791 is RoCE.
    if (r == DropReason::kNotIp || r == DropReason::kNotUdp || r == DropReason::kNotRocePort) return;
    ++s.roce;
    if (r != DropReason::kNone) {
      ++s.rejected;
      UNSCOPED_INFO(name << " frame " << s.frames << ": " << drop_reason_name(r));
      return;
    }
    if (pi.ipv6) ++s.ipv6;
    ++s.opcodes[pi.opcode];
    if (pi.opcode == 0x11) ++s.syndromes[pi.aeth_syndrome];
    s.qpns.push_back(pi.dest_qpn);
  });
  return s;
}

}  // namespace

TEST_CASE("every RoCEv2 frame in every rxe capture parses and its ICRC verifies", "[wire][captures]") {
  // name, RoCE frames (tests/data/pcaps/README.md), QPN
  const std::vector<std::tuple<std::string, int, std::uint32_t>> files = {
      {"rc_pingpong.pcap", 24, 0x11}, {"rc_pingpong_4k.pcap", 38, 0x12}, {"send_bw.pcap", 40, 0x13},
      {"send_bw_64.pcap", 32, 0x14},  {"write_bw.pcap", 40, 0x15},       {"write_bw_mtu4096.pcap", 15, 0x11},
      {"read_bw.pcap", 40, 0x16},     {"send_lat.pcap", 40, 0x17},       {"write_lat.pcap", 38, 0x18},
      {"read_lat.pcap", 16, 0x19},    {"send_nak.pcap", 73, 0x1a},       {"write_nak.pcap", 73, 0x1b},
      {"read_loss.pcap", 129, 0x1c},  {"write_ackloss.pcap", 11, 0x1d}};
  int total = 0;
  for (const auto& [name, roce, qpn] : files) {
    INFO(name);
    const auto s = read_capture(name);
    CHECK(s.roce == roce);
    CHECK(s.rejected == 0);
    for (auto q : s.qpns) CHECK(q == qpn);
    total += s.roce - s.rejected;
  }
  CHECK(total == 609);
}

TEST_CASE("capture contents match what rxe did: opcodes, NAKs, ACK syndromes", "[wire][captures]") {
  const auto ping = read_capture("rc_pingpong.pcap");
  CHECK(ping.opcodes.at(0x04) == 12);  // SEND_ONLY
  CHECK(ping.opcodes.at(0x11) == 12);  // ACK
  CHECK(ping.syndromes.at(0x1F) == 12);

  const auto nak = read_capture("send_nak.pcap");
  CHECK(nak.syndromes.at(0x60) == 2);  // two PSN sequence error NAKs
  CHECK(nak.opcodes.at(0x01) == 31);   // SEND_MIDDLE, retransmitted mid-message

  const auto wnak = read_capture("write_nak.pcap");
  CHECK(wnak.syndromes.at(0x60) == 2);

  const auto read = read_capture("read_bw.pcap");
  CHECK(read.opcodes.at(0x0C) == 8);
  CHECK(read.opcodes.at(0x0D) == 8);
  CHECK(read.opcodes.at(0x0E) == 16);
  CHECK(read.opcodes.at(0x0F) == 8);

  const auto big = read_capture("write_bw_mtu4096.pcap");
  CHECK(big.opcodes.at(0x06) == 5);  // 4096-byte WRITE_FIRST frames
  CHECK(big.opcodes.at(0x08) == 5);
}

TEST_CASE("rxe over IPv6: every RoCEv2 frame of the ULA capture parses and its ICRC verifies", "[wire][captures]") {
  // The rxe lab guest (fd77::1, QPN 0x13) against droce-echo (fd77::2, QPN 0x11): ibv_rc_pingpong
  // -g <its fd77::1 GID> -s 4096 -n 20 (tests/data/pcaps/README.md). The five ND frames before
  // them are ICMPv6, not RoCE. rxe resent two of its 4 KiB SENDs (4 packets each), so it sent 22.
  const auto s = read_capture("rxe_v6_rc_pingpong.pcap");
  CHECK(s.frames == 213);
  CHECK(s.roce == 208);
  CHECK(s.rejected == 0);
  CHECK(s.ipv6 == 208);
  CHECK(s.opcodes.at(0x00) == 42);  // SEND_FIRST
  CHECK(s.opcodes.at(0x01) == 84);  // SEND_MIDDLE
  CHECK(s.opcodes.at(0x02) == 42);  // SEND_LAST
  CHECK(s.opcodes.at(0x11) == 40);  // ACK
  CHECK(s.syndromes.at(0x1F) == 40);
  std::map<std::uint32_t, int> by_qpn;
  for (auto q : s.qpns) ++by_qpn[q];
  CHECK(by_qpn.size() == 2);
  CHECK(by_qpn[0x11] == 108);  // rxe's requests and ACKs to droce's QP
  CHECK(by_qpn[0x13] == 100);  // droce's to rxe's
}
