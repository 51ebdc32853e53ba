// DropRule: a deterministic drop, the lab's reproduction of the switch bugs operators report
// (Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM'16 §5.1: a switch dropped every
// frame whose IPv4 ID ended in 0xff, 1 in 256, and go-back-0 never finished a 4 MB message). Two
// rules: every Nth frame of each flow (its 5-tuple, counted from its first frame), or every IPv4
// frame whose Identification's low byte is B. Random loss is FrameImpairment's.
#pragma once

#include <rte_hash.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace droce::engine {

struct DropRuleConfig {
  std::uint32_t every_nth = 0;  // frame N, 2N, 3N.. of each flow dropped; 0: off
  int ip_id_low_byte = -1;      // 0..255: IPv4 frames whose ID ends in this byte dropped; -1: off

  [[nodiscard]] bool any() const { return every_nth != 0 || ip_id_low_byte >= 0; }
  // "every:N" (N >= 2) or "ip-id:B" (B 0..255, decimal or 0x..); kInvalidArgument naming --drop-rule.
  [[nodiscard]] static Status parse(const std::string& text, DropRuleConfig& out);
};

struct DropRuleCounters {
  std::uint64_t seen = 0;       // IP frames the rule looked at
  std::uint64_t dropped = 0;    // and dropped
  std::uint64_t untracked = 0;  // every:N only: frames of flows beyond the flow table, passed
};

// One switch port's rule (one thread).
class DropRule {
 public:
  [[nodiscard]] static std::unique_ptr<DropRule> create(const DropRuleConfig& cfg, Status& err);
  ~DropRule();
  DropRule(const DropRule&) = delete;
  DropRule& operator=(const DropRule&) = delete;

  // True when the frame (from its Ethernet header) is one the rule drops; counts it.
  [[nodiscard]] bool drops(const std::uint8_t* frame, std::uint32_t len);
  [[nodiscard]] const DropRuleCounters& counters() const { return c_; }

  static constexpr std::uint32_t kMaxFlows = 65536;

 private:
  DropRule() = default;
  DropRuleConfig cfg_;
  rte_hash* flows_ = nullptr;          // every:N: 5-tuple -> slot
  std::vector<std::uint32_t> frames_;  // by slot: the flow's frames so far
  DropRuleCounters c_;
};

}  // namespace droce::engine
