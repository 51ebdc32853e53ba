// Selective repeat over a real PMD: two RcEndpoints on net_ring ports whose QPs use
// Recovery::kSelectiveRepeat (docs/selective-repeat.md), joined through a relay that drops
// frames. The endpoints parse the SR opcodes, the QPs send SR data packets and SACKs through the
// endpoint's transmit path, and every message arrives exactly once, in order, intact; READs and
// atomics too (SR READ requests and responses, SR atomics and their acknowledgements).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/endpoint/rc_endpoint.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using droce::test::Lab;
using droce::test::LabOptions;

namespace {

// Both QPs selective repeat (64 packets of bandwidth-delay product) across a relay losing `loss`.
LabOptions sr_options(double loss) {
  LabOptions o{loss};
  o.recovery = rc::Recovery::kSelectiveRepeat;
  o.sr_bdp_pkts = 64;
  return o;
}

// Both endpoints stop sending, and what is still in flight is drained (bounded).
void finish(Lab& lab) {
  lab.a->finish();
  lab.b->finish();
  for (int i = 0; i < 200; ++i) lab.poll();
}

// Every data packet and acknowledgement was an SR one: either side would have dropped an RC
// opcode as a recovery mismatch, and neither endpoint's parser refused an SR opcode.
void check_all_sr(Lab& lab) {
  CHECK(lab.qa->counters().recovery_mismatch == 0);
  CHECK(lab.qb->counters().recovery_mismatch == 0);
  CHECK(lab.a->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kUnknownOpcode)] == 0);
  CHECK(lab.b->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kUnknownOpcode)] == 0);
}

std::uint8_t pat(std::uint32_t m, std::uint32_t i) { return static_cast<std::uint8_t>(m * 157 + i * 5 + (i >> 9)); }

struct Run {
  int delivered = 0, sent_ok = 0, in_order = 0, corrupt = 0, errors = 0;
  bool done = false;
};

// Every one of `msgs` messages delivered once, in order and intact, and no failed completion.
void check_every_message(const Run& r, int msgs) {
  CHECK(r.done);
  CHECK(r.errors == 0);
  CHECK(r.delivered == msgs);
  CHECK(r.in_order == msgs);
  CHECK(r.corrupt == 0);
}

// kMsgs messages A -> B: SENDs, and every third a WRITE with immediate into the buffer the
// matching receive names (an SR WRITE places itself; its immediate completes in order).
Run run_messages(Lab& lab, int msgs) {
  constexpr std::uint32_t kMax = 6000;  // up to 6 packets at the default PMTU (1024)
  constexpr int kSlots = 32, kRecvSlots = 64;
  std::vector<std::uint8_t> src(kSlots * kMax), dst(kRecvSlots * kMax);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, dmr).ok());
  auto size_of = [](int m) { return static_cast<std::uint32_t>((m * 1237 + 1) % kMax); };
  auto is_write = [](int m) { return m % 3 == 2; };
  int posted = 0, recvs = 0;
  Run r;
  r.done = lab.run([&] {
    while (posted < msgs && posted - r.sent_ok < kSlots && posted < recvs) {
      const int slot = posted % kSlots;
      for (std::uint32_t i = 0; i < size_of(posted); ++i) src[slot * kMax + i] = pat(posted, i);
      rc::SendWr w;
      w.wr_id = static_cast<std::uint64_t>(posted);
      w.sge = {reinterpret_cast<std::uint64_t>(src.data() + slot * kMax), size_of(posted), smr.lkey};
      if (is_write(posted)) {
        w.opcode = rc::WrOpcode::kWriteWithImm;
        w.remote_addr = reinterpret_cast<std::uint64_t>(dst.data() + (posted % kRecvSlots) * kMax);
        w.rkey = dmr.rkey;
        w.imm = static_cast<std::uint32_t>(posted);
      }
      if (!lab.qa->post_send(w).ok()) break;
      ++posted;
    }
    // A receive per message, at most kRecvSlots ahead of delivery: the WRITE's target slot is
    // free again only once its earlier user was delivered and checked.
    while (recvs < msgs && recvs - r.delivered < kRecvSlots) {
      rc::RecvWr rw{static_cast<std::uint64_t>(recvs),
                    {reinterpret_cast<std::uint64_t>(dst.data() + (recvs % kRecvSlots) * kMax), kMax, dmr.lkey}};
      if (!lab.qb->post_recv(rw).ok()) break;
      ++recvs;
    }
    rc::Completion c;
    while (lab.qa->poll_cq(c)) (c.status == rc::WcStatus::kSuccess ? r.sent_ok : r.errors)++;
    while (lab.qb->poll_cq(c)) {
      if (c.status != rc::WcStatus::kSuccess) {
        ++r.errors;
        continue;
      }
      const int m = static_cast<int>(c.wr_id);
      r.in_order += m == r.delivered;
      // A WRITE with immediate's receive completion counts no bytes (as go-back-N's): the data
      // went where the requester put it.
      bool ok = c.byte_len == size_of(m) && c.has_imm == is_write(m) &&
                (!is_write(m) || c.imm == static_cast<std::uint32_t>(m));
      for (std::uint32_t i = 0; ok && i < size_of(m); ++i) ok = dst[(m % kRecvSlots) * kMax + i] == pat(m, i);
      r.corrupt += !ok;
      ++r.delivered;
    }
    return r.errors > 0 || (r.delivered == msgs && r.sent_ok == msgs);
  });
  finish(lab);
  return r;
}

}  // namespace

