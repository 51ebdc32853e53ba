// droce-gen: RoCEv2 RC traffic generator — real QPs, go-back-N, every message verified.
// Loopback (both ends here), client (requesters) or server (responders, the verifying end), on
// one or more poll-mode workers. main() is the table of contents; the steps live in:
//   options.cc  the command line            setup.cc    pools, labs or port, jobs, QPs
//   connect.cc  joining the QPs to the peer  run.cc      the run from the main lcore, end of run
//   job.cc      one worker's workload         report.cc   text, JSON, exit status
//   arrivals.cc when each message of an offered load is due (the open-loop schedule)
//   feed.cc     the live feed (--stats-json), a JSON line per interval
#include <droce/engine/core/eal.h>
#include <droce/engine/core/stop_signal.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/common/default_port.h"
#include "apps/droce-gen/connect.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/report.h"
#include "apps/droce-gen/run.h"
#include "apps/droce-gen/setup.h"

using namespace droce;
using namespace droce::engine;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int fail(const std::string& msg, int code = 1) {
  std::fprintf(stderr, "droce-gen: %s\n", msg.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // ---- options and EAL ----
  SplitArgs split = split_args(argc, argv);
  gen::Options opt;
  if (int rc = gen::parse_options(split.app, opt, split.eal); rc != 0) return rc > 0 ? 0 : 2;
  // The live feed opens first: with "--stats-json -" nothing else may print to stdout.
  gen::Feed feed;
  if (Status s = feed.open(opt); !s.ok()) return fail(s.message());
  const bool default_port = split.eal.empty();
  if (default_port) split.eal = default_pair_eal_args(opt.mode == gen::Mode::kServer);
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-gen", split.eal, err);
  if (!eal) return fail(err.message());

  // ---- set up: lcores, transport, jobs, QPs ----
  std::vector<unsigned> lcores;
  if (gen::SetupError e = gen::assign_lcores(opt, lcores); !e.status.ok()) return fail(e.status.message(), 2);
  gen::Setup st;
  if (gen::SetupError e = gen::open_transport(opt, default_port, lcores, st); !e.status.ok())
    return fail(e.status.message(), e.usage ? 2 : 1);
  auto t0 = std::chrono::steady_clock::now();
  if (Status s = gen::create_qps(opt, st); !s.ok()) return fail(s.message());
  st.create_qps_s = seconds_since(t0);

  // ---- connect (the exchange's own waits retry EINTR until their deadline: a Ctrl-C now closes
  // the connection) ----
  gen::Connection conn;
  set_stop_ends_tcp_waits(true);
  t0 = std::chrono::steady_clock::now();
  if (Status s = gen::connect_qps(opt, st, conn); !s.ok()) return fail(s.message());
  st.connect_s = seconds_since(t0);
  // From here a Ctrl-C ends the run and the end-of-run lines still flow.
  set_stop_ends_tcp_waits(false);
  if (stop_requested()) return fail("interrupted during the connection exchange");

  // ---- run, end-of-run exchange ----
  gen::RunOutcome outcome;
  if (Status s = gen::run(opt, st, conn, feed, outcome); !s.ok()) return fail(s.message());

  // ---- report, and the picture of the run (--plot) ----
  const int rc = gen::report(opt, st, outcome, feed);
  if (Status s = feed.plot(opt); !s.ok()) return fail(s.message());
  return rc;
}
