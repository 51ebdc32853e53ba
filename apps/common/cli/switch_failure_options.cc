// The failure options: each value parsed strictly into the switch's config.
#include "apps/common/cli/switch_failure_options.h"

#include "apps/common/cli/values.h"

namespace droce::apps::cli {

void add_switch_failures(CLI::App& app, const std::string& group, engine::LabSwitchConfig& c, FailurePeers peers) {
  add_repeatable(app, group, "--drop-rule", "every:N|ip-id:B",
                 "drop every Nth frame of each flow, or every IPv4 frame whose ID ends in byte B\n"
                 "(SIGCOMM'16's 1/256 bug: ip-id:0xff); both when given twice; counted as rule_drops",
                 [&c](const std::string& v) { return engine::DropRuleConfig::parse(v, c.drop_rule).message(); });
  add_real(app, group, "--pfc-watchdog-ms", "T", c.pfc_watchdog_ms, 0, 1e6,
           "a lossless priority paused longer than T at an egress stops honouring pauses and\n"
           "drops its frames until pauses stop for T (default 0: off)");
  if (peers == FailurePeers::kNone) return;
  const bool ranks = peers == FailurePeers::kRanks;
  const std::string stuck = ranks ? "--stuck-rank" : "--stuck-port";
  const std::string who = ranks ? "RANK" : "PORT";
  add_repeatable(app, group, stuck, who,
                 ranks ? "RANK's NIC is stuck: it pauses every lossless priority of its switch port forever\n"
                         "(needs --pfc)"
                       : "the peer on PORT is a stuck NIC pausing every lossless priority forever (needs --pfc)",
                 [&c, stuck](const std::string& v) {
                   std::uint16_t port = 0;
                   if (Status s = parse_uint(stuck, v, 0, 63, port); !s.ok()) return s.message();
                   c.stuck_ports.push_back(port);
                   return std::string();
                 });
  add_repeatable(
      app, group, "--slow-receiver", who + ":F",
      std::string(ranks ? "RANK is a slow receiver: its NIC" : "the peer on PORT is a slow receiver: its NIC") +
          " drains to its host at F (0..1) of the\n"
          "port's rate and pauses the port as its buffer fills (needs --pfc; counted as\n"
          "slow_receiver_pauses and pauses received)",
      [&c](const std::string& v) {
        engine::SlowReceiverConfig r;
        if (Status s = engine::SlowReceiverConfig::parse("--slow-receiver", v, r); !s.ok()) return s.message();
        c.slow_receivers.push_back(r);
        return std::string();
      });
  add_uint(app, group, "--slow-receiver-buffer-bytes", "B", c.slow_receiver_buffer_bytes, 36'000, 1ull << 30,
           "a slow receiver's NIC buffer: it pauses above half, resumes at a quarter (default " +
               std::to_string(c.slow_receiver_buffer_bytes) + ")",
           Suffixes::kBinary);
}

}  // namespace droce::apps::cli
