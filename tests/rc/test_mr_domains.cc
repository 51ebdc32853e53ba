// Protection domains (docs/hardening.md, "Protection domains"; IBTA §10.2.3): a QP reaches only
// the regions of its own domain, by R_Key (a peer's WRITE, READ, atomic or invalidation) and by
// L_Key (its own work requests); an SRQ and the QPs that take from it share one domain.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "protocols/rc/srq.h"
#include "tests/rc/loopback.h"

using namespace droce;
using droce::rc::MrCheck;
using droce::rc::MrTable;
using droce::test::attr;
using droce::test::connect;
using droce::test::Loopback;

namespace {

constexpr std::uint32_t kRw = rc::kAccessRemoteWrite | rc::kAccessRemoteRead | rc::kAccessLocalWrite;

// The first domain a fresh table creates: slot 1, generation 1. The loopback builds its QPs with
// their attributes before the test can create a domain, so a QP "in the first domain" names it
// in advance; the test REQUIREs that create_domain gives exactly that id.
constexpr std::uint32_t kFirstDomain = (1u << MrTable::kDomainSlotBits) | 1u;

// One WRITE or READ from QP 0 to `target` through `rkey`; the requester's completion.
rc::Completion one_op(Loopback& lb, rc::WrOpcode op, std::vector<std::uint8_t>& local, const rc::MemoryRegion& lmr,
                      const std::vector<std::uint8_t>& target, std::uint32_t rkey) {
  rc::SendWr w;
  w.wr_id = 7;
  w.opcode = op;
  w.remote_addr = reinterpret_cast<std::uint64_t>(target.data());
  w.rkey = rkey;
  w.sge = {reinterpret_cast<std::uint64_t>(local.data()), 64, lmr.lkey};
  REQUIRE(lb.qp(0).post_send(w).ok());
  rc::Completion c{};
  REQUIRE(lb.run([&] { return lb.qp(0).poll_cq(c); }, 1000));
  return c;
}

}  // namespace

TEST_CASE("domains: created, counted, destroyed only empty; a destroyed id never comes back", "[rc][mr][domains]") {
  MrTable t(8);
  std::vector<std::uint8_t> buf(256);
  CHECK(t.domain_exists(MrTable::kDefaultDomain));
  CHECK_FALSE(t.destroy_domain(MrTable::kDefaultDomain));
  const auto d = t.create_domain();
  REQUIRE(d);
  CHECK(*d == kFirstDomain);
  CHECK(t.domain_exists(*d));
  const auto mr = t.register_region(buf.data(), buf.size(), kRw, *d);
  REQUIRE(mr);
  CHECK(mr->pd == *d);
  CHECK(t.domain_regions(*d) == 1);
  CHECK_FALSE(t.destroy_domain(*d));  // a region is still in it
  REQUIRE(t.deregister_region(mr->lkey));
  CHECK(t.domain_regions(*d) == 0);
  REQUIRE(t.destroy_domain(*d));
  CHECK_FALSE(t.domain_exists(*d));
  CHECK_FALSE(t.destroy_domain(*d));
  CHECK_FALSE(t.register_region(buf.data(), buf.size(), kRw, *d));  // no registering in a dead domain
  // The same slot again: another id, and the old one stays dead.
  const auto again = t.create_domain();
  REQUIRE(again);
  CHECK(*again != *d);
  CHECK((*again & (MrTable::kMaxDomains - 1)) == (*d & (MrTable::kMaxDomains - 1)));
  CHECK_FALSE(t.domain_exists(*d));
  CHECK_FALSE(t.domain_exists(0x12345678));
}

TEST_CASE("domains: at most kMaxDomains - 1 besides the default one", "[rc][mr][domains]") {
  MrTable t(8);
  std::uint32_t made = 0;
  while (t.create_domain()) REQUIRE(++made < MrTable::kMaxDomains);
  CHECK(made == MrTable::kMaxDomains - 1);
}

TEST_CASE("domains: R_Key, L_Key and invalidation checks name the asking QP's domain", "[rc][mr][domains]") {
  MrTable t(8);
  std::vector<std::uint8_t> buf(256);
  const auto d = t.create_domain();
  REQUIRE(d);
  const auto mr = t.register_region(buf.data(), buf.size(), kRw | rc::kAccessRemoteInvalidate, *d);
  REQUIRE(mr);
  const auto va = reinterpret_cast<std::uint64_t>(buf.data());
  CHECK(t.check_remote(mr->rkey, va, 8, kRw, nullptr, MrTable::kDefaultDomain) == MrCheck::kWrongDomain);
  CHECK(t.check_remote(mr->rkey, va, 8, kRw, nullptr, *d) == MrCheck::kOk);
  CHECK(t.check_local(mr->lkey, va, 8, 0, nullptr, MrTable::kDefaultDomain) == MrCheck::kWrongDomain);
  CHECK(t.check_local(mr->lkey, va, 8, 0, nullptr, *d) == MrCheck::kOk);
  // An unknown key is a bad key whatever the domain: the domain check never hides it.
  CHECK(t.check_remote(mr->rkey ^ 0x01000000u, va, 8, kRw, nullptr, MrTable::kDefaultDomain) == MrCheck::kBadKey);
  CHECK(t.invalidate_remote(mr->rkey, MrTable::kDefaultDomain) == MrCheck::kWrongDomain);
  CHECK(t.check_remote(mr->rkey, va, 8, kRw, nullptr, *d) == MrCheck::kOk);  // not invalidated by the refusal
  CHECK(t.invalidate_remote(mr->rkey, *d) == MrCheck::kOk);
}

