// Selective repeat READ and atomic rules one at a time (docs/selective-repeat.md): crafted SR READ
// and atomic requests into a responder, crafted responses into a requester, and what each sends,
// places, executes or completes.
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/rc/sr_harness.h"

using namespace droce;
using namespace droce::test;
using wire::Opcode;

namespace {

// Both fixtures' QPs allow remote atomics.
rc::QpAttr sr_atomic_attr(std::uint32_t qpn, std::uint32_t dest, std::uint32_t sq_psn, std::uint32_t rq_psn) {
  return with_atomics(sr_attr(qpn, dest, sq_psn, rq_psn));
}

// A selective-repeat responder (ePSN 100) with a 16 KiB region readable, writable and with two
// atomic words (the first 5, the second 7).
struct Responder {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(16384);
  std::vector<std::uint64_t> words = {5, 7};
  std::vector<std::uint8_t> data = std::vector<std::uint8_t>(kPmtu, 0xAB);
  rc::MemoryRegion mr, amr;
  std::unique_ptr<rc::RcQp> qp;
  Responder() {
    for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<std::uint8_t>(i * 7 + i / 1024);
    mr = *mrs.register_region(mem.data(), mem.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteRead);
    amr = *mrs.register_region(words.data(), 16, rc::kAccessRemoteAtomic);
    qp = std::make_unique<rc::RcQp>(sr_atomic_attr(0x12, 0x11, 1, 100), mrs);
    to_rts(*qp);
  }
  std::uint64_t at(std::uint32_t off) const { return reinterpret_cast<std::uint64_t>(mem.data()) + off; }
  void read(std::uint32_t psn, std::uint32_t off, std::uint32_t len, std::uint32_t rkey = 0) {
    wire::PacketInfo pi{};
    pi.opcode = op(Opcode::kSrReadRequest);
    pi.psn = psn;
    pi.dest_qpn = 0x12;
    pi.reth_va = at(off);
    pi.reth_rkey = rkey != 0 ? rkey : mr.rkey;
    pi.reth_dma_len = len;
    (void)qp->on_packet(pi, nullptr, 0);
  }
  void atomic(Opcode o, std::uint32_t psn, int word, std::uint64_t swap_add, std::uint64_t compare = 0,
              std::uint64_t misalign = 0) {
    wire::PacketInfo pi{};
    pi.opcode = op(o);
    pi.psn = psn;
    pi.dest_qpn = 0x12;
    pi.atomic_va = reinterpret_cast<std::uint64_t>(&words[static_cast<std::size_t>(word)]) + misalign;
    pi.atomic_rkey = amr.rkey;
    pi.atomic_swap_add = swap_add;
    pi.atomic_compare = compare;
    (void)qp->on_packet(pi, nullptr, 0);
  }
  void write_only(std::uint32_t psn, std::uint32_t off) {
    wire::PacketInfo pi{};
    pi.opcode = op(Opcode::kSrWriteOnly);
    pi.psn = psn;
    pi.dest_qpn = 0x12;
    pi.reth_va = at(off);
    pi.reth_rkey = mr.rkey;
    pi.reth_dma_len = kPmtu;
    pi.payload_len = kPmtu;
    (void)qp->on_packet(pi, data.data(), 0);
  }
  std::vector<rc::TxDescriptor> out() {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < 64 && qp->next_packet(0, d)) v.push_back(d);
    return v;
  }
};

