// droce-gen's waits for its peer from --connect-timeout (PeerWaits, apps/common/oob_waits.h): 0
// makes a server wait for its client forever, as perftest's; every other wait keeps a bound.
#pragma once

#include "apps/common/oob_waits.h"
#include "apps/droce-gen/options.h"

namespace droce::gen {

// Given 0, every wait but the server's for its client keeps --connect-timeout's default.
[[nodiscard]] inline engine::PeerWaits connect_waits(const Options& o) {
  return engine::peer_waits(o.connect_timeout_s, Options{}.connect_timeout_s);
}

}  // namespace droce::gen
