// droce-echo's client run: per QP a request buffer and its state machine, the round trips either
// on the worker itself or on an application thread through QpChannel, the stall watch, and the
// end of the run with a droce-echo server (END, DONE, BYE over the control connection).
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <sched.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/latency_histogram.h"
#include "apps/droce-echo/echo_client.h"
#include "apps/droce-echo/options.h"
#include "apps/droce-echo/setup.h"

namespace droce::echo {

// One of the client's QPs: its request buffer (in its worker's registry) and its state machine.
struct ClientQp {
  engine::RcEndpoint* ep = nullptr;
  std::uint32_t qpn = 0;
  std::vector<std::uint8_t> req;
  rc::MemoryRegion mr;
  std::unique_ptr<ClientState> st = std::make_unique<ClientState>();
};

// The client's QPs and what its run came to. Not movable once prepared: every QP's state points
// at `hist`.
struct Client {
  engine::LatencyHistogram hist;  // every QP's round trips
  std::vector<ClientQp> qps;
  std::uint64_t send_errors = 0;
  std::string first_send_error;  // the status of the first failed send, for the report
  bool stalled = false;          // no reply within --timeout
  bool server_gone = false;      // the control connection closed during the run
  std::string server_stop;       // what the server said when it ended the run early
  std::string problem;           // why the run failed besides its counts; empty: none

  [[nodiscard]] std::uint64_t done() const;
  [[nodiscard]] std::uint64_t bad() const;
};

// A request buffer for each of our QPs (st.own_qps; loopback: the lab's client QP), registered.
[[nodiscard]] engine::Status prepare_client(const Options& o, Setup& st, Client& c);

// The round trips, until every QP has done --warmup + --count, a stall of --timeout, a stop, or
// the server ending the run. `allowed`: the CPUs this process may use (--thread app puts the
// application thread on those besides the worker's).
void run_client(const Options& o, Setup& st, const cpu_set_t& allowed, Client& c);

// The end of the run: with a droce-echo server the END/DONE/BYE lines (polling on meanwhile); then
// the port stopped and the endpoints' resources freed. Sets c.problem.
void end_client_run(const Options& o, Setup& st, Client& c);

}  // namespace droce::echo
