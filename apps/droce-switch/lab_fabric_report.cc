// Leaf-spine links named as the lab names them (leaf0-spine1): `up` is the leaf's queue towards
// the spine, `down` the spine's towards the leaf (docs/fabric-lab.md, "The topology").
#include "apps/droce-switch/lab_fabric_report.h"

#include <cstdio>
#include <string>

#include "apps/common/fabric_link_json.h"
#include "apps/droce-switch/port_json.h"

namespace droce::sw {

namespace {

using engine::SwitchExperimentConfig;
using engine::SwitchExperimentResult;

unsigned long long ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }

// The port counters and those only a leaf-spine link has (failures, re-hashing).
nlohmann::json direction_json(const engine::SwitchPortCounters& c) {
  nlohmann::json j = port_json(c);
  j["unrouted"] = c.unrouted;
  j["link_down_drops"] = c.link_down_drops;
  j["link_down_lost"] = c.link_down_lost;
  j["rehashed_frames"] = c.rehashed_frames;
  j["rehashed_flows"] = c.rehashed_flows;
  j["rehash_untracked"] = c.rehash_untracked;
  return j;
}

nlohmann::json seat(const engine::SwitchExperimentFabric& f, std::uint32_t i, std::uint32_t senders) {
  const std::uint32_t e = f.ports_per_leaf(senders), slot = f.slot(i, senders);
  return {{"leaf", slot / e}, {"port", slot % e}};
}

// The topology, the hash, the failures' schedule and every link by name.
nlohmann::json fabric_json(const engine::SwitchExperimentFabric& f, std::uint32_t ports_per_leaf,
                           const std::vector<engine::FabricLinkCounters>& counters) {
  nlohmann::json links = nlohmann::json::array();
  for (const engine::FabricLinkCounters& l : counters)
    links.push_back(apps::fabric_link_json(l, direction_json(l.up), direction_json(l.down)));
  return {{"topology", "leafspine"},
          {"leaves", f.leaves},
          {"spines", f.spines},
          {"ports_per_leaf", ports_per_leaf},
          {"uplink_gbps", f.uplink_gbps},
          {"ecmp_hash", f.ecmp.describe()},
          {"ecmp_rehash", "resilient"},
          {"link_failures", apps::link_failures_json(f.link_failures)},
          {"link_specs", apps::link_specs_json(f.links)},
          {"links", links}};
}

}  // namespace

void print_links(const std::vector<engine::FabricLinkCounters>& links) {
  std::printf(" %14s  %4s  %12s  %12s  %9s  %9s  %10s  %10s  %9s  %9s\n", "link", "up?", "up tx B", "down tx B",
              "up ECN", "down ECN", "up drops", "down drops", "up PFC", "down PFC");
  for (const engine::FabricLinkCounters& l : links)
    std::printf(" %14s  %4s  %12llu  %12llu  %9llu  %9llu  %10llu  %10llu  %9llu  %9llu\n", l.name.c_str(),
                l.link_up ? "up" : "down", ull(l.up.tx_bytes), ull(l.down.tx_bytes), ull(l.up.ecn_marked),
                ull(l.down.ecn_marked), ull(l.up.tail_drops + l.up.link_down_drops),
                ull(l.down.tail_drops + l.down.link_down_drops), ull(l.up.pfc_pause_received),
                ull(l.down.pfc_pause_received));
}

nlohmann::json ports_fabric_json(const engine::SwitchExperimentFabric& fabric, std::size_t ports,
                                 const std::vector<engine::FabricLinkCounters>& links) {
  return fabric_json(fabric, static_cast<std::uint32_t>(ports / fabric.leaves), links);
}

void print_lab_fabric(const SwitchExperimentConfig& cfg, const SwitchExperimentResult& r) {
  const engine::SwitchExperimentFabric& f = cfg.fabric;
  if (!f.on()) return;
  char uplinks[32] = "unshaped";
  if (f.uplink_gbps > 0) std::snprintf(uplinks, sizeof uplinks, "%.3g Gb/s", f.uplink_gbps);
  std::printf(" leaf-spine %u x %u, uplinks %s, ECMP %s; receiver on leaf%u, senders on", f.leaves, f.spines, uplinks,
              f.ecmp.describe().c_str(), f.leaf_of(cfg.senders, cfg.senders));
  for (std::uint32_t i = 0; i < cfg.senders; ++i) std::printf("%sleaf%u", i ? ", " : " ", f.leaf_of(i, cfg.senders));
  std::printf("\n");
  print_links(r.links);
}

void add_lab_fabric_json(nlohmann::json& j, const SwitchExperimentConfig& cfg, const SwitchExperimentResult& r) {
  const engine::SwitchExperimentFabric& f = cfg.fabric;
  if (!f.on()) return;
  nlohmann::json senders = nlohmann::json::array();
  for (std::uint32_t i = 0; i < cfg.senders; ++i) senders.push_back(seat(f, i, cfg.senders));
  j["fabric"] = fabric_json(f, f.ports_per_leaf(cfg.senders), r.links);
  j["fabric"]["placement"] = {{"senders", senders}, {"receiver", seat(f, cfg.senders, cfg.senders)}};
  // Per link and direction, one value per sample (the samples' times are series.time_ms).
  nlohmann::json series = nlohmann::json::array();
  for (std::size_t k = 0; k < r.links.size(); ++k) {
    nlohmann::json dirs;
    for (const bool up : {true, false}) {
      nlohmann::json q = nlohmann::json::array(), tx = nlohmann::json::array(), ecn = nlohmann::json::array(),
                     pfc = nlohmann::json::array(), drops = nlohmann::json::array();
      for (const engine::SwitchExperimentSample& s : r.samples) {
        const engine::LinkDirectionSample& d = up ? s.links[k].up : s.links[k].down;
        q.push_back(d.queue_bytes);
        tx.push_back(d.tx_gbps);
        ecn.push_back(d.ecn_marked);
        pfc.push_back(d.pfc_pauses);
        drops.push_back(d.drops);
      }
      dirs[up ? "up" : "down"] = {
          {"queue_bytes", q}, {"tx_gbps", tx}, {"ecn_marked", ecn}, {"pfc_pauses", pfc}, {"drops", drops}};
    }
    series.push_back({{"name", r.links[k].name}, {"up", dirs["up"]}, {"down", dirs["down"]}});
  }
  j["series"]["links"] = series;
}

}  // namespace droce::sw
