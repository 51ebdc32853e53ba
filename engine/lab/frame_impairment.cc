// FrameImpairment: the burst logic. A held-back or duplicated frame can join a later burst, up to
// the caller's array size.
#include "engine/lab/frame_impairment.h"

namespace droce::engine {

Status ImpairmentConfig::validate() const {
  auto prob = [](double p) { return p >= 0 && p <= 1; };
  if (!prob(loss)) return Status::fail(StatusCode::kInvalidArgument, "loss: must be a fraction in [0, 1]");
  if (!prob(burst_start))
    return Status::fail(StatusCode::kInvalidArgument, "burst_start: must be a fraction in [0, 1]");
  if (burst_start > 0 && burst_frames == 0)
    return Status::fail(StatusCode::kInvalidArgument, "burst_frames: must be >= 1 when bursts are enabled");
  if (!prob(duplicate)) return Status::fail(StatusCode::kInvalidArgument, "duplicate: must be a fraction in [0, 1]");
  if (!prob(reorder)) return Status::fail(StatusCode::kInvalidArgument, "reorder: must be a fraction in [0, 1]");
  return {};
}

Status FrameImpairment::arm_rule() {
  if (!cfg_.drop_rule.any() || rule_ != nullptr) return {};
  Status made;
  rule_ = DropRule::create(cfg_.drop_rule, made);
  return made;
}

void FrameImpairment::release_held() {
  if (held_ != nullptr) rte_pktmbuf_free(held_);
  held_ = nullptr;
}

std::uint16_t FrameImpairment::apply(rte_mbuf* pkts[], std::uint16_t n, std::uint16_t max) {
  std::uint16_t k = 0;
  for (std::uint16_t i = 0; i < n; ++i) {
    ++c_.frames;
    if (rule_ != nullptr && rule_->drops(rte_pktmbuf_mtod(pkts[i], const std::uint8_t*), pkts[i]->data_len)) {
      ++c_.rule_dropped;
      rte_pktmbuf_free(pkts[i]);
      continue;
    }
    if (burst_left_ == 0 && chance(cfg_.burst_start)) burst_left_ = cfg_.burst_frames;
    if (burst_left_ != 0) {
      --burst_left_;
      ++c_.burst_dropped;
      rte_pktmbuf_free(pkts[i]);
      continue;
    }
    if (chance(cfg_.loss)) {
      ++c_.dropped;
      rte_pktmbuf_free(pkts[i]);
      continue;
    }
    pkts[k++] = pkts[i];
  }
  // A frame held back from an earlier burst now arrives behind the frames that overtook it.
  if (held_ != nullptr && k < max) {
    pkts[k++] = held_;
    held_ = nullptr;
  }
  // Duplicates go right behind their original (a copy: the original may be freed first).
  for (std::uint16_t i = 0; i < k && k < max; ++i) {
    if (!chance(cfg_.duplicate)) continue;
    rte_mbuf* dup = rte_pktmbuf_copy(pkts[i], pool_, 0, UINT32_MAX);
    if (dup == nullptr) break;
    for (std::uint16_t j = k; j > i + 1; --j) pkts[j] = pkts[j - 1];
    pkts[i + 1] = dup;
    ++k;
    ++i;
    ++c_.duplicated;
  }
  // Hold one frame back until the next burst.
  if (held_ == nullptr && k > 1) {
    for (std::uint16_t i = 0; i + 1 < k; ++i) {
      if (!chance(cfg_.reorder)) continue;
      held_ = pkts[i];
      for (std::uint16_t j = i; j + 1 < k; ++j) pkts[j] = pkts[j + 1];
      --k;
      ++c_.reordered;
      break;
    }
  }
  return k;
}

}  // namespace droce::engine
