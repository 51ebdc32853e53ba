// --link: each spec parsed strictly (LinkSpec::parse), then checked against the fabric it lands in.
#include "apps/common/cli/link_options.h"

#include <droce/engine/lab/leaf_spine.h>

#include "apps/common/cli/values.h"

namespace droce::apps::cli {

void add_link_specs(CLI::App& app, const std::string& group, std::vector<engine::LinkSpec>& links) {
  add_repeatable(app, group, "--link", "leafL-spineS:KEY=VALUE,...",
                 "leaf-spine: one link's own settings, from dir=both|up|down, gbps=G, buffer=BYTES,\n"
                 "delay-us=US, ecn=KMIN:KMAX:PMAX, pfc=on|off|XOFF:XON (others: the switch's);\n"
                 "e.g. leaf0-spine1:gbps=40,ecn=20K:200K:0.05,pfc=off (docs/fabric-lab.md); repeatable",
                 [&links](const std::string& v) {
                   engine::LinkSpec l;
                   if (engine::Status s = engine::LinkSpec::parse(v, l); !s.ok()) return s.message();
                   links.push_back(l);
                   return std::string();
                 });
}

Status check_link_specs(const std::vector<engine::LinkSpec>& links, std::uint32_t leaves, std::uint32_t spines,
                        const engine::LabSwitchConfig& tiers) {
  // The links as the lab will build them: every leaf and spine is `tiers`.
  engine::LeafSpineConfig lc;
  lc.leaves = leaves;
  lc.spines = spines;
  lc.leaf = lc.spine = tiers;
  if (Status s = engine::apply_link_specs(links, lc); !s.ok()) return s;
  for (const engine::LinkSpec& l : links)
    if (Status s = lc.check_link(l.leaf, l.spine); !s.ok())
      return Status::error(StatusCode::kInvalidArgument, "--link: " + s.message());
  return {};
}

}  // namespace droce::apps::cli
