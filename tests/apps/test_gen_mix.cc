// droce-gen's per-message draws (apps/droce-gen/mix.h): --mix and weighted --size parse strictly,
// and the draws follow the weights (counts over many messages within a binomial bound, seeded: the
// same on every run), the same at both ends (a pure function of seed, QP and sequence).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-gen/mix.h"

using droce::gen::kOpStream;
using droce::gen::kSizeStream;
using droce::gen::parse_mix;
using droce::gen::parse_weighted_sizes;
using droce::gen::WeightedDraw;

namespace {

constexpr std::uint32_t kGiB = 1u << 30;

std::string mix_error(const std::string& text) {
  WeightedDraw d;
  return parse_mix(text, d).message();
}

std::string sizes_error(const std::string& text) {
  WeightedDraw d;
  std::vector<std::uint32_t> sizes;
  return parse_weighted_sizes(text, kGiB, d, sizes).message();
}

// Every count within 5 standard deviations of its binomial mean n * w / total (a fixed seed: the
// counts are the same on every run; 5 sigma leaves room for any seed).
void check_counts(const WeightedDraw& d, std::uint64_t seed, std::uint64_t stream, std::uint32_t qp, int n) {
  std::vector<std::uint64_t> counts(d.size(), 0);
  for (int s = 0; s < n; ++s) ++counts[d.draw_index(seed, stream, qp, static_cast<std::uint64_t>(s))];
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double p = static_cast<double>(d.weight(i)) / static_cast<double>(d.total());
    const double mean = n * p, sigma = std::sqrt(n * p * (1 - p));
    INFO("entry " << i << " value " << d.value(i) << " weight " << d.weight(i) << ": " << counts[i] << " of " << n);
    CHECK(std::fabs(static_cast<double>(counts[i]) - mean) <= 5 * sigma);
    CHECK(counts[i] > 0);
  }
}

}  // namespace

TEST_CASE("--mix parses op:weight lists and refuses the rest by name") {
  WeightedDraw d;
  REQUIRE(parse_mix("write:60,read:30,send:10", d).ok());
  REQUIRE(d.size() == 3);
  CHECK(d.value(0) == 1);  // write (Op's order: send, write, read)
  CHECK(d.value(1) == 2);
  CHECK(d.value(2) == 0);
  CHECK(d.weight(0) == 60);
  CHECK(d.weight(2) == 10);
  CHECK(d.total() == 100);
  CHECK(d.text() == "1:60,2:30,0:10");

  CHECK(mix_error("write:60,write:40") == "--mix: write given twice");
  CHECK(mix_error("write:60,bogus:40") == "--mix: unknown op 'bogus' (send, write or read)");
  CHECK(mix_error("fetch_add:1").find("fetch_add cannot be mixed") != std::string::npos);
  CHECK(mix_error("write") == "--mix: 'write' is not NAME:WEIGHT");
  CHECK(mix_error("write:1:2") == "--mix: 'write:1:2' is not NAME:WEIGHT");
  CHECK(mix_error("write:0").find("--mix weight") != std::string::npos);
  CHECK(mix_error("write:1000001").find("--mix weight") != std::string::npos);
  CHECK(mix_error("write:-3").find("--mix weight") != std::string::npos);
  CHECK(mix_error("write:60,") == "--mix: '' is not NAME:WEIGHT");
  CHECK(mix_error("") == "--mix: empty");
  // A refused value leaves what was there.
  WeightedDraw kept;
  REQUIRE(parse_mix("send:1", kept).ok());
  CHECK_FALSE(parse_mix("send:1,x:2", kept).ok());
  CHECK(kept.size() == 1);
}

TEST_CASE("weighted --size parses size:weight lists with suffixes and refuses the rest") {
  WeightedDraw d;
  std::vector<std::uint32_t> sizes;
  REQUIRE(parse_weighted_sizes("64:70,4096:25,1M:5", kGiB, d, sizes).ok());
  CHECK(sizes == std::vector<std::uint32_t>{64, 4096, 1u << 20});
  CHECK(d.text() == "64:70,4096:25,1048576:5");
  CHECK(droce::gen::is_weighted_sizes("64:70"));
  CHECK_FALSE(droce::gen::is_weighted_sizes("64,4096"));

  CHECK(sizes_error("64:70,64:30") == "--size: 64 given twice");
  CHECK(sizes_error("2G:1").find("--size") != std::string::npos);
  CHECK(sizes_error("0:1").find("--size") != std::string::npos);
  CHECK(sizes_error("64:70,4096") == "--size: '4096' is not NAME:WEIGHT");
  std::string many;
  for (int i = 1; i <= 65; ++i) many += (i > 1 ? "," : "") + std::to_string(i) + ":1";
  CHECK(sizes_error(many) == "--size: more than 64 entries");
}

TEST_CASE("draws follow the weights, per QP and stream, within a binomial bound") {
  WeightedDraw mix;
  REQUIRE(parse_mix("write:60,read:30,send:10", mix).ok());
  check_counts(mix, 1, kOpStream, 0, 100'000);
  check_counts(mix, 1, kOpStream, 7, 100'000);
  check_counts(mix, 12345, kOpStream, 3, 100'000);
  WeightedDraw sizes;
  std::vector<std::uint32_t> list;
  REQUIRE(parse_weighted_sizes("64:70,4096:25,1M:5", kGiB, sizes, list).ok());
  check_counts(sizes, 1, kSizeStream, 0, 100'000);
  // A rare entry still comes up.
  WeightedDraw rare;
  REQUIRE(parse_weighted_sizes("8:999,16:1", kGiB, rare, list).ok());
  check_counts(rare, 1, kSizeStream, 0, 200'000);
}

TEST_CASE("a draw is a pure function of seed, stream, QP and sequence") {
  WeightedDraw mix;
  REQUIRE(parse_mix("write:1,read:1,send:1", mix).ok());
  WeightedDraw again;
  REQUIRE(parse_mix("write:1,read:1,send:1", again).ok());
  int differs_by_qp = 0, differs_by_seed = 0, differs_by_stream = 0;
  for (std::uint64_t s = 0; s < 1000; ++s) {
    // The requester and the responder (two tables from the same text) agree on every message.
    CHECK(mix.draw(1, kOpStream, 4, s) == again.draw(1, kOpStream, 4, s));
    differs_by_qp += mix.draw(1, kOpStream, 4, s) != mix.draw(1, kOpStream, 5, s) ? 1 : 0;
    differs_by_seed += mix.draw(1, kOpStream, 4, s) != mix.draw(2, kOpStream, 4, s) ? 1 : 0;
    differs_by_stream += mix.draw(1, kOpStream, 4, s) != mix.draw(1, kSizeStream, 4, s) ? 1 : 0;
  }
  // Independent draws among 3 equal choices differ 2/3 of the time: ~667 of 1000.
  CHECK(differs_by_qp > 500);
  CHECK(differs_by_seed > 500);
  CHECK(differs_by_stream > 500);
  // One entry: always it.
  WeightedDraw one;
  REQUIRE(one.add(4096, 5).ok());
  for (std::uint64_t s = 0; s < 100; ++s) CHECK(one.draw(9, kSizeStream, 1, s) == 4096);
}
