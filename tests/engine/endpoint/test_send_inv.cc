// SEND with Invalidate through two endpoints: the frames the engine builds carry the IETH, and the
// receiver's completion or message view says which key was invalidated.
#include <catch2/catch.hpp>
#include <vector>

#include "engine/endpoint/message_view.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

namespace {

// Posts a SEND with Invalidate of `len` bytes A -> B naming `rkey`; returns A's completion.
rc::Completion send_with_inv(Lab& lab, const std::vector<std::uint8_t>& src, const rc::MemoryRegion& smr,
                             std::uint32_t len, std::uint32_t rkey) {
  rc::SendWr wr;
  wr.wr_id = 77;
  wr.opcode = rc::WrOpcode::kSendWithInv;
  wr.invalidate_rkey = rkey;
  wr.sge = {reinterpret_cast<std::uint64_t>(src.data()), len, smr.lkey};
  REQUIRE(lab.a->post_send(lab.qpn_a, wr).ok());
  rc::Completion c{};
  REQUIRE(lab.run([&] { return lab.a->poll_cq(lab.qpn_a, &c, 1) == 1; }));
  return c;
}

}  // namespace

TEST_CASE("endpoint: SEND with Invalidate completes the receive with the key and invalidates it", "[engine][inv]") {
  const std::uint32_t len = GENERATE(64u, 5000u);  // one packet, and several at any PMTU
  Lab lab(len == 64 ? "tinv1" : "tinv2", LabOptions{});
  std::vector<std::uint8_t> src(8192, 0x4C), dst(8192), target(256);
  rc::MemoryRegion smr, dmr, tmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  REQUIRE(
      lab.mem_b.register_memory(target.data(), target.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteInvalidate, tmr)
          .ok());
  REQUIRE(lab.b->post_recv(lab.qpn_b, {5, {reinterpret_cast<std::uint64_t>(dst.data()), 8192, dmr.lkey}}).ok());
  const rc::Completion sc = send_with_inv(lab, src, smr, len, tmr.rkey);
  CHECK(sc.status == rc::WcStatus::kSuccess);
  CHECK(sc.opcode == rc::WcOpcode::kSend);
  rc::Completion rcv{};
  REQUIRE(lab.run([&] { return lab.b->poll_cq(lab.qpn_b, &rcv, 1) == 1; }));
  CHECK(rcv.status == rc::WcStatus::kSuccess);
  CHECK(rcv.opcode == rc::WcOpcode::kRecvWithInv);
  CHECK(rcv.has_invalidate);
  CHECK(rcv.invalidated_rkey == tmr.rkey);
  CHECK(rcv.byte_len == len);
  CHECK(dst[len - 1] == 0x4C);
  CHECK(lab.mem_b.table().check_remote(tmr.rkey, reinterpret_cast<std::uint64_t>(target.data()), 8,
                                       rc::kAccessRemoteWrite, nullptr) == rc::MrCheck::kBadKey);
}

TEST_CASE("endpoint views: a SEND with Invalidate's view carries the invalidated key", "[engine][views][inv]") {
  Lab lab("tinvv", LabOptions{0, false, rc::RecvMode::kMessageViews, 8});
  std::vector<std::uint8_t> src(4096, 0x21), target(256);
  rc::MemoryRegion smr, tmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(target.data(), target.size(), rc::kAccessRemoteInvalidate, tmr).ok());
  const rc::Completion sc = send_with_inv(lab, src, smr, 3000, tmr.rkey);
  CHECK(sc.status == rc::WcStatus::kSuccess);
  MessageView v;
  REQUIRE(lab.run([&] { return v.held() || lab.b->receive_message(lab.qpn_b, v); }));
  CHECK(v.length == 3000);
  CHECK(v.has_invalidate);
  CHECK(v.invalidated_rkey == tmr.rkey);
  CHECK_FALSE(v.has_imm);
  v.reset();
  // A plain SEND afterwards: its view says nothing of an invalidation.
  REQUIRE(lab.a->send_message(lab.qpn_a, src.data(), 64, 2).ok());
  REQUIRE(lab.run([&] { return v.held() || lab.b->receive_message(lab.qpn_b, v); }));
  CHECK_FALSE(v.has_invalidate);
  CHECK(v.invalidated_rkey == 0);
}