TEST_CASE(
    "SR over net_ring with 0 % and 5 % frame loss: SENDs and WRITEs with immediate exactly once, in order, intact",
    "[engine][transport][sr]") {
  for (double loss : {0.0, 0.05}) {
    INFO("loss " << loss);
    const LabOptions o = sr_options(loss);
    Lab lab("tsr" + std::to_string(static_cast<int>(loss * 100)), o);
    constexpr int kMsgs = 300;
    const Run r = run_messages(lab, kMsgs);
    check_every_message(r, kMsgs);
    check_all_sr(lab);
    if (loss > 0) {
      CHECK(lab.relay.dropped > 0);
      CHECK(lab.qa->counters().retransmitted_packets > 0);
      CHECK(lab.qa->counters().sr_resent_on_sack > 0);  // SACKs came back through A's parser
    }
  }
}

TEST_CASE("an endpoint without a selective-repeat QP refuses SR opcodes as unknown (standard peers never take them)",
          "[engine][transport][sr]") {
  // A's QP is SR, B's is go-back-N: B's endpoint never turned accept_droce_sr on, so A's SR
  // frames die in B's parser as any manufacturer-specific opcode does; nothing is delivered.
  LabOptions o{0.0};
  o.recovery = rc::Recovery::kSelectiveRepeat;
  o.b_recovery = rc::Recovery::kGoBackN;
  Lab lab("tsrm", o);
  std::vector<std::uint8_t> src(256, 7), dst(256);
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  REQUIRE(lab.qb->post_recv(rc::RecvWr{1, {reinterpret_cast<std::uint64_t>(dst.data()), 256, dmr.lkey}}).ok());
  rc::SendWr w;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 100, smr.lkey};
  REQUIRE(lab.qa->post_send(w).ok());
  const auto unknown = [&] {
    return lab.b->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kUnknownOpcode)];
  };
  CHECK(lab.run([&] { return unknown() > 0; }, 5));
  rc::Completion c;
  CHECK_FALSE(lab.qb->poll_cq(c));
}

TEST_CASE("set_recovery: a QP created go-back-N turns selective repeat while in INIT, never once connected",
          "[engine][transport][sr]") {
  // Both endpoints start with go-back-N QPs only; the second pair is made SR after create_qp, as
  // droce-gen does once its peer agreed, and carries a message through the SR parsers it turned on.
  Lab lab("tsrs", 0.0);
  rc::QpAttr qa_attr = lab.qa->attr();
  rc::QpAttr qb_attr = lab.qb->attr();
  std::uint32_t qpn_a = 0, qpn_b = 0;
  REQUIRE(lab.a->create_qp(qa_attr, qpn_a).ok());
  REQUIRE(lab.b->create_qp(qb_attr, qpn_b).ok());
  REQUIRE(lab.a->set_recovery(qpn_a, rc::Recovery::kSelectiveRepeat).ok());
  REQUIRE(lab.b->set_recovery(qpn_b, rc::Recovery::kSelectiveRepeat).ok());
  CHECK(lab.a->qp(qpn_a)->attr().recovery == rc::Recovery::kSelectiveRepeat);
  CHECK_FALSE(lab.a->set_recovery(lab.qpn_a, rc::Recovery::kSelectiveRepeat).ok());  // connected: fixed
  CHECK_FALSE(lab.a->set_recovery(0xABCDEF, rc::Recovery::kSelectiveRepeat).ok());   // no such QP
  REQUIRE(lab.a->connect(qpn_a, RemoteQp{droce::test::addr(2), qpn_b, qb_attr.sq_psn}).ok());
  REQUIRE(lab.b->connect(qpn_b, RemoteQp{droce::test::addr(1), qpn_a, qa_attr.sq_psn}).ok());
  rc::RcQp* qa = lab.a->qp(qpn_a);
  rc::RcQp* qb = lab.b->qp(qpn_b);
  std::vector<std::uint8_t> src(5000), dst(5000);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = pat(9, static_cast<std::uint32_t>(i));
  rc::MemoryRegion smr, dmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(dst.data(), dst.size(), rc::kAccessLocalWrite, dmr).ok());
  REQUIRE(qb->post_recv(rc::RecvWr{1, {reinterpret_cast<std::uint64_t>(dst.data()), 5000, dmr.lkey}}).ok());
  rc::SendWr w;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), 5000, smr.lkey};
  REQUIRE(qa->post_send(w).ok());
  rc::Completion ca, cb;
  bool got_a = false, got_b = false;
  CHECK(lab.run(
      [&] {
        got_a = got_a || qa->poll_cq(ca);
        got_b = got_b || qb->poll_cq(cb);
        return got_a && got_b;
      },
      5));
  CHECK(ca.status == rc::WcStatus::kSuccess);
  CHECK(cb.status == rc::WcStatus::kSuccess);
  CHECK(cb.byte_len == 5000);
  CHECK(dst == src);
  CHECK(qa->counters().recovery_mismatch == 0);
  CHECK(qb->counters().recovery_mismatch == 0);
  CHECK(lab.b->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kUnknownOpcode)] == 0);
}

