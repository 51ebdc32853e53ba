// droce-coll's output: nccl-tests' table (GB/s), droce's figures beside it (slowest rank and
// transfer, per-iteration tails, retransmissions, NAKs, CNPs, pauses), the traffic matrix, the
// fabric's per-port counters, and the JSON (Gb/s, droce's unit everywhere).
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/droce-coll/fabric_observer.h"
#include "apps/droce-coll/lab_fabric.h"
#include "apps/droce-coll/options.h"
#include "apps/droce-coll/rank.h"
#include "apps/droce-coll/results.h"

namespace droce::coll {

// nccl-tests' header lines, once.
void print_table_header(const Options& o);
// One row as soon as a size is done (nccl-tests prints as it goes).
void print_table_row(const Options& o, const SizeResult& r);

struct RunSummary {
  std::vector<SizeResult> sizes;
  std::vector<std::uint64_t> schedule_matrix;  // payload bytes src -> dst the schedules moved, all iterations
  std::string failure;                         // empty when every iteration completed
};

// The end of the table, droce's per-size figures, the matrix and the ports (`lab` and `obs` are
// null when the fabric is outside the process: MPI mode); true when nothing was wrong.
bool print_summary(const Options& o, const RunSummary& s, const CollLab* lab, const FabricObserver* obs);

// The endpoints' counters the JSON carries, summed over every rank (by Linux name, by drop reason).
struct EndpointTotals {
  nlohmann::json hw_counters = nlohmann::json::object();
  nlohmann::json drop_reasons = nlohmann::json::object();
  std::uint64_t tx_alloc_failures = 0, tx_backlog_drops = 0;
};
[[nodiscard]] EndpointTotals endpoint_totals(const std::vector<const engine::RcEndpoint*>& eps);
// Adds `b`'s counters into `a` (every name in either).
void add_totals(EndpointTotals& a, const EndpointTotals& b);

// The JSON report; empty, or why it could not be written. `mpi` is added as it is (MPI mode).
[[nodiscard]] engine::Status write_json(const Options& o, const RunSummary& s, const CollLab* lab,
                                        const FabricObserver* obs, const EndpointTotals& totals,
                                        const nlohmann::json& mpi = nullptr);

}  // namespace droce::coll
