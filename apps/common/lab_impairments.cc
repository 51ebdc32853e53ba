// Lab impairment where --impair-direction says, and its tally (lab_impairments.h).
#include "apps/common/lab_impairments.h"

namespace droce::apps {

namespace {

// A distinct seed per impairment: the queues' losses and the sending's differ (as droce-gen's).
constexpr std::uint64_t kSendSeedOffset = 1000003;

}  // namespace

Status parse_impair_direction(const std::string& word, ImpairDirection& out) {
  if (word == "rx")
    out = ImpairDirection::kRx;
  else if (word == "tx")
    out = ImpairDirection::kTx;
  else if (word == "both")
    out = ImpairDirection::kBoth;
  else
    return Status::error(StatusCode::kInvalidArgument, "--impair-direction: \"" + word + "\" is not rx, tx or both");
  return {};
}

const char* impair_direction_name(ImpairDirection d) {
  return d == ImpairDirection::kRx ? "rx" : d == ImpairDirection::kTx ? "tx" : "both";
}

Status LabImpairments::install(const engine::ImpairmentConfig& cfg, ImpairDirection dir, std::uint16_t port,
                               std::span<rte_mempool* const> pools, std::span<engine::RcEndpoint* const> endpoints) {
  dir_ = dir;
  if (!cfg.any()) return {};
  Status err;
  if (dir != ImpairDirection::kTx)
    for (std::size_t q = 0; q < pools.size(); ++q) {
      engine::ImpairmentConfig c = cfg;
      c.seed = cfg.seed + q;
      auto li = engine::LinkImpairment::attach(port, static_cast<std::uint16_t>(q), c, pools[q], err);
      if (!li) return err;
      list_.push_back(std::move(li));
    }
  if (dir != ImpairDirection::kRx)
    for (std::size_t q = 0; q < endpoints.size(); ++q) {
      engine::ImpairmentConfig c = cfg;
      c.seed = cfg.seed + kSendSeedOffset + q;
      auto li = engine::LinkImpairment::attach_send(*endpoints[q], c, q < pools.size() ? pools[q] : nullptr, err);
      if (!li) return err;
      list_.push_back(std::move(li));
    }
  return {};
}

ImpairmentTally LabImpairments::tally() const {
  // Recent values while the workers count, as the endpoints' counters are read.
  auto load = [](const std::uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_RELAXED); };
  ImpairmentTally t;
  for (const auto& i : list_) {
    const engine::ImpairmentCounters& c = i->counters();
    const std::uint64_t dropped = load(c.dropped) + load(c.burst_dropped);
    const bool sent = i->side() == engine::ImpairedSide::kSend;
    (sent ? t.frames_tx : t.frames_rx) += load(c.frames);
    (sent ? t.dropped_tx : t.dropped_rx) += dropped;
    t.duplicated += load(c.duplicated);
    t.reordered += load(c.reordered);
  }
  return t;
}

std::string LabImpairments::line() const {
  const ImpairmentTally t = tally();
  std::string s = std::string("impairment (") + impair_direction_name(dir_) + "): dropped " +
                  std::to_string(t.dropped()) + ": " + std::to_string(t.dropped_rx) + " of " +
                  std::to_string(t.frames_rx) + " received here, " + std::to_string(t.dropped_tx) + " of " +
                  std::to_string(t.frames_tx) + " sent from here";
  if (t.duplicated != 0 || t.reordered != 0)
    s += "; duplicated " + std::to_string(t.duplicated) + ", reordered " + std::to_string(t.reordered);
  return s;
}

nlohmann::json LabImpairments::json() const {
  const ImpairmentTally t = tally();
  return {{"direction", impair_direction_name(dir_)},
          {"dropped", t.dropped()},
          {"dropped_rx", t.dropped_rx},
          {"dropped_tx", t.dropped_tx},
          {"frames_rx", t.frames_rx},
          {"frames_tx", t.frames_tx},
          {"duplicated", t.duplicated},
          {"reordered", t.reordered}};
}

}  // namespace droce::apps