// A selective-repeat requester (first PSN 500) with a 64 KiB local buffer; the peer's memory is
// at 0x100000, R_Key 0x77.
struct Requester {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(64 * kPmtu);
  std::vector<std::uint8_t> resp = std::vector<std::uint8_t>(kPmtu);  // what responses carry
  rc::MemoryRegion mr;
  std::unique_ptr<rc::RcQp> qp;
  // adaptive_rto false: the plain IBTA timer (the probes under it are test_rc_loss_timers.cc's).
  explicit Requester(std::uint32_t bdp = 128, std::uint32_t max_rd_atomic = 16, bool adaptive_rto = true) {
    for (std::size_t i = 0; i < resp.size(); ++i) resp[i] = static_cast<std::uint8_t>(i * 3 + 1);
    mr = *mrs.register_region(buf.data(), buf.size(), rc::kAccessLocalWrite);
    auto a = sr_atomic_attr(0x11, 0x12, 500, 1);
    a.sr_bdp_pkts = bdp;
    a.max_rd_atomic = max_rd_atomic;
    a.adaptive_rto = adaptive_rto;
    qp = std::make_unique<rc::RcQp>(a, mrs);
    to_rts(*qp);
  }
  // Posts `o` of `len` bytes into (or from) the buffer at `off`.
  void post(rc::WrOpcode o, std::uint32_t len, std::uint32_t off = 0, std::uint64_t id = 1) {
    rc::SendWr w;
    w.wr_id = id;
    w.opcode = o;
    w.sge = {reinterpret_cast<std::uint64_t>(buf.data() + off), len, mr.lkey};
    w.remote_addr = 0x100000;
    w.rkey = 0x77;
    w.compare_add = 3;
    REQUIRE(qp->post_send(w).ok());
  }
  std::vector<rc::TxDescriptor> out(std::uint64_t now = 0) {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < 64 && qp->next_packet(now, d)) v.push_back(d);
    return v;
  }
  void read_response(Opcode o, std::uint32_t psn, std::uint32_t len, std::uint64_t now = 0) {
    wire::PacketInfo pi{};
    pi.opcode = op(o);
    pi.psn = psn;
    pi.aeth_syndrome = wire::kAethAckUnlimited;
    pi.payload_len = len;
    (void)qp->on_packet(pi, resp.data(), now);
  }
  void atomic_ack(std::uint32_t psn, std::uint64_t orig) {
    wire::PacketInfo pi{};
    pi.opcode = op(Opcode::kSrAtomicAck);
    pi.psn = psn;
    pi.aeth_syndrome = wire::kAethAckUnlimited;
    pi.atomic_ack_orig = orig;
    (void)qp->on_packet(pi, nullptr, 0);
  }
  std::vector<rc::Completion> completions() {
    std::vector<rc::Completion> v;
    rc::Completion c;
    while (qp->poll_cq(c)) v.push_back(c);
    return v;
  }
};

}  // namespace

TEST_CASE("SR responder: a READ at ePSN executes at once, answered by SR READ responses from memory",
          "[rc][sr][read]") {
  Responder r;
  r.read(100, 0, 2500);
  const auto o = r.out();
  REQUIRE(o.size() == 3);  // no SACK: the responses acknowledge the READ
  CHECK(o[0].opcode == op(Opcode::kSrReadRespFirst));
  CHECK(o[1].opcode == op(Opcode::kSrReadRespMiddle));
  CHECK(o[2].opcode == op(Opcode::kSrReadRespLast));
  for (std::uint32_t i = 0; i < 3; ++i) {
    CHECK(o[i].psn == 100 + i);
    CHECK(o[i].payload == r.mem.data() + i * kPmtu);
  }
  CHECK(o[2].payload_len == 2500 - 2 * kPmtu);
  CHECK(r.qp->rq_epsn() == 103);  // one PSN per response (§9.7.4.1.4)
  CHECK(r.qp->rq_msn() == 1);
}

TEST_CASE(
    "SR responder: a READ beyond a gap is held with all its PSNs and executed only when the gap "
    "closes, after the WRITE before it",
    "[rc][sr][read]") {
  Responder r;
  r.read(101, 0, 2 * kPmtu);  // reads what the WRITE at 100 (still missing) writes
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].opcode == op(Opcode::kSrAck));
  CHECK(sack_bits(o[0]) == std::vector<std::uint32_t>{1, 2});
  CHECK(r.qp->rq_epsn() == 100);
  r.write_only(100, 0);
  o = r.out();
  REQUIRE(o.size() == 3);
  CHECK(o[0].opcode == op(Opcode::kSrReadRespFirst));
  CHECK(o[0].psn == 101);
  CHECK(std::memcmp(o[0].payload, r.data.data(), kPmtu) == 0);  // the WRITE landed first
  CHECK(o[1].opcode == op(Opcode::kSrReadRespLast));
  CHECK(o[2].opcode == op(Opcode::kSrAck));
  CHECK(o[2].psn == 102);
  CHECK(r.qp->rq_msn() == 2);
}

