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

  // Each case spoils one field of a good config.
  struct Spoiled {
    const char* field;
    void (*spoil)(EndpointConfig&);
  };
  const Spoiled cases[] = {
      {"queues.pool", [](EndpointConfig& c) { c.queues.pool = nullptr; }},
      {"queues.memory", [](EndpointConfig& c) { c.queues.memory = nullptr; }},
      {"queues.port_id", [](EndpointConfig& c) { c.queues.port_id = RTE_MAX_ETHPORTS - 1; }},
      {"queues.queue", [](EndpointConfig& c) { c.queues.queue = 1; }},  // the ring port has one queue pair
      {"addresses.vlan_id", [](EndpointConfig& c) { c.addresses.vlan_id = 4095; }},
      {"addresses.vlan_pcp", [](EndpointConfig& c) { c.addresses.vlan_pcp = 8; }},
      {"addresses.dscp", [](EndpointConfig& c) { c.addresses.dscp = 64; }},
      {"transport.qpn_base", [](EndpointConfig& c) { c.transport.qpn_base = 1; }},
      {"transport.max_qps", [](EndpointConfig& c) { c.transport.max_qps = 0; }},
      {"transport.max_qps", [](EndpointConfig& c) { c.transport.max_qps = kMaxEndpointQps + 1; }},
      {"transport.qpn_base + max_qps",
       [](EndpointConfig& c) {
         c.transport.qpn_base = (1u << 24) - 10;
         c.transport.max_qps = 11;
       }},
      // The test pool's mbufs hold 2048 bytes.
      {"transport.tx_inline_bytes", [](EndpointConfig& c) { c.transport.tx_inline_bytes = 4096; }},
      {"dcqcn.params", [](EndpointConfig& c) { c.dcqcn.params.min_rate_bps = -1; }},
      {"pfc.priority", [](EndpointConfig& c) { c.pfc.priority = 8; }},
      {"pfc.link_bps", [](EndpointConfig& c) { c.pfc.link_bps = std::numeric_limits<double>::quiet_NaN(); }},
  };
  for (const Spoiled& k : cases) {
    EndpointConfig c = good;
    k.spoil(c);
    expect_refused(c, k.field);
  }
}
