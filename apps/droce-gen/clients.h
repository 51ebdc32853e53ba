// droce-gen's server of several clients (--clients N), during and after the run: each client's
// control connection watched for its end (END, STOP, a closed connection), then each one's
// end-of-run exchange and report, so that a client that fails or dies ends only its own run.
// Also the end-of-run pieces the one-client run (run.cc) shares.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/engine/exchange/oob_exchange.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/droce-gen/connect.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/run.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

inline constexpr std::uint32_t kEndWaitMs = 10000;  // each end-of-run step (the peer may be descheduled)
// Counts per END line: 14 counts of up to 16 digits (2^53 - 1) and the "END" fit in the 255
// bytes a control line may hold. A run with more QPs sends several END lines, in QP order; with
// up to 14 QPs it is the one line it always was.
inline constexpr std::size_t kEndCountsPerLine = 14;

// The client's END lines: `first` (already read) and as many more as its `qps` QPs need.
[[nodiscard]] engine::Status read_end_counts(engine::OobConnection& oob, const std::string& first, std::size_t qps,
                                             const std::function<void()>& keep_polling,
                                             std::vector<std::uint64_t>& counts);
// Atomic runs: QP `r`'s counter at the responder against the operations its requester saw
// complete (`completed`); up to `unresolved` more may have run (a --duration run's last window).
// Fewer is a lost operation (out.t.lost), more one executed twice (out.t.duplicated).
void check_atomic_counter(const Responder& r, std::uint64_t completed, std::uint64_t unresolved, RunOutcome& out);

// Looks once at every client's connection, without waiting: records its first END line, a STOP
// (its Ctrl-C; its END lines follow) and a closed connection. True when every client that was
// connected has ended or is gone.
[[nodiscard]] bool poll_clients(Connection& c);
// After the drain (the jobs' state is ours to read): asks the clients still running to stop
// (`why`: "deadline" or "interrupted") and keeps serving until their END, checks each client's END
// counts against what its QPs verified, answers each its RESULT, then waits (bounded) for each
// one's BYE. Fills out.clients (first to last verified message after `measured_start`), adds the
// losses the counts show to out.t, and names every failed client in out.problem.
void end_clients(const Options& o, Setup& st, Connection& c, const std::function<void()>& keep_polling,
                 std::uint64_t measured_start, double hz, RunOutcome& out);
// After our port has stopped: BYE to every client that reported, so that it stops its own.
void bye_clients(Connection& c);

}  // namespace droce::gen