namespace {

// kOps operations A -> B: READs of up to 6 packets from B's region (each verified byte for byte)
// and, every fourth, a FetchAdd of m + 1 on one of B's words, every fourth + 1 a CmpSwap on
// another expecting the CmpSwaps before it. SR executes both in posting order, once each, so
// every original value is known in advance.
Run run_reads_atomics(Lab& lab, int ops) {
  constexpr std::uint32_t kMax = 6000;
  constexpr int kSlots = 32;
  std::vector<std::uint8_t> remote(kSlots * kMax), local(kSlots * kMax);
  std::vector<std::uint64_t> words(2, 0), orig(kSlots, 0);
  for (std::size_t i = 0; i < remote.size(); ++i)
    remote[i] = pat(static_cast<std::uint32_t>(i / kMax), static_cast<std::uint32_t>(i % kMax));
  rc::MemoryRegion rmr, lmr, wmr, omr;
  REQUIRE(lab.mem_b.register_memory(remote.data(), remote.size(), rc::kAccessRemoteRead, rmr).ok());
  REQUIRE(lab.mem_b.register_memory(words.data(), 16, rc::kAccessRemoteAtomic, wmr).ok());
  REQUIRE(lab.mem_a.register_memory(local.data(), local.size(), rc::kAccessLocalWrite, lmr).ok());
  REQUIRE(lab.mem_a.register_memory(orig.data(), orig.size() * 8, rc::kAccessLocalWrite, omr).ok());
  auto size_of = [](int m) { return static_cast<std::uint32_t>((m * 1237 + 1) % kMax); };
  auto is_add = [](int m) { return m % 4 == 3; };
  auto is_swap = [](int m) { return m % 4 == 1; };
  std::vector<std::uint64_t> want(static_cast<std::size_t>(ops), 0);
  std::uint64_t sum = 0, swaps = 0;
  for (int m = 0; m < ops; ++m) {
    if (is_add(m)) {
      want[m] = sum;
      sum += static_cast<std::uint64_t>(m + 1);
    } else if (is_swap(m)) {
      want[m] = swaps++;
    }
  }
  int posted = 0;
  Run r;
  r.done = lab.run([&] {
    while (posted < ops && posted - r.sent_ok - r.errors < kSlots) {
      const int m = posted, slot = m % kSlots;
      rc::SendWr w;
      w.wr_id = static_cast<std::uint64_t>(m);
      if (is_add(m) || is_swap(m)) {
        orig[slot] = ~std::uint64_t{0};
        w.opcode = is_add(m) ? rc::WrOpcode::kFetchAdd : rc::WrOpcode::kCmpSwap;
        w.sge = {reinterpret_cast<std::uint64_t>(&orig[slot]), 8, omr.lkey};
        w.remote_addr = reinterpret_cast<std::uint64_t>(&words[is_add(m) ? 0 : 1]);
        w.rkey = wmr.rkey;
        w.compare_add = is_add(m) ? static_cast<std::uint64_t>(m + 1) : want[m];
        w.swap = want[m] + 1;
      } else {
        std::memset(local.data() + slot * kMax, 0, kMax);
        w.opcode = rc::WrOpcode::kRead;
        w.sge = {reinterpret_cast<std::uint64_t>(local.data() + slot * kMax), size_of(m), lmr.lkey};
        w.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + slot * kMax);
        w.rkey = rmr.rkey;
      }
      if (!lab.qa->post_send(w).ok()) break;
      ++posted;
    }
    rc::Completion c;
    while (lab.qa->poll_cq(c)) {
      if (c.status != rc::WcStatus::kSuccess) {
        ++r.errors;
        continue;
      }
      const int m = static_cast<int>(c.wr_id), slot = m % kSlots;
      r.in_order += m == r.sent_ok;
      bool ok = true;
      if (is_add(m) || is_swap(m)) {
        ok = orig[slot] == want[m];
      } else {
        ok = c.byte_len == size_of(m);
        for (std::uint32_t i = 0; ok && i < size_of(m); ++i)
          ok = local[slot * kMax + i] == pat(static_cast<std::uint32_t>(slot), i);
      }
      r.corrupt += !ok;
      ++r.sent_ok;
    }
    return r.errors > 0 || r.sent_ok == ops;
  });
  finish(lab);
  if (r.sent_ok == ops && (words[0] != sum || words[1] != swaps)) ++r.corrupt;  // each atomic ran once
  return r;
}

}  // namespace

