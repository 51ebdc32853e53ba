// Data keys: the value of every element every rank sends, a function of (iteration, source rank,
// destination, element index), chosen so that sums over up to 64 ranks stay exact in float32
// (integers below 2^24), and the checks that compare arriving data and final outputs with it.
// A WRITE that never came cannot pass on an earlier iteration's bytes: the iteration is in the
// key, and buffers are poisoned (0xFF bytes: -1 as int32, NaN as float) between iterations.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "apps/droce-coll/schedule.h"

namespace droce::coll {

inline constexpr std::uint8_t kPoisonByte = 0xFF;

// A 32-bit mixer (the finaliser of a well-known integer hash): every input bit moves every output bit.
[[nodiscard]] constexpr std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// value(it, r, d, i) = base(it, i) + lane(it, r, d, i mod 64): base < 2^17, lane < 2^16, so a sum
// of 64 values is below 2^24. The base makes every offset and iteration distinct; the lane term
// makes every (source, destination) distinct, and a sum over a set of sources is the base times
// the set's size plus the set's lane sums (one table of 64 per chunk: a check costs O(1) per element).
class DataKeys {
 public:
  explicit DataKeys(std::uint32_t iteration) : seed_(mix32(iteration * 0x9E3779B1u + 0x632BE5ABu)) {}

  // Checked for every element of every chunk: two multiplies and two shifts (a full mix32 per
  // element cost more than the transport's own work per byte), no branch, so loops vectorise.
  [[nodiscard]] std::uint32_t base(std::uint64_t i) const {
    std::uint32_t x = (static_cast<std::uint32_t>(i) * 0x9E3779B1u) ^ seed_ ^ static_cast<std::uint32_t>(i >> 32);
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return x & 0x1FFFFu;
  }
  [[nodiscard]] std::uint32_t lane(std::uint32_t rank, std::uint32_t dst, std::uint32_t l) const {
    return mix32(seed_ + (rank + 1) * 0x27D4EB2Du + (dst + 1) * 0x165667B1u + l * 0xD3A2646Cu) & 0xFFFFu;
  }
  [[nodiscard]] std::uint32_t value(std::uint32_t rank, std::uint32_t dst, std::uint64_t i) const {
    return base(i) + lane(rank, dst, static_cast<std::uint32_t>(i & 63));
  }

 private:
  std::uint32_t seed_;
};

// The expected values of one run of data: sum over `contributors` of value(., key_dst, key_off + i).
class Expectation {
 public:
  Expectation(const DataKeys& keys, std::uint64_t contributors, std::uint32_t key_dst, std::uint64_t key_off)
      : keys_(keys), key_off_(key_off) {
    lanes_.fill(0);
    for (std::uint32_t r = 0; r < kMaxRanks; ++r) {
      if ((contributors >> r & 1) == 0) continue;
      ++mult_;
      for (std::uint32_t l = 0; l < 64; ++l) lanes_[l] += keys.lane(r, key_dst, l);
    }
  }
  // Element i of the run (i counted from the run's start).
  [[nodiscard]] std::uint32_t at(std::uint64_t i) const {
    const std::uint64_t k = key_off_ + i;
    return mult_ * keys_.base(k) + lanes_[k & 63];
  }

 private:
  const DataKeys& keys_;
  std::uint64_t key_off_;
  std::uint32_t mult_ = 0;
  std::array<std::uint32_t, 64> lanes_{};
};

// Element types: int32 and float32 hold the same integers exactly.
template <typename T>
[[nodiscard]] inline T as_elem(std::uint32_t v) {
  return static_cast<T>(v);
}

// Fills `count` elements with a run's values.
template <typename T>
void fill_run(T* out, std::uint64_t count, const Expectation& e) {
  for (std::uint64_t i = 0; i < count; ++i) out[i] = as_elem<T>(e.at(i));
}

// Elements of [data, data+count) that differ from the expectation (a NaN poison never matches).
template <typename T>
[[nodiscard]] std::uint64_t count_wrong(const T* data, std::uint64_t count, const Expectation& e) {
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < count; ++i) wrong += !(data[i] == as_elem<T>(e.at(i)));
  return wrong;
}

// An arriving chunk: checks every element against what the sender's data must be, then applies it
// to the output (copy, in + data, out += data). Returns the elements that were wrong on arrival.
template <typename T>
[[nodiscard]] std::uint64_t check_and_apply(Apply a, const T* data, T* out, const T* in, std::uint64_t count,
                                            const Expectation& e) {
  std::uint64_t wrong = 0;
  switch (a) {
    case Apply::kCopy:
      for (std::uint64_t i = 0; i < count; ++i) {
        wrong += !(data[i] == as_elem<T>(e.at(i)));
        out[i] = data[i];
      }
      break;
    case Apply::kAddInput:
      for (std::uint64_t i = 0; i < count; ++i) {
        wrong += !(data[i] == as_elem<T>(e.at(i)));
        out[i] = in[i] + data[i];
      }
      break;
    case Apply::kAddOutput:
      for (std::uint64_t i = 0; i < count; ++i) {
        wrong += !(data[i] == as_elem<T>(e.at(i)));
        out[i] += data[i];
      }
      break;
  }
  return wrong;
}

inline void poison(void* p, std::uint64_t bytes) { std::memset(p, kPoisonByte, bytes); }

}  // namespace droce::coll
