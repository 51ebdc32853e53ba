// MessageView owns its message: move-only, and out of scope (or reset) its frames go back and the
// QP gets its receive credit again — with no release() call anywhere in this file.
#include <catch2/catch.hpp>
#include <type_traits>
#include <vector>

#include "engine/endpoint/message_view.h"
#include "engine/endpoint/qp_channel.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

static_assert(!std::is_copy_constructible_v<MessageView> && !std::is_copy_assignable_v<MessageView>);
static_assert(std::is_nothrow_move_constructible_v<MessageView> && std::is_nothrow_move_assignable_v<MessageView>);

TEST_CASE("message views give their frames and credits back when they go out of scope", "[engine][views]") {
  // 8 credits: 200 messages arrive only if every view's credit comes back without release().
  Lab lab("tvraii", LabOptions{0, false, rc::RecvMode::kMessageViews, 8});
  constexpr int kMsgs = 200;
  constexpr std::uint32_t kSize = 1500;
  std::vector<std::uint8_t> src(16 * kSize);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  const unsigned in_use_before = rte_mempool_in_use_count(pool().get());
  int posted = 0, acked = 0, got = 0, moved_checks = 0;
  const bool done = lab.run([&] {
    while (posted < kMsgs && posted - acked < 16) {
      const auto seq = static_cast<std::uint32_t>(posted);
      if (!lab.a->send_message(lab.qpn_a, src.data() + (posted % 16) * kSize, kSize, seq, &seq).ok()) break;
      ++posted;
    }
    rc::Completion c[16];
    for (unsigned n = lab.a->poll_cq(lab.qpn_a, c, 16), i = 0; i < n; ++i)
      acked += c[i].status == rc::WcStatus::kSuccess;
    for (;;) {
      MessageView v;
      if (!lab.b->receive_message(lab.qpn_b, v)) break;
      CHECK(v.held());
      CHECK(v.imm == static_cast<std::uint32_t>(got));
      // Moving hands the message on and leaves the source empty; only the last owner gives back.
      MessageView w = std::move(v);
      CHECK_FALSE(v.held());
      CHECK(v.segments == nullptr);
      CHECK(w.held());
      CHECK(w.length == kSize);
      MessageView x;
      x = std::move(w);
      CHECK(x.held());
      CHECK(lab.b->views_held() == 1);
      ++moved_checks;
      ++got;
    }  // v, w and x leave scope here: x gives back
    CHECK(lab.b->views_held() == 0);
    return got == kMsgs && acked == kMsgs;
  });
  CHECK(done);
  CHECK(moved_checks == kMsgs);
  // Move-assigning into a view that holds a message gives the old one back first.
  REQUIRE(lab.a->send_message(lab.qpn_a, src.data(), 64, 1).ok());
  REQUIRE(lab.a->send_message(lab.qpn_a, src.data(), 64, 2).ok());
  MessageView first, second;
  REQUIRE(lab.run([&] { return first.held() || lab.b->receive_message(lab.qpn_b, first); }));
  REQUIRE(lab.run([&] { return second.held() || lab.b->receive_message(lab.qpn_b, second); }));
  CHECK(lab.b->views_held() == 2);
  first = std::move(second);
  CHECK(lab.b->views_held() == 1);
  first.reset();
  CHECK_FALSE(first.held());
  CHECK(lab.b->views_held() == 0);
  for (int i = 0; i < 64; ++i) lab.poll();  // the last ACKs leave
  CHECK(rte_mempool_in_use_count(pool().get()) == in_use_before);
}

TEST_CASE("a view polled from a channel goes back to the worker when it goes out of scope",
          "[engine][channel][views]") {
  Lab lab("tvchr", LabOptions{0, false, rc::RecvMode::kMessageViews, 8});
  constexpr int kMsgs = 100;
  std::vector<std::uint8_t> src(64);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  QpChannel channel(64);
  int posted = 0, acked = 0, got = 0;
  // One thread plays both sides here (the channel's queues do not care which thread).
  const bool done = lab.run([&] {
    channel.service(*lab.b, lab.qpn_b);
    while (posted < kMsgs && posted - acked < 8) {
      const auto seq = static_cast<std::uint32_t>(posted);
      if (!lab.a->send_message(lab.qpn_a, src.data(), 64, seq, &seq).ok()) break;
      ++posted;
    }
    rc::Completion c[16];
    for (unsigned n = lab.a->poll_cq(lab.qpn_a, c, 16), i = 0; i < n; ++i)
      acked += c[i].status == rc::WcStatus::kSuccess;
    for (MessageView v; channel.poll_message(v);) {
      CHECK(v.home() == &channel);
      CHECK(v.imm == static_cast<std::uint32_t>(got));
      ++got;
    }
    return got == kMsgs && acked == kMsgs;
  });
  CHECK(done);
  channel.service(*lab.b, lab.qpn_b);
  CHECK(lab.b->views_held() == 0);
  CHECK(channel.lost_releases() == 0);
}
