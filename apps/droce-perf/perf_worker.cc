// droce-perf's per-worker stage.
#include "apps/droce-perf/perf_worker.h"

namespace droce::perf {

void PerfWorker::poll(std::uint64_t now_tsc) {
  ep_.poll(now_tsc);
  publish();
}

engine::Status PerfWorker::run_bw(std::uint32_t size, BwRow& row) {
  engine::Status s = traffic_.run_bw(size, row);
  publish();
  return s;
}

engine::Status PerfWorker::run_lat(std::uint32_t size, LatRow& row) {
  engine::Status s = traffic_.run_lat(size, row);
  publish();
  return s;
}

}  // namespace droce::perf
