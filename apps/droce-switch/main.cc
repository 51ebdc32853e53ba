// droce-switch: a DPDK lab switch between every port of the process, or (--lab-senders) the live
// DCQCN/PFC lab: droce senders through the same switch core to one receiver.
#include <droce/engine/core/capture.h>
#include <droce/engine/core/eal.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/stop_signal.h>
#include <droce/engine/lab/lab_switch.h>
#include <droce/engine/lab/link_impairment.h>
#include <droce/engine/lab/switch_experiment.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/capture_report.h"
#include "apps/common/counters_json.h"
#include "apps/common/output_file.h"
#include "apps/common/run_python.h"
#include "apps/common/telemetry_setup.h"
#include "apps/droce-switch/eal_ports.h"
#include "apps/droce-switch/lab_fabric_report.h"
#include "apps/droce-switch/options.h"
#include "apps/droce-switch/port_capture.h"
#include "apps/droce-switch/port_json.h"
#include "apps/droce-switch/switch_core.h"
#include "apps/droce-switch/switch_telemetry.h"

using namespace droce;
using namespace droce::engine;
using droce::sw::port_json;

namespace {

int fail(const std::string& m) {
  std::fprintf(stderr, "droce-switch: %s\n", m.c_str());
  return 1;
}

int run_lab(sw::Options& o, rte_mempool* pool) {
  SwitchExperimentConfig lc = o.lab;
  lc.sw = o.sw;
  // The lab polls its switch and every endpoint on one lcore of a process the OS deschedules: a
  // shaped port given only the 2 µs of a switch with its own lcore loses the time it was not run,
  // and the bottleneck runs at the process's CPU share instead of its rate (half of 0.05 Gb/s on a
  // busy 2-core machine). 50 ms, as droce-coll's lab (lab_switch.h, shaper_burst_us).
  lc.sw.shaper_burst_us = 50'000;
  lc.pool = pool;
  Status err;
  auto lab = SwitchExperiment::create(lc, err);
  if (!lab) return fail(err.message());
  droce::apps::start_telemetry("droce-switch");
  std::printf("droce-switch lab: %u sender(s) -> %.3g Gb/s bottleneck -> receiver, cc %s (%s), %s, %.0f ms%s\n",
              lc.senders, lc.bottleneck_gbps, o.cc.c_str(), o.preset.c_str(), lc.sw.pfc ? "PFC lossless" : "lossy",
              lc.duration_ms, lc.fabric.on() ? ", on a leaf-spine" : "");
  const SwitchExperimentResult r = lab->run();
  std::printf(
      " sender  messages  Gb/s(avg)  final rate  CNPs handled/ignored  cuts  retransmitted  PFC pauses  paused ms\n");
  nlohmann::json senders = nlohmann::json::array();
  for (std::size_t i = 0; i < r.senders.size(); ++i) {
    const auto& s = r.senders[i];
    const double gbps = static_cast<double>(s.bytes) * 8 / (lc.duration_ms * 1e-3) / 1e9;
    std::printf(" %6zu  %8llu  %9.3f  %10.3f  %10llu/%-9llu  %4llu  %13llu  %10llu  %9.3f\n", i,
                static_cast<unsigned long long>(s.messages), gbps, s.final_rate_gbps,
                static_cast<unsigned long long>(s.cnps_handled), static_cast<unsigned long long>(s.cnps_ignored),
                static_cast<unsigned long long>(s.rate_cuts), static_cast<unsigned long long>(s.retransmitted),
                static_cast<unsigned long long>(s.pfc_pauses), static_cast<double>(s.pfc_paused_ns) / 1e6);
    senders.push_back({{"messages", s.messages},
                       {"bytes", s.bytes},
                       {"goodput_gbps", gbps},
                       {"errors", s.errors},
                       {"rp_cnp_handled", s.cnps_handled},
                       {"rp_cnp_ignored", s.cnps_ignored},
                       {"rate_cuts", s.rate_cuts},
                       {"final_rate_gbps", s.final_rate_gbps},
                       {"retransmitted_packets", s.retransmitted},
                       {"pfc_pause_frames", s.pfc_pauses},
                       {"pfc_paused_ns", s.pfc_paused_ns},
                       {"min_rtt_us", s.min_rtt_us},
                       {"srtt_us", s.srtt_us}});
  }
  const auto& b = r.bottleneck;
  std::printf(" bottleneck: ECN marked %llu  tail drops %llu  queue max %llu B  receiver CE %llu -> CNPs %llu\n",
              static_cast<unsigned long long>(b.ecn_marked), static_cast<unsigned long long>(b.tail_drops),
              static_cast<unsigned long long>(b.queue_max_bytes),
              static_cast<unsigned long long>(r.receiver_ecn_marked),
              static_cast<unsigned long long>(r.receiver_cnps_sent));
  std::uint64_t pauses = 0;
  for (const auto& c : r.ingress) pauses += c.pfc_pause_sent;
  if (lc.sw.pfc) std::printf(" PFC: pauses sent upstream %llu\n", static_cast<unsigned long long>(pauses));
  droce::sw::print_lab_fabric(lc, r);
  std::printf(" data verified: %s\n", r.data_ok ? "yes" : "NO");
  if (!o.json.empty()) {
    nlohmann::json j;
    j["config"] = {{"senders", lc.senders},
                   {"bottleneck_gbps", lc.bottleneck_gbps},
                   {"cc", o.cc},
                   {"preset", o.preset},
                   {"line_gbps", o.line_gbps},
                   {"duration_ms", lc.duration_ms},
                   {"start_ms", lc.start_ms},
                   {"stop_ms", lc.stop_ms},
                   {"pfc", lc.sw.pfc},
                   {"kmin_bytes", lc.sw.kmin_bytes},
                   {"kmax_bytes", lc.sw.kmax_bytes},
                   {"pmax", lc.sw.pmax},
                   {"buffer_bytes", lc.sw.buffer_bytes},
                   {"message_bytes", lc.message_bytes},
                   {"recovery", lc.recovery == droce::rc::Recovery::kSelectiveRepeat ? "sr" : "gbn"},
                   {"fabric", lc.fabric.on() ? "leafspine:" + std::to_string(lc.fabric.leaves) + "," +
                                                   std::to_string(lc.fabric.spines)
                                             : std::string("star")},
                   {"sample_us", lc.sample_us}};
    if (!o.scenario.name.empty()) j["scenario"] = {{"name", o.scenario.name}, {"file", o.scenario.file}};
    j["senders"] = senders;
    j["bottleneck"] = port_json(b);
    nlohmann::json ing = nlohmann::json::array();
    for (const auto& c : r.ingress) ing.push_back(port_json(c));
    j["ingress"] = ing;
    j["receiver"] = {{"np_ecn_marked_roce_packets", r.receiver_ecn_marked}, {"np_cnp_sent", r.receiver_cnps_sent}};
    j["data_ok"] = r.data_ok;
    // Every endpoint of the lab (senders and receiver): counters by their Linux names, drops by reason.
    const engine::CounterSums sums = droce::apps::counter_sums(lab->endpoints());
    j["hw_counters"] = droce::apps::hw_counters_json(sums);
    j["drop_reasons"] = droce::apps::drop_reasons_json(sums);
    droce::apps::stamp_report(j);
    nlohmann::json t = nlohmann::json::array(), rate = nlohmann::json::array(), good = nlohmann::json::array(),
                   q = nlohmann::json::array(), tx = nlohmann::json::array(), marks = nlohmann::json::array(),
                   cnps = nlohmann::json::array();
    for (const auto& s : r.samples) {
      t.push_back(s.t_ms);
      rate.push_back(s.rate_gbps);
      good.push_back(s.goodput_gbps);
      q.push_back(s.queue_bytes);
      tx.push_back(s.tx_bytes);
      marks.push_back(s.ecn_marked);
      cnps.push_back(s.cnps);
    }
    j["series"] = {{"time_ms", t},     {"rate_gbps", rate},         {"goodput_gbps", good},
                   {"queue_bytes", q}, {"bottleneck_tx_bytes", tx}, {"ecn_marked", marks},
                   {"cnps", cnps}};
    droce::sw::add_lab_fabric_json(j, lc, r);
    if (Status s = droce::apps::write_text_file(o.json, j.dump(1) + "\n"); !s.ok()) return fail(s.message());
    // An argument vector, no shell: the file names are names, whatever characters they hold.
    if (!o.plot.empty())
      if (Status s = droce::apps::run_script("plot_switch_lab.py", {o.json, o.plot}); !s.ok())
        return fail("--plot: " + s.message());
  }
  return r.data_ok ? 0 : 1;
}

// How often the switch opens its gate for net_memif's control events (see run_switch).
constexpr double kMemifGateIntervalS = 0.05;

int run_switch(sw::Options& o, rte_mempool* pool) {
  // Declared before the ports so that it is released after they are closed.
  InterruptThreadHold memif_gate;
  // --pcap: declared before the ports, closed once they have stopped (every frame is in).
  PcapngCapture capture;
  const droce::apps::CaptureOptions capture_opts{o.pcap, o.pcap_snaplen, o.pcap_max_mb, o.pcap_files};
  std::vector<std::unique_ptr<Port>> ports;
  std::vector<std::unique_ptr<LinkImpairment>> impair;
  std::vector<std::unique_ptr<droce::sw::PortCapture>> port_captures;  // removed first, at any return
  Status err;
  // The capture first: a --pcap file that cannot be written, or a pool that cannot be made, ends
  // the run before any port is opened or any peer has connected.
  if (!o.pcap.empty())
    if (Status s = capture.open(o.pcap, o.pcap_snaplen, 4095, droce::apps::capture_limits(capture_opts)); !s.ok())
      return fail("--pcap: " + s.message());
  std::uint16_t pid = 0;
  RTE_ETH_FOREACH_DEV(pid) {
    char name[RTE_ETH_NAME_MAX_LEN];
    if (rte_eth_dev_get_name_by_port(pid, name) != 0) continue;
    PortConfig pc;
    pc.devargs = name;
    pc.rx_pool = pool;
    pc.promiscuous = true;  // frames are addressed to the hosts behind us, not to us
    auto p = Port::open(pc, err);
    if (!p) return fail(err.message());
    ports.push_back(std::move(p));
    if (ports.size() == 64) break;
  }
  if (ports.size() < 2)
    return fail("found " + std::to_string(ports.size()) +
                " port(s); give at least two (--vdev net_memif0,... --vdev net_memif1,...), or --lab-senders N");
  for (auto& p : ports) o.sw.ports.push_back(p->id());
  o.sw.egress_gbps.assign(ports.size(), 0);
  for (const auto& [port, gbps] : o.egress) {
    if (port >= static_cast<int>(ports.size())) return fail("--egress-gbps: no switch port " + std::to_string(port));
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (port < 0 || static_cast<std::size_t>(port) == i) o.sw.egress_gbps[i] = gbps;
  }
  o.sw.pool = pool;
  auto sw = droce::sw::SwitchCore::create(o.sw, o.lab.fabric, err);
  if (!sw) return fail(err.message());
  // /droce/switch publishes one switch; a leaf-spine's ports are in the JSON and the live line.
  std::optional<droce::sw::SwitchTelemetry> telemetry;
  if (sw->star() != nullptr) telemetry.emplace(*sw->star());
  droce::apps::start_telemetry("droce-switch");
  if (o.impairment.any())
    for (auto& p : ports) {
      auto li = LinkImpairment::attach(p->id(), 0, o.impairment, pool, err);
      if (!li) return fail(err.message());
      impair.push_back(std::move(li));
    }
  // After the impairment's callbacks: the file holds what reached the forwarding stage.
  if (!o.pcap.empty()) {
    for (auto& p : ports) {
      auto pc = droce::sw::PortCapture::attach(p->id(), capture, err);
      if (!pc) return fail(err.message());
      port_captures.push_back(std::move(pc));
    }
  }
  for (auto& p : ports)
    if (Status s = p->wait_link_up(100); !s.ok() && !o.quiet)
      std::printf("droce-switch: port %u link not up yet (its peer may connect later)\n", p->id());
  // net_memif tears a departing peer's rings down on EAL's interrupt thread, racing our bursts
  // (engine/core/port.h, InterruptThreadHold): that thread stays parked while we poll. Unlike an
  // endpoint's one peer, the switch's peers connect and leave during the run, so every
  // kMemifGateIntervalS the loop stops polling and lets the thread handle what queued up
  // (connections, disconnections), then parks it again.
  const bool memif = std::any_of(ports.begin(), ports.end(), [](const auto& p) { return p->driver() == "net_memif"; });
  if (memif) (void)memif_gate.engage(5000);
  const std::string topology = o.lab.fabric.on() ? " on a leaf-spine of " + std::to_string(o.lab.fabric.leaves) +
                                                       " leaves and " + std::to_string(o.lab.fabric.spines) + " spines"
                                                 : "";
  std::printf("droce-switch: %zu ports%s, Ctrl-C to stop\n", ports.size(), topology.c_str());
  const double hz = static_cast<double>(rte_get_tsc_hz());
  const std::uint64_t start = rte_rdtsc();
  const std::uint64_t end = o.duration_s > 0 ? start + static_cast<std::uint64_t>(o.duration_s * hz) : UINT64_MAX;
  const auto sample = static_cast<std::uint64_t>(o.sample_ms * 1e-3 * hz);
  std::uint64_t next_sample = start, next_line = start + static_cast<std::uint64_t>(hz);
  const auto gate_interval = static_cast<std::uint64_t>(kMemifGateIntervalS * hz);
  std::uint64_t next_gate = start + gate_interval;
  nlohmann::json t = nlohmann::json::array(), depth = nlohmann::json::array();
  std::uint64_t now = start;
  sw->start_clock(start);
  while (!stop_requested() && (now = rte_rdtsc()) < end) {
    if (memif && now >= next_gate) {
      if (memif_gate.release()) (void)memif_gate.engage(1000);
      next_gate = rte_rdtsc() + gate_interval;
    }
    sw->poll(now);
    if (now >= next_sample && t.size() < 1'000'000) {
      t.push_back(static_cast<double>(now - start) / hz * 1e3);
      nlohmann::json d = nlohmann::json::array();
      for (std::size_t i = 0; i < sw->ports(); ++i) d.push_back(sw->counters(i).queue_bytes);
      depth.push_back(d);
      next_sample = now + sample;
    }
    if (now >= next_line && !o.quiet) {
      std::printf("droce-switch:");
      for (std::size_t i = 0; i < sw->ports(); ++i) {
        const auto& c = sw->counters(i);
        std::printf("  p%zu rx %llu tx %llu q %lluB ecn %llu drop %llu pfc %llu/%llu", i,
                    static_cast<unsigned long long>(c.rx_frames), static_cast<unsigned long long>(c.tx_frames),
                    static_cast<unsigned long long>(c.queue_bytes), static_cast<unsigned long long>(c.ecn_marked),
                    static_cast<unsigned long long>(c.tail_drops), static_cast<unsigned long long>(c.pfc_pause_sent),
                    static_cast<unsigned long long>(c.pfc_pause_received));
      }
      std::printf("\n");
      std::fflush(stdout);
      next_line = now + static_cast<std::uint64_t>(hz);
    }
  }
  nlohmann::json j, pj = nlohmann::json::array();
  for (std::size_t i = 0; i < sw->ports(); ++i) {
    auto c = port_json(sw->counters(i));
    if (o.lab.fabric.on()) c["unrouted"] = sw->counters(i).unrouted;  // nothing floods on a leaf-spine
    if (i < impair.size())
      c["impairment"] = {{"dropped", impair[i]->counters().dropped},
                         {"duplicated", impair[i]->counters().duplicated},
                         {"reordered", impair[i]->counters().reordered}};
    pj.push_back(c);
  }
  const std::vector<FabricLinkCounters> links = sw->links();
  sw->finish();
  for (auto& p : ports) p->stop();  // from our thread, while the gate holds the interrupt thread
  port_captures.clear();
  std::printf("droce-switch: stopped after %.3f s\n", static_cast<double>(now - start) / hz);
  if (!links.empty() && !o.quiet) droce::sw::print_links(links);
  if (!o.pcap.empty()) {
    capture.close();
    std::printf("droce-switch: %s\n", droce::apps::capture_line(capture_opts, capture).c_str());
  }
  if (!o.json.empty()) {
    j["ports"] = pj;
    if (!o.pcap.empty()) j["capture"] = droce::apps::capture_json(capture_opts, capture);
    j["duration_s"] = static_cast<double>(now - start) / hz;
    j["series"] = {{"time_ms", t}, {"queue_bytes", depth}};
    if (o.lab.fabric.on()) j["fabric"] = droce::sw::ports_fabric_json(o.lab.fabric, ports.size(), links);
    if (Status s = droce::apps::write_text_file(o.json, j.dump(1) + "\n"); !s.ok()) return fail(s.message());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = split_args(argc, argv);
  sw::Options o;
  if (int rc = sw::parse_options(split.app, o, split.eal); rc != 0) return rc > 0 ? 0 : 2;
  if (o.lab_mode && split.eal.empty()) split.eal = {"--no-pci"};
  if (!o.lab_mode)
    if (Status s = sw::name_switch_ports(split.eal); !s.ok()) {
      std::fprintf(stderr, "droce-switch: %s\n", s.message().c_str());
      return 2;
    }
  install_stop_signals();
  // Before EAL opens the telemetry socket: a client that finds it gets an answer (switch_telemetry.h).
  if (!o.lab_mode && !o.lab.fabric.on()) droce::sw::register_switch_telemetry();
  Status err;
  auto eal = Eal::init("droce-switch", split.eal, err);
  if (!eal) return fail(err.message());
  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"switch_pool", 65535, 256, 2176 + 4096, -1}, pool); !s.ok())
    return fail(s.message());
  return o.lab_mode ? run_lab(o, pool.get()) : run_switch(o, pool.get());
}
