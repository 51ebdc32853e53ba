// droce-rping: either end of rdma-core's rping, connected over RDMA-CM (QP1) instead of a TCP
// exchange. main() is the table of contents; the steps live in:
//   options.cc  the command line (rping's flags)    setup.cc    port, pool, memory, endpoint
//   session.cc  one CM connection and its pings     rping_data.cc  rping's advertisement and text
//   server.cc   the server's clients on the workers    cm_inbox.cc  the CM's events to a worker
//   report.cc   the line, the JSON, the exit status
#include <droce/engine/core/eal.h>
#include <droce/engine/core/stop_signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apps/common/default_port.h"
#include "apps/droce-rping/options.h"
#include "apps/droce-rping/report.h"
#include "apps/droce-rping/server.h"
#include "apps/droce-rping/session.h"
#include "apps/droce-rping/setup.h"

using namespace droce;
using namespace droce::engine;

namespace {

int fail(const std::string& msg, int code = 1) {
  std::fprintf(stderr, "droce-rping: %s\n", msg.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // ---- options and EAL ----
  SplitArgs split = split_args(argc, argv);
  rping::Options o;
  if (int r = rping::parse_options(split.app, o, split.eal); r != 0) return r > 0 ? 0 : 2;
  const bool defaults = split.eal.empty();
  if (defaults) split.eal = default_pair_eal_args(o.server);
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-rping", split.eal, err);
  if (!eal) return fail(err.message());

  // ---- set up, connect over RDMA-CM, ping, disconnect ----
  rping::Setup st;
  bool usage = false;
  if (Status s = rping::set_up(o, defaults, st, usage); !s.ok()) return fail(s.message(), usage ? 2 : 1);
  if (o.server) {
    rping::Server server(o, st);
    Status s = server.prepare();
    if (s.ok()) s = server.run();
    server.finish();
    return rping::report(o, st, server.results(), server.rejected(), s);
  }
  // The client's connections, one after another, connection i's QP on worker i % --workers.
  rping::allocate_buffers(st, std::size_t{o.connections} * rping::Session::kRegionBytes);
  std::vector<rping::Results> done;
  Status s;
  for (std::uint32_t i = 0; i < o.connections && s.ok(); ++i) {
    const std::uint16_t w = st.worker_of(i);
    std::uint8_t* region = st.buffers.get() + std::size_t{i} * rping::Session::kRegionBytes;
    rc::MemoryRegion mr;
    s = rping::register_region(st, w, region, rping::Session::kRegionBytes, rc::MrTable::kDefaultDomain, mr);
    rping::Session session(o, st, w, region, mr);
    if (s.ok()) s = session.connect();
    if (s.ok()) s = session.run();
    // The client disconnects even after a failed ping, so that the server hears of it at once.
    const Status fin = session.finish();
    if (s.ok()) s = fin;
    session.take_counters();
    done.push_back(session.results());
  }
  return rping::report(o, st, done, 0, s);
}
