// Wiring: what a rank tells its peers before they connect — its address, per peer its QP numbers
// and first PSNs, and where that peer may WRITE (its staging slots and their R_Key). The
// one-process lab hands the cards over in memory; across processes (MPI) the same cards travel
// as bytes. A rank's logic never learns which.
#pragma once

#include <droce/protocols/wire/build.h>

#include <cstdint>
#include <vector>

namespace droce::coll {

inline constexpr std::uint32_t kMaxQpsPerPeer = 8;

// Rank r's link to one peer p, as r exports it to p.
struct PeerLink {
  std::uint32_t peer = 0;
  std::uint32_t qps = 0;  // 1..kMaxQpsPerPeer
  std::uint32_t qpn[kMaxQpsPerPeer] = {};
  std::uint32_t first_psn[kMaxQpsPerPeer] = {};
  // Where p WRITEs its chunks to r (r's staging slots for p; 0 when p sends r nothing).
  std::uint64_t staging_va = 0;
  std::uint32_t staging_rkey = 0;
  std::uint64_t staging_bytes = 0;
};

struct RankCard {
  std::uint32_t rank = 0;
  wire::L2L3Address address;
  std::vector<PeerLink> links;  // one per peer the rank talks to, either way
};

}  // namespace droce::coll
