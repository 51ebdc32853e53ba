// droce-echo: a request/response service embedded the way a user embeds droce — written only
// against the public API (RcEndpoint, MessageView, QpChannel, OobConnection). The server echoes
// each message back; the client measures round-trip times. The client's logic runs either on the
// worker itself (polling inline) or on an ordinary application thread through QpChannel.
// main() is the table of contents; the steps live in:
//   options.cc  the command line                 setup.cc        the loopback lab, or port and workers
//   connect.cc  the exchange per QP, QP count     echo_server.cc  the server's run
//   client_run.cc  the client's run, end of run   report.cc       text, JSON, exit status
//   srq_exchange.cc, srq_run.cc  --peer srq_pingpong: one shared receive queue a side, either end
#include <droce/engine/core/eal.h>
#include <droce/engine/core/stop_signal.h>
#include <sched.h>

#include <cstdio>
#include <string>

#include "apps/common/default_port.h"
#include "apps/common/oob_waits.h"
#include "apps/droce-echo/client_run.h"
#include "apps/droce-echo/connect.h"
#include "apps/droce-echo/echo_server.h"
#include "apps/droce-echo/options.h"
#include "apps/droce-echo/report.h"
#include "apps/droce-echo/setup.h"
#include "apps/droce-echo/srq_run.h"

using namespace droce;
using namespace droce::engine;

namespace {

int fail(const std::string& msg, int code = 1) {
  std::fprintf(stderr, "droce-echo: %s\n", msg.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // The CPUs we may use, before EAL pins this thread to its lcore: the application thread goes
  // on the others (threads inherit the pinning, and sharing the worker's CPU costs a scheduler
  // time slice per round trip).
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  (void)sched_getaffinity(0, sizeof(allowed), &allowed);

  // ---- options and EAL ----
  SplitArgs split = split_args(argc, argv);
  echo::Options o;
  if (int r = echo::parse_options(split.app, o, split.eal); r != 0) return r > 0 ? 0 : 2;
  // --timeout 0: the server waits for its client forever (ibv_rc_pingpong's); every other wait,
  // and the stall watch, keep the default bound.
  const PeerWaits waits = peer_waits(o.timeout_s, echo::Options{}.timeout_s);
  o.timeout_s = waits.bound_s;
  const bool defaults = split.eal.empty();
  // Loopback with an application thread needs the worker and that thread on two CPUs; a server
  // beside a client on one machine takes the last CPU.
  if (defaults) split.eal = default_pair_eal_args(o.mode == "server");
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-echo", split.eal, err);
  if (!eal) return fail(err.message());

  // ---- set up: the loopback lab (its QPs connected), or our port and worker group ----
  echo::Setup st;
  if (echo::SetupError e = echo::set_up(o, defaults, st); !e.status.ok())
    return fail(e.status.message(), e.usage ? 2 : 1);

  // ---- connect (server/client): the exchange's own waits retry EINTR until their deadline: a
  // Ctrl-C now closes the connection ----
  if (!st.lab) {
    set_stop_ends_tcp_waits(true);
    const Status s = echo::connect_qps(o, st, waits.for_client_ms);
    set_stop_ends_tcp_waits(false);
    // Our own Ctrl-C closed the connection: the exchange's error says "peer closed", not the cause.
    if (stop_requested()) return fail("interrupted during the connection exchange");
    if (!s.ok()) return fail(s.message());
  }

  // ---- run: ibv_srq_pingpong's exchanges (either end), the server alone, or the client on the
  // worker or an application thread ----
  if (o.srq_pingpong() || st.client_ep == nullptr) {
    const int rc = o.srq_pingpong() ? echo::run_srq(o, st) : echo::run_server_workers(o, st);
    echo::report_capture(o, st);
    return rc;
  }
  echo::Client client;
  if (Status s = echo::prepare_client(o, st, client); !s.ok()) return fail(s.message());
  echo::run_client(o, st, allowed, client);
  // ---- end-of-run handshake (END, DONE, BYE), then the report and what the capture kept ----
  echo::end_client_run(o, st, client);
  const int rc = echo::report(o, st, client);
  echo::report_capture(o, st);
  return rc;
}
