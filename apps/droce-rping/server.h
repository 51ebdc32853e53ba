// droce-rping's server: listens once on -p and serves up to --clients connections at once, each on
// its own QP with its own Session (buffers, state), client i's QP on worker i % --workers. Worker
// 0, the port owner, runs on the main lcore: its CM takes every REQ, accepts and disconnects, and
// it serves its own connections; every other worker runs on its own lcore and serves its own, the
// CM's events for them handed over through its CmInbox. It ends when every connection has pinged
// and disconnected, at --timeout without progress on any of them, on Ctrl-C, or at the first
// connection's error. A REQ beyond --clients is rejected and counted.
#pragma once

#include <droce/engine/core/status.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "apps/droce-rping/cm_inbox.h"
#include "apps/droce-rping/options.h"
#include "apps/droce-rping/session.h"
#include "apps/droce-rping/setup.h"

namespace droce::rping {

class Server {
 public:
  Server(const Options& o, Setup& st) : o_(o), st_(st) {}
  ~Server();  // stops the workers' lcores if they still run
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Every client's session, before any worker runs: --clients x Session::kRegionBytes of memory,
  // client i's part registered in worker i % N's registry in a protection domain of its own, so
  // that an R_Key one client's session advertises reaches nothing through another client's QP
  // (docs/hardening.md); and each other worker's CmInbox.
  [[nodiscard]] engine::Status prepare();
  // Listens, launches workers 1..N-1, accepts, serves; returns when all --clients are done or at
  // the first failure, with the workers stopped.
  [[nodiscard]] engine::Status run();
  // A moment of polling so that our last MADs (DREP) and ACKs leave; the QPs' counters taken.
  void finish();

  // The connections in the order they were accepted.
  [[nodiscard]] std::vector<Results> results() const;
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }

 private:
  // One client's connection. The session is written by its worker's thread alone while the
  // workers run; what crosses to the port owner's thread is below, published by the atomics.
  struct Slot {
    std::unique_ptr<Session> session;
    std::uint16_t worker = 0;
    std::uint32_t conn = 0;  // port owner's thread: the connection routed here (0: none yet)
    bool rep_sent = false;   // port owner's thread
    // Worker -> port owner: the QP is made (prepare_accept), the REP may leave; or it failed.
    std::atomic<std::uint8_t> accept_stage{0};  // 0 waiting, 1 ready, 2 failed
    std::atomic<bool> done{false};              // served() (the client disconnected after its pings)
    std::atomic<bool> failed{false};            // `failure` holds why
    std::atomic<std::uint64_t> progress{0};     // steps taken: the timeout's clock
    engine::Status failure;                     // written before `failed` (or accept_stage 2)
  };
  // What a launched worker's lcore runs (worker_main): work(worker) until stop_.
  struct WorkerLoop {
    Server* server = nullptr;
    std::uint16_t worker = 0;
  };
  static int worker_main(void* arg);

  // Worker `w`'s share of one round (its lcore, w > 0): the inbox, the worker's poll, its sessions.
  void work(std::uint16_t w);
  // The port owner's share of one round (the main lcore; every worker's while none is launched):
  // its poll (the CM's MADs), the CM's events, the REPs that are ready, its sessions.
  [[nodiscard]] engine::Status owner_round();
  // The port owner's CM events: a REQ gets the next slot (or a REJ), the rest go to their slot.
  [[nodiscard]] engine::Status take_cm_events();
  // `e` to slot i: on this thread when its worker is the port owner or no worker runs, else
  // through its worker's inbox.
  // `psn`: a REQ's QP's first PSN.
  [[nodiscard]] engine::Status deliver(std::uint32_t i, const engine::CmEndpointEvent& e, std::uint32_t psn);
  // Slot i's event on the thread that owns it now: a REQ makes the QP (accept_stage), the rest go
  // to the session.
  void handle(std::uint32_t i, const engine::CmEndpointEvent& e, std::uint32_t psn);
  // One round of slot `s`'s pings (its thread).
  static void serve_slot(Slot& s);
  [[nodiscard]] bool launched() const { return !launched_lcores_.empty(); }
  // The REPs whose QPs their workers have made.
  [[nodiscard]] engine::Status send_ready_reps();
  // The first failure of any slot, with its client named when there are several.
  [[nodiscard]] engine::Status first_failure() const;
  [[nodiscard]] engine::Status launch();
  void stop();  // ends the launched workers and joins them; what their inboxes still hold is handled here

  const Options& o_;
  Setup& st_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::uint32_t routed_ = 0;                       // slots given a REQ so far
  std::uint64_t rejected_ = 0;                     // REQs beyond --clients
  std::vector<std::unique_ptr<CmInbox>> inboxes_;  // [w]: worker w's (none for the port owner)
  std::vector<WorkerLoop> loops_;
  std::vector<unsigned> launched_lcores_;
  std::atomic<bool> stop_{false};
};

}  // namespace droce::rping
