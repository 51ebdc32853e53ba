// libFuzzer target: droce-coll's rank card as it arrives from a peer over MPI
// (apps/droce-coll/card_codec.h): any bytes, of any length (a heap copy of exactly that length, so
// that ASan sees a read past it), for a job of 2..64 ranks taken from the first byte. Properties:
// a card is accepted only when its length is exactly its links' size, every peer is another rank
// listed once, QPs are 1..8 with 24-bit numbers and PSNs; and an accepted card encodes back to the
// same bytes (the layout has one spelling, so nothing a peer sends is read two ways).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "apps/droce-coll/card_codec.h"

using namespace droce::coll;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > card_bytes(64) + 16) return 0;
  const std::uint32_t world = 2 + data[0] % 63;
  const std::vector<std::uint8_t> m(data + 1, data + size);
  // The rank the card claims (when it is long enough to say), so that the parse goes deep.
  const std::uint32_t expect =
      m.size() >= 12
          ? (std::uint32_t{m[8]} << 24 | std::uint32_t{m[9]} << 16 | std::uint32_t{m[10]} << 8 | m[11]) % world
          : 0;
  RankCard card;
  if (!decode_card(m.data(), m.size(), world, expect, card).ok()) return 0;
  if (m.size() != card_bytes(card.links.size()) || card.rank != expect || card.links.size() >= world) __builtin_trap();
  std::vector<bool> seen(world, false);
  for (const PeerLink& l : card.links) {
    if (l.peer >= world || l.peer == card.rank || seen[l.peer]) __builtin_trap();
    seen[l.peer] = true;
    if (l.qps < 1 || l.qps > kMaxQpsPerPeer) __builtin_trap();
    for (std::uint32_t q = 0; q < l.qps; ++q)
      if (l.qpn[q] > 0xffffff || l.qpn[q] < 2 || l.first_psn[q] > 0xffffff) __builtin_trap();
  }
  const std::vector<std::uint8_t> again = encode_card(card, world);
  if (again != m) __builtin_trap();
  return 0;
}
