// Atomics through two endpoints: the engine builds CmpSwap / FetchAdd frames with their AtomicETH
// and the ATOMIC ACKNOWLEDGE with its AtomicAckETH, and the parsed results reach memory and
// completions (the RC rules themselves are tests/rc/test_rc_atomics.cc).
#include <catch2/catch.hpp>
#include <vector>

#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

TEST_CASE("endpoint: FetchAdd and CmpSwap over the wire change the peer's word and return its original value",
          "[engine][atomic]") {
  Lab lab("tatom", LabOptions{});
  std::vector<std::uint64_t> results(4, ~0ull), words(2, 0);
  words[0] = 1000;
  words[1] = 0x0123456789ABCDEFull;
  rc::MemoryRegion rmr, wmr;
  REQUIRE(lab.mem_a.register_memory(results.data(), results.size() * 8, rc::kAccessLocalWrite, rmr).ok());
  REQUIRE(lab.mem_b.register_memory(words.data(), words.size() * 8, rc::kAccessRemoteAtomic, wmr).ok());
  auto post = [&](std::uint64_t id, rc::WrOpcode op, std::size_t word, std::uint64_t compare_add, std::uint64_t swap) {
    rc::SendWr wr;
    wr.wr_id = id;
    wr.opcode = op;
    wr.sge = {reinterpret_cast<std::uint64_t>(&results[id]), 8, rmr.lkey};
    wr.remote_addr = reinterpret_cast<std::uint64_t>(&words[word]);
    wr.rkey = wmr.rkey;
    wr.compare_add = compare_add;
    wr.swap = swap;
    REQUIRE(lab.a->post_send(lab.qpn_a, wr).ok());
  };
  post(0, rc::WrOpcode::kFetchAdd, 0, 0x100000001ull, 0);
  post(1, rc::WrOpcode::kCmpSwap, 1, 0x0123456789ABCDEFull, 42);  // matches: swapped
  post(2, rc::WrOpcode::kCmpSwap, 1, 7, 43);                      // does not: left
  std::vector<rc::Completion> done;
  REQUIRE(lab.run([&] {
    rc::Completion c{};
    while (lab.a->poll_cq(lab.qpn_a, &c, 1) == 1) done.push_back(c);
    return done.size() == 3;
  }));
  for (const auto& c : done) CHECK(c.status == rc::WcStatus::kSuccess);
  CHECK(done[0].opcode == rc::WcOpcode::kFetchAdd);
  CHECK(done[1].opcode == rc::WcOpcode::kCompSwap);
  CHECK(done[0].byte_len == 8);
  CHECK(results[0] == 1000);
  CHECK(results[1] == 0x0123456789ABCDEFull);  // the full 64 bits, byte order intact
  CHECK(results[2] == 42);
  CHECK(words[0] == 1000 + 0x100000001ull);
  CHECK(words[1] == 42);
}
