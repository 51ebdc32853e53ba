// droce's counters under the names Linux RDMA drivers give theirs (the hw_counters of mlx5 and
// rxe: /sys/class/infiniband/<dev>/ports/<port>/hw_counters/<name>, `rdma statistic show`), so
// that dashboards and scripts written for a NIC read droce's outputs unchanged. The table in
// docs/counters.md is this file's, in words.
#pragma once

#include <cstdint>
#include <span>

#include "protocols/rc/types.h"
#include "protocols/wire/drop_reason.h"

namespace droce::engine {

struct EndpointCounters;  // engine/endpoint/rc_endpoint.h
class RcEndpoint;

// Sums of the counters a Linux name is computed from: the RC counters of a set of QPs and the
// counters of the endpoints they live on.
struct CounterSums {
  rc::RcCounters qps;
  std::uint64_t rx_frames = 0;
  std::uint64_t rx_drops[wire::kDropReasonCount] = {};
  std::uint64_t np_ecn_marked_roce_packets = 0;
  std::uint64_t np_cnp_sent = 0;
  std::uint64_t rp_cnp_handled = 0;
  std::uint64_t rp_cnp_ignored = 0;
};

// One Linux counter droce has: its name, the drivers that use it, the droce counter(s) it is
// computed from, what it counts, and whether a single QP has it (false: endpoint-wide only).
struct LinuxCounter {
  const char* name;
  const char* drivers;
  const char* droce;
  const char* meaning;
  bool per_qp;
  std::uint64_t (*value)(const CounterSums&);
};
[[nodiscard]] std::span<const LinuxCounter> linux_counters();

// A Linux counter droce does not have, and why.
struct UnmappedLinuxCounter {
  const char* name;
  const char* drivers;
  const char* why;
};
[[nodiscard]] std::span<const UnmappedLinuxCounter> linux_counters_without_equivalent();

// Every RC counter by its field name (the per-QP telemetry lists them all).
struct RcCounterField {
  const char* name;
  std::uint64_t rc::RcCounters::*member;
};
[[nodiscard]] std::span<const RcCounterField> rc_counter_fields();

// Adds `c` into `sum`. Each value is read as one aligned 64-bit load, so a thread other than the
// QP's (telemetry, a live feed) may call it while the worker counts: it sees recent values,
// never torn ones.
void add_rc_counters(rc::RcCounters& sum, const rc::RcCounters& c);
// Adds an endpoint's counters (what CounterSums keeps of them) into `sum`, same loads.
void add_endpoint_counters(CounterSums& sum, const EndpointCounters& c);
// Adds an endpoint and every QP it created, same loads. The QPs must have been created before
// the reading thread started (the apps create them all before their run).
void add_endpoint_and_qps(CounterSums& sum, const RcEndpoint& ep);

}  // namespace droce::engine
