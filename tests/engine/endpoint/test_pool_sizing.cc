// Sizing an endpoint's mbuf pool (engine/endpoint/pool_sizing.h): the arithmetic, its refusals,
// and a receiver whose pool it sized holding every view its credits allow without a frame
// dropped for want of an mbuf.
#include <catch2/catch.hpp>
#include <vector>

#include "engine/core/mempool.h"
#include "engine/endpoint/message_view.h"
#include "engine/endpoint/pool_sizing.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::engine;
using namespace droce::test;

TEST_CASE("pool sizing: each part of the demand, and the total rounded to 2^n - 1", "[engine][pool]") {
  EndpointPoolSize s;
  REQUIRE(size_endpoint_pool(EndpointPoolDemand{}, s).ok());
  CHECK(s.rx == 1024 + RcEndpoint::kRxBurst);
  CHECK(s.tx == (1024 + 1024) * 3);  // zero-copy: header, attached payload, trailer
  CHECK(s.views == 0);
  CHECK(s.caches == 384);
  CHECK(s.needed == s.rx + s.tx + s.views + s.caches);
  CHECK(s.mbufs == 8191);
  CHECK(s.data_room == RTE_PKTMBUF_HEADROOM + 1024 + 128);
  CHECK(s.text().rfind("8191 mbufs of ", 0) == 0);

  EndpointPoolDemand d;
  d.view_qps = 64;
  d.rq_depth = 256;
  d.max_message_bytes = 8192;
  d.pmtu = 4096;
  d.largest_send_payload = 200;  // inlined: one mbuf a frame
  d.lcores = 2;
  REQUIRE(size_endpoint_pool(d, s).ok());
  CHECK(s.tx == 2048);
  CHECK(s.views == 64 * 256 * 2);
  CHECK(s.caches == 768);
  CHECK(s.mbufs == 65535);  // 1056 + 2048 + 32768 + 768 = 36640
}

TEST_CASE("pool sizing: a bad field or an impossible pool refused with its figures", "[engine][pool]") {
  EndpointPoolSize s;
  EndpointPoolDemand d;
  d.pmtu = 1500;
  CHECK(size_endpoint_pool(d, s).code() == StatusCode::kInvalidArgument);
  d = {};
  d.lcores = 0;
  CHECK(size_endpoint_pool(d, s).code() == StatusCode::kInvalidArgument);
  d = {};
  d.view_qps = 1u << 20;
  d.rq_depth = 65536;
  d.max_message_bytes = 1u << 30;
  const Status st = size_endpoint_pool(d, s);
  CHECK(st.code() == StatusCode::kNoMemory);
  CHECK(st.message().find("a mempool holds at most 2^32 - 1") != std::string::npos);
}

TEST_CASE("pool sizing: a receiver's pool sized for its views never runs dry while they are all held",
          "[engine][pool][views]") {
  // B keeps its views in its own pool (net_ring hands it the sender's zero-copy chains, which it
  // copies), sized by the helper for one view QP of rq_depth 64 and 1000-byte messages, without a
  // per-lcore cache. The application holds every view its credits allow before giving them back.
  constexpr std::uint32_t kDepth = 64, kSize = 1000;
  EndpointPoolDemand d;
  d.view_qps = 1;
  d.rq_depth = kDepth;
  d.max_message_bytes = kSize;
  d.pmtu = 1024;
  d.cache = 0;
  EndpointPoolSize size;
  REQUIRE(size_endpoint_pool(d, size).ok());
  static MbufPool* sized = new MbufPool();  // never freed: EAL shuts down after static destructors
  if (sized->get() == nullptr)
    REQUIRE(MbufPool::create(PoolConfig{"tsize_pool", size.mbufs, 0, size.data_room, -1}, *sized).ok());
  LabOptions o{0, false, rc::RecvMode::kMessageViews, kDepth};
  o.tune_b = [](EndpointConfig& c) { c.queues.pool = sized->get(); };
  Lab lab("tsize", o);
  constexpr int kMsgs = 3 * kDepth;
  std::vector<std::uint8_t> src(kMsgs * kSize);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  rc::MemoryRegion smr;
  REQUIRE(lab.mem_a.register_memory(src.data(), src.size(), rc::kAccessLocalWrite, smr).ok());
  SendStream tx{src.data(), kSize, kMsgs};
  int got = 0, full_holds = 0;
  std::vector<MessageView> held;
  const bool done = lab.run([&] {
    tx.step(lab);
    MessageView v;
    while (lab.b->receive_message(lab.qpn_b, v)) {
      CHECK(v.imm == static_cast<std::uint32_t>(got));
      ++got;
      held.push_back(std::move(v));
    }
    if (held.size() == kDepth) {  // every credit spent: now give them all back
      ++full_holds;
      held.clear();
    }
    return tx.failed != 0 || (got == kMsgs && tx.acked == kMsgs);
  });
  CHECK(done);
  CHECK(tx.failed == 0);
  CHECK(got == kMsgs);
  CHECK(full_holds == 3);
  CHECK(lab.b->counters().rx_drops[static_cast<std::size_t>(wire::DropReason::kNoRxBuffer)] == 0);
  CHECK(lab.qb->state() == rc::QpState::kRts);
}

TEST_CASE("pool sizing: docs/api.md's example gives the figures the page quotes", "[engine][pool]") {
  EndpointPoolDemand d;
  d.view_qps = 64;
  d.rq_depth = 256;
  d.max_message_bytes = 64 * 1024;
  d.pmtu = 4096;
  EndpointPoolSize s;
  REQUIRE(size_endpoint_pool(d, s).ok());
  CHECK(s.text() ==
        "524287 mbufs of 4352 B: RX 1056 + TX 6144 + views 262144 + caches 384 = 269728, rounded up to 2^n - 1");
}
