// The two-hop incast the recovery tests compare PFC with go-back-N and selective repeat without
// PFC on: 8 senders at 100 Gb/s, no congestion control, 10 ms, and an innocent flow sharing S1.
#pragma once

#include "apps/droce-sim/fabric.h"

namespace droce::test {

// Each run is one call: PFC with go-back-N, then no PFC with selective repeat, on `base`'s transport.
struct TwoHopRuns {
  sim::FabricResult pfc_gbn, sr;
};

inline TwoHopRuns run_two_hop_incast(sim::FabricConfig f) {
  f.base.flows = 8;
  f.base.incast = true;
  f.base.link_gbps = 100;
  f.base.duration_ms = 10;
  f.base.cc = false;
  f.topology = sim::Topology::kTwoHop;
  f.pfc = true;
  f.base.recovery.mode = sim::Recovery::kGoBackN;
  TwoHopRuns r;
  if (!f.validate().ok()) return r;
  r.pfc_gbn = sim::run_fabric(f);
  f.pfc = false;
  f.base.recovery.mode = sim::Recovery::kSelectiveRepeat;
  r.sr = sim::run_fabric(f);
  return r;
}

}  // namespace droce::test