TEST_CASE(
    "SR responder: a duplicate READ is answered again for the PSNs it asks; one still held is only "
    "SACKed and executed once",
    "[rc][sr][read]") {
  Responder r;
  r.read(100, 0, 3 * kPmtu);
  REQUIRE(r.out().size() == 3);
  r.read(101, kPmtu, kPmtu);  // response 101 was lost: asked again alone
  auto o = r.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 101);
  CHECK(o[0].opcode == op(Opcode::kSrReadRespOnly));
  CHECK(o[0].payload == r.mem.data() + kPmtu);
  CHECK(r.qp->counters().duplicate_request == 1);
  r.read(104, 0, kPmtu);  // beyond the gap at 103: held
  r.read(104, 0, kPmtu);  // its duplicate: a SACK, nothing executed
  o = r.out();
  REQUIRE(o.size() == 1);  // the two SACKs coalesced; no response
  CHECK(o[0].opcode == op(Opcode::kSrAck));
  CHECK(sack_bits(o[0]) == std::vector<std::uint32_t>{1});
  r.read(103, 0, kPmtu);
  o = r.out();
  REQUIRE(o.size() == 3);  // 103's and 104's responses, each once, and the SACK closing the gap
  CHECK(o[0].psn == 103);
  CHECK(o[1].psn == 104);
  CHECK(o[2].opcode == op(Opcode::kSrAck));
  CHECK(r.qp->rq_msn() == 3);
}

TEST_CASE(
    "SR responder: an atomic is executed once, at ePSN; its duplicates before and after are never "
    "executed again",
    "[rc][sr][atomic]") {
  Responder r;
  r.atomic(Opcode::kSrFetchAdd, 101, 0, 3);  // beyond the gap at 100: held, not executed
  r.atomic(Opcode::kSrFetchAdd, 101, 0, 3);  // its duplicate while held
  CHECK(r.qp->counters().atomics_executed == 0);
  CHECK(r.words[0] == 5);
  r.write_only(100, 0);
  r.atomic(Opcode::kSrCmpSwap, 102, 1, 70, 7);  // in order: executed at once
  CHECK(r.qp->counters().atomics_executed == 2);
  CHECK(r.words[0] == 8);
  CHECK(r.words[1] == 70);
  auto o = r.out();
  std::vector<rc::TxDescriptor> acks;
  for (const auto& d : o)
    if (d.opcode == op(Opcode::kSrAtomicAck)) acks.push_back(d);
  REQUIRE(acks.size() == 2);
  CHECK(acks[0].psn == 101);
  CHECK(acks[0].atomic_ack_orig == 5);
  CHECK(acks[1].psn == 102);
  CHECK(acks[1].atomic_ack_orig == 7);
  // Both acknowledgements lost: the duplicates are answered from the saved results.
  r.atomic(Opcode::kSrFetchAdd, 101, 0, 3);
  r.atomic(Opcode::kSrCmpSwap, 102, 1, 70, 7);
  o = r.out();
  REQUIRE(o.size() == 2);
  CHECK(o[0].opcode == op(Opcode::kSrAtomicAck));
  CHECK(o[0].atomic_ack_orig == 5);
  CHECK(o[1].atomic_ack_orig == 7);
  CHECK(r.qp->counters().atomics_executed == 2);
  CHECK(r.qp->counters().atomic_replays == 2);
  CHECK(r.words[0] == 8);
  CHECK(r.words[1] == 70);
}

TEST_CASE("SR responder: a READ outside its R_Key and a misaligned atomic are fatal NAKs at execution",
          "[rc][sr][read][atomic]") {
  {
    Responder r;
    r.read(100, 0, kPmtu, 0x5555);
    const auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].opcode == op(Opcode::kAck));  // NAKs stay RC ACKNOWLEDGE packets
    CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kRemoteAccessError));
    CHECK(r.qp->state() == rc::QpState::kError);
  }
  {
    Responder r;
    r.atomic(Opcode::kSrFetchAdd, 100, 0, 1, 0, 4);
    const auto o = r.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].aeth_syndrome == wire::nak_syndrome(wire::NakCode::kInvalidRequest));
    CHECK(r.qp->counters().atomics_executed == 0);
  }
}

