// RcEndpoint::create: a configuration out of range is refused with kInvalidArgument and a line
// naming the field; a good one makes an endpoint.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "engine/endpoint/rc_endpoint.h"
#include "tests/engine/rc_lab.h"
#include "tests/engine/ring_pair.h"

using namespace droce::engine;
using droce::test::RingPair;

namespace {

// Refused, with the field's name in the line.
void expect_refused(const EndpointConfig& c, const std::string& field) {
  Status err;
  auto ep = RcEndpoint::create(c, err);
  INFO(err.message());
  CHECK(ep == nullptr);
  CHECK(err.code() == StatusCode::kInvalidArgument);
  CHECK(err.message().find(field) != std::string::npos);
}

}  // namespace

TEST_CASE("endpoint config: each field out of range is named, a good config makes an endpoint", "[endpoint]") {
  RingPair ring("cfgchk", droce::test::pool().get());
  MemoryRegistry mem;
  EndpointConfig good;
  good.queues.port_id = ring.a->id();
  good.queues.pool = droce::test::pool().get();
  good.queues.memory = &mem;

  Status err;
  auto ep = RcEndpoint::create(good, err);
  INFO(err.message());
  REQUIRE(ep != nullptr);
  CHECK(err.ok());
  ep.reset();

  EndpointConfig c = good;
  c.queues.pool = nullptr;
  expect_refused(c, "queues.pool");
  c = good;
  c.queues.memory = nullptr;
  expect_refused(c, "queues.memory");
  c = good;
  c.queues.port_id = RTE_MAX_ETHPORTS - 1;
  expect_refused(c, "queues.port_id");
  c = good;
  c.queues.queue = 1;  // the ring port has one queue pair
  expect_refused(c, "queues.queue");
  c = good;
  c.addresses.vlan_id = 4095;
  expect_refused(c, "addresses.vlan_id");
  c = good;
  c.addresses.vlan_pcp = 8;
  expect_refused(c, "addresses.vlan_pcp");
  c = good;
  c.addresses.dscp = 64;
  expect_refused(c, "addresses.dscp");
  c = good;
  c.transport.qpn_base = 1;
  expect_refused(c, "transport.qpn_base");
  c = good;
  c.transport.max_qps = 0;
  expect_refused(c, "transport.max_qps");
  c = good;
  c.transport.max_qps = kMaxEndpointQps + 1;
  expect_refused(c, "transport.max_qps");
  c = good;
  c.transport.qpn_base = (1u << 24) - 10;
  c.transport.max_qps = 11;
  expect_refused(c, "transport.qpn_base + max_qps");
  c = good;
  c.transport.tx_inline_bytes = 4096;  // the test pool's mbufs hold 2048 bytes
  expect_refused(c, "transport.tx_inline_bytes");
  c = good;
  c.dcqcn.params.min_rate_bps = -1;
  expect_refused(c, "dcqcn.params");
  c = good;
  c.pfc.priority = 8;
  expect_refused(c, "pfc.priority");
  c = good;
  c.pfc.link_bps = std::numeric_limits<double>::quiet_NaN();
  expect_refused(c, "pfc.link_bps");
}
