// Test frames for the lab fabric: Ethernet + IPv4 or IPv6 + UDP towards RoCEv2's port 4791, with
// the addresses and source port a test chooses (what ECMP hashes).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace droce::test {

inline std::vector<std::uint8_t> udp4_frame(std::uint32_t src, std::uint32_t dst, std::uint16_t sport,
                                            std::uint16_t payload = 64) {
  std::vector<std::uint8_t> f(14 + 20 + 8 + payload, 0);
  f[0] = 0x02;
  f[5] = 0x99;  // a destination MAC no switch learned: routing alone must carry it
  f[6] = 0x02;
  f[11] = 0x01;
  f[12] = 0x08;
  std::uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[1] = 26 << 2 | 2;  // DSCP 26, ECT(0)
  const auto total = static_cast<std::uint16_t>(20 + 8 + payload);
  ip[2] = static_cast<std::uint8_t>(total >> 8);
  ip[3] = static_cast<std::uint8_t>(total);
  ip[8] = 64;
  ip[9] = 17;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<std::uint8_t>(src >> (24 - 8 * i));
    ip[16 + i] = static_cast<std::uint8_t>(dst >> (24 - 8 * i));
  }
  std::uint8_t* udp = ip + 20;
  udp[0] = static_cast<std::uint8_t>(sport >> 8);
  udp[1] = static_cast<std::uint8_t>(sport);
  udp[2] = 4791 >> 8;
  udp[3] = 4791 & 0xFF;
  return f;
}

inline std::vector<std::uint8_t> udp6_frame(const std::array<std::uint8_t, 16>& src,
                                            const std::array<std::uint8_t, 16>& dst, std::uint16_t sport,
                                            std::uint16_t payload = 64) {
  std::vector<std::uint8_t> f(14 + 40 + 8 + payload, 0);
  f[0] = 0x02;
  f[5] = 0x99;
  f[6] = 0x02;
  f[11] = 0x01;
  f[12] = 0x86;
  f[13] = 0xDD;
  std::uint8_t* ip = f.data() + 14;
  ip[0] = 0x60;
  const auto plen = static_cast<std::uint16_t>(8 + payload);
  ip[4] = static_cast<std::uint8_t>(plen >> 8);
  ip[5] = static_cast<std::uint8_t>(plen);
  ip[6] = 17;
  ip[7] = 64;
  std::memcpy(ip + 8, src.data(), 16);
  std::memcpy(ip + 24, dst.data(), 16);
  std::uint8_t* udp = ip + 40;
  udp[0] = static_cast<std::uint8_t>(sport >> 8);
  udp[1] = static_cast<std::uint8_t>(sport);
  udp[2] = 4791 >> 8;
  udp[3] = 4791 & 0xFF;
  return f;
}

}  // namespace droce::test
