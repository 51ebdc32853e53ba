// droce-coll's output: nccl-tests' table (GB/s), droce's figures beside it (slowest rank and
// transfer, per-iteration tails, retransmissions, NAKs, CNPs, pauses), the traffic matrix, the
// fabric's per-port counters, and the JSON (Gb/s, droce's unit everywhere).
#pragma once

#include <cstdint>
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

// The end of the table, droce's per-size figures, the matrix and the ports; true when nothing was wrong.
bool print_summary(const Options& o, const RunSummary& s, const CollLab& lab, const FabricObserver& obs);
// The JSON report; empty, or why it could not be written.
[[nodiscard]] std::string write_json(const Options& o, const RunSummary& s, const CollLab& lab,
                                     const FabricObserver& obs, const std::vector<std::unique_ptr<CollRank>>& ranks);

}  // namespace droce::coll
