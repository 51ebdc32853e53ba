// Naming a peer that runs another test from the kinds of request it sends (see test_mismatch.h).
#include "apps/droce-perf/test_mismatch.h"

namespace droce::perf {

using engine::PerftestTest;

namespace {

std::uint8_t kind_of(PerftestTest t) {
  switch (t) {
    case PerftestTest::kSendBw:
    case PerftestTest::kSendLat:
      return kSendRequests;
    case PerftestTest::kWriteBw:
    case PerftestTest::kWriteLat:
      return kWriteRequests;
    case PerftestTest::kReadBw:
    case PerftestTest::kReadLat:
      return kReadRequests;
    default:
      return kAtomicRequests;
  }
}

// The tests whose requester sends this kind: bw and lat send the same requests, so both are named.
const char* tests_of(std::uint8_t kind) {
  switch (kind) {
    case kSendRequests:
      return "send_bw or send_lat (its requests are SENDs)";
    case kWriteRequests:
      return "write_bw or write_lat (its requests are RDMA WRITEs)";
    case kReadRequests:
      return "read_bw or read_lat (its requests are RDMA READs)";
    default:
      return "atomic_bw or atomic_lat (its requests are atomics)";
  }
}

}  // namespace

std::uint8_t received_request_kinds(const rc::RcCounters& c) {
  return static_cast<std::uint8_t>(
      (c.send_requests != 0 ? kSendRequests : 0) | (c.write_requests != 0 ? kWriteRequests : 0) |
      (c.read_requests != 0 ? kReadRequests : 0) | (c.atomic_requests != 0 ? kAtomicRequests : 0));
}

std::uint8_t expected_request_kinds(const Options& o) {
  // perftest's latency tests of SEND and WRITE are ping-pongs (the server answers in kind); a
  // READ or atomic latency server only answers, and a bw server sends only under -b.
  const bool peer_requests =
      o.server() || o.duplex || o.test == PerftestTest::kSendLat || o.test == PerftestTest::kWriteLat;
  return peer_requests ? kind_of(o.test) : 0;
}

std::string request_mismatch(const Options& o, std::uint8_t seen) {
  const std::uint8_t foreign = seen & static_cast<std::uint8_t>(~expected_request_kinds(o));
  if (foreign == 0) return {};
  const std::uint8_t first = foreign & static_cast<std::uint8_t>(-foreign);  // the lowest bit: one kind named
  const std::string peer = o.server() ? "client" : "server", self = o.server() ? "server " : "client ";
  const char* test = engine::perftest_test_name(o.test);
  // Our own test's requests, unexpected: a bw peer sending both ways (perftest's -b is not in
  // its exchange either).
  if (first == kind_of(o.test) && o.bw())
    return "the " + peer + " runs " + test + " -b (it sends " + test + "'s requests too), this " + self + test +
           " without -b: give both sides -b or neither";
  return "the " + peer + " runs " + tests_of(first) + ", this " + self + test + (o.duplex ? " -b" : "") +
         ": give both sides the same test";
}

}  // namespace droce::perf
