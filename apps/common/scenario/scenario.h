// Scenario: one lab experiment in one JSON file (docs/scenario.md), read by droce-sim, droce-switch's
// live lab and droce-coll's in-process lab with --scenario FILE. Every field is optional (absent: the
// reading app's own default) except `name`; each app maps what it can honour onto its own options
// (its scenario_options.cc) and refuses the rest by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/cli_number.h"

namespace droce::apps {

struct ScenarioEcn {
  std::optional<std::uint64_t> kmin_bytes, kmax_bytes;
  std::optional<double> pmax;
};

// `pfc`: false or absent = lossy; true = lossless at the app's thresholds; an object = lossless
// with the thresholds it gives.
struct ScenarioPfc {
  bool lossless = false;
  std::optional<std::uint64_t> xoff_bytes, xon_bytes;
};

struct ScenarioFabric {
  std::optional<std::string> topology;   // "star" or "leafspine:L,S" as --fabric takes it (checked)
  std::uint32_t leaves = 0, spines = 0;  // from topology; 0 x 0: the star
  std::optional<double> host_gbps, uplink_gbps, delay_us, loss;
  std::optional<std::string> ecmp_hash;
  std::optional<std::uint64_t> buffer_bytes;
  std::optional<ScenarioEcn> ecn;
  std::optional<ScenarioPfc> pfc;
  std::vector<std::string> links, link_down;  // the --link and --link-down syntax, one string each
  bool has_links = false, has_link_down = false;
};

struct ScenarioTransport {
  std::optional<std::string> cc, preset, recovery;  // none|dcqcn, paper|mlx5, gbn|sr
  std::optional<double> line_gbps;
  std::optional<std::uint32_t> mtu;  // RoCE path MTU, 256..4096
  std::optional<std::uint64_t> message_bytes;
};

struct ScenarioFlow {
  double start_ms = 0;
  std::optional<double> stop_ms;  // absent: the end
};

struct ScenarioTraffic {
  std::vector<ScenarioFlow> flows;  // sender i -> the one receiver; non-empty when has_flows
  bool has_flows = false;
  std::optional<std::string> pattern, algo;  // droce-coll's --pattern and --algo names (the app checks)
  std::optional<std::uint64_t> ranks, size;
};

struct Scenario {
  std::string file;  // as the user gave it
  std::string name;  // [a-z0-9_-]+
  std::optional<std::string> description;
  std::optional<std::uint64_t> seed;
  std::optional<double> duration_ms;
  ScenarioFabric fabric;
  ScenarioTransport transport;
  ScenarioTraffic traffic;
};

// Reads `text` (the file's contents) as a scenario named `file` in messages. Ok, or
// kInvalidArgument and one line "scenario FILE: JSON.PATH: what is wrong".
[[nodiscard]] Status parse_scenario(std::string_view text, const std::string& file, Scenario& out);

// The same from the file itself (unreadable or over 1 MiB: refused the same way).
[[nodiscard]] Status load_scenario(const std::string& file, Scenario& out);

// A field an app cannot honour, as every reader refuses it: "scenario FILE: PATH: WHY".
[[nodiscard]] Status scenario_refusal(const Scenario& s, std::string_view path, std::string_view why);

}  // namespace droce::apps
