// droce-gen's control lines (apps/droce-gen/control_lines.h): MR, END and RESULT round-trip, and
// whatever a peer may not send is refused as kPeer with the field named.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-gen/control_lines.h"
#include "engine/exchange/oob_exchange.h"

using namespace droce::gen;
using droce::StatusCode;
using droce::engine::kMaxLineCount;

TEST_CASE("numbers in droce-gen's lines are digits only and in range; the error names the field",
          "[apps][gen][hostile]") {
  std::vector<std::uint64_t> counts;
  SECTION("END: one count per QP") {
    REQUIRE(parse_end_line(format_end_line({0, 42, kMaxLineCount}), 3, counts).ok());
    CHECK(counts == std::vector<std::uint64_t>{0, 42, kMaxLineCount});
    for (const char* bad : {"END -5", "END +5", "END 5x", "END 0x10", "END 1e3", "END 18446744073709551611",
                            "END 9007199254740992", "END  5", "END 5 ", "END ", "END"}) {
      INFO(bad);
      CHECK_FALSE(parse_end_line(bad, 1, counts).ok());
    }
    CHECK(parse_end_line("END -5", 1, counts).code() == StatusCode::kPeer);
    CHECK(parse_end_line("END -5", 1, counts).message().find("QP 0's count '-5'") != std::string::npos);
    CHECK(parse_end_line("END 1 2", 1, counts).message().find("2 counts for 1 QPs") != std::string::npos);
    CHECK(parse_end_line("RESULT 1", 1, counts).message().find("'END <count per QP>'") != std::string::npos);
  }
  SECTION("MR: vaddr and rkey hex, slots decimal") {
    MrLine m;
    REQUIRE(parse_mr_line(format_mr_line({0x7f00deadbeef, 0x1234, 64}), m).ok());
    CHECK((m.vaddr == 0x7f00deadbeef && m.rkey == 0x1234 && m.slots == 64));
    REQUIRE(parse_mr_line("MR ffffffffffffffff ffffffff 4294967295", m).ok());
    CHECK(parse_mr_line("MR 10000000000000000 1 1", m).code() == StatusCode::kPeer);
    CHECK(parse_mr_line("MR 10000000000000000 1 1", m).message().find("vaddr") != std::string::npos);
    CHECK(parse_mr_line("MR -1 1 1", m).message().find("vaddr") != std::string::npos);
    CHECK(parse_mr_line("MR 1 100000000 1", m).message().find("rkey") != std::string::npos);
    CHECK(parse_mr_line("MR 1 0x1 1", m).message().find("rkey") != std::string::npos);
    CHECK(parse_mr_line("MR 1 1 0", m).message().find("slots") != std::string::npos);
    CHECK(parse_mr_line("MR 1 1 4294967296", m).message().find("slots") != std::string::npos);
    CHECK(parse_mr_line("MR 1 1 -1", m).message().find("slots") != std::string::npos);
    CHECK(parse_mr_line("MR 1 1", m).message().find("'MR <vaddr> <rkey> <slots>'") != std::string::npos);
  }
  SECTION("RESULT: six counts") {
    ResultLine r;
    REQUIRE(parse_result_line(format_result_line({100, 1, 2, 3, 4, 5}), r).ok());
    CHECK((r.received == 100 && r.lost == 1 && r.duplicated == 2 && r.out_of_order == 3 && r.corrupted == 4 &&
           r.errors == 5));
    CHECK(parse_result_line("RESULT 1 2 3 -4 5 6", r).code() == StatusCode::kPeer);
    CHECK(parse_result_line("RESULT 1 2 3 -4 5 6", r).message().find("out of order '-4'") != std::string::npos);
    CHECK(parse_result_line("RESULT 1 2 3 4 5 99999999999999999999", r).message().find("errors") != std::string::npos);
    CHECK_FALSE(parse_result_line("RESULT 1 2 3 4 5", r).ok());
    CHECK_FALSE(parse_result_line("RESULT 1 2 3 4 5 6 7", r).ok());
  }
}
