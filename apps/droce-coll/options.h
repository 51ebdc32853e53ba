// droce-coll options: one struct with defaults that --help prints, and a strict parser. nccl-tests'
// long names for the sweep (--minbytes --maxbytes --stepfactor --iters --warmup_iters); their
// short letters (-b -e -f -n -w) are taken after "--" only: before it they are EAL's.
#pragma once

#include <droce/engine/lab/ecmp_hash.h>
#include <droce/engine/lab/frame_impairment.h>
#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/leaf_spine.h>
#include <droce/engine/lab/link_spec.h>
#include <droce/protocols/dcqcn/params.h>
#include <droce/protocols/rc/qp_attr.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/scenario/scenario.h"
#include "apps/common/udp_sport_plan.h"
#include "apps/droce-coll/pattern.h"

namespace droce::coll {

enum class Placement : std::uint8_t { kBoth, kOutOfPlace, kInPlace };

struct Options {
  Pattern pattern = Pattern::kAllReduce;
  Algo algo = Algo::kRing;
  DataType dtype = DataType::kFloat32;
  std::uint32_t ranks = 8;
  std::uint32_t workers = 1;
  std::uint32_t root = 0;
  // Sizes: --size alone, or a sweep min, min * factor, ... up to max (nccl-tests -b -e -f).
  std::uint64_t minbytes = 32 * 1024 * 1024, maxbytes = 32 * 1024 * 1024;
  std::uint64_t stepfactor = 2;
  std::uint32_t iters = 20, warmup_iters = 5;
  Placement placement = Placement::kBoth;
  // Transport (NCCL's IB transport): chunks through the receiver's slots, K QPs per peer.
  std::uint32_t chunk_bytes = 64 * 1024;
  std::uint32_t buffers = 4;  // staging slots per sending peer: the receiver's credits
  std::uint32_t qps_per_peer = 1;
  apps::UdpSportPlan udp_sport;  // QP k of every pair sends from its port (both ends); default derived
  std::uint32_t mtu = 1024;
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  std::uint32_t sr_bdp_pkts = rc::kSrMaxBdpPkts;
  std::uint8_t qp_timeout = 14;
  std::uint8_t retry_cnt = 7;
  bool adaptive_rto = true;  // RTT-based retransmission timeout and tail-loss probes (docs/transport.md)
  std::uint8_t dscp = 26;    // priority 3, the usual lossless RoCE class
  // DCQCN at every rank.
  std::string cc = "none";
  std::string preset = "paper";
  double line_gbps = 10;
  dcqcn::DcqcnParams dcqcn;
  // The fabric: droce-switch's per-port queues (every port), PFC, impairment towards each rank.
  engine::LabSwitchConfig sw;
  double egress_gbps = 0;  // every port's egress; 0: unshaped
  // --fabric leafspine:L,S: L leaves of ranks / L ranks each, S spines (0 leaves: one switch).
  std::uint32_t leaves = 0, spines = 0;
  double uplink_gbps = -1;  // every leaf-spine link, both ways; below 0: --egress-gbps
  engine::EcmpHashConfig ecmp;
  std::vector<engine::LinkFailure> link_failures;  // --link-down, in ms from the timed run's start
  std::vector<engine::LinkSpec> links;             // --link: a leaf-spine link's own settings
  double sample_ms = 1;                            // the lab's queue series (fabric.series in the JSON); 0: none
  engine::ImpairmentConfig impairment;
  std::uint64_t seed = 1;                 // the permutation, the impairment and RED
  std::optional<std::uint64_t> psn_seed;  // --seed given: the first PSNs' too; else the OS's entropy
  // Runs.
  double timeout_s = 30;
  int stall_rank = -1;
  // Output.
  std::string json, plot, pcap;
  std::string scenario_file;       // --scenario FILE: the run's options below the command line's
  apps::Scenario scenario;         // what it named (name empty: none)
  std::uint32_t pcap_snaplen = 0;  // set to the shared default by the parser
  bool quiet = false;
  // Under mpirun (docs/droce-coll.md, "Across processes and hosts"): each process on its own
  // port; {rank} and {local_rank} in the devargs are replaced. Rank r's IPv4 is ip_base + r.
  std::string port;
  std::string ip_base = "10.0.0.1";
  // K ranks in each process, all on its one port (a NIC one primary process opens): the world is
  // mpirun's -np x K, rank = process x K + local index (nccl-tests' -g, GPUs per thread).
  std::uint32_t ranks_per_process = 1;
  bool ranks_per_process_given = false;
  bool ranks_given = false;
  std::vector<std::string> lab_only_given;  // options of the one-process lab that were given

  [[nodiscard]] std::vector<std::uint64_t> sizes() const;
};

// The lab's own options (its switch, links, workers, capture): under mpirun the fabric is outside.
inline constexpr const char* kLabOnlyOptions[] = {"--workers",
                                                  "--stall-rank",
                                                  "--egress-gbps",
                                                  "--shaper-burst-us",
                                                  "--kmin-bytes",
                                                  "--kmax-bytes",
                                                  "--pmax",
                                                  "--buffer-bytes",
                                                  "--delay-us",
                                                  "--pfc",
                                                  "--pfc-xoff-bytes",
                                                  "--pfc-xon-bytes",
                                                  "--pfc-quanta",
                                                  "--loss",
                                                  "--duplicate",
                                                  "--reorder",
                                                  "--burst-start",
                                                  "--burst-frames",
                                                  "--pcap",
                                                  "--pcap-snaplen",
                                                  "--fabric",
                                                  "--uplink-gbps",
                                                  "--ecmp-hash",
                                                  "--link-down",
                                                  "--link",
                                                  "--drop-rule",
                                                  "--pfc-watchdog-ms",
                                                  "--stuck-rank",
                                                  "--slow-receiver",
                                                  "--slow-receiver-buffer-bytes",
                                                  "--sample-ms"};

// "A.B.C.D" -> host-order IPv4; false when it is not one.
[[nodiscard]] bool parse_ipv4(const std::string& text, std::uint32_t& out);

// 0: run; 1: --help/--version printed (exit 0); -1: an error printed (exit 2).
// `eal`: the arguments before `--`, where the app's own long options are refused by name.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o,
                                const std::vector<std::string>& eal = {});

}  // namespace droce::coll
