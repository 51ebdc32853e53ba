// Receive by bursts (issue 37): RcQp::on_send_run against on_packet, packet by packet, on the same
// seeded request streams (tests/rc/send_run_harness.h): in order, reordered, duplicated, with gaps,
// go-back-N resends and hostile packets inside runs. Every completion, ACK/NAK, counter, the
// sequence state and the receive buffers agree after every burst.
#include <catch2/catch.hpp>
#include <random>

#include "tests/rc/send_run_harness.h"

namespace droce::test {
namespace {

class SeededBytes : public ByteSource {
 public:
  explicit SeededBytes(std::uint32_t seed) : rng_(seed) {}
  std::uint8_t byte() override { return static_cast<std::uint8_t>(rng_() >> 24); }
  [[nodiscard]] bool exhausted() const override { return false; }

 private:
  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("send runs: the run path and the per-packet path agree on seeded streams", "[rc][runs]") {
  std::uint64_t run_packets = 0, run_left = 0, other = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    SendRunPair pair;
    REQUIRE(pair.ready());
    SeededBytes src(seed);
    SendRunScript script(src);
    const std::string why = script.play(pair, 60);
    INFO("seed " << seed);
    REQUIRE(why.empty());
    run_packets += pair.run_packets;
    run_left += pair.run_left;
    other += pair.per_frame_other;
  }
  WARN("packets executed by runs " << run_packets << ", left by runs " << run_left << ", never in a run " << other);
  // Both paths ran, and runs took the larger share of SEND packets: the comparison was not vacuous.
  CHECK(run_packets > 10000);
  CHECK(run_left > 100);
  CHECK(other > 100);
}

TEST_CASE("send runs: a clean stream goes through runs, one coalesced ACK per run", "[rc][runs]") {
  SendRunPair pair;
  REQUIRE(pair.ready());
  for (int i = 0; i < 8; ++i) REQUIRE(pair.post(1024));
  std::vector<RunFrame> frames;
  for (std::uint32_t i = 0; i < 8; ++i) {
    RunFrame f;
    f.pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kSendOnly);
    f.pi.psn = wire::psn_add(RunSide::kFirstPsn, i);
    f.pi.dest_qpn = 0x12;
    f.pi.payload_len = 64;
    f.pi.ack_req = true;
    f.payload.assign(64, static_cast<std::uint8_t>(i));
    frames.push_back(f);
  }
  pair.burst(frames);
  CHECK(pair.run_packets == 8);
  CHECK(pair.run_left == 0);
  CHECK(pair.runs.qp->counters().acks_sent == 8);
  CHECK(pair.runs.qp->counters().acks_coalesced == 7);
  rc::TxDescriptor d;
  REQUIRE(pair.runs.qp->next_packet(0, d));
  CHECK(d.psn == wire::psn_add(RunSide::kFirstPsn, 7));
  CHECK(d.aeth_msn == 8);
  CHECK_FALSE(pair.runs.qp->next_packet(0, d));
  // The per-packet side, drained here too, has the same single ACK.
  REQUIRE(pair.per_frame.qp->next_packet(0, d));
  CHECK_FALSE(pair.per_frame.qp->next_packet(0, d));
  CHECK(pair.compare(true).empty());
}

TEST_CASE("send runs: a run ends before the first message no posted receive covers", "[rc][runs]") {
  SendRunPair pair;
  REQUIRE(pair.ready());
  REQUIRE(pair.post(1024));
  std::vector<RunFrame> frames;
  for (std::uint32_t i = 0; i < 3; ++i) {
    RunFrame f;
    f.pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kSendOnly);
    f.pi.psn = wire::psn_add(RunSide::kFirstPsn, i);
    f.pi.dest_qpn = 0x12;
    f.pi.payload_len = 16;
    f.payload.assign(16, 1);
    frames.push_back(f);
  }
  pair.burst(frames);
  CHECK(pair.run_packets == 1);
  CHECK(pair.run_left == 2);
  CHECK(pair.runs.qp->counters().rnr_naks_sent == 1);
  CHECK(pair.compare(true).empty());
}

}  // namespace droce::test
