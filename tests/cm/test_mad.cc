// parse_mad: one refusal per rule, each with its code and sentence, and what it accepts.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "tests/cm/cm_test_util.h"

using namespace droce::cm;
using droce::cm::test::encode;
using droce::cm::test::Mad;

namespace {

MadRefusal parse(const Mad& m) {
  MadHeader h;
  return parse_mad(m.data(), kMadBytes, h);
}

}  // namespace

TEST_CASE("mad: a CM Send of each attribute REQ..DREP is accepted with its header fields", "[cm][mad]") {
  const CmBody bodies[] = {CmReq{}, CmMra{}, CmRej{}, CmRep{}, CmRtu{}, CmDreq{}, CmDrep{}};
  std::uint16_t attr = 0x0010;
  for (const auto& b : bodies) {
    const Mad m = encode(b, 0xFEDCBA9876543210ull);
    MadHeader h;
    REQUIRE(parse_mad(m.data(), kMadBytes, h) == MadRefusal::kNone);
    CHECK(h.base_version == 1);
    CHECK(h.mgmt_class == 0x07);
    CHECK(h.class_version == 2);
    CHECK(h.method == 0x03);
    CHECK(h.tid == 0xFEDCBA9876543210ull);
    CHECK(h.attr_id == attr++);
    CHECK(h.attr_mod == 0);
  }
}

TEST_CASE("mad: the header writer puts each field at its offset", "[cm][mad]") {
  MadHeader h;
  h.method = 0x81;
  h.status = 0x1234;
  h.class_specific = 0x5678;
  h.tid = 0x0102030405060708ull;
  h.attr_id = 0x0015;
  h.attr_mod = 0xA1B2C3D4;
  std::uint8_t out[kMadHeaderBytes];
  std::memset(out, 0xEE, sizeof(out));
  write_mad_header(h, out);
  const std::uint8_t want[24] = {1, 7, 2, 0x81, 0x12, 0x34, 0x56, 0x78, 1,    2,    3,    4,
                                 5, 6, 7, 8,    0x00, 0x15, 0,    0,    0xA1, 0xB2, 0xC3, 0xD4};
  CHECK(std::memcmp(out, want, 24) == 0);
}

TEST_CASE("mad: each rule refuses with its own code and words", "[cm][mad]") {
  const Mad good = encode(CmReq{});
  SECTION("length") {
    std::vector<std::uint8_t> longer(good.begin(), good.end());
    longer.push_back(0);
    MadHeader h;
    CHECK(parse_mad(good.data(), 255, h) == MadRefusal::kTooShort);
    CHECK(parse_mad(good.data(), 0, h) == MadRefusal::kTooShort);
    CHECK(parse_mad(longer.data(), 257, h) == MadRefusal::kTooLong);
  }
  SECTION("base version") {
    Mad m = good;
    m[0] = 2;
    CHECK(parse(m) == MadRefusal::kBadBaseVersion);
  }
  SECTION("management class") {
    Mad m = good;
    m[1] = 0x04;  // a performance-management MAD
    CHECK(parse(m) == MadRefusal::kNotCm);
  }
  SECTION("class version") {
    Mad m = good;
    m[2] = 1;
    CHECK(parse(m) == MadRefusal::kBadClassVersion);
  }
  SECTION("method") {
    for (const std::uint8_t method : {0x01, 0x02, 0x81, 0x83, 0x00, 0x7F}) {
      Mad m = good;
      m[3] = method;
      INFO("method " << int{method});
      CHECK(parse(m) == MadRefusal::kBadMethod);
    }
  }
  SECTION("attributes outside REQ..DREP") {
    for (const std::uint16_t attr : {0x0001, 0x0017, 0x0018, 0x0019, 0x001A}) {
      Mad m = good;
      m[16] = static_cast<std::uint8_t>(attr >> 8);
      m[17] = static_cast<std::uint8_t>(attr);
      CHECK(parse(m) == MadRefusal::kUnsupportedAttribute);
    }
    for (const std::uint16_t attr : {0x0000, 0x000F, 0x001B, 0x0110, 0xFFFF}) {
      Mad m = good;
      m[16] = static_cast<std::uint8_t>(attr >> 8);
      m[17] = static_cast<std::uint8_t>(attr);
      CHECK(parse(m) == MadRefusal::kUnknownAttribute);
    }
  }
  SECTION("decode_cm refuses with the same codes") {
    Mad m = good;
    m[2] = 3;
    CmMessage msg;
    CHECK(decode_cm(m.data(), kMadBytes, msg) == MadRefusal::kBadClassVersion);
  }
}

TEST_CASE("mad: every refusal has a name and a sentence, and a Status that carries them", "[cm][mad]") {
  for (std::size_t i = 0; i < kMadRefusalCount; ++i) {
    const auto r = static_cast<MadRefusal>(i);
    CHECK_FALSE(mad_refusal_name(r).empty());
    CHECK(std::string(mad_refusal_text(r)).size() > 5);
  }
  CHECK(mad_refusal_name(MadRefusal::kBadMethod) == "bad_method");
  CHECK(mad_status(MadRefusal::kNone).ok());
  const droce::Status s = mad_status(MadRefusal::kNotCm);
  CHECK(s.code() == droce::StatusCode::kPeer);
  CHECK(s.message() == mad_refusal_text(MadRefusal::kNotCm));
}

TEST_CASE("mad: status, class-specific, attribute modifier and reserved bytes are not judged", "[cm][mad]") {
  Mad m = encode(CmRtu{});
  m[4] = 0xFF;
  m[6] = 0xFF;
  m[18] = 0xFF;
  m[23] = 0x01;
  MadHeader h;
  REQUIRE(parse_mad(m.data(), kMadBytes, h) == MadRefusal::kNone);
  CHECK(h.status == 0xFF00);
  CHECK(h.class_specific == 0xFF00);
  CHECK(h.attr_mod == 1);
}
