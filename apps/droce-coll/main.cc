// droce-coll: collective traffic (nccl-tests' patterns and the fabric stress patterns) between N
// ranks on droce's own lab fabric in this process, every byte verified. main() is the table of
// contents; the steps live in:
//   options.cc      the command line           memory_plan.cc      what the run needs, checked first
//   pattern.cc      nccl-tests' sizes           schedule.cc         who sends what to whom
//   data_keys.h     every element's value       rank*.cc            one rank: QPs, credits, chunks, checks
//   lab_fabric.cc   rings, switch, endpoints    fabric_observer.cc  per-port bytes, matrix, capture
//   setup.cc        building and wiring         lab_run.cc          workers, iterations, stalls
//   report.cc       the table and the JSON      mpi_run.cc          under mpirun: K ranks per process
//   shared_port.cc  K ranks on one port (mpirun)
#include <droce/engine/core/eal.h>
#include <droce/engine/core/stop_signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apps/common/run_python.h"
#include "apps/droce-coll/lab_run.h"
#include "apps/droce-coll/memory_plan.h"
#include "apps/droce-coll/mpi_mode.h"
#include "apps/droce-coll/options.h"
#include "apps/droce-coll/report.h"
#include "apps/droce-coll/setup.h"

using namespace droce;
using namespace droce::coll;

namespace {

int fail(const std::string& msg, int code = 1) {
  std::fprintf(stderr, "droce-coll: %s\n", msg.c_str());
  return code;
}

// With no EAL options: lcores 0..W-1, no PCI scan, and DPDK memory for the pool (hugepages when
// they are usable and hold it, else --no-huge with -m sized to the pool).
std::vector<std::string> default_eal(const Options& o, const MemoryPlan& m) {
  std::vector<std::string> a = {"-l", o.workers == 1 ? "0" : "0-" + std::to_string(o.workers - 1), "--no-pci"};
  const std::uint64_t mb = (m.pool_bytes >> 20) + 256;
  if (!engine::Eal::hugepages_available() || mb > 900) {
    a.insert(a.end(), {"--no-huge", "-m", std::to_string(mb)});
    if (engine::Eal::hugepages_available())
      std::fprintf(stderr, "droce-coll: the mbuf pool (%s) is more than the hugepages hold: running with --no-huge\n",
                   bytes_text(m.pool_bytes).c_str());
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  // ---- options, and the memory the run needs, before EAL ----
  engine::SplitArgs split = engine::split_args(argc, argv);
  Options opt;
  // Under mpirun the job's size is the rank count, and the options are checked at it.
  const bool mpi = under_mpirun();
  if (mpi && mpirun_world_size() >= 2) opt.ranks = mpirun_world_size();
  if (int rc = parse_options(split.app, opt, split.eal); rc != 0) return rc > 0 ? 0 : 2;
  // K ranks in each process (--ranks-per-process): the options are checked again at the world
  // they make, -np x K (run_mpi_rank refuses a world outside 2..64).
  const std::uint32_t world = mpirun_world_size() * opt.ranks_per_process;
  if (mpi && !opt.ranks_given && world != opt.ranks && world >= 2 && world <= kMaxRanks) {
    opt = Options();
    opt.ranks = world;
    if (int rc = parse_options(split.app, opt, split.eal); rc != 0) return rc > 0 ? 0 : 2;
  }
  if (mpi) return run_mpi_rank(opt, split);
  if (!opt.port.empty()) return fail("--port: a rank's own port is for runs under mpirun (scripts/coll-mpi.sh)", 2);
  if (opt.ranks_per_process_given)
    return fail("--ranks-per-process: ranks sharing a process's port are for runs under mpirun (scripts/coll-mpi.sh)",
                2);
  const std::vector<std::uint64_t> sizes = opt.sizes();
  const SizeSchedule largest = SizeSchedule::build(schedule_params(opt, sizes.back()), false);
  const MemoryPlan mem = plan_memory(opt, largest);
  if (engine::Status s = check_memory(mem, memory_available(), opt.ranks); !s.ok()) return fail(s.message(), 2);
  if (split.eal.empty()) split.eal = default_eal(opt, mem);
  engine::install_stop_signals();
  engine::Status err;
  auto eal = engine::Eal::init("droce-coll", split.eal, err);
  if (!eal) return fail(err.message());
  if (!opt.quiet) std::printf("# %s\n", mem.text().c_str());

  // ---- set up: pool, fabric, ranks, wiring, workers ----
  Setup st;
  if (engine::Status s = build_lab(opt, largest, mem, st); !s.ok()) {
    st.teardown();
    return fail(s.message());
  }
  RunnerConfig rcfg;
  rcfg.workers = opt.workers;
  rcfg.iters = opt.iters;
  rcfg.warmup = opt.warmup_iters;
  rcfg.timeout_s = opt.timeout_s;
  rcfg.stall_rank = opt.stall_rank;
  rcfg.live = !opt.quiet;
  LabRunner runner(*st.lab, st.ranks, rcfg);
  if (engine::Status s = runner.launch(); !s.ok()) {
    st.teardown();
    return fail(s.message(), 2);
  }

  // ---- run every size, out of place then in place, a row as each ends ----
  print_table_header(opt);
  RunSummary sum;
  sum.schedule_matrix.assign(std::size_t{opt.ranks} * opt.ranks, 0);
  for (std::uint64_t bytes : sizes) {
    SizeResult r;
    r.requested_bytes = bytes;
    r.plan = schedule_params(opt, bytes).plan;
    for (bool in_place : {false, true}) {
      if (!placement_runs(opt, in_place)) continue;
      const SizeSchedule ss = SizeSchedule::build(schedule_params(opt, bytes), in_place);
      engine::Status s = runner.run(ss, in_place ? r.in_place : r.out_of_place);
      // The iterations that ran moved their bytes whatever happened after.
      const auto m = traffic_matrix(ss.schedule, dtype_bytes(opt.dtype));
      for (std::size_t i = 0; i < m.size(); ++i) sum.schedule_matrix[i] += m[i] * runner.iterations_run();
      if (!s.ok()) {
        sum.failure = s.message();
        break;
      }
      if (engine::stop_requested()) {
        sum.failure = "interrupted";
        break;
      }
    }
    sum.sizes.push_back(r);
    print_table_row(opt, r);
    if (!sum.failure.empty()) break;
  }
  runner.stop();

  // ---- report ----
  const bool ok = print_summary(opt, sum, st.lab.get(), st.observer.get());
  if (!sum.failure.empty()) std::fprintf(stderr, "droce-coll: %s\n", sum.failure.c_str());
  int rc = ok ? 0 : 1;
  if (!opt.json.empty()) {
    std::vector<const engine::RcEndpoint*> eps;
    for (const auto& r : st.ranks) eps.push_back(&r->endpoint());
    if (engine::Status s = write_json(opt, sum, st.lab.get(), st.observer.get(), endpoint_totals(eps)); !s.ok())
      rc = fail(s.message());
    if (!opt.plot.empty())
      if (engine::Status s = apps::run_script("plot_coll.py", {opt.json, opt.plot}); !s.ok())
        rc = fail("--plot: " + s.message());
  }
  st.teardown();
  if (sum.failure == "interrupted") return 130;
  return rc;
}
