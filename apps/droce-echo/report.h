// droce-echo's client report: the text lines, the endpoint's counters when something went wrong,
// the JSON file, and the exit status.
#pragma once

#include "apps/droce-echo/client_run.h"
#include "apps/droce-echo/options.h"
#include "apps/droce-echo/setup.h"

namespace droce::echo {

// Prints the report (and writes --json); returns the exit status: 0 only when every round trip
// came back right, nothing stalled or failed, and the run ended cleanly. Call after
// end_client_run().
[[nodiscard]] int report(const Options& o, Setup& st, const Client& c);

// What --pcap kept, once the run has ended: the capture closed, its one line printed (every
// mode: the client's report, the server's, ibv_srq_pingpong's runs).
void report_capture(const Options& o, Setup& st);

}  // namespace droce::echo
