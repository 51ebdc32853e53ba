// Helpers shared by the CM suites: encode to a MAD buffer, decode it back, look at bytes.
#pragma once

#include <array>
#include <catch2/catch.hpp>
#include <cstdint>

#include "protocols/cm/cm_connection.h"
#include "protocols/cm/cm_messages.h"

namespace droce::cm::test {

using Mad = std::array<std::uint8_t, kMadBytes>;

inline Mad encode(const CmBody& body, std::uint64_t tid = 0x0102030405060708ull) {
  Mad m{};
  encode_cm(body, tid, m.data());
  return m;
}

inline CmMessage decode(const std::uint8_t* mad) {
  CmMessage m;
  REQUIRE(decode_cm(mad, kMadBytes, m) == MadRefusal::kNone);
  return m;
}
inline CmMessage decode(const Mad& mad) { return decode(mad.data()); }

// Byte `off` of the MAD data (after the 24-byte header).
inline std::uint8_t data_byte(const Mad& m, std::uint32_t off) { return m[kMadHeaderBytes + off]; }

// The MAD `i` of a step, decoded.
inline CmMessage out_msg(const CmOutput& o, std::uint32_t i = 0) {
  REQUIRE(o.mad_count > i);
  return decode(o.mads[i]);
}

inline CmLocalConfig config(std::uint32_t qpn, std::uint32_t psn) {
  CmLocalConfig c;
  c.qpn = qpn;
  c.start_psn = psn;
  c.ca_guid = 0x0002C90300000000ull | qpn;
  c.cm_response_timeout = 10;  // 4.2 ms
  c.packet_life_time = 8;      // 1 ms
  c.max_cm_retries = 3;
  return c;
}

}  // namespace droce::cm::test
