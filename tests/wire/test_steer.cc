// steer_peek: RoCEv2 dest QPN through Ethernet / 802.1Q / IPv4|IPv6 / UDP 4791 / BTH, MAC Control,
// ARP and ND, everything else "other"; never a read past the frame's length.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "protocols/wire/steer.h"

using namespace droce::wire;

namespace {

struct FrameSpec {
  bool vlan = false;
  bool ipv6 = false;
  std::uint16_t dport = 4791;
  std::uint8_t proto = 17;
  std::uint16_t frag = 0x4000;  // DF
  std::uint8_t ihl = 5;
  std::uint32_t qpn = 0x123456;
};

std::vector<std::uint8_t> frame(const FrameSpec& s) {
  std::vector<std::uint8_t> f(12, 0x02);
  auto put16 = [&](std::uint16_t v) {
    f.push_back(static_cast<std::uint8_t>(v >> 8));
    f.push_back(static_cast<std::uint8_t>(v));
  };
  if (s.vlan) {
    put16(0x8100);
    put16(0x6005);  // PCP 3, VID 5
  }
  put16(s.ipv6 ? 0x86DD : 0x0800);
  if (s.ipv6) {
    f.push_back(0x60);
    f.insert(f.end(), 5, 0);
    f.push_back(s.proto);
    f.push_back(64);
    f.insert(f.end(), 32, 0xfd);
  } else {
    f.push_back(static_cast<std::uint8_t>(0x40 | s.ihl));
    f.insert(f.end(), 5, 0);
    put16(s.frag);
    f.push_back(64);
    f.push_back(s.proto);
    f.insert(f.end(), 10, 10);                               // checksum, addresses
    f.insert(f.end(), (s.ihl > 5 ? s.ihl - 5 : 0) * 4u, 1);  // options
  }
  put16(0xC001);
  put16(s.dport);
  put16(0);
  put16(0);
  // BTH: opcode SEND only, flags, P_Key, reserved, DestQP, A/PSN.
  f.push_back(0x04);
  f.push_back(0x40);
  put16(0xFFFF);
  f.push_back(0);
  f.push_back(static_cast<std::uint8_t>(s.qpn >> 16));
  f.push_back(static_cast<std::uint8_t>(s.qpn >> 8));
  f.push_back(static_cast<std::uint8_t>(s.qpn));
  f.insert(f.end(), 4, 0);
  f.insert(f.end(), 4, 0xAA);  // ICRC
  return f;
}

SteerPeek peek(const std::vector<std::uint8_t>& f) {
  return steer_peek(f.data(), static_cast<std::uint32_t>(f.size()));
}

}  // namespace

TEST_CASE("RoCEv2 over IPv4, IPv6, tagged or not, with IPv4 options -> its dest QPN", "[wire][steer]") {
  for (bool vlan : {false, true})
    for (bool ipv6 : {false, true}) {
      FrameSpec s;
      s.vlan = vlan;
      s.ipv6 = ipv6;
      const SteerPeek p = peek(frame(s));
      CHECK(p.cls == SteerClass::kRoceV2);
      CHECK(p.dest_qpn == 0x123456);
    }
  FrameSpec opts;
  opts.ihl = 7;
  opts.qpn = 0xFFFFFF;
  CHECK(peek(frame(opts)).dest_qpn == 0xFFFFFF);
}

TEST_CASE("ARP, and ICMPv6 (ND) after the fixed IPv6 header, tagged or not -> the port's neighbour owner",
          "[wire][steer]") {
  for (bool vlan : {false, true}) {
    std::vector<std::uint8_t> arp(60, 0);
    const std::size_t t = vlan ? 16 : 12;
    if (vlan) {
      arp[12] = 0x81;
      arp[13] = 0x00;
    }
    arp[t] = 0x08;
    arp[t + 1] = 0x06;
    CHECK(peek(arp).cls == SteerClass::kNeighbour);
    FrameSpec nd;
    nd.vlan = vlan;
    nd.ipv6 = true;
    nd.proto = 58;
    CHECK(peek(frame(nd)).cls == SteerClass::kNeighbour);
    // Cut inside the IPv6 header: not judged, other.
    const std::vector<std::uint8_t> f = frame(nd);
    CHECK(steer_peek(f.data(), static_cast<std::uint32_t>(t + 2 + 39)).cls == SteerClass::kOther);
  }
  // ICMP over IPv4 (protocol 1) and ICMPv6 behind a hop-by-hop header are neither: other.
  FrameSpec icmp4;
  icmp4.proto = 1;
  CHECK(peek(frame(icmp4)).cls == SteerClass::kOther);
  FrameSpec hbh;
  hbh.ipv6 = true;
  hbh.proto = 0;
  CHECK(peek(frame(hbh)).cls == SteerClass::kOther);
}

TEST_CASE("MAC Control (PFC) -> every worker; other EtherTypes, UDP ports, protocols, fragments -> other",
          "[wire][steer]") {
  std::vector<std::uint8_t> pfc(60, 0);
  pfc[12] = 0x88;
  pfc[13] = 0x08;
  CHECK(peek(pfc).cls == SteerClass::kMacControl);
  FrameSpec s;
  s.dport = 4792;
  CHECK(peek(frame(s)).cls == SteerClass::kOther);
  s = FrameSpec{};
  s.proto = 6;
  CHECK(peek(frame(s)).cls == SteerClass::kOther);
  s = FrameSpec{};
  s.frag = 0x2000;  // MF: a first fragment
  CHECK(peek(frame(s)).cls == SteerClass::kOther);
  s.frag = 0x0010;  // a later fragment: no UDP header where the peek would look
  CHECK(peek(frame(s)).cls == SteerClass::kOther);
  s = FrameSpec{};
  s.ihl = 4;  // shorter than an IPv4 header
  CHECK(peek(frame(s)).cls == SteerClass::kOther);
  s = FrameSpec{};
  s.ipv6 = true;
  s.proto = 0;  // hop-by-hop extension header first
  CHECK(peek(frame(s)).cls == SteerClass::kOther);
}

TEST_CASE("a frame cut anywhere before the end of its BTH is other, and nothing past len is read", "[wire][steer]") {
  for (bool vlan : {false, true})
    for (bool ipv6 : {false, true}) {
      FrameSpec s;
      s.vlan = vlan;
      s.ipv6 = ipv6;
      const auto full = frame(s);
      const std::uint32_t bth_end = static_cast<std::uint32_t>(full.size()) - 4;  // before the ICRC
      for (std::uint32_t len = 0; len < bth_end; ++len) {
        // An exact-size heap copy: a sanitizer build sees any read past the end.
        const std::vector<std::uint8_t> cut(full.begin(), full.begin() + len);
        INFO("vlan " << vlan << " ipv6 " << ipv6 << " len " << len);
        CHECK(steer_peek(cut.data(), len).cls == SteerClass::kOther);
      }
      const std::vector<std::uint8_t> exact(full.begin(), full.begin() + bth_end);
      CHECK(steer_peek(exact.data(), bth_end).cls == SteerClass::kRoceV2);
    }
  CHECK(steer_peek(nullptr, 0).cls == SteerClass::kOther);
}
