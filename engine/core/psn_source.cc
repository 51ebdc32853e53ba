// First PSNs (see psn_source.h).
#include "engine/core/psn_source.h"

#include "protocols/wire/psn.h"

namespace droce::engine {

namespace {

// 64 bits of the OS's entropy: two draws of std::random_device (32 bits each).
std::uint64_t entropy_seed() {
  std::random_device rd;
  const std::uint64_t hi = rd();
  return hi << 32 | rd();
}

}  // namespace

PsnSource::PsnSource() : PsnSource(entropy_seed()) {}

PsnSource::PsnSource(std::uint64_t seed) {
  // The seed's two halves through seed_seq: nearby seeds (1, 2, ...) give unrelated streams.
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  rng_.seed(seq);
}

PsnSource PsnSource::from(const std::optional<std::uint64_t>& seed) { return seed ? PsnSource(*seed) : PsnSource(); }

std::uint32_t PsnSource::next() { return static_cast<std::uint32_t>(rng_() >> 40) & wire::kPsnMask; }

}  // namespace droce::engine
