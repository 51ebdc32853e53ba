// Protection domains through the endpoint's API (docs/hardening.md, "Protection domains"): a QP
// is created in a domain of its endpoint's MemoryRegistry; a peer's WRITE naming a live R_Key of
// another domain is answered remote access error and counted per QP (resp_wrong_domain, in
// /droce/qp telemetry); the same key works through a QP of its own domain; an SRQ takes only QPs
// of its domain.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "engine/endpoint/linux_counter_names.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

namespace {

rc::Completion write_through(Lab& lab, std::uint32_t qpn_a, std::vector<std::uint8_t>& src, const rc::MemoryRegion& smr,
                             std::vector<std::uint8_t>& target, std::uint32_t rkey) {
  rc::SendWr w;
  w.wr_id = 3;
  w.opcode = rc::WrOpcode::kWrite;
  w.remote_addr = reinterpret_cast<std::uint64_t>(target.data());
  w.rkey = rkey;
  w.sge = {reinterpret_cast<std::uint64_t>(src.data()), static_cast<std::uint32_t>(src.size()), smr.lkey};
  REQUIRE(lab.a->post_send(qpn_a, w).ok());
  rc::Completion c{};
  REQUIRE(lab.run([&] { return lab.a->poll_cq(qpn_a, &c, 1) == 1; }));
  return c;
}

}  // namespace

TEST_CASE("endpoint domains: another domain's R_Key refused and counted, its own QP reaches it", "[engine][domains]") {
  Lab lab("tpd", LabOptions{});
  std::uint32_t pd = 0;
  REQUIRE(lab.mem_b.create_domain(pd).ok());
  CHECK(pd != rc::MrTable::kDefaultDomain);
  std::vector<std::uint8_t> src(512, 0x6D), target(512, 0);
  rc::MemoryRegion smr, tmr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  REQUIRE(lab.mem_b.register_memory(target.data(), target.size(), rc::kAccessRemoteWrite, pd, tmr).ok());
  CHECK(tmr.pd == pd);

  // The lab's QP of B is in the default domain: the key is live, but not its to use.
  CHECK(write_through(lab, lab.qpn_a, src, smr, target, tmr.rkey).status == rc::WcStatus::kRemAccessErr);
  CHECK(lab.qb->counters().resp_remote_access_errors == 1);
  CHECK(lab.qb->counters().resp_wrong_domain == 1);
  CHECK(target == std::vector<std::uint8_t>(512, 0));
  bool exported = false;
  for (const RcCounterField& f : rc_counter_fields()) exported = exported || std::string(f.name) == "resp_wrong_domain";
  CHECK(exported);  // /droce/qp,<endpoint>,<qpn> lists every field of rc_counter_fields()

  // A QP of B in the domain: the same key writes.
  rc::QpAttr in_domain;
  in_domain.pd = pd;
  std::uint32_t qa = 0, qb = 0;
  REQUIRE(lab.a->create_qp(rc::QpAttr{}, qa).ok());
  REQUIRE(lab.b->create_qp(in_domain, qb).ok());
  CHECK(lab.b->qp(qb)->attr().pd == pd);
  REQUIRE(lab.a->connect(qa, RemoteQp{addr(2), qb, lab.b->qp(qb)->attr().sq_psn}).ok());
  REQUIRE(lab.b->connect(qb, RemoteQp{addr(1), qa, lab.a->qp(qa)->attr().sq_psn}).ok());
  CHECK(write_through(lab, qa, src, smr, target, tmr.rkey).status == rc::WcStatus::kSuccess);
  CHECK(target == src);
  CHECK(lab.b->qp(qb)->counters().resp_wrong_domain == 0);

  // A domain is destroyed only once empty, and a QP is never created in a missing one.
  CHECK(lab.mem_b.destroy_domain(pd).code() == StatusCode::kBadState);
  REQUIRE(lab.mem_b.deregister(tmr.lkey).ok());
  REQUIRE(lab.mem_b.destroy_domain(pd).ok());
  std::uint32_t q = 0;
  const Status gone = lab.b->create_qp(in_domain, q);
  CHECK(gone.code() == StatusCode::kNotFound);
  CHECK(lab.mem_b.register_memory(target.data(), target.size(), rc::kAccessRemoteWrite, pd, tmr).code() ==
        StatusCode::kNotFound);
  CHECK(lab.mem_b.destroy_domain(rc::MrTable::kDefaultDomain).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("endpoint domains: an SRQ and its QPs share one domain", "[engine][domains][srq]") {
  Lab lab("tpdsrq", LabOptions{});
  std::uint32_t pd = 0, srq = 0;
  REQUIRE(lab.mem_b.create_domain(pd).ok());
  CHECK(lab.b->create_srq(8, pd + 1, srq).code() == StatusCode::kNotFound);
  REQUIRE(lab.b->create_srq(8, pd, srq).ok());
  CHECK(lab.b->srq(srq)->pd() == pd);
  std::uint32_t stranger = 0, member = 0;
  REQUIRE(lab.b->create_qp(rc::QpAttr{}, stranger).ok());
  rc::QpAttr a;
  a.pd = pd;
  REQUIRE(lab.b->create_qp(a, member).ok());
  const Status refused = lab.b->attach_srq(stranger, srq);
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK(lab.b->attach_srq(member, srq).ok());
  std::vector<std::uint8_t> mine(256), theirs(256);
  rc::MemoryRegion mmr, tmr;
  REQUIRE(lab.mem_b.register_memory(mine.data(), mine.size(), rc::kAccessLocalWrite, pd, mmr).ok());
  REQUIRE(lab.mem_b.register_memory(theirs.data(), theirs.size(), rc::kAccessLocalWrite, tmr).ok());
  CHECK(lab.b->post_srq_recv(srq, {1, {reinterpret_cast<std::uint64_t>(mine.data()), 256, mmr.lkey}}).ok());
  CHECK_FALSE(lab.b->post_srq_recv(srq, {2, {reinterpret_cast<std::uint64_t>(theirs.data()), 256, tmr.lkey}}).ok());
}
