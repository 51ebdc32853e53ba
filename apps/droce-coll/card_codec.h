// RankCard as bytes: the fixed, versioned layout in which a rank's card crosses processes and
// hosts (MPI mode). All integers big-endian; a card is hostile input until decode_card accepts it:
// its length, magic, version, rank, counts, every peer and QP number are checked against the job.
//
//   0  'D' 'R' 'C' 'C'   magic          8  rank (u32)           16  MAC (6)  22  pad (2)
//   4  version (u8)      5  pad (3)     12  world size (u32)     24  IPv4 (4) 28  links (u32)
//   32 links x 92 bytes:  peer u32, qps u32, qpn[8] u32, first_psn[8] u32,
//                         staging_va u64, staging_rkey u32, staging_bytes u64
// Padding and the unused QP slots are zero; a card is exactly card_bytes(its links) long.
#pragma once

#include <droce/engine/core/status.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-coll/wiring.h"

namespace droce::coll {

inline constexpr std::uint8_t kCardVersion = 1;
inline constexpr std::size_t kCardHeaderBytes = 32;
inline constexpr std::size_t kCardLinkBytes = 4 + 4 + 4 * kMaxQpsPerPeer * 2 + 8 + 4 + 8;

[[nodiscard]] constexpr std::size_t card_bytes(std::size_t links) { return kCardHeaderBytes + links * kCardLinkBytes; }

// The card's bytes (its links in order; the caller's card is trusted: rank < world, qps 1..8).
[[nodiscard]] std::vector<std::uint8_t> encode_card(const RankCard& card, std::uint32_t world);

// The card in `b` (exactly `n` bytes) for a job of `world` ranks, from the rank expected to have
// sent it: empty and `out` filled, or why it is refused (one line; `out` then unspecified).
[[nodiscard]] engine::Status decode_card(const std::uint8_t* b, std::size_t n, std::uint32_t world,
                                         std::uint32_t expect_rank, RankCard& out);

}  // namespace droce::coll
