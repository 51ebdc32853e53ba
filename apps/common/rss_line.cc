#include "apps/common/rss_line.h"

#include <cstdio>

namespace droce::apps {

void place_flows_and_say(const char* app, const engine::WorkerGroup& group) {
  if (group.size() < 2) return;
  engine::RssPlacement r;
  if (Status s = group.place_flows_by_rss(r); !s.ok()) {
    std::fprintf(stderr, "%s: RSS: %s; frames reach their QP's worker in software\n", app, s.message().c_str());
    return;
  }
  if (r.applied) {
    std::fprintf(stderr,
                 "%s: RSS: %u QPs' frames to their workers' queues (%u-entry table), %u sharing an entry with another "
                 "worker's (handed over in software)\n",
                 app, r.placed, r.reta_size, r.conflicts);
  } else if (r.reta_size != 0) {
    std::fprintf(stderr, "%s: RSS: table not set (%s); frames reach their QP's worker in software\n", app,
                 r.why.c_str());
  }
}

}  // namespace droce::apps
