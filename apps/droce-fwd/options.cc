// droce-fwd option parsing on the shared CLI11 setup: every bad value one line naming the option.
#include "apps/droce-fwd/options.h"

#include <rte_config.h>

#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/values.h"

namespace droce::fwd {

namespace {

constexpr const char* kUsage =
    "usage: droce-fwd [EAL options] -- [options]\n"
    "Forwards every frame received on one port to another with droce's own poll loop.\n"
    "Ports are the ethdevs created by the EAL options (--vdev ..., PCI addresses), numbered from 0.\n"
    "Without EAL options it runs on a net_ring loopback port with --tx-first 256.";

void declare(CLI::App& app, Options& o) {
  namespace cli = apps::cli;
  const std::string d = " (default ";
  const char* g = "ports";
  cli::add_value(app, g, "--rx-port", "N", "port to receive from" + d + std::to_string(o.rx_port) + ")",
                 [&o](const std::string& v) {
                   unsigned port = 0;
                   const Status s = apps::parse_uint("--rx-port", v, 0, RTE_MAX_ETHPORTS - 1, port);
                   if (s.ok()) o.rx_port = static_cast<int>(port);
                   return s.message();
                 });
  cli::add_value(app, g, "--tx-port", "N", "port to send to (default: the rx port)", [&o](const std::string& v) {
    unsigned port = 0;
    const Status s = apps::parse_uint("--tx-port", v, 0, RTE_MAX_ETHPORTS - 1, port);
    if (s.ok()) o.tx_port = static_cast<int>(port);
    return s.message();
  });
  g = cli::kWorkload;
  cli::add_real(app, g, "--duration", "S", o.duration_s, 0, 86400,
                "seconds to run, 0 = until Ctrl-C" + d + cli::num(o.duration_s) + ")");
  cli::add_uint(app, g, "--tx-first", "N", o.tx_first, 0, 8192,
                "inject N frames before forwarding" + d + std::to_string(o.tx_first) + ")");
  cli::add_uint(app, g, "--pkt-size", "B", o.pkt_size, 60, 1514,
                "size of injected frames, 60..1514" + d + std::to_string(o.pkt_size) + ")");
  cli::add_uint(app, g, "--mbufs", "N", o.mbufs, 1023, 1u << 22,
                "mbufs in the pool, 1023..4M" + d + std::to_string(o.mbufs) + ")", apps::Suffixes::kBinary);
  g = cli::kOutput;
  cli::add_real(app, g, "--stats-period", "S", o.stats_period_s, 0, 3600,
                "print rates every S seconds, 0 = off" + d + cli::num(o.stats_period_s) + ")");
  cli::OutputFields out;
  out.json = &o.json;
  out.json_help = "write the final counters and rates as JSON";
  cli::add_output(app, out);
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o, const std::vector<std::string>& eal) {
  const auto app = apps::cli::make_app("droce-fwd", kUsage);
  declare(*app, o);
  return apps::cli::parse(*app, args, eal);
}

}  // namespace droce::fwd
