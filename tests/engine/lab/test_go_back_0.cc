// Go-back-0 (rc::Recovery::kGoBack0, lab only) against the deterministic drop that made it famous
// (SIGCOMM'16, "RDMA over Commodity Ethernet at Scale" §5.1: every IPv4 frame whose ID ends in
// 0xff dropped, 1 in 256): a message longer than 256 packets never completes under go-back-0, since
// every attempt loses a frame and starts over, while go-back-N completes it; messages shorter than
// the drop period complete under go-back-0 too, each loss restarting its message, every byte intact.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lab/drop_rule.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

namespace {

std::uint8_t pat(std::uint32_t m, std::uint32_t i) { return static_cast<std::uint8_t>(m * 31 + i * 7 + (i >> 10)); }

struct WriteRun {
  int ok = 0, failed = 0;
  rc::WcStatus first_error = rc::WcStatus::kSuccess;
  bool intact = true;
  bool ended = false;
  std::uint64_t naks_received = 0, timer_expiries = 0;  // the requester's
};

// `msgs` WRITEs of `size` bytes A -> B, one at a time, through the lab's relay with the IP ID rule
// on A's frames; stops at the first failed completion, or once B has discarded `give_up_after`
// partial messages (0: never). Each message's bytes are checked at B.
WriteRun write_through_rule(rc::Recovery recovery, std::uint32_t size, int msgs, std::uint64_t give_up_after,
                            std::uint64_t* discarded, std::uint64_t* ruled) {
  static int labs = 0;  // each lab's rings are named afresh: EAL keeps the names of earlier ones
  LabOptions o;
  o.recovery = recovery;
  Lab lab("tgb" + std::to_string(labs++), o);
  Status made;
  DropRuleConfig rc_cfg;
  REQUIRE(DropRuleConfig::parse("ip-id:0xff", rc_cfg).ok());
  auto rule = DropRule::create(rc_cfg, made);
  REQUIRE(rule);
  lab.relay.drop_rule = rule.get();
  std::vector<std::uint8_t> src(size), dst(size);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  WriteRun r;
  int posted = 0;
  r.ended = lab.run(
      [&] {
        if (posted == r.ok + r.failed && posted < msgs && r.failed == 0) {
          for (std::uint32_t i = 0; i < size; ++i) src[i] = pat(static_cast<std::uint32_t>(posted), i);
          rc::SendWr w;
          w.wr_id = static_cast<std::uint64_t>(posted);
          w.opcode = rc::WrOpcode::kWrite;
          w.sge = {reinterpret_cast<std::uint64_t>(src.data()), size, smr.lkey};
          w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data());
          w.rkey = dmr.rkey;
          if (lab.qa->post_send(w).ok()) ++posted;
        }
        rc::Completion c;
        while (lab.qa->poll_cq(c)) {
          if (c.status == rc::WcStatus::kSuccess) {
            for (std::uint32_t i = 0; i < size && r.intact; ++i)
              r.intact = dst[i] == pat(static_cast<std::uint32_t>(c.wr_id), i);
            ++r.ok;
          } else if (r.failed++ == 0) {
            r.first_error = c.status;
          }
        }
        const bool gave_up = give_up_after != 0 && lab.qb->counters().gb0_messages_discarded >= give_up_after;
        return r.failed != 0 || r.ok == msgs || gave_up;
      },
      120);
  r.naks_received = lab.qa->counters().naks_received;
  r.timer_expiries = lab.qa->counters().local_ack_timeout_err;
  *discarded = lab.qb->counters().gb0_messages_discarded;
  *ruled = rule->counters().dropped;
  return r;
}

}  // namespace

TEST_CASE("go-back-0: a 1-in-256 IP ID drop keeps a 512-packet WRITE from completing; go-back-N completes it",
          "[engine][gb0]") {
  constexpr std::uint32_t kSize = 512 * 1024;  // 512 packets at the lab's PMTU (1024)
  std::uint64_t discarded = 0, ruled = 0;
  // The livelock: restart after restart, each meeting an ID ending in 0xff before the message's
  // end. Mid-message ACKs are progress, so the QP does not fail: it never completes (20 restarts
  // stand for never; each is ~256 frames).
  const WriteRun gb0 = write_through_rule(rc::Recovery::kGoBack0, kSize, 1, 20, &discarded, &ruled);
  CHECK(gb0.ended);
  CHECK(gb0.ok == 0);
  CHECK(gb0.failed == 0);
  CHECK(discarded >= 20);
  CHECK(ruled >= discarded);  // every restart began with a ruled drop
  // Each restart is the responder's NAK from the message's first PSN (below what its mid-message
  // ACKs acknowledged), not the local ACK timer: that NAK is not a stale duplicate.
  CHECK(gb0.naks_received + 1 >= discarded);
  CHECK(gb0.timer_expiries <= 2);

  const WriteRun gbn = write_through_rule(rc::Recovery::kGoBackN, kSize, 3, 0, &discarded, &ruled);
  CHECK(gbn.ended);
  CHECK(gbn.failed == 0);
  CHECK(gbn.ok == 3);
  CHECK(gbn.intact);
  CHECK(discarded == 0);
  CHECK(ruled >= 3 * 2);  // two IDs in 256 per 512 frames, and each message still completed
}

TEST_CASE("go-back-0: messages shorter than the drop period complete, each loss restarting its message",
          "[engine][gb0]") {
  constexpr std::uint32_t kSize = 64 * 1024;  // 64 packets: most attempts meet no 0xff ID
  std::uint64_t discarded = 0, ruled = 0;
  const WriteRun r = write_through_rule(rc::Recovery::kGoBack0, kSize, 24, 0, &discarded, &ruled);
  CHECK(r.ended);
  CHECK(r.failed == 0);
  CHECK(r.ok == 24);
  CHECK(r.intact);
  CHECK(ruled > 0);
  CHECK(discarded > 0);  // a drop inside a message threw its placed part away
}

TEST_CASE("go-back-0: refused with message views, whose frames are handed over as they arrive", "[engine][gb0]") {
  rc::QpAttr a;
  a.qpn = 0x11;
  a.recovery = rc::Recovery::kGoBack0;
  CHECK(a.validate().ok());
  a.recv_mode = rc::RecvMode::kMessageViews;
  const Status s = a.validate();
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("go-back-0") != std::string::npos);
}
