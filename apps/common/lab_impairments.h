// The lab impairment a client/server app installs where --impair-direction says — on its port's
// receive queues (rx), over what its endpoints send (tx), or both — and where its drops happened,
// said the same way by every app: the report's line and its JSON. droce-gen's own setup predates it.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/lab/link_impairment.h>
#include <rte_mempool.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace droce::apps {

// --impair-direction's words (apps/common/cli/groups.h, ImpairmentFields::direction).
enum class ImpairDirection : std::uint8_t { kRx, kTx, kBoth };
// "rx", "tx" or "both"; kInvalidArgument naming --impair-direction otherwise.
[[nodiscard]] Status parse_impair_direction(const std::string& word, ImpairDirection& out);
[[nodiscard]] const char* impair_direction_name(ImpairDirection d);

// What the impairments did, by side: rx counts what this process received, tx what it sent.
struct ImpairmentTally {
  std::uint64_t frames_rx = 0, dropped_rx = 0;  // dropped: single losses and bursts
  std::uint64_t frames_tx = 0, dropped_tx = 0;
  std::uint64_t duplicated = 0, reordered = 0;
  [[nodiscard]] std::uint64_t dropped() const { return dropped_rx + dropped_tx; }
};

class LabImpairments {
 public:
  // With `cfg.any()`: for rx (or both), one impairment on each of `port`'s RX queues 0..n-1
  // (n = pools.size(), the queue's worker's pool making its duplicates); for tx (or both), one over
  // each endpoint's sending (`endpoints[q]` with pools[q]). Each gets its own seed, drawn from
  // cfg.seed. Nothing polls the endpoints meanwhile. Without cfg.any(), nothing.
  [[nodiscard]] Status install(const engine::ImpairmentConfig& cfg, ImpairDirection dir, std::uint16_t port,
                               std::span<rte_mempool* const> pools, std::span<engine::RcEndpoint* const> endpoints);

  [[nodiscard]] bool empty() const { return list_.empty(); }
  [[nodiscard]] ImpairDirection direction() const { return dir_; }
  // Read while the workers count (recent values) or after they have stopped (exact).
  [[nodiscard]] ImpairmentTally tally() const;
  // "impairment (tx): dropped D: R of F received here, T of G sent from here" (no newline).
  [[nodiscard]] std::string line() const;
  // {"direction", "dropped", "dropped_rx", "dropped_tx", "frames_rx", "frames_tx", "duplicated", "reordered"},
  // as droce-gen's JSON names them.
  [[nodiscard]] nlohmann::json json() const;

 private:
  std::vector<std::unique_ptr<engine::LinkImpairment>> list_;
  ImpairDirection dir_ = ImpairDirection::kRx;
};

}  // namespace droce::apps
