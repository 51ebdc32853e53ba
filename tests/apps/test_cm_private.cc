// droce-gen's RDMA-CM private data (apps/droce-gen/cm_private.h): records round-trip, and what a
// peer may not send is refused with a reason.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "apps/droce-gen/cm_private.h"

using namespace droce::gen;

TEST_CASE("cm private data: a REP round-trips", "[apps][gen]") {
  std::uint8_t b[196] = {};
  encode_cm_rep(CmRep{true, 3, 0x7f3a5c001000, 0x1a2b, 64}, b);
  CmRep r;
  REQUIRE(decode_cm_rep(b, sizeof b, r).ok());
  CHECK(r.sr);
  CHECK(r.qp_index == 3);
  CHECK(r.vaddr == 0x7f3a5c001000);
  CHECK(r.rkey == 0x1a2b);
  CHECK(r.slots == 64);
}

TEST_CASE("cm private data: a REP of 0 slots is refused (the requester divides by it)", "[apps][gen]") {
  std::uint8_t b[196] = {};
  encode_cm_rep(CmRep{false, 0, 0x1000, 7, 0}, b);
  CmRep r;
  r.slots = 5;
  CHECK(decode_cm_rep(b, sizeof b, r).code() == droce::StatusCode::kPeer);
  CHECK(decode_cm_rep(b, sizeof b, r).message() == "REP private data announces a responder buffer of 0 slots");
  CHECK(r.slots == 5);  // nothing taken from a refused record
}

TEST_CASE("cm private data: a REQ round-trips; short or foreign records are refused", "[apps][gen]") {
  std::uint8_t b[56] = {};
  CmReq q;
  q.propose_sr = true;
  q.qp_index = 1;
  q.qps = 2;
  q.active = 2;
  q.op = 1;
  q.mtu = 1024;
  q.inflight = 16;
  q.workload_digest = workload_digest("CONFIG op=write size=4096");
  q.run_limit_ms = 5000;
  q.warmup_ms = 100;
  encode_cm_req(q, b);
  CmReq r;
  REQUIRE(decode_cm_req(b, sizeof b, r).ok());
  CHECK((r.propose_sr && r.qp_index == 1 && r.qps == 2 && r.active == 2 && r.op == 1 && r.mtu == 1024 &&
         r.inflight == 16 && r.workload_digest == q.workload_digest && r.run_limit_ms == 5000 && r.warmup_ms == 100));
  CHECK(decode_cm_req(b, kCmReqBytes - 1, r).message() == "REQ private data too short (43 bytes)");
  b[4] = 2;
  CHECK(decode_cm_req(b, sizeof b, r).message() == "REQ private data of version 2, this droce-gen speaks 1");
  b[0] = 0;
  CHECK(decode_cm_req(b, sizeof b, r).message().find("not droce-gen's 0x4452474e") != std::string::npos);
}
