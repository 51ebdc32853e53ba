// droce-gen's report of a --mix run and of weighted sizes: each op's share, figures and latency,
// in the text report and the JSON ("mix").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "apps/droce-gen/options.h"
#include "apps/droce-gen/run.h"

namespace droce::gen {

// --mix as the run took it: "write:60,read:30,send:10" (op names, the weights given).
[[nodiscard]] std::string mix_text(const Options& o);
// The sizes column: the list ("64,4096"), or the weighted sizes ("64:70,4096:25,1048576:5").
[[nodiscard]] std::string workload_sizes_text(const Options& o);
// One line per op of the mix (nothing without one), and one of the weighted sizes' counts.
void print_mix(const Options& o, const RunOutcome& r);
// {"spec", "seed", "received_at_responder", "ops": [{"op", "weight", "messages", "share", "bytes", "goodput_gbps",
// "msg_rate_mps", "latency_ns"}]}.
[[nodiscard]] nlohmann::json mix_json(const Options& o, const RunOutcome& r);
// Weighted sizes: the messages completed of each size, in the order given ([] without weights).
[[nodiscard]] nlohmann::json size_messages_json(const Options& o, const RunOutcome& r);

}  // namespace droce::gen
