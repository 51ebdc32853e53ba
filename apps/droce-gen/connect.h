// droce-gen's connection: loopback QPs joined directly; client and server over ibv_rc_pingpong's
// TCP exchange (one per QP; after the first, droce's own lines: the workload with the recovery
// proposal, the run length, the server's recovery answer; then the responders' buffers), over
// RDMA-CM (--connect cm: connect_cm.h) or statically.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/engine/exchange/oob_exchange.h>

#include <string>
#include <vector>

#include "apps/droce-gen/connect_cm.h"
#include "apps/droce-gen/options.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

// A server of several clients (--clients): one client's control connection and what it said.
// Client k (in the order they connected) holds the run's QPs k x per_client_qps() onwards.
struct ClientLink {
  engine::OobConnection oob;
  std::string peer_ip;  // its GID's address
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  double run_limit_s = 0, run_warmup_s = 0;
  // Why the client was not connected (its exchange failed, or it never came): it runs nothing and
  // is reported failed; the others run.
  std::string failed;
  // How its run ended (clients.h): its first END line, its STOP, its connection closed.
  bool ended = false, gone = false;
  std::string end_line, stop;
};

// The control connection kept for the run, and what the client told the server about its run.
struct Connection {
  engine::OobConnection oob;
  engine::RcPingpongServer listener;
  CmLink cm;  // --connect cm: the QPs' CM connections (no TCP connection then)
  // How long the client may run: --count runs until done but never past a hard limit, so a dead
  // peer cannot hang us. A server learns the client's figures from its RUN line.
  double run_limit_s = 0;
  double run_warmup_s = 0;
  bool run_from_client = false;
  // --clients N: one entry per client slot (the oob above then stays closed); run_limit_s and
  // run_warmup_s are the longest of theirs.
  std::vector<ClientLink> clients;
};

// The workload must be the same on both sides: the client announces it, the server checks.
[[nodiscard]] std::string config_line(const Options& o);

// Connects every QP of the run (and, client/server, sets up `c`).
[[nodiscard]] engine::Status connect_qps(const Options& o, Setup& st, Connection& c);

}  // namespace droce::gen
