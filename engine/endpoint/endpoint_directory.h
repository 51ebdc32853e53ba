// EndpointDirectory: the process's live RcEndpoints, by a number that is never reused — where
// the telemetry commands (endpoint_telemetry.h, qp_telemetry.h) find them from DPDK's telemetry
// thread. It holds pointers only; reading an endpoint is its reader's business.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace droce::engine {

class RcEndpoint;

// The process's live endpoints, by a number that is never reused. Endpoints add themselves when
// created and remove themselves when destroyed; the telemetry thread reads them under the lock,
// so an endpoint cannot go away while its counters are read.
class EndpointDirectory {
 public:
  static EndpointDirectory& instance();
  [[nodiscard]] std::uint32_t add(const RcEndpoint* ep);
  void remove(std::uint32_t id);
  [[nodiscard]] std::vector<std::uint32_t> ids();
  // Calls f(const RcEndpoint&) under the lock for a live id (false: no such endpoint), or for
  // every live endpoint.
  template <typename F>
  bool with(std::uint32_t id, F&& f) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = eps_.find(id);
    if (it == eps_.end()) return false;
    f(*it->second);
    return true;
  }
  template <typename F>
  void for_each(F&& f) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, ep] : eps_) f(*ep);
  }

 private:
  std::mutex mu_;
  std::map<std::uint32_t, const RcEndpoint*> eps_;
  std::uint32_t next_id_ = 0;
};

}  // namespace droce::engine
