// RankCard <-> bytes: encode writes the layout of card_codec.h; decode refuses anything else.
#include "apps/droce-coll/card_codec.h"

#include <algorithm>

namespace droce::coll {

namespace {

constexpr std::uint8_t kMagic[4] = {'D', 'R', 'C', 'C'};
constexpr std::uint32_t kPsnMask = 0xffffff;

void put32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}
void put64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}
std::uint32_t get32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
std::uint64_t get64(const std::uint8_t* p) { return std::uint64_t{get32(p)} << 32 | get32(p + 4); }

bool all_zero(const std::uint8_t* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::uint8_t b) { return b == 0; });
}

}  // namespace

std::vector<std::uint8_t> encode_card(const RankCard& card, std::uint32_t world) {
  std::vector<std::uint8_t> b(card_bytes(card.links.size()), 0);
  std::copy(kMagic, kMagic + 4, b.begin());
  b[4] = kCardVersion;
  put32(&b[8], card.rank);
  put32(&b[12], world);
  std::copy(card.address.mac, card.address.mac + 6, &b[16]);
  std::copy(card.address.ip, card.address.ip + 4, &b[24]);
  put32(&b[28], static_cast<std::uint32_t>(card.links.size()));
  std::uint8_t* p = &b[kCardHeaderBytes];
  for (const PeerLink& l : card.links) {
    put32(p, l.peer);
    put32(p + 4, l.qps);
    for (std::uint32_t q = 0; q < kMaxQpsPerPeer; ++q) {
      put32(p + 8 + 4 * q, q < l.qps ? l.qpn[q] : 0);
      put32(p + 8 + 4 * kMaxQpsPerPeer + 4 * q, q < l.qps ? l.first_psn[q] : 0);
    }
    std::uint8_t* t = p + 8 + 8 * kMaxQpsPerPeer;
    put64(t, l.staging_va);
    put32(t + 8, l.staging_rkey);
    put64(t + 12, l.staging_bytes);
    p += kCardLinkBytes;
  }
  return b;
}

engine::Status decode_card(const std::uint8_t* b, std::size_t n, std::uint32_t world, std::uint32_t expect_rank,
                           RankCard& out) {
  const std::string from = "the card from rank " + std::to_string(expect_rank);
  if (n < kCardHeaderBytes)
    return engine::Status::error(engine::StatusCode::kPeer, from + " is " + std::to_string(n) +
                                                                " bytes, shorter than its " +
                                                                std::to_string(kCardHeaderBytes) + "-byte header");
  if (!std::equal(kMagic, kMagic + 4, b))
    return engine::Status::error(engine::StatusCode::kPeer, from + " does not start with droce-coll's magic (DRCC)");
  if (b[4] != kCardVersion)
    return engine::Status::error(engine::StatusCode::kPeer,
                                 from + " has layout version " + std::to_string(b[4]) + ", this droce-coll reads " +
                                     std::to_string(kCardVersion) + " (the same droce-coll on every host)");
  if (!all_zero(b + 5, 3) || !all_zero(b + 22, 2))
    return engine::Status::error(engine::StatusCode::kPeer, from + " has non-zero padding");
  const std::uint32_t rank = get32(b + 8), w = get32(b + 12), links = get32(b + 28);
  if (rank != expect_rank)
    return engine::Status::error(engine::StatusCode::kPeer, from + " says it is rank " + std::to_string(rank));
  if (w != world)
    return engine::Status::error(engine::StatusCode::kPeer, from + " was made for " + std::to_string(w) +
                                                                " ranks, the job has " + std::to_string(world));
  if (links >= world)
    return engine::Status::error(engine::StatusCode::kPeer,
                                 from + " lists " + std::to_string(links) + " peers of " + std::to_string(world - 1));
  if (n != card_bytes(links))
    return engine::Status::error(engine::StatusCode::kPeer, from + " is " + std::to_string(n) + " bytes; " +
                                                                std::to_string(links) + " peers make " +
                                                                std::to_string(card_bytes(links)));
  out = RankCard{};
  out.rank = rank;
  std::copy(b + 16, b + 22, out.address.mac);
  std::copy(b + 24, b + 28, out.address.ip);
  std::vector<bool> seen(world, false);
  const std::uint8_t* p = b + kCardHeaderBytes;
  for (std::uint32_t i = 0; i < links; ++i, p += kCardLinkBytes) {
    PeerLink l;
    l.peer = get32(p);
    l.qps = get32(p + 4);
    const std::string at = from + ", link " + std::to_string(i) + ": ";
    if (l.peer >= world || l.peer == rank || seen[l.peer])
      return engine::Status::error(engine::StatusCode::kPeer,
                                   at + "peer " + std::to_string(l.peer) + " is not another rank listed once");
    seen[l.peer] = true;
    if (l.qps < 1 || l.qps > kMaxQpsPerPeer)
      return engine::Status::error(engine::StatusCode::kPeer,
                                   at + std::to_string(l.qps) + " QPs (1.." + std::to_string(kMaxQpsPerPeer) + ")");
    for (std::uint32_t q = 0; q < kMaxQpsPerPeer; ++q) {
      const std::uint32_t qpn = get32(p + 8 + 4 * q), psn = get32(p + 8 + 4 * kMaxQpsPerPeer + 4 * q);
      if (q >= l.qps) {
        if (qpn != 0 || psn != 0)
          return engine::Status::error(engine::StatusCode::kPeer, at + "an unused QP slot is not zero");
        continue;
      }
      // QPNs and PSNs are 24-bit (IBTA 9.2: BTH DestQP and PSN); QPs 0 and 1 are special (QP0/QP1).
      if (qpn > kPsnMask || qpn < 2)
        return engine::Status::error(engine::StatusCode::kPeer,
                                     at + "QP number " + std::to_string(qpn) + " is not a 24-bit RC QPN");
      if (psn > kPsnMask)
        return engine::Status::error(engine::StatusCode::kPeer,
                                     at + "first PSN " + std::to_string(psn) + " is wider than 24 bits");
      l.qpn[q] = qpn;
      l.first_psn[q] = psn;
    }
    const std::uint8_t* t = p + 8 + 8 * kMaxQpsPerPeer;
    l.staging_va = get64(t);
    l.staging_rkey = get32(t + 8);
    l.staging_bytes = get64(t + 12);
    if (l.staging_bytes != 0 && l.staging_va + l.staging_bytes < l.staging_va)
      return engine::Status::error(engine::StatusCode::kPeer, at + "its staging buffer wraps the address space");
    out.links.push_back(l);
  }
  return {};
}

}  // namespace droce::coll
