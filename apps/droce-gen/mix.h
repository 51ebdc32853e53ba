// droce-gen's per-message draws: which op (--mix write:60,read:30,send:10) and which size
// (--size 64:70,4096:25,1M:5) each message has. A draw is a pure function of (--seed, QP, sequence):
// the requester that posts message `seq` and the responder that verifies it compute the same op and
// size without telling each other, and nothing is allocated or kept per message.
#pragma once

#include <droce/engine/core/status.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace droce::gen {

// A weighted choice among at most kMaxChoices values: cumulative weights in a fixed array, a draw
// is one 64-bit hash and a binary search over them (no table per message, no allocation).
class WeightedDraw {
 public:
  static constexpr std::size_t kMaxChoices = 64;
  static constexpr std::uint32_t kMaxWeight = 1'000'000;

  // Appends `value` with `weight` (1..kMaxWeight); kInvalidArgument when full.
  [[nodiscard]] engine::Status add(std::uint32_t value, std::uint32_t weight);
  [[nodiscard]] bool empty() const { return n_ == 0; }
  [[nodiscard]] std::size_t size() const { return n_; }
  [[nodiscard]] std::uint32_t value(std::size_t i) const { return values_[i]; }
  [[nodiscard]] std::uint32_t weight(std::size_t i) const {
    return static_cast<std::uint32_t>(cum_[i] - (i == 0 ? 0 : cum_[i - 1]));
  }
  [[nodiscard]] std::uint64_t total() const { return n_ == 0 ? 0 : cum_[n_ - 1]; }
  // The index of message `seq` on QP `qp`'s value; `stream` keeps the op and size draws apart.
  [[nodiscard]] std::size_t draw_index(std::uint64_t seed, std::uint64_t stream, std::uint32_t qp,
                                       std::uint64_t seq) const;
  [[nodiscard]] std::uint32_t draw(std::uint64_t seed, std::uint64_t stream, std::uint32_t qp,
                                   std::uint64_t seq) const {
    return values_[draw_index(seed, stream, qp, seq)];
  }
  // "value:weight,..." (values as numbers).
  [[nodiscard]] std::string text() const;

 private:
  std::array<std::uint32_t, kMaxChoices> values_{};
  std::array<std::uint64_t, kMaxChoices> cum_{};
  std::size_t n_ = 0;
};

// The draws' streams, so that a message's op does not decide its size.
inline constexpr std::uint64_t kOpStream = 0x6f70;    // "op"
inline constexpr std::uint64_t kSizeStream = 0x737a;  // "sz"

// --mix OP:WEIGHT[,OP:WEIGHT..]: each of send, write, read at most once, weights 1..1000000
// (relative: write:6,read:3,send:1 is write:60,read:30,send:10). The values are the ops' indexes
// in `names` (send, write, read). Atomics are refused by name: they work on one counter per QP,
// whose value every operation must know, and a mix would interleave them with other ops.
[[nodiscard]] engine::Status parse_mix(const std::string& text, WeightedDraw& out);
// --size with weights, SIZE:WEIGHT[,SIZE:WEIGHT..] (SIZE as --size takes it, 1..max_bytes with
// binary suffixes): each size at most once. `sizes` gets the sizes in the order given.
[[nodiscard]] engine::Status parse_weighted_sizes(const std::string& text, std::uint32_t max_bytes, WeightedDraw& out,
                                                  std::vector<std::uint32_t>& sizes);
// Whether a --size value is the weighted form (any entry with ':').
[[nodiscard]] bool is_weighted_sizes(const std::string& text);

}  // namespace droce::gen
