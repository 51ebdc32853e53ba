#include "apps/common/fabric_link_json.h"

#include <string>
#include <utility>

namespace droce::apps {

namespace {

nlohmann::json ms_or_null(std::int64_t ns) {
  return ns < 0 ? nlohmann::json(nullptr) : nlohmann::json(static_cast<double>(ns) / 1e6);
}

}  // namespace

nlohmann::json link_settings_json(const engine::LinkQueueParams& p) {
  const engine::SwitchPortSettings& s = p.port;
  return {{"gbps", p.gbps},
          {"buffer_bytes", p.buffer_bytes},
          {"delay_us", s.delay_us},
          {"kmin_bytes", s.kmin_bytes.value_or(0)},
          {"kmax_bytes", s.kmax_bytes.value_or(0)},
          {"pmax", s.pmax.value_or(0)},
          {"pfc", s.pfc.value_or(false)},
          // Thresholds only where PFC runs (a link without it has none in effect).
          {"pfc_xoff_bytes", s.pfc.value_or(false) ? nlohmann::json(s.pfc_xoff_bytes.value_or(0)) : nullptr},
          {"pfc_xon_bytes", s.pfc.value_or(false) ? nlohmann::json(s.pfc_xon_bytes.value_or(0)) : nullptr}};
}

nlohmann::json link_specs_json(const std::vector<engine::LinkSpec>& specs) {
  nlohmann::json j = nlohmann::json::array();
  for (const engine::LinkSpec& l : specs) j.push_back(l.text);
  return j;
}

nlohmann::json fabric_link_json(const engine::FabricLinkCounters& l, nlohmann::json up, nlohmann::json down) {
  return {{"name", l.name},
          {"leaf", l.leaf},
          {"spine", l.spine},
          {"up", std::move(up)},
          {"down", std::move(down)},
          {"link_up", l.link_up},
          {"downs", l.downs},
          {"last_down_ms", ms_or_null(l.last_down_ns)},
          {"last_up_ms", ms_or_null(l.last_up_ns)},
          {"settings", {{"up", link_settings_json(l.up_params)}, {"down", link_settings_json(l.down_params)}}}};
}

nlohmann::json link_failures_json(const std::vector<engine::LinkFailure>& failures) {
  nlohmann::json j = nlohmann::json::array();
  for (const engine::LinkFailure& f : failures)
    j.push_back({{"link", "leaf" + std::to_string(f.leaf) + "-spine" + std::to_string(f.spine)},
                 {"down_ms", f.down_ms},
                 {"up_ms", f.up_ms < 0 ? nlohmann::json(nullptr) : nlohmann::json(f.up_ms)}});
  return j;
}

}  // namespace droce::apps
