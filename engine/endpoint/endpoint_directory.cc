// EndpointDirectory: the live endpoints' numbers, under one lock.
#include "engine/endpoint/endpoint_directory.h"

namespace droce::engine {

EndpointDirectory& EndpointDirectory::instance() {
  // Never destroyed: endpoints that outlive main()'s locals still remove themselves safely.
  static EndpointDirectory* d = new EndpointDirectory();
  return *d;
}

std::uint32_t EndpointDirectory::add(const RcEndpoint* ep) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint32_t id = next_id_++;
  eps_[id] = ep;
  return id;
}

void EndpointDirectory::remove(std::uint32_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  eps_.erase(id);
}

std::vector<std::uint32_t> EndpointDirectory::ids() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::uint32_t> out;
  out.reserve(eps_.size());
  for (const auto& [id, ep] : eps_) out.push_back(id);
  return out;
}

}  // namespace droce::engine
