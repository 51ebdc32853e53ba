#include "apps/common/counters_json.h"

#include <droce/engine/core/version.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <rte_version.h>

#include <chrono>
#include <ctime>

namespace droce::apps {

engine::CounterSums counter_sums(std::span<const engine::RcEndpoint* const> eps) {
  engine::CounterSums s;
  for (const engine::RcEndpoint* ep : eps)
    if (ep != nullptr) engine::add_endpoint_and_qps(s, *ep);
  return s;
}

nlohmann::json hw_counters_json(const engine::CounterSums& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const engine::LinuxCounter& c : engine::linux_counters()) j[c.name] = c.value(s);
  return j;
}

nlohmann::json drop_reasons_json(const engine::CounterSums& s, std::uint64_t injected_loss) {
  nlohmann::json j = nlohmann::json::object();
  // Reason 0 is "none": not a drop.
  for (std::size_t r = 1; r < wire::kDropReasonCount; ++r)
    j[std::string(wire::drop_reason_name(static_cast<wire::DropReason>(r)))] = s.rx_drops[r];
  constexpr auto kInjected = static_cast<std::size_t>(wire::DropReason::kInjectedLoss);
  j[std::string(wire::drop_reason_name(wire::DropReason::kInjectedLoss))] = s.rx_drops[kInjected] + injected_loss;
  return j;
}

nlohmann::json cm_counters_json(const engine::RcEndpoint& ep) {
  const engine::CmCounters& c = ep.cm_counters();
  nlohmann::json j = nlohmann::json::object();
  for (const engine::CmCounterField& f : engine::kCmCounterFields) j[f.name] = c.*f.member;
  for (std::size_t r = 1; r < wire::kUdRefusalCount; ++r)
    j["cm_ud_" + std::string(wire::ud_refusal_name(static_cast<wire::UdRefusal>(r)))] = c.ud_refused[r];
  for (std::size_t r = 1; r < cm::kMadRefusalCount; ++r)
    j["cm_mad_" + std::string(cm::mad_refusal_name(static_cast<cm::MadRefusal>(r)))] = c.mad_refused[r];
  return j;
}

std::string utc_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[40];
  const std::size_t n = std::strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(b + n, sizeof(b) - n, ".%03dZ", static_cast<int>(ms));
  return b;
}

void stamp_report(nlohmann::json& j) {
  // rte_version() reads "DPDK 22.11.x": the number alone, as the --version line gives it.
  std::string dpdk = rte_version();
  if (dpdk.rfind("DPDK ", 0) == 0) dpdk.erase(0, 5);
  j["version"] = {{"droce", DROCE_VERSION_STRING}, {"dpdk", dpdk}};
  j["timestamp"] = utc_timestamp();
}

}  // namespace droce::apps
