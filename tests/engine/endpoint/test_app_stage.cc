// The endpoint's application stage: work posted there in answer to a received request leaves in
// the same poll's TX burst as the request's ACK (rx -> app -> timers -> tx -> flush).
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;

namespace {

// B's side of a request/response service: every message received is answered with its bytes.
struct Echo {
  explicit Echo(Lab& l) : lab(&l) {
    REQUIRE(lab->mem_b.register_memory(buf.data(), buf.size(), rc::kAccessLocalWrite, mr).ok());
  }
  Lab* lab;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(64 * 64);
  rc::MemoryRegion mr;
  std::uint32_t served = 0;
  void serve() {
    MessageView v;
    while (lab->b->receive_message(lab->qpn_b, v)) {
      std::uint8_t* slot = buf.data() + (served % 64) * 64;
      const std::uint32_t len = v.copy_to(slot, 64);
      lab->b->release(v);
      REQUIRE(lab->b->send_message(lab->qpn_b, slot, len, served, nullptr).ok());
      ++served;
    }
    rc::Completion c[8];
    while (lab->b->poll_cq(c, 8) != 0) {
    }
  }
};

// A sends one 16-byte request; returns B's frames sent by the poll that received it.
std::uint64_t frames_b_sends_on_the_request(Lab& lab, Echo& echo, bool as_app_stage) {
  static std::uint8_t req[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  static std::uint8_t reply[64];
  rc::MemoryRegion req_mr, reply_mr;
  REQUIRE(lab.mem_a.register_memory(req, sizeof(req), rc::kAccessLocalWrite, req_mr).ok());
  REQUIRE(lab.mem_a.register_memory(reply, sizeof(reply), rc::kAccessLocalWrite, reply_mr).ok());
  rc::RecvWr r;
  r.wr_id = 7;
  r.sge = {reinterpret_cast<std::uint64_t>(reply), sizeof(reply), reply_mr.lkey};
  REQUIRE(lab.a->post_recv(lab.qpn_a, r).ok());
  REQUIRE(lab.a->send_message(lab.qpn_a, req, sizeof(req), 1, nullptr).ok());
  lab.a->poll(lab.now_tsc());  // the request leaves A
  lab.relay.poll();            // and reaches B's port
  const std::uint64_t before = lab.b->counters().tx_frames;
  lab.b->poll(lab.now_tsc());
  if (!as_app_stage) echo.serve();  // the application after the poll, as before app stages
  const std::uint64_t sent = lab.b->counters().tx_frames - before;
  // Either way the reply reaches A in the end.
  bool got = false;
  REQUIRE(lab.run([&] {
    if (!as_app_stage) echo.serve();
    rc::Completion c[4];
    for (unsigned n = lab.a->poll_cq(c, 4), i = 0; i < n; ++i)
      if (c[i].is_recv)
        got = c[i].status == rc::WcStatus::kSuccess && c[i].byte_len == sizeof(req) &&
              std::memcmp(reply, req, sizeof(req)) == 0;
    return got;
  }));
  return sent;
}

LabOptions b_receives_views() {
  LabOptions o;
  o.b_recv_mode = rc::RecvMode::kMessageViews;
  o.b_rq_depth = 16;
  return o;
}

}  // namespace

TEST_CASE("app stage: a reply posted to a request leaves in the poll that received it, beside the ACK",
          "[engine][app_stage]") {
  SECTION("served as the endpoint's application stage: ACK and reply in one poll") {
    Lab lab("tapp1", b_receives_views());
    Echo echo(lab);
    lab.b->set_app_stage([](void* e) { static_cast<Echo*>(e)->serve(); }, &echo);
    CHECK(frames_b_sends_on_the_request(lab, echo, true) == 2);
    CHECK(echo.served == 1);
    lab.b->set_app_stage(nullptr, nullptr);
  }
  SECTION("served after the poll: the reply waits for the next poll") {
    Lab lab("tapp2", b_receives_views());
    Echo echo(lab);
    CHECK(frames_b_sends_on_the_request(lab, echo, false) == 1);
    CHECK(echo.served == 1);
  }
}