TEST_CASE("loopback: a WRITE through a live R_Key of another domain is NAKed remote access error and counted",
          "[rc][loopback][domains]") {
  Loopback lb(attr(0x11, 0x12, 100, 200), attr(0x12, 0x11, 200, 100));  // the responder in the default domain
  connect(lb);
  std::vector<std::uint8_t> src(64, 0xAB), target(64, 0);
  const auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  const auto other = lb.ep(1).mrs.create_domain();
  REQUIRE(other);
  const auto tmr = *lb.ep(1).mrs.register_region(target.data(), target.size(), kRw, *other);
  const rc::Completion c = one_op(lb, rc::WrOpcode::kWrite, src, smr, target, tmr.rkey);
  CHECK(c.status == rc::WcStatus::kRemAccessErr);
  CHECK(lb.qp(1).counters().resp_remote_access_errors == 1);
  CHECK(lb.qp(1).counters().resp_wrong_domain == 1);
  CHECK(target == std::vector<std::uint8_t>(64, 0));
}

TEST_CASE("loopback: a READ through a live R_Key of another domain is NAKed remote access error and counted",
          "[rc][loopback][domains]") {
  Loopback lb(attr(0x11, 0x12, 100, 200), attr(0x12, 0x11, 200, 100));
  connect(lb);
  std::vector<std::uint8_t> dst(64, 0), secret(64, 0x5E);
  const auto dmr = *lb.ep(0).mrs.register_region(dst.data(), dst.size(), rc::kAccessLocalWrite);
  const auto other = lb.ep(1).mrs.create_domain();
  REQUIRE(other);
  const auto smr = *lb.ep(1).mrs.register_region(secret.data(), secret.size(), kRw, *other);
  const rc::Completion c = one_op(lb, rc::WrOpcode::kRead, dst, dmr, secret, smr.rkey);
  CHECK(c.status == rc::WcStatus::kRemAccessErr);
  CHECK(lb.qp(1).counters().resp_remote_access_errors == 1);
  CHECK(lb.qp(1).counters().resp_wrong_domain == 1);
  CHECK(dst == std::vector<std::uint8_t>(64, 0));
}

TEST_CASE("loopback: a QP reaches its own domain's regions by WRITE and READ", "[rc][loopback][domains]") {
  rc::QpAttr b = attr(0x12, 0x11, 200, 100);
  b.pd = kFirstDomain;
  Loopback lb(attr(0x11, 0x12, 100, 200), b);
  connect(lb);
  const auto d = lb.ep(1).mrs.create_domain();
  REQUIRE(d);
  REQUIRE(*d == kFirstDomain);
  std::vector<std::uint8_t> src(64, 0xAB), back(64, 0), target(64, 0);
  const auto smr = *lb.ep(0).mrs.register_region(src.data(), src.size(), rc::kAccessLocalWrite);
  const auto bmr = *lb.ep(0).mrs.register_region(back.data(), back.size(), rc::kAccessLocalWrite);
  const auto tmr = *lb.ep(1).mrs.register_region(target.data(), target.size(), kRw, *d);
  CHECK(one_op(lb, rc::WrOpcode::kWrite, src, smr, target, tmr.rkey).status == rc::WcStatus::kSuccess);
  CHECK(target == src);
  CHECK(one_op(lb, rc::WrOpcode::kRead, back, bmr, target, tmr.rkey).status == rc::WcStatus::kSuccess);
  CHECK(back == src);
  CHECK(lb.qp(1).counters().resp_remote_access_errors == 0);
  CHECK(lb.qp(1).counters().resp_wrong_domain == 0);
  // The same QP's own work requests may not name a default-domain buffer of its table.
  std::vector<std::uint8_t> outside(64);
  const auto omr = *lb.ep(1).mrs.register_region(outside.data(), outside.size(), rc::kAccessLocalWrite);
  CHECK_FALSE(lb.qp(1).post_recv({1, {reinterpret_cast<std::uint64_t>(outside.data()), 64, omr.lkey}}).ok());
  rc::SendWr w;
  w.sge = {reinterpret_cast<std::uint64_t>(outside.data()), 64, omr.lkey};
  CHECK_FALSE(lb.qp(1).post_send(w).ok());
}

TEST_CASE("SRQ: QPs of its own domain attach, others are refused; its buffers are of its domain",
          "[rc][srq][domains]") {
  MrTable t(8);
  const auto d = t.create_domain();
  REQUIRE(d);
  rc::SharedRecvQueue srq(8, t, *d);
  CHECK(srq.pd() == *d);
  rc::RcQp stranger(attr(0x21, 0x22, 1, 1), t);  // the default domain
  rc::QpAttr a = attr(0x23, 0x24, 1, 1);
  a.pd = *d;
  rc::RcQp member(a, t);
  REQUIRE(stranger.modify(rc::QpState::kInit).ok());
  REQUIRE(member.modify(rc::QpState::kInit).ok());
  const auto refused = stranger.attach_srq(&srq);
  CHECK_FALSE(refused.ok());
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK(member.attach_srq(&srq).ok());
  std::vector<std::uint8_t> mine(64), theirs(64);
  const auto mmr = *t.register_region(mine.data(), mine.size(), rc::kAccessLocalWrite, *d);
  const auto tmr = *t.register_region(theirs.data(), theirs.size(), rc::kAccessLocalWrite);
  CHECK(srq.post_recv({1, {reinterpret_cast<std::uint64_t>(mine.data()), 64, mmr.lkey}}).ok());
  CHECK_FALSE(srq.post_recv({2, {reinterpret_cast<std::uint64_t>(theirs.data()), 64, tmr.lkey}}).ok());
  CHECK(srq.posted() == 1);
}
