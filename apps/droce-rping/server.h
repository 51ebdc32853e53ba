// droce-rping's server: listens once on -p and serves up to --clients connections at once, each on
// its own QP with its own Session (buffers, state), all driven from one poll loop. It ends when
// every one of them has pinged and disconnected, at --timeout without progress on any of them, on
// Ctrl-C, or at the first connection's error. A REQ beyond --clients is rejected and counted.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "apps/droce-rping/options.h"
#include "apps/droce-rping/session.h"
#include "apps/droce-rping/setup.h"

namespace droce::rping {

class Server {
 public:
  Server(const Options& o, Setup& st) : o_(o), st_(st) {}

  // The memory for every client's session: --clients x Session::kRegionBytes. Each part is
  // registered when its client is accepted, in a protection domain of its own (next_session).
  [[nodiscard]] engine::Status prepare();
  // Listens, accepts, serves; returns when all --clients are done or at the first failure.
  [[nodiscard]] engine::Status run();
  // A moment of polling so that our last MADs (DREP) and ACKs leave; the QPs' counters taken.
  void finish();

  // The connections in the order they were accepted.
  [[nodiscard]] std::vector<Results> results() const;
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }

 private:
  // One poll: the endpoint, its CM events (a REQ accepted or rejected, the rest to their
  // session), every session's completions. Sets `progressed` when something new happened.
  [[nodiscard]] engine::Status step(bool& progressed);
  [[nodiscard]] Session* find(std::uint32_t conn);
  // The next client's session: a protection domain of its own, its part of the buffers registered
  // in it, and (Session::create_qp) its QP in the same domain, so that an R_Key this client's
  // session advertises reaches nothing through another client's QP (docs/hardening.md).
  [[nodiscard]] engine::Status next_session();

  const Options& o_;
  Setup& st_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::uint64_t rejected_ = 0;  // REQs beyond --clients
};

}  // namespace droce::rping
