// RSS placement (engine/workers/rss_placement.h): the Toeplitz hash of a RoCEv2 flow as a NIC
// computes it, checked against the published verification vectors, and the redirection table
// planned so that each connected QP's flow reaches its owner's queue.
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "engine/workers/rss_placement.h"
#include "protocols/wire/build.h"

using namespace droce;
using namespace droce::engine;

namespace {

// The default Toeplitz key of Microsoft's RSS specification ("Verifying the RSS Hash Calculation"),
// which DPDK's own thash tests also use.
constexpr std::array<std::uint8_t, 40> kMsKey = {0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
                                                 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
                                                 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
                                                 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

InboundFlow v4(std::array<std::uint8_t, 4> src, std::array<std::uint8_t, 4> dst, std::uint16_t sport,
               std::uint16_t owner = 0) {
  InboundFlow f;
  std::copy(src.begin(), src.end(), f.src_ip);
  std::copy(dst.begin(), dst.end(), f.dst_ip);
  f.src_port = sport;
  f.owner = owner;
  return f;
}

}  // namespace

TEST_CASE("RSS placement: the Toeplitz hash matches the published IPv4 + port vectors", "[workers][rss]") {
  // Source 66.9.149.187:2794 -> destination 161.142.100.80:1766 hashes to 0x51ccc178, and
  // 199.92.111.2:14230 -> 65.69.140.83:4739 to 0xc626b0ea (the specification's IPv4 with TCP table).
  CHECK(inbound_rss_hash(v4({66, 9, 149, 187}, {161, 142, 100, 80}, 2794), kMsKey, 1766) == 0x51ccc178u);
  CHECK(inbound_rss_hash(v4({199, 92, 111, 2}, {65, 69, 140, 83}, 14230), kMsKey, 4739) == 0xc626b0eau);
  // A key shorter than the tuple needs cannot hash it: 0, and nothing is read past it.
  CHECK(inbound_rss_hash(v4({1, 2, 3, 4}, {5, 6, 7, 8}, 0xC000), std::span<const std::uint8_t>(kMsKey.data(), 12)) ==
        0);
}

TEST_CASE("RSS placement: every QP's flow gets an entry leading to its owner; a shared entry is one conflict",
          "[workers][rss]") {
  // 2 workers, a 128-entry table in DPDK's default layout (entry i -> queue i % 2).
  std::vector<std::uint16_t> table(128);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::uint16_t>(i % 2);
  // 32 QPs of a droce pair, QP i on worker i % 2 (the apps' round robin), source ports as Linux
  // and droce derive them from the QPNs.
  std::vector<InboundFlow> flows;
  for (std::uint32_t i = 0; i < 32; ++i)
    flows.push_back(v4({10, 0, 0, 2}, {10, 0, 0, 1}, wire::roce_udp_src_port(0x11 + i, 0x11 + i),
                       static_cast<std::uint16_t>(i % 2)));
  const RetaPlan p = plan_reta(table, kMsKey, flows);
  REQUIRE(p.entries.size() == table.size());
  CHECK(p.placed + p.conflicts == flows.size());
  std::uint32_t reaching_owner = 0;
  for (const InboundFlow& f : flows) reaching_owner += p.entries[inbound_rss_hash(f, kMsKey) % table.size()] == f.owner;
  CHECK(reaching_owner == p.placed);
  // Only entries that now differ are marked changed, and untouched entries keep their queue.
  for (std::size_t i = 0; i < table.size(); ++i) CHECK(p.changed[i] == (p.entries[i] != table[i]));

  // Two flows on one entry with different owners: the first keeps it, the second is a conflict.
  const InboundFlow a = v4({10, 0, 0, 2}, {10, 0, 0, 1}, 0xC001, 0);
  InboundFlow b = a;
  b.owner = 1;
  const std::vector<InboundFlow> pair = {a, b};
  const RetaPlan q = plan_reta(table, kMsKey, pair);
  CHECK(q.placed == 1);
  CHECK(q.conflicts == 1);
  CHECK(q.entries[inbound_rss_hash(a, kMsKey) % table.size()] == 0);
  // The same owner twice shares the entry without conflict.
  const std::vector<InboundFlow> same = {a, a};
  CHECK(plan_reta(table, kMsKey, same).placed == 2);
  // No table at all: nothing is placed, every flow counts as a conflict.
  CHECK(plan_reta(std::vector<std::uint16_t>{}, kMsKey, pair).conflicts == 2);
}

TEST_CASE("RSS placement: IPv6 flows hash over both 128-bit addresses", "[workers][rss]") {
  InboundFlow f;
  f.ipv6 = true;
  f.src_ip[15] = 2;
  f.dst_ip[15] = 1;
  f.src_port = 0xC123;
  InboundFlow g = f;
  g.src_ip[0] = 0x20;  // a bit early in the source address changes the hash
  CHECK(inbound_rss_hash(f, kMsKey) != inbound_rss_hash(g, kMsKey));
  InboundFlow as_v4 = f;
  as_v4.ipv6 = false;  // the IPv4 tuple reads only the first 4 address bytes (0 here)
  CHECK(inbound_rss_hash(f, kMsKey) != inbound_rss_hash(as_v4, kMsKey));
}
