// droce-echo's end-of-run linger (apps/droce-echo/end_linger.h): how long a side that has finished
// keeps answering, read from the control connection (socket pairs, a clock the test moves), and
// the race it closes, on the engine's lab link with a clock the test controls: the ACK of a SEND
// is lost after its receiver has finished; the sender's retransmission is acknowledged while the
// receiver lingers, and exhausts its retries when the receiver has stopped.
#include <rte_ethdev.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "apps/droce-echo/end_linger.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;
using droce::echo::EndLinger;
using Peer = EndLinger::Peer;

namespace {

constexpr std::uint64_t kHz = 1'000'000'000;  // the policy tests' clock: `now` in ns
constexpr std::uint64_t kMs = kHz / 1000;

// Our end of a control connection and the peer's raw socket.
struct Pair {
  engine::OobConnection ours;
  int peer = -1;
  Pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    ours = engine::OobConnection(fds[0]);
    peer = fds[1];
  }
  ~Pair() {
    if (peer >= 0) ::close(peer);
  }
  void say(const std::string& s) const { REQUIRE(::send(peer, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size())); }
  std::string heard() const {
    char b[64] = {};
    const ssize_t n = ::recv(peer, b, sizeof(b) - 1, MSG_DONTWAIT);
    return n > 0 ? std::string(b, static_cast<std::size_t>(n)) : std::string();
  }
};

}  // namespace

TEST_CASE("end linger: FIN goes out at the start; the peer's FIN ends the linger at once", "[apps][linger]") {
  Pair p;
  EndLinger l(p.ours, kHz, 30.0);
  CHECK_FALSE(l.lingering(0));  // not started: nothing to wait for
  l.start(100 * kMs);
  CHECK(p.heard() == "FIN\n");
  CHECK(l.lingering(100 * kMs));
  CHECK(l.lingering(5000 * kMs));  // an open, silent peer: still running
  CHECK(l.peer() == Peer::kSilent);
  p.say("FIN\n");
  CHECK_FALSE(l.lingering(5002 * kMs));
  CHECK(l.peer() == Peer::kFin);
  CHECK(l.lingered_ms() == Approx(4902));
  CHECK_FALSE(l.lingering(5003 * kMs));  // ended stays ended
}

TEST_CASE("end linger: a FIN that came before our own run ended is read at the first look", "[apps][linger]") {
  Pair p;
  p.say("FIN\n");  // the peer finished first and lingers for ours
  EndLinger l(p.ours, kHz, 30.0);
  l.start(0);
  CHECK_FALSE(l.lingering(0));
  CHECK(l.peer() == Peer::kFin);
  CHECK(l.lingered_ms() == 0);
}

