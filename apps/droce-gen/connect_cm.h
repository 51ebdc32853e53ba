// droce-gen over RDMA-CM (--connect cm): one CM connection per QP through QP1 of the port
// owner's endpoint (worker 0's; its CM moves the QPs of every worker, QP i on worker i % N,
// through their control rings), the TCP exchange's figures in the REQ and REP private data
// (cm_private.h), and the end of the run as a DREQ from the side that ends first.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "apps/droce-gen/options.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

struct CmLink {
  bool on = false;
  std::vector<std::uint32_t> conns;  // per QP of the run: its CM connection (0: none)
  std::vector<bool> down;            // per QP: its kDisconnected seen
  std::uint32_t down_count = 0;
  bool peer_disconnected = false;  // the peer sent a DREQ for some QP
};

// Connects every QP (client: REQ each, wait for every REP; server: listen on --oob-port, accept
// every droce-gen REQ, refuse any other), within timeout_ms, and returns once every QP is in RTS
// on its worker. Before the workers run: this thread polls them all. The client's run length is
// learned by the server (run_limit_s, run_warmup_s, from_client set).
[[nodiscard]] engine::Status cm_connect_qps(const Options& o, Setup& st, CmLink& link, double& run_limit_s,
                                            double& run_warmup_s, bool& from_client, std::uint32_t timeout_ms);
// During the run (the port owner's thread, worker 0's): takes the CM's events; true once the peer has
// disconnected every QP of the run.
[[nodiscard]] bool cm_peer_ended(Setup& st, CmLink& link);
// At the end: a DREQ for each QP still connected, then a bounded wait (polling with `poll`) for
// every kDisconnected. Returns how many QPs stayed unconfirmed.
std::uint32_t cm_disconnect_all(Setup& st, CmLink& link, const std::function<void()>& poll, std::uint32_t wait_ms);

}  // namespace droce::gen
