// Helpers shared by the CM suites: encode to a MAD buffer, decode it back, look at bytes.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>

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

}  // namespace droce::cm::test