TEST_CASE("end linger: a peer that closed the control connection (ibv_srq_pingpong) gets twice its retry span",
          "[apps][linger]") {
  Pair p;
  ::close(p.peer);
  p.peer = -1;
  EndLinger l(p.ours, kHz, 30.0);
  l.start(0);
  CHECK(l.lingering(1 * kMs));
  CHECK(l.peer() == Peer::kClosed);
  // 2 x 8 x 4.096 us x 2^14: the tool's first transmission and its 7 retries, twice over.
  CHECK(echo::kToolLingerNs == 1'073'741'824);
  CHECK(l.lingering(echo::kToolLingerNs - 1));
  CHECK_FALSE(l.lingering(echo::kToolLingerNs));
  CHECK(l.lingered_ms() == Approx(1073.741824));
}

TEST_CASE("end linger: a line other than FIN is not droce-echo's end: the tool's bound", "[apps][linger][hostile]") {
  Pair p;
  p.say("HELLO\n");
  EndLinger l(p.ours, kHz, 30.0);
  l.start(0);
  CHECK(l.lingering(0));
  CHECK(l.peer() == Peer::kClosed);
  CHECK_FALSE(l.lingering(echo::kToolLingerNs));
}

TEST_CASE("end linger: a peer that never says FIN is waited for --timeout, no longer", "[apps][linger]") {
  Pair p;
  EndLinger l(p.ours, kHz, 2.5);
  l.start(0);
  CHECK(l.lingering(2499 * kMs));
  CHECK_FALSE(l.lingering(2500 * kMs));
  CHECK(l.peer() == Peer::kSilent);
}

namespace {

// One round of the lab with B's frames to A thrown away (B's ACK lost on the wire), or with B
// polled no more (B has stopped), the clock moving 1 ms a round as in Lab::poll.
void round_dropping_b_to_a(Lab& lab) {
  lab.clock_tsc += lab.step_tsc;
  lab.a->poll(lab.now_tsc());
  lab.relay.pump(lab.relay.p1, lab.relay.p2);
  lab.b->poll(lab.now_tsc());
  rte_mbuf* m[32];
  for (std::uint16_t n = rte_eth_rx_burst(lab.relay.p2, 0, m, 32), i = 0; i < n; ++i) rte_pktmbuf_free(m[i]);
}
void round_without_b(Lab& lab) {
  lab.clock_tsc += lab.step_tsc;
  lab.a->poll(lab.now_tsc());
  lab.relay.poll();
}

// A SENDs one message to B, B receives it, and B's ACK is lost: B's part of the run is over.
void send_with_lost_ack(Lab& lab, std::vector<std::uint8_t>& a_buf, std::vector<std::uint8_t>& b_buf) {
  rc::MemoryRegion a_mr, b_mr;
  REQUIRE(lab.mem_a.register_memory(a_buf.data(), a_buf.size(), rc::kAccessLocalWrite, a_mr).ok());
  REQUIRE(lab.mem_b.register_memory(b_buf.data(), b_buf.size(), rc::kAccessLocalWrite, b_mr).ok());
  REQUIRE(lab.b
              ->post_recv(lab.qpn_b, rc::RecvWr{7,
                                                {reinterpret_cast<std::uint64_t>(b_buf.data()),
                                                 static_cast<std::uint32_t>(b_buf.size()), b_mr.lkey}})
              .ok());
  rc::SendWr w;
  w.wr_id = 1;
  w.sge = {reinterpret_cast<std::uint64_t>(a_buf.data()), static_cast<std::uint32_t>(a_buf.size()), a_mr.lkey};
  REQUIRE(lab.a->post_send(lab.qpn_a, w).ok());
  rc::Completion c[4];
  bool received = false;
  for (int i = 0; i < 20 && !received; ++i) {
    round_dropping_b_to_a(lab);
    for (unsigned n = lab.b->poll_cq(lab.qpn_b, c, 4), k = 0; k < n; ++k)
      received |= c[k].status == rc::WcStatus::kSuccess && c[k].wr_id == 7;
  }
  REQUIRE(received);
  for (int i = 0; i < 5; ++i) round_dropping_b_to_a(lab);  // whatever B acknowledged, lost
  REQUIRE(lab.a->poll_cq(lab.qpn_a, c, 4) == 0);           // A still waits for the ACK
}

// A's send completion, running `round` until it comes (at most 2 s of the lab's clock: A's
// retries take 8 x 67 ms).
rc::WcStatus a_completion(Lab& lab, const std::function<void()>& round, int max_rounds = 2000) {
  rc::Completion c[4];
  for (int i = 0; i < max_rounds; ++i) {
    round();
    if (lab.a->poll_cq(lab.qpn_a, c, 4) != 0) return c[0].status;
  }
  FAIL("no send completion on A");
  return rc::WcStatus::kSuccess;
}

LabOptions stepped() {
  LabOptions o;
  o.clock_step_ns = 1'000'000;  // each round moves the endpoints' clock 1 ms
  return o;
}

}  // namespace

TEST_CASE("end linger: B finished and A's ACK from it was lost: B's linger answers A's retransmission",
          "[apps][linger][lab]") {
  std::vector<std::uint8_t> a_buf(256, 0x5a), b_buf(256, 0);
  SECTION("B lingers (a droce-echo peer): A's duplicate is acknowledged, A succeeds and says FIN, B ends") {
    Lab lab("lgr1", stepped());
    send_with_lost_ack(lab, a_buf, b_buf);
    Pair p;  // B's control connection; the test is A's end of it
    EndLinger linger(p.ours, rte_get_tsc_hz(), 30.0);
    linger.start(lab.now_tsc());
    CHECK(p.heard() == "FIN\n");
    bool a_done = false;
    rc::WcStatus a_status = rc::WcStatus::kWrFlushErr;  // none yet
    rc::Completion c[4];
    for (int i = 0; i < 5000 && linger.lingering(lab.now_tsc()); ++i) {
      lab.poll();
      if (!a_done && lab.a->poll_cq(lab.qpn_a, c, 4) != 0) {
        a_done = true;
        a_status = c[0].status;
        p.say("FIN\n");
      }
    }
    CHECK(a_done);
    CHECK(a_status == rc::WcStatus::kSuccess);
    CHECK(lab.qb->counters().duplicate_request == 1);  // the retransmission met B, which ACKed it again
    CHECK(linger.peer() == Peer::kFin);
    // A's ACK timer (67 ms) and one round trip, on the lab's clock: not the 30 s bound.
    CHECK(linger.lingered_ms() < 200);
  }
  SECTION("B lingers against ibv_srq_pingpong (control connection closed): the tool's bound covers A's retry") {
    Lab lab("lgr2", stepped());
    send_with_lost_ack(lab, a_buf, b_buf);
    Pair p;
    ::close(p.peer);
    p.peer = -1;
    EndLinger linger(p.ours, rte_get_tsc_hz(), 30.0);
    linger.start(lab.now_tsc());
    rc::WcStatus a_status = rc::WcStatus::kWrFlushErr;  // none yet
    bool a_done = false;
    rc::Completion c[4];
    while (linger.lingering(lab.now_tsc())) {
      lab.poll();
      if (!a_done && lab.a->poll_cq(lab.qpn_a, c, 4) != 0) a_done = true, a_status = c[0].status;
    }
    CHECK(a_done);
    CHECK(a_status == rc::WcStatus::kSuccess);
    CHECK(linger.peer() == Peer::kClosed);
    CHECK(linger.lingered_ms() == Approx(1073.7).margin(2));
  }
  SECTION("B stops at once (no linger): A's retransmissions go unanswered and its retries run out") {
    Lab lab("lgr3", stepped());
    send_with_lost_ack(lab, a_buf, b_buf);
    CHECK(a_completion(lab, [&lab] { round_without_b(lab); }) == rc::WcStatus::kRetryExcErr);
    CHECK(lab.qb->counters().duplicate_request == 0);
  }
}