TEST_CASE(
    "SR over net_ring with 0 % and 5 % frame loss: READs and atomics complete in order, every byte and "
    "original value right, each atomic executed once",
    "[engine][transport][sr][read]") {
  for (double loss : {0.0, 0.05}) {
    INFO("loss " << loss);
    const LabOptions o = sr_options(loss);
    Lab lab("tsrr" + std::to_string(static_cast<int>(loss * 100)), o);
    constexpr int kOps = 300;
    const Run r = run_reads_atomics(lab, kOps);
    CHECK(r.done);
    CHECK(r.errors == 0);
    CHECK(r.sent_ok == kOps);
    CHECK(r.in_order == kOps);
    CHECK(r.corrupt == 0);
    CHECK(lab.qb->counters().atomics_executed == kOps / 2);
    check_all_sr(lab);
    if (loss > 0) {
      CHECK(lab.relay.dropped > 0);
      CHECK(lab.qa->counters().sr_reasked_responses > 0);  // SR READ responses came back through A's parser
    }
  }
}

// The first PSNs just below the 24-bit wrap (forced, as a replay forces them: 16 and 8 PSNs
// before it), 5 % loss: the data, the retransmissions and the ACKs, NAKs or SACKs all cross the
// wrap (IBTA §9.7.1's PSN arithmetic is modulo 2^24), go-back-N and selective repeat alike.
TEST_CASE("first PSNs just below the 24-bit wrap with 5 % loss: go-back-N and SR deliver every message once, in order",
          "[engine][transport][sr][psn]") {
  for (const rc::Recovery recovery : {rc::Recovery::kGoBackN, rc::Recovery::kSelectiveRepeat}) {
    const bool sr = recovery == rc::Recovery::kSelectiveRepeat;
    INFO((sr ? "selective repeat" : "go-back-N"));
    Lab lab(sr ? "twrapsr" : "twrapgbn", sr ? sr_options(0.05) : LabOptions{0.05});
    // A second pair of QPs on the lab's endpoints, their first PSNs forced (the lab's own pair
    // stays connected and idle): A sends from 0xFFFFF0, B from 0xFFFFF8.
    rc::QpAttr qa_attr = lab.qa->attr(), qb_attr = lab.qb->attr();
    qa_attr.sq_psn = 0xFFFFF0;
    qb_attr.sq_psn = 0xFFFFF8;
    std::uint32_t qpn_a = 0, qpn_b = 0;
    REQUIRE(lab.a->create_qp(qa_attr, qpn_a).ok());
    REQUIRE(lab.b->create_qp(qb_attr, qpn_b).ok());
    REQUIRE(lab.a->connect(qpn_a, RemoteQp{droce::test::addr(2), qpn_b, qb_attr.sq_psn}).ok());
    REQUIRE(lab.b->connect(qpn_b, RemoteQp{droce::test::addr(1), qpn_a, qa_attr.sq_psn}).ok());
    lab.qa = lab.a->qp(qpn_a);
    lab.qb = lab.b->qp(qpn_b);
    lab.qpn_a = qpn_a;
    lab.qpn_b = qpn_b;
    constexpr int kMsgs = 120;  // about 360 packets: A's PSNs pass 0xFFFFFF -> 0 at the 16th
    const Run r = run_messages(lab, kMsgs);
    check_every_message(r, kMsgs);
    CHECK(lab.relay.dropped > 0);
    CHECK(lab.qa->counters().retransmitted_packets > 0);
    // A's next PSN went round: past the wrap, below where it started.
    CHECK(lab.qa->sq_nxt() < 0xFFFFF0);
    CHECK(lab.qb->rq_epsn() == lab.qa->sq_nxt());
    if (sr) check_all_sr(lab);
  }
}
