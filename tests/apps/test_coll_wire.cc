// What droce-coll's ranks exchange under mpirun, without EAL or MPI: a rank card encodes and
// decodes to itself, and every malformed card from a peer is refused with a line naming the rank
// and the fault; the shared parameters compare equal, and a difference names the rank and option.
#include <catch2/catch.hpp>
#include <cstring>

#include "apps/droce-coll/card_codec.h"
#include "apps/droce-coll/run_params.h"

using namespace droce::coll;

namespace {

RankCard sample(std::uint32_t rank, std::uint32_t world, std::uint32_t qps) {
  RankCard c;
  c.rank = rank;
  c.address.mac[0] = 0x02;
  c.address.mac[5] = static_cast<std::uint8_t>(rank + 1);
  c.address.ip[0] = 10;
  c.address.ip[3] = static_cast<std::uint8_t>(rank + 1);
  for (std::uint32_t p = 0; p < world; ++p) {
    if (p == rank) continue;
    PeerLink l;
    l.peer = p;
    l.qps = qps;
    for (std::uint32_t q = 0; q < qps; ++q) {
      l.qpn[q] = 0x11 + p * qps + q;
      l.first_psn[q] = 0xfffff0 + q;  // near the 24-bit wrap
    }
    l.staging_va = 0x7f0000000000ull + p * 0x100000;
    l.staging_rkey = 0xabcd0000 + p;
    l.staging_bytes = 4 * 65536;
    c.links.push_back(l);
  }
  return c;
}

// Empty when accepted, else the refusal's line; a refusal is the peer's fault (kPeer).
std::string decode(const std::vector<std::uint8_t>& b, std::uint32_t world, std::uint32_t rank) {
  RankCard out;
  const droce::engine::Status s = decode_card(b.data(), b.size(), world, rank, out);
  if (s.ok()) return {};
  REQUIRE(s.code() == droce::engine::StatusCode::kPeer);
  return s.message();
}

// Empty when equal, else the line; `code` is what a refusal must carry.
std::string compared(const std::vector<RunParam>& mine, const std::vector<std::uint8_t>& b, std::uint32_t peer,
                     droce::engine::StatusCode code) {
  const droce::engine::Status s = compare_params(mine, b.data(), b.size(), peer);
  if (s.ok()) return {};
  REQUIRE(s.code() == code);
  return s.message();
}

}  // namespace

TEST_CASE("a rank card -> bytes -> the same card", "[coll][card]") {
  for (std::uint32_t qps : {1u, 3u, kMaxQpsPerPeer}) {
    const RankCard c = sample(2, 5, qps);
    const std::vector<std::uint8_t> b = encode_card(c, 5);
    REQUIRE(b.size() == card_bytes(4));
    RankCard out;
    REQUIRE(decode_card(b.data(), b.size(), 5, 2, out).ok());
    REQUIRE(out.rank == 2);
    REQUIRE(std::memcmp(out.address.mac, c.address.mac, 6) == 0);
    REQUIRE(std::memcmp(out.address.ip, c.address.ip, 4) == 0);
    REQUIRE(out.links.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      REQUIRE(out.links[i].peer == c.links[i].peer);
      REQUIRE(out.links[i].qps == qps);
      for (std::uint32_t q = 0; q < qps; ++q) {
        REQUIRE(out.links[i].qpn[q] == c.links[i].qpn[q]);
        REQUIRE(out.links[i].first_psn[q] == c.links[i].first_psn[q]);
      }
      REQUIRE(out.links[i].staging_va == c.links[i].staging_va);
      REQUIRE(out.links[i].staging_rkey == c.links[i].staging_rkey);
      REQUIRE(out.links[i].staging_bytes == c.links[i].staging_bytes);
    }
    REQUIRE(encode_card(out, 5) == b);
  }
}

