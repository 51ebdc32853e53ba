// First PSNs a stranger cannot predict, from one seedable source (docs/hardening.md, "First PSNs").
#pragma once

#include <cstdint>
#include <optional>
#include <random>

namespace droce::engine {

// A connection's first PSN is its sequence numbers' only secret: a peer that knows a QPN and
// guesses the PSN the responder expects can inject a request that is accepted (IBTA §9.7.5.1.1).
// So every app draws each QP's first send PSN here, uniformly over the 2^24 PSNs (§9.7.1), and
// tells the peer through its exchange, CM or cards. A replay or a test that must stand where a
// capture stood forces the PSN instead (rc::QpAttr::sq_psn, RemoteQp::psn).
class PsnSource {
 public:
  // Seeded from the OS's entropy (std::random_device reads getrandom(2) or /dev/urandom on
  // Linux, never the clock): two runs draw different PSNs.
  PsnSource();
  // A fixed seed draws the same PSNs in the same order, run after run (--seed, the simulator).
  explicit PsnSource(std::uint64_t seed);
  // `seed` when given, else the OS's entropy.
  [[nodiscard]] static PsnSource from(const std::optional<std::uint64_t>& seed);

  // The next first PSN, uniform in [0, 2^24).
  [[nodiscard]] std::uint32_t next();

 private:
  std::mt19937_64 rng_;
};

}  // namespace droce::engine