TEST_CASE(
    "SR requester: a READ is one request for all its PSNs; responses land by PSN in any order; a gap "
    "asks again only the missing run",
    "[rc][sr][read][requester]") {
  Requester q;
  q.post(rc::WrOpcode::kRead, 4 * kPmtu - 100);
  auto o = q.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].opcode == op(Opcode::kSrReadRequest));
  CHECK(o[0].psn == 500);
  CHECK(o[0].reth_va == 0x100000);
  CHECK(o[0].reth_rkey == 0x77);
  CHECK(o[0].reth_len == 4 * kPmtu - 100);
  CHECK(q.qp->sq_nxt() == 504);
  q.read_response(Opcode::kSrReadRespFirst, 500, kPmtu);
  q.read_response(Opcode::kSrReadRespLast, 503, kPmtu - 100);                     // 501 and 502 missing
  CHECK(std::memcmp(q.buf.data() + 3 * kPmtu, q.resp.data(), kPmtu - 100) == 0);  // placed at once
  CHECK(q.completions().empty());
  o = q.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].opcode == op(Opcode::kSrReadRequest));
  CHECK(o[0].psn == 501);
  CHECK(o[0].reth_va == 0x100000 + kPmtu);
  CHECK(o[0].reth_len == 2 * kPmtu);
  CHECK(o[0].retransmission);
  CHECK(q.qp->counters().sr_reasked_responses == 2);
  q.read_response(Opcode::kSrReadRespLast, 503, kPmtu - 100);  // a second copy
  CHECK(q.qp->counters().duplicate_responses == 1);
  q.read_response(Opcode::kSrReadRespMiddle, 502, kPmtu - 1);  // not the length this PSN asks
  CHECK(q.qp->counters().duplicate_responses == 2);
  q.read_response(Opcode::kSrReadRespLast, 502, kPmtu);  // positions count from the request answered
  q.read_response(Opcode::kSrReadRespFirst, 501, kPmtu);
  const auto c = q.completions();
  REQUIRE(c.size() == 1);
  CHECK(c[0].opcode == rc::WcOpcode::kRead);
  CHECK(c[0].status == rc::WcStatus::kSuccess);
  CHECK(c[0].byte_len == 4 * kPmtu - 100);
  CHECK(q.out().empty());  // nothing asked again: the run was answered
}

TEST_CASE("SR requester: completions stay in posting order whatever order the responses come in",
          "[rc][sr][read][atomic][requester]") {
  Requester q;
  q.post(rc::WrOpcode::kWrite, kPmtu, 0, 1);
  q.post(rc::WrOpcode::kRead, kPmtu, kPmtu, 2);
  q.post(rc::WrOpcode::kFetchAdd, 8, 2 * kPmtu, 3);
  auto o = q.out();
  REQUIRE(o.size() == 3);
  CHECK(o[1].psn == 501);
  CHECK(o[2].opcode == op(Opcode::kSrFetchAdd));
  CHECK(o[2].psn == 502);
  CHECK(o[2].atomic_swap_add == 3);
  q.atomic_ack(502, 40);  // the READ's response (501) is still missing: shown lost
  auto c = q.completions();
  REQUIRE(c.size() == 1);  // the WRITE: executed before the atomic
  CHECK(c[0].wr_id == 1);
  std::uint64_t orig;
  std::memcpy(&orig, q.buf.data() + 2 * kPmtu, 8);
  CHECK(orig == 40);
  o = q.out();
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 501);  // asked again
  q.read_response(Opcode::kSrReadRespOnly, 501, kPmtu);
  c = q.completions();
  REQUIRE(c.size() == 2);
  CHECK(c[0].wr_id == 2);
  CHECK(c[1].wr_id == 3);
  CHECK(c[1].opcode == rc::WcOpcode::kFetchAdd);
  q.atomic_ack(502, 41);  // a late duplicate changes nothing
  std::memcpy(&orig, q.buf.data() + 2 * kPmtu, 8);
  CHECK(orig == 40);
}

TEST_CASE("SR requester: the ACK timer asks again every missing response, spending a retry",
          "[rc][sr][read][requester]") {
  Requester q(128, 16, /*adaptive_rto=*/false);
  q.post(rc::WrOpcode::kRead, 3 * kPmtu);
  REQUIRE(q.out().size() == 1);
  q.read_response(Opcode::kSrReadRespFirst, 500, kPmtu);  // the rest lost, nothing after them
  CHECK(q.out().empty());
  const std::uint64_t t = q.qp->next_timer_ns();
  REQUIRE(t != UINT64_MAX);
  q.qp->on_timer(t);
  CHECK(q.qp->counters().local_ack_timeout_err == 1);
  const auto o = q.out(t);
  REQUIRE(o.size() == 1);
  CHECK(o[0].psn == 501);
  CHECK(o[0].reth_len == 2 * kPmtu);
}