TEST_CASE("a peer's malformed card -> refused, naming the rank and the fault", "[coll][card]") {
  const std::vector<std::uint8_t> good = encode_card(sample(1, 4, 2), 4);
  REQUIRE(decode(good, 4, 1).empty());
  auto refused = [](const std::string& why, const char* what) {
    INFO(why);
    REQUIRE(why.find("rank 1") != std::string::npos);
    REQUIRE(why.find(what) != std::string::npos);
  };
  refused(decode({good.begin(), good.begin() + 10}, 4, 1), "shorter than");
  refused(decode({good.begin(), good.end() - 1}, 4, 1), "bytes;");
  std::vector<std::uint8_t> longer = good;
  longer.push_back(0);
  refused(decode(longer, 4, 1), "bytes;");
  std::vector<std::uint8_t> b = good;
  b[0] = 'X';
  refused(decode(b, 4, 1), "magic");
  b = good;
  b[4] = 2;
  refused(decode(b, 4, 1), "version 2");
  b = good;
  b[6] = 1;
  refused(decode(b, 4, 1), "padding");
  refused(decode(good, 4, 3), "says it is rank 1");  // sent in rank 3's place
  refused(decode(good, 5, 1), "made for 4 ranks");
  b = good;
  b[31] = 9;  // 9 links in a 4-rank job
  refused(decode(b, 4, 1), "9 peers");
  b = good;
  b[kCardHeaderBytes + 3] = 1;  // the first link's peer: itself
  refused(decode(b, 4, 1), "not another rank");
  b = good;
  b[kCardHeaderBytes + kCardLinkBytes + 3] = 0;  // the second link repeats peer 0
  refused(decode(b, 4, 1), "not another rank");
  b = good;
  b[kCardHeaderBytes + 7] = 9;  // 9 QPs
  refused(decode(b, 4, 1), "9 QPs");
  b = good;
  b[kCardHeaderBytes + 8] = 1;  // QPN wider than 24 bits
  refused(decode(b, 4, 1), "QP number");
  b = good;
  b[kCardHeaderBytes + 8 + 4 * kMaxQpsPerPeer] = 1;  // first PSN wider than 24 bits
  refused(decode(b, 4, 1), "first PSN");
  b = good;
  b[kCardHeaderBytes + 8 + 4 * 7 + 3] = 5;  // an unused QP slot (qps is 2) not zero
  refused(decode(b, 4, 1), "unused QP slot");
}

TEST_CASE("shared parameters: equal -> accepted; a difference -> the rank and the option", "[coll][params]") {
  Options a;
  a.ranks = 4;
  const std::vector<RunParam> mine = run_params(a, 4);
  std::vector<std::uint8_t> b = encode_params(mine);
  REQUIRE(compare_params(mine, b.data(), b.size(), 2).ok());
  Options other = a;
  other.minbytes = other.maxbytes = 2 * 1024 * 1024;
  b = encode_params(run_params(other, 4));
  REQUIRE(compared(mine, b, 3, droce::engine::StatusCode::kInvalidArgument) ==
          "rank 3 runs with --minbytes (--size) 2097152, rank 0 with 33554432: every rank needs the same parameters");
  other = a;
  other.timeout_s = 5;
  b = encode_params(run_params(other, 4));
  REQUIRE(compared(mine, b, 1, droce::engine::StatusCode::kInvalidArgument)
              .find("rank 1 runs with --timeout 5, rank 0 with 30") == 0);
  // Another --ranks-per-process is named first: it is why the process sends another count of cards.
  other = a;
  other.ranks_per_process = 2;
  b = encode_params(run_params(other, 4));
  REQUIRE(compared(mine, b, 2, droce::engine::StatusCode::kInvalidArgument) ==
          "rank 2 runs with --ranks-per-process 2, rank 0 with 1: every rank needs the same parameters");
  b = encode_params(mine);
  b.pop_back();
  REQUIRE(compared(mine, b, 2, droce::engine::StatusCode::kPeer).find("rank 2 sent") == 0);
  b = encode_params(mine);
  b[3] ^= 1;  // another count
  REQUIRE(compared(mine, b, 2, droce::engine::StatusCode::kPeer).find("rank 2 sent") == 0);
}
