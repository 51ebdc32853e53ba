// FrameImpairment: lab impairment of a stream of frame bursts — random loss, loss bursts,
// duplication and reordering, and a switch's deterministic drop rule — with no port behind it: an ethdev's RX callback
// (LinkImpairment) or an in-process ring link (RingFabric) runs the same burst logic, and the transport above never
// knows it is there.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "engine/core/status.h"
#include "engine/lab/drop_rule.h"

namespace droce::engine {

struct ImpairmentConfig {
  double loss = 0;                 // each frame dropped with this probability
  double burst_start = 0;          // probability per frame that a loss burst starts here
  std::uint32_t burst_frames = 0;  // frames a burst drops in a row
  double duplicate = 0;            // each surviving frame delivered twice with this probability
  double reorder = 0;              // each surviving frame held back behind later ones with this probability
  std::uint64_t seed = 1;
  // A deterministic drop (every Nth frame of a flow, or IPv4 IDs ending in a byte), applied before
  // the random impairments: what a buggy switch on this link would do (drop_rule.h).
  DropRuleConfig drop_rule;

  [[nodiscard]] bool any() const {
    return loss > 0 || burst_start > 0 || duplicate > 0 || reorder > 0 || drop_rule.any();
  }
  // Ok if valid, else kInvalidArgument naming the field that is wrong.
  [[nodiscard]] Status validate() const;
};

struct ImpairmentCounters {
  std::uint64_t frames = 0;
  std::uint64_t dropped = 0;
  std::uint64_t burst_dropped = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;
  std::uint64_t rule_dropped = 0;  // by the drop rule
};

// One direction of one link, used by the one thread that receives from it. The config must be
// valid (ImpairmentConfig::validate) and, when it duplicates, `copy_pool` must be set; with a drop
// rule, arm_rule() must have succeeded before the first apply().
class FrameImpairment {
 public:
  FrameImpairment(const ImpairmentConfig& cfg, rte_mempool* copy_pool) : cfg_(cfg), pool_(copy_pool), rng_(cfg.seed) {}
  // Creates the drop rule's state (every:N keeps a flow table) when the config has one.
  [[nodiscard]] Status arm_rule();
  ~FrameImpairment() { release_held(); }
  FrameImpairment(const FrameImpairment&) = delete;
  FrameImpairment& operator=(const FrameImpairment&) = delete;

  // Impairs the burst pkts[0..n) in place (the array holds `max` entries: duplicates and a frame
  // held back from an earlier burst are added up to it) and returns how many frames it now holds.
  // Dropped frames are freed here.
  std::uint16_t apply(rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max);
  // Frees a frame still held back (shutdown).
  void release_held();

  [[nodiscard]] const ImpairmentCounters& counters() const { return c_; }
  [[nodiscard]] const ImpairmentConfig& config() const { return cfg_; }

 private:
  bool chance(double p) { return p > 0 && uni_(rng_) < p; }

  ImpairmentConfig cfg_;
  rte_mempool* pool_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uni_{0.0, 1.0};
  std::uint32_t burst_left_ = 0;
  rte_mbuf* held_ = nullptr;  // one frame overtaken by later ones
  std::unique_ptr<DropRule> rule_;
  ImpairmentCounters c_;
};

}  // namespace droce::engine
