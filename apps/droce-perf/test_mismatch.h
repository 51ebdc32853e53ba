// A peer running another perftest test, named from the data path. perftest 6.06's exchange (the
// key messages and barriers droce-perf speaks) carries no test type, so a write_bw server and a
// send_bw client connect and then wait on each other; the requests the peer sends show its test:
// the first one of a kind this side's test never receives ends the run with one line naming both.
#pragma once

#include <droce/protocols/rc/types.h>

#include <cstdint>
#include <string>

#include "apps/droce-perf/options.h"

namespace droce::perf {

// Request kinds, as bits: what a go-back-N responder counts (RcCounters::send_requests, ...).
inline constexpr std::uint8_t kSendRequests = 1, kWriteRequests = 2, kReadRequests = 4, kAtomicRequests = 8;

// The kinds of request with at least one message in `c`.
[[nodiscard]] std::uint8_t received_request_kinds(const rc::RcCounters& c);

// The kinds the peer of this side sends in `o`'s test: a server always its test's kind; a client
// only where the server sends requests too (send_lat, write_lat, -b), else none.
[[nodiscard]] std::uint8_t expected_request_kinds(const Options& o);

// Empty when `seen` holds only expected kinds; else one line naming both tests, e.g. "the client
// runs send_bw or send_lat (its requests are SENDs), this server write_bw"; a bw peer sending our
// own test's requests runs -b where we do not.
[[nodiscard]] std::string request_mismatch(const Options& o, std::uint8_t seen);

}  // namespace droce::perf
