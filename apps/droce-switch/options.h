// droce-switch options: the switch between real ports, and the in-process two-sender lab.
#pragma once

#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/link_impairment.h>
#include <droce/engine/lab/switch_experiment.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/scenario/scenario.h"

namespace droce::sw {

struct Options {
  engine::LabSwitchConfig sw;                  // ports and pool filled in by main
  std::vector<std::pair<int, double>> egress;  // (switch port or -1 for all, Gb/s)
  engine::ImpairmentConfig impairment;         // every ingress port
  double duration_s = 0;                       // 0: until Ctrl-C
  double sample_ms = 10;                       // queue-depth series in the JSON
  std::string json, plot;
  bool quiet = false;
  // --pcap: every frame each port receives, one file (port_capture.h); the shared capture options.
  std::string pcap;
  std::uint32_t pcap_snaplen = 0;  // set to the shared default by the parser
  std::uint64_t pcap_max_mb = 0;   // 0: no cap
  std::uint32_t pcap_files = 0;    // 0: no ring
  // --lab-senders N: the live DCQCN/PFC lab instead of real ports.
  engine::SwitchExperimentConfig lab;
  bool lab_mode = false;
  std::string cc = "dcqcn", preset = "paper";
  double line_gbps = 10;
  std::string scenario_file;  // --scenario FILE: the lab's options below the command line's
  apps::Scenario scenario;    // what it named (name empty: none)
};

// 0: run; 1: --help printed; -1: an error printed (naming the option).
// `eal`: the arguments before `--`, where the app's own long options are refused by name.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o,
                                const std::vector<std::string>& eal = {});

}  // namespace droce::sw
