// The apps' one line about RSS placement (engine/workers/rss_placement.h) once their QPs are
// connected on N > 1 workers.
#pragma once

#include <droce/engine/workers/worker_group.h>

namespace droce::apps {

// With more than one worker: sets the port's redirection table for the group's connected QPs and
// prints what it did on stderr, prefixed with `app` ("droce-gen: RSS: 64 QPs' frames to their
// workers' queues, 3 sharing an entry with another worker's (handed over in software)"). Silent
// where the PMD has no table (net_ring, net_memif: queues meet the peer's one to one); a table the
// PMD would not set is said in one line, and is not an error: the software path still delivers.
void place_flows_and_say(const char* app, const engine::WorkerGroup& group);

}  // namespace droce::apps