TEST_CASE(
    "SR requester: max_rd_atomic bounds READs and atomics in flight; a READ waits for room for all its "
    "PSNs under the BDP cap",
    "[rc][sr][read][requester][window]") {
  {
    Requester q(128, 2);
    q.post(rc::WrOpcode::kRead, kPmtu, 0, 1);
    q.post(rc::WrOpcode::kFetchAdd, 8, kPmtu, 2);
    q.post(rc::WrOpcode::kRead, kPmtu, 2 * kPmtu, 3);
    REQUIRE(q.out().size() == 2);
    q.read_response(Opcode::kSrReadRespOnly, 500, kPmtu);
    const auto o = q.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].psn == 502);
  }
  {
    Requester q(4);
    q.post(rc::WrOpcode::kWrite, 2 * kPmtu, 0, 1);
    q.post(rc::WrOpcode::kRead, 3 * kPmtu, 2 * kPmtu, 2);
    REQUIRE(q.out().size() == 2);  // the WRITE; 2 + 3 PSNs would pass the cap of 4
    wire::PacketInfo pi{};
    pi.opcode = op(Opcode::kSrAck);
    pi.psn = 501;
    pi.aeth_syndrome = wire::kAethAckUnlimited;
    pi.payload_len = wire::kSackBytes;
    const std::uint8_t none[16] = {};
    (void)q.qp->on_packet(pi, none, 0);
    const auto o = q.out();
    REQUIRE(o.size() == 1);
    CHECK(o[0].opcode == op(Opcode::kSrReadRequest));
    CHECK(o[0].psn == 502);
  }
}

TEST_CASE("SR READ and atomic opcodes parse only where the SR opcodes are accepted", "[rc][sr][read][wire]") {
  wire::TemplateConfig c;
  c.dest_qpn = 0x12;
  const auto t = wire::HeaderTemplate::make(c);
  std::vector<std::uint8_t> payload(kPmtu, 1);
  for (Opcode o : {Opcode::kSrReadRequest, Opcode::kSrReadRespFirst, Opcode::kSrReadRespMiddle, Opcode::kSrReadRespLast,
                   Opcode::kSrReadRespOnly, Opcode::kSrAtomicAck, Opcode::kSrCmpSwap, Opcode::kSrFetchAdd}) {
    rc::TxDescriptor d;
    d.opcode = op(o);
    d.psn = 0xFFFFFF;
    d.payload = payload.data();
    d.payload_len = wire::opcode_info(d.opcode).has_payload ? 100 : 0;
    d.reth_va = 0x1000;
    d.reth_rkey = 9;
    d.reth_len = 100;
    d.atomic_va = 0x2000;
    d.atomic_rkey = 9;
    d.atomic_swap_add = 4;
    d.atomic_ack_orig = 77;
    std::vector<std::uint8_t> frame(kPmtu + wire::kMaxHeaderBytes + 8);
    frame.resize(
        wire::build_frame(t, rc::packet_fields(d), d.payload, frame.data(), static_cast<std::uint32_t>(frame.size())));
    INFO("opcode " << int(d.opcode));
    wire::PacketInfo pi;
    wire::ParseOptions plain;
    CHECK(wire::parse_frame(frame.data(), static_cast<std::uint32_t>(frame.size()), pi, plain) ==
          wire::DropReason::kUnknownOpcode);
    wire::ParseOptions sr;
    sr.accept_droce_sr = true;
    REQUIRE(wire::parse_frame(frame.data(), static_cast<std::uint32_t>(frame.size()), pi, sr) ==
            wire::DropReason::kNone);
    CHECK(pi.opcode == d.opcode);
    CHECK(pi.psn == 0xFFFFFF);
    CHECK(pi.payload_len == d.payload_len);
    if (o == Opcode::kSrReadRequest) CHECK(pi.reth_dma_len == 100);
    if (o == Opcode::kSrFetchAdd) CHECK(pi.atomic_swap_add == 4);
    if (o == Opcode::kSrAtomicAck) CHECK(pi.atomic_ack_orig == 77);
  }
}
