// R_Keys hard to guess (docs/hardening.md, "Keys"): a random 8-bit key part per registration from
// a seedable source, never the slot's previous one; a forced R_Key for capture replays.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <vector>

#include "protocols/rc/mr_table.h"

using droce::rc::MrCheck;
using droce::rc::MrTable;

namespace {
constexpr std::uint32_t kRw = droce::rc::kAccessRemoteWrite | droce::rc::kAccessRemoteRead;
}

TEST_CASE("R_Key = random key part [31:24] | R bit 23 | slot [15:0]; the L_Key differs only in bit 23",
          "[rc][mr][hardening]") {
  std::vector<std::uint8_t> buf(4096);
  MrTable t(8, 42);
  const auto mr = t.register_region(buf.data(), buf.size(), kRw);
  REQUIRE(mr);
  CHECK((mr->rkey & 0xFFFF) == mr->index);
  CHECK((mr->rkey & MrTable::kRkeyBit) != 0);
  CHECK((mr->rkey >> 24) != 0);
  CHECK((mr->rkey ^ mr->lkey) == MrTable::kRkeyBit);
  CHECK(t.check_remote(mr->rkey, reinterpret_cast<std::uint64_t>(buf.data()), 8, kRw, nullptr) == MrCheck::kOk);
}

TEST_CASE("key parts: the same seed gives the same keys, another seed other keys", "[rc][mr][hardening]") {
  std::vector<std::uint8_t> buf(4096);
  const auto keys = [&](std::uint64_t seed) {
    MrTable t(64, seed);
    std::vector<std::uint32_t> k;
    for (int i = 0; i < 32; ++i) k.push_back(t.register_region(buf.data(), buf.size(), kRw)->rkey);
    return k;
  };
  CHECK(keys(7) == keys(7));
  CHECK(keys(7) != keys(8));
  // Re-seeding a table repeats what a fresh table with that seed gives.
  MrTable t(64, 1);
  t.seed_keys(7);
  CHECK(t.register_region(buf.data(), buf.size(), kRw)->rkey == keys(7)[0]);
}

TEST_CASE("a guessed R_Key with the right slot and a wrong key part is refused; a slot never repeats its last part",
          "[rc][mr][hardening]") {
  std::vector<std::uint8_t> buf(4096);
  MrTable t(1, 99);  // one slot: every registration reuses it
  const auto va = reinterpret_cast<std::uint64_t>(buf.data());
  std::set<std::uint32_t> parts;
  std::uint32_t previous = 0;
  for (int i = 0; i < 20'000; ++i) {
    const auto mr = t.register_region(buf.data(), buf.size(), kRw);
    REQUIRE(mr);
    const std::uint32_t part = mr->rkey >> 24;
    REQUIRE(part != 0);
    REQUIRE(part != previous);  // the stale key of the slot's last region never matches this one
    if (previous != 0) {
      REQUIRE(t.check_remote((previous << 24) | MrTable::kRkeyBit, va, 8, kRw, nullptr) == MrCheck::kBadKey);
    }
    parts.insert(part);
    previous = part;
    REQUIRE(t.deregister_region(mr->lkey));
  }
  // Every one of the 255 parts occurs: a guess knowing the slot is right at most 1 in 254 times.
  CHECK(parts.size() == 255);
  // Of all 256 key parts for a live region's slot, exactly one is accepted.
  const auto mr = t.register_region(buf.data(), buf.size(), kRw);
  int accepted = 0;
  for (std::uint32_t k = 0; k < 256; ++k)
    accepted += t.check_remote((k << 24) | MrTable::kRkeyBit | mr->index, va, 8, kRw, nullptr) == MrCheck::kOk;
  CHECK(accepted == 1);
}

TEST_CASE("capture replays: register_region_with_rkey gives exactly the recorded R_Key; a taken slot is refused",
          "[rc][mr][hardening]") {
  std::vector<std::uint8_t> buf(4096);
  const auto va = reinterpret_cast<std::uint64_t>(buf.data());
  MrTable t(1024);
  const auto mr = t.register_region_with_rkey(buf.data(), buf.size(), kRw, 0x00000305u);  // rxe's index<<8 | key
  REQUIRE(mr);
  CHECK(mr->rkey == 0x00000305u);
  CHECK(mr->lkey == (0x00000305u ^ MrTable::kRkeyBit));
  CHECK(mr->index == 0x305);
  CHECK(t.check_remote(0x305, va, 8, kRw, nullptr) == MrCheck::kOk);
  CHECK(t.check_local(mr->lkey, va, 8, 0, nullptr) == MrCheck::kOk);
  CHECK_FALSE(t.register_region_with_rkey(buf.data(), buf.size(), kRw, 0xAB000305u));  // slot 0x305 is taken
  CHECK_FALSE(t.register_region_with_rkey(buf.data(), buf.size(), kRw, 0x0000FFFFu));  // beyond 1024 slots
  CHECK_FALSE(t.register_region_with_rkey(nullptr, 8, kRw, 0x10u));
  // Ordinary registrations go around the forced slot.
  for (int i = 0; i < 1023; ++i) REQUIRE(t.register_region(buf.data(), buf.size(), kRw));
  CHECK_FALSE(t.register_region(buf.data(), buf.size(), kRw));
  CHECK(t.check_remote(0x305, va, 8, kRw, nullptr) == MrCheck::kOk);
}
