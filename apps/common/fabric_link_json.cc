#include "apps/common/fabric_link_json.h"

namespace droce::apps {

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

}  // namespace droce::apps
