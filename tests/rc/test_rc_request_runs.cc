// Receive by bursts (issue 37): RcQp::on_request_run against on_packet, packet by packet, on the
// same seeded request streams of SENDs and WRITEs (tests/rc/request_run_harness.h): in order,
// reordered, duplicated, with gaps, go-back-N resends and hostile packets inside runs. Every
// completion, ACK/NAK, counter, the sequence state, the receive buffers and the WRITE target agree
// after every burst.
#include <catch2/catch.hpp>
#include <random>

#include "tests/rc/request_run_harness.h"

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

TEST_CASE("request runs: the run path and the per-packet path agree on seeded streams", "[rc][runs]") {
  std::uint64_t run_packets = 0, run_left = 0, other = 0, write_run_packets = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    RequestRunPair pair;
    REQUIRE(pair.ready());
    SeededBytes src(seed);
    RequestRunScript script(src, pair.write_rkey());
    const std::string why = script.play(pair, 60);
    INFO("seed " << seed);
    REQUIRE(why.empty());
    run_packets += pair.run_packets;
    run_left += pair.run_left;
    other += pair.per_frame_other;
    write_run_packets += pair.write_run_packets;
  }
  WARN("packets executed by runs " << run_packets << " (WRITE " << write_run_packets << "), left by runs " << run_left
                                   << ", never in a run " << other);
  // Both paths ran, and runs took the larger share of packets, WRITEs among them: the comparison
  // was not vacuous.
  CHECK(run_packets > 10000);
  CHECK(write_run_packets > 3000);
  CHECK(run_left > 100);
  CHECK(other > 100);
}

TEST_CASE("request runs: a clean stream goes through runs, one coalesced ACK per run", "[rc][runs]") {
  RequestRunPair pair;
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

TEST_CASE("request runs: a run ends before the first message no posted receive covers", "[rc][runs]") {
  RequestRunPair pair;
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

// WRITE packets of `len` bytes each, one message per packet (WRITE ONLY), into consecutive
// stretches of the WRITE region.
std::vector<RunFrame> write_onlys(const RequestRunPair& pair, std::uint32_t count, std::uint32_t len) {
  std::vector<RunFrame> frames;
  for (std::uint32_t i = 0; i < count; ++i) {
    RunFrame f;
    f.pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kWriteOnly);
    f.pi.psn = wire::psn_add(RunSide::kFirstPsn, i);
    f.pi.dest_qpn = 0x12;
    f.pi.payload_len = len;
    f.pi.ack_req = i + 1 == count;
    f.pi.reth_rkey = pair.write_rkey();
    f.pi.reth_dma_len = len;
    f.reth_offset = static_cast<std::int64_t>(i) * len;
    f.payload.assign(len, static_cast<std::uint8_t>(0x40 + i));
    frames.push_back(f);
  }
  return frames;
}

TEST_CASE("request runs: WRITEs go through runs into the region, no receive needed", "[rc][runs]") {
  RequestRunPair pair;
  REQUIRE(pair.ready());
  pair.burst(write_onlys(pair, 6, 100));
  CHECK(pair.run_packets == 6);
  CHECK(pair.write_run_packets == 6);
  CHECK(pair.runs.qp->counters().write_requests == 6);
  CHECK(pair.runs.wbuf[0] == 0x40);
  CHECK(pair.runs.wbuf[5 * 100 + 99] == 0x45);
  CHECK(pair.compare(true).empty());
}

TEST_CASE("request runs: a WRITE whose R_Key is wrong ends the run, NAKed as alone", "[rc][runs]") {
  RequestRunPair pair;
  REQUIRE(pair.ready());
  std::vector<RunFrame> frames = write_onlys(pair, 5, 64);
  frames[3].pi.reth_rkey ^= 0x100;  // a key this QP's table does not hold
  pair.burst(frames);
  CHECK(pair.run_packets == 3);
  CHECK(pair.run_left == 2);
  CHECK(pair.runs.qp->state() == rc::QpState::kError);  // remote access error (§9.7.5.1.3)
  CHECK(pair.compare(true).empty());
}

TEST_CASE("request runs: a WRITE message shorter than its RETH ends the run at its last packet", "[rc][runs]") {
  RequestRunPair pair;
  REQUIRE(pair.ready());
  std::vector<RunFrame> frames;
  const wire::Opcode ops[] = {wire::Opcode::kWriteFirst, wire::Opcode::kWriteMiddle, wire::Opcode::kWriteLast};
  for (std::uint32_t i = 0; i < 3; ++i) {
    RunFrame f;
    f.pi.opcode = static_cast<std::uint8_t>(ops[i]);
    f.pi.psn = wire::psn_add(RunSide::kFirstPsn, i);
    f.pi.dest_qpn = 0x12;
    f.pi.payload_len = i < 2 ? RunSide::kPmtu : 10;
    f.pi.reth_rkey = pair.write_rkey();
    f.pi.reth_dma_len = 2 * RunSide::kPmtu + 20;  // 10 bytes more than the packets carry
    f.payload.assign(f.pi.payload_len, static_cast<std::uint8_t>(i + 1));
    frames.push_back(f);
  }
  pair.burst(frames);
  CHECK(pair.run_packets == 2);
  CHECK(pair.run_left == 1);
  CHECK(pair.compare(true).empty());
}

TEST_CASE("request runs: a WRITE with immediate data completes a receive, and waits for one", "[rc][runs]") {
  RequestRunPair pair;
  REQUIRE(pair.ready());
  REQUIRE(pair.post(1024));
  std::vector<RunFrame> frames = write_onlys(pair, 3, 80);
  for (RunFrame& f : frames) {
    f.pi.opcode = static_cast<std::uint8_t>(wire::Opcode::kWriteOnlyImm);
    f.pi.imm_data = 0xBEEF0000u + f.pi.psn;
  }
  pair.burst(frames);
  // One receive posted: the first WRITE completes it with its DMA length; the second finds none
  // (RNR NAK, the per-packet path's) and the run ends before it.
  CHECK(pair.run_packets == 1);
  CHECK(pair.run_left == 2);
  CHECK(pair.runs.qp->counters().rnr_naks_sent == 1);
  rc::Completion c;
  REQUIRE(pair.runs.qp->poll_cq(c));
  CHECK(c.opcode == rc::WcOpcode::kRecvWithImm);
  CHECK(c.byte_len == 80);
  CHECK(c.imm == 0xBEEF0000u + RunSide::kFirstPsn);
  // (compare() drains both CQs: the per-packet side's first completion is still there.)
  rc::Completion d;
  REQUIRE(pair.per_frame.qp->poll_cq(d));
  CHECK(d.byte_len == c.byte_len);
  CHECK(pair.compare(true).empty());
}

}  // namespace droce::test
