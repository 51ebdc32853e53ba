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

  // The region for every client's session: --clients x Session::kRegionBytes, registered once.
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

  const Options& o_;
  Setup& st_;
  rc::MemoryRegion mr_{};
  std::vector<std::unique_ptr<Session>> sessions_;
  std::uint64_t rejected_ = 0;  // REQs beyond --clients
};

}  // namespace droce::rping
