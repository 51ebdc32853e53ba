// The telemetry commands' parameters: decimal or 0x hex (QPNs as the reports print them), and a
// reason that names the field at fault.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "engine/core/telemetry_params.h"

using droce::engine::parse_telemetry_ids;

namespace {
constexpr const char* kTwo[] = {"endpoint id", "QPN"};
constexpr const char* kOne[] = {"port_id"};
}  // namespace

TEST_CASE("telemetry parameters: decimal and 0x hex, exactly as many as named", "[telemetry]") {
  std::uint32_t two[2] = {};
  std::string why;
  REQUIRE(parse_telemetry_ids("3,0x0011", two, kTwo, why));
  CHECK(two[0] == 3);
  CHECK(two[1] == 0x11);
  REQUIRE(parse_telemetry_ids("0X1A,4294967295", two, kTwo, why));
  CHECK(two[0] == 0x1a);
  CHECK(two[1] == UINT32_MAX);
  REQUIRE(parse_telemetry_ids("010,17", two, kTwo, why));  // a leading 0 is decimal, never octal
  CHECK(two[0] == 10);
  std::uint32_t one = 0;
  REQUIRE(parse_telemetry_ids("0", std::span(&one, 1), kOne, why));
  CHECK(one == 0);
}

TEST_CASE("telemetry parameters: each bad one refused with the field named", "[telemetry]") {
  std::uint32_t two[2] = {};
  std::string why;
  const auto refused = [&](const char* params) {
    why.clear();
    return !parse_telemetry_ids(params, two, kTwo, why);
  };
  CHECK(refused(nullptr));
  CHECK(why.rfind("no parameters; parameters: endpoint id,QPN", 0) == 0);
  CHECK(refused(""));
  CHECK(refused("3"));
  CHECK(why.rfind("missing QPN;", 0) == 0);
  CHECK(refused("3,"));
  CHECK(why.rfind("bad QPN '';", 0) == 0);
  CHECK(refused("x,1"));
  CHECK(why.rfind("bad endpoint id 'x';", 0) == 0);
  CHECK(refused("1,0x"));
  CHECK(refused("1,0xg1"));
  CHECK(refused("1,-2"));
  CHECK(refused("1,+2"));
  CHECK(refused("1, 2"));
  CHECK(refused("1,4294967296"));  // 2^32
  CHECK(refused("1,0x100000000"));
  CHECK(refused("1,99999999999999999999999"));
  CHECK(refused("1,2,3"));
  CHECK(why.rfind("too many parameters;", 0) == 0);
  CHECK(why.find("(each decimal or 0x hex)") != std::string::npos);
}
