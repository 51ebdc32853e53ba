// droce-coll's report: the table as nccl-tests prints it, then what nccl-tests cannot show.
#include "apps/droce-coll/report.h"

#include <droce/engine/endpoint/rc_endpoint.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/common/counters_json.h"
#include "apps/common/fabric_link_json.h"
#include "apps/common/output_file.h"

namespace droce::coll {

namespace {

std::string root_text(const Options& o) { return rooted(o.pattern) ? std::to_string(o.root) : "-1"; }

void print_place(const PlacementResult& p) {
  if (!p.ran) {
    std::printf("  %7s  %6s  %6s  %6s", "-", "-", "-", "-");
    return;
  }
  std::printf("  %7.1f  %6.2f  %6.2f  %6llu", p.time_us, p.algbw_gbytes, p.busbw_gbytes,
              static_cast<unsigned long long>(p.wrong));
}

nlohmann::json place_json(const PlacementResult& p) {
  return {
      {"time_us", p.time_us},
      {"slowest_rank", p.slowest_rank},
      {"slowest_rank_time_us", p.slowest_us},
      {"algbw_gbps", p.algbw_gbytes * 8},
      {"busbw_gbps", p.busbw_gbytes * 8},
      {"wrong", p.wrong},
      {"wrong_on_arrival", p.wrong_on_arrival},
      {"iteration_us", {{"p50", p.iter_p50_us}, {"p99", p.iter_p99_us}, {"max", p.iter_max_us}, {"all", p.iter_us}}},
      {"slowest_transfer",
       {{"src", p.slow_src},
        {"dst", p.slow_dst},
        {"done_us", p.slow_done_us},
        {"retransmitted_packets", p.slow_retransmitted},
        {"naks_received", p.slow_naks},
        {"local_ack_timeout_err", p.slow_timeouts}}},
      {"retransmitted_packets", p.retransmitted},
      {"naks_received", p.naks},
      {"np_cnp_sent", p.cnps_sent},
      {"rp_cnp_handled", p.cnps_handled},
      {"pfc_pause_frames", p.pfc_pauses}};
}

}  // namespace

void print_table_header(const Options& o) {
  const bool mpi = !o.port.empty();
  const std::string where =
      !mpi ? std::to_string(o.ranks) + " ranks on " + std::to_string(o.workers) + " worker(s)"
      : o.ranks_per_process == 1
          ? std::to_string(o.ranks) + " ranks, one per process (mpirun)"
          : std::to_string(o.ranks) + " ranks, " + std::to_string(o.ranks_per_process) + " per process (mpirun)";
  std::printf("# droce-coll: %s%s, %s, chunk %u B x %u slots, %u QP(s) per peer (UDP source ports %s), MTU %u, %s%s\n",
              pattern_name(o.pattern),
              o.pattern == Pattern::kAllReduce ? (o.algo == Algo::kRing ? " (ring)" : " (halving-doubling)") : "",
              where.c_str(), o.chunk_bytes, o.buffers, o.qps_per_peer, o.udp_sport.describe().c_str(), o.mtu,
              o.recovery == rc::Recovery::kGoBackN ? "go-back-N" : "selective repeat",
              o.cc == "dcqcn" ? ", DCQCN" : "");
  if (mpi && o.ranks_per_process == 1)
    std::printf("# fabric: outside droce-coll; each rank on its own port (%s), rank r at %s + r\n", o.port.c_str(),
                o.ip_base.c_str());
  else if (mpi)
    std::printf(
        "# fabric: outside droce-coll; each process's %u ranks on its port (%s; frames between them looped in the "
        "process), rank r at %s + r\n",
        o.ranks_per_process, o.port.c_str(), o.ip_base.c_str());
  else
    std::printf(
        "# fabric: one switch port per rank, egress %s, buffer %llu B, %s; loss %g, duplication %g, reordering %g\n",
        o.egress_gbps > 0 ? (std::to_string(o.egress_gbps).substr(0, 6) + " Gb/s").c_str() : "unshaped",
        static_cast<unsigned long long>(o.sw.buffer_bytes), o.sw.pfc ? "PFC lossless" : "lossy", o.impairment.loss,
        o.impairment.duplicate, o.impairment.reorder);
  std::printf("#\n");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %33s  %33s\n", "", "", "", "", "", "out-of-place", "in-place");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
              "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
              "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  std::fflush(stdout);
}

void print_table_row(const Options& o, const SizeResult& r) {
  std::printf("  %10llu  %12llu  %8s  %6s  %6s", static_cast<unsigned long long>(r.plan.size_bytes),
              static_cast<unsigned long long>(r.plan.count), dtype_name(o.dtype), reduces(o.pattern) ? "sum" : "none",
              root_text(o).c_str());
  print_place(r.out_of_place);
  print_place(r.in_place);
  std::printf("\n");
  std::fflush(stdout);
}

bool print_summary(const Options& o, const RunSummary& s, const CollLab* lab, const FabricObserver* obs) {
  std::uint64_t wrong = 0, arrival = 0;
  double busbw = 0;
  unsigned rows = 0;
  for (const SizeResult& r : s.sizes)
    for (const PlacementResult* p : {&r.out_of_place, &r.in_place}) {
      if (!p->ran) continue;
      wrong += p->wrong;
      arrival += p->wrong_on_arrival;
      busbw += p->busbw_gbytes;
      ++rows;
    }
  std::printf("# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(wrong + arrival),
              wrong + arrival == 0 && s.failure.empty() ? "OK" : "FAILED");
  std::printf("# Avg bus bandwidth    : %g\n", rows == 0 ? 0 : busbw / rows);
  std::printf(
      "#\n# droce: per size and placement (time is the mean over ranks; iteration = start to last rank done)\n");
  std::printf("# %10s  %5s  %9s  %9s  %9s  %9s  %12s  %9s  %6s  %6s  %6s  %6s\n", "size", "place", "slowest", "(us)",
              "iter p50", "p99/max", "slow xfer", "done(us)", "retx", "NAKs", "CNPs", "pauses");
  for (const SizeResult& r : s.sizes)
    for (int k = 0; k < 2; ++k) {
      const PlacementResult& p = k == 0 ? r.out_of_place : r.in_place;
      if (!p.ran) continue;
      char xfer[32];
      std::snprintf(xfer, sizeof xfer, "%u->%u", p.slow_src, p.slow_dst);
      char tail[40];
      std::snprintf(tail, sizeof tail, "%.0f/%.0f", p.iter_p99_us, p.iter_max_us);
      std::printf("  %10llu  %5s  rank %4u  %9.1f  %9.1f  %9s  %12s  %9.1f  %6llu  %6llu  %6llu  %6llu\n",
                  static_cast<unsigned long long>(r.plan.size_bytes), k == 0 ? "out" : "in", p.slowest_rank,
                  p.slowest_us, p.iter_p50_us, tail, xfer, p.slow_done_us,
                  static_cast<unsigned long long>(p.retransmitted), static_cast<unsigned long long>(p.naks),
                  static_cast<unsigned long long>(p.cnps_sent), static_cast<unsigned long long>(p.pfc_pauses));
    }
  const std::uint32_t n = o.ranks;
  if (lab == nullptr || obs == nullptr) {
    // MPI mode: the fabric is another process's (droce-switch --json has its ports).
    if (!s.failure.empty()) std::printf("# FAILED: %s\n", s.failure.c_str());
    return wrong + arrival == 0 && s.failure.empty();
  }
  if (n <= 16) {
    std::printf(
        "#\n# traffic matrix: first-transmission payload KiB, row sends to column (measured at the switch)\n#     ");
    for (std::uint32_t b = 0; b < n; ++b) std::printf(" %9u", b);
    std::printf("\n");
    for (std::uint32_t a = 0; a < n; ++a) {
      std::printf("# %3u ", a);
      for (std::uint32_t b = 0; b < n; ++b)
        std::printf(" %9llu", static_cast<unsigned long long>(obs->matrix(a, b) / 1024));
      std::printf("\n");
    }
  } else {
    std::printf("#\n# traffic matrix: %u x %u, in the JSON (--json)\n", n, n);
  }
  std::printf("#\n# fabric ports: %4s  %10s  %14s  %12s  %10s  %9s  %9s  %8s  %8s  %8s\n", "rank", "rx frames",
              "payload first", "payload retx", "tx frames", "tail drop", "ECN mark", "queue max", "PFC sent",
              "link drop");
  bool matrix_ok = true;
  for (std::uint32_t r = 0; r < n; ++r) {
    const engine::SwitchPortCounters& c = lab->rank_port(r);
    const PortTraffic& in = obs->ingress(r);
    const engine::ImpairmentCounters imp = lab->links().impairment(r, 0);
    std::uint64_t sched = 0;
    for (std::uint32_t b = 0; b < n; ++b) sched += s.schedule_matrix[std::size_t{r} * n + b];
    matrix_ok = matrix_ok && sched == in.payload_first;
    std::printf("#               %4u  %10llu  %14llu  %12llu  %10llu  %9llu  %9llu  %8llu  %8llu  %8llu\n", r,
                static_cast<unsigned long long>(c.rx_frames), static_cast<unsigned long long>(in.payload_first),
                static_cast<unsigned long long>(in.payload_retx), static_cast<unsigned long long>(c.tx_frames),
                static_cast<unsigned long long>(c.tail_drops), static_cast<unsigned long long>(c.ecn_marked),
                static_cast<unsigned long long>(c.queue_max_bytes), static_cast<unsigned long long>(c.pfc_pause_sent),
                static_cast<unsigned long long>(imp.dropped + imp.burst_dropped));
  }
  const std::vector<engine::FabricLinkCounters> links = lab->fabric_links();
  if (!links.empty())
    std::printf(
        "#\n# fabric links, ECMP on %s (up: leaf to spine, down: spine to leaf)\n#   %14s  %10s  %9s  "
        "%9s  %9s  |  %10s  %9s  %9s\n",
        lab->config().ecmp.describe().c_str(), "link", "up frames", "tail drop", "ECN mark", "queue max", "down frames",
        "tail drop", "ECN mark");
  for (const engine::FabricLinkCounters& l : links)
    std::printf("#   %14s  %10llu  %9llu  %9llu  %9llu  |  %10llu  %9llu  %9llu\n", l.name.c_str(),
                static_cast<unsigned long long>(l.up.tx_frames), static_cast<unsigned long long>(l.up.tail_drops),
                static_cast<unsigned long long>(l.up.ecn_marked), static_cast<unsigned long long>(l.up.queue_max_bytes),
                static_cast<unsigned long long>(l.down.tx_frames), static_cast<unsigned long long>(l.down.tail_drops),
                static_cast<unsigned long long>(l.down.ecn_marked));
  if (!lab->config().link_failures.empty()) {
    // --link-down: what each failed link dropped and how many flows ECMP moved off it.
    std::printf(
        "#\n# link failures (ms from the first timed iteration; resilient re-hash: only the failed link's\n"
        "# flows move, and move back when it returns)\n#   %14s  %5s  %5s  %10s  %10s  %10s  %10s  %9s  %9s\n",
        "link", "state", "downs", "down at", "up at", "drops up", "drops down", "re-hashed", "rh frames");
    for (const engine::FabricLinkCounters& l : links) {
      if (l.downs == 0 && l.up.rehashed_frames == 0) continue;
      char down_at[24] = "-", up_at[24] = "-";
      if (l.last_down_ns >= 0)
        std::snprintf(down_at, sizeof down_at, "%.3f", static_cast<double>(l.last_down_ns) / 1e6);
      if (l.last_up_ns >= 0) std::snprintf(up_at, sizeof up_at, "%.3f", static_cast<double>(l.last_up_ns) / 1e6);
      std::printf(
          "#   %14s  %5s  %5u  %10s  %10s  %10llu  %10llu  %9llu  %9llu\n", l.name.c_str(), l.link_up ? "up" : "down",
          l.downs, down_at, up_at, static_cast<unsigned long long>(l.up.link_down_drops + l.down.link_down_lost),
          static_cast<unsigned long long>(l.down.link_down_drops + l.up.link_down_lost),
          static_cast<unsigned long long>(l.up.rehashed_flows), static_cast<unsigned long long>(l.up.rehashed_frames));
    }
  }
  if (const QueueSeries& q = lab->queue_series(); q.on())
    std::printf("#\n# queue series: %zu samples, one each %g ms of the timed run%s: in the JSON (fabric.series)\n",
                q.samples(), q.sample_ms(),
                q.dropped() != 0 ? (", " + std::to_string(q.dropped()) + " more not kept").c_str() : "");
  if (s.failure.empty())
    std::printf("# every port's first-transmission payload %s the schedules' bytes\n",
                matrix_ok ? "equals" : "DIFFERS FROM");
  if (!s.failure.empty()) std::printf("# FAILED: %s\n", s.failure.c_str());
  return wrong + arrival == 0 && s.failure.empty();
}

namespace {

// One direction of a leaf-spine link: its egress queue's counters.
nlohmann::json link_direction_json(const engine::SwitchPortCounters& c) {
  return {{"tx_frames", c.tx_frames},
          {"tx_bytes", c.tx_bytes},
          {"tail_drops", c.tail_drops},
          {"ecn_marked", c.ecn_marked},
          {"queue_max_bytes", c.queue_max_bytes},
          {"pfc_pause_sent", c.pfc_pause_sent},
          {"pfc_pause_received", c.pfc_pause_received},
          {"pfc_paused_ns", c.pfc_paused_ns},
          {"pfc_watchdog_trips", c.pfc_watchdog_trips},
          {"pfc_watchdog_drops", c.pfc_watchdog_drops},
          {"unrouted", c.unrouted},
          {"link_down_drops", c.link_down_drops},
          {"link_down_lost", c.link_down_lost},
          {"rehashed_frames", c.rehashed_frames},
          {"rehashed_flows", c.rehashed_flows},
          {"rehash_untracked", c.rehash_untracked}};
}

// The topology and, for a leaf-spine, every leaf-spine link by name: `up` is the leaf's queue
// towards the spine, `down` the spine's towards the leaf.
// The queue series (QueueSeries): its times, each rank port's queue and, on a leaf-spine, each
// link's two queues, named as the links are; null when off.
nlohmann::json series_json(const CollLab& lab) {
  const QueueSeries& q = lab.queue_series();
  if (!q.on()) return nullptr;
  const LabConfig& c = lab.config();
  nlohmann::json ports = nlohmann::json::array();
  for (std::uint32_t r = 0; r < c.ranks; ++r)
    ports.push_back({{"rank", r}, {"queue_bytes", q.column(q.rank_column(r))}});
  nlohmann::json links = nlohmann::json::array();
  if (c.leaves >= 2)
    for (std::uint32_t l = 0; l < c.leaves; ++l)
      for (std::uint32_t s = 0; s < c.spines; ++s)
        links.push_back({{"name", "leaf" + std::to_string(l) + "-spine" + std::to_string(s)},
                         {"up_queue_bytes", q.column(q.link_column(l, s, true))},
                         {"down_queue_bytes", q.column(q.link_column(l, s, false))}});
  return {{"sample_ms", q.sample_ms()}, {"samples", q.samples()}, {"samples_dropped", q.dropped()},
          {"time_ms", q.time_ms()},     {"ports", ports},         {"links", links}};
}

nlohmann::json fabric_json(const CollLab& lab) {
  const LabConfig& c = lab.config();
  if (c.leaves == 0) return {{"topology", "star"}, {"series", series_json(lab)}};
  nlohmann::json links = nlohmann::json::array();
  for (const engine::FabricLinkCounters& l : lab.fabric_links())
    links.push_back(apps::fabric_link_json(l, link_direction_json(l.up), link_direction_json(l.down)));
  return {{"topology", "leafspine"},
          {"leaves", c.leaves},
          {"spines", c.spines},
          {"ranks_per_leaf", c.ranks / c.leaves},
          {"uplink_gbps", c.uplink_gbps},
          {"ecmp_hash", c.ecmp.describe()},
          {"ecmp_rehash", "resilient"},
          {"link_failures", apps::link_failures_json(c.link_failures)},
          {"link_specs", apps::link_specs_json(c.links)},
          {"links", links},
          {"series", series_json(lab)}};
}

}  // namespace

EndpointTotals endpoint_totals(const std::vector<const engine::RcEndpoint*>& eps) {
  EndpointTotals t;
  const engine::CounterSums sums = apps::counter_sums(eps);
  t.hw_counters = apps::hw_counters_json(sums);
  t.drop_reasons = apps::drop_reasons_json(sums);
  for (const engine::RcEndpoint* e : eps) {
    t.tx_alloc_failures += e->counters().tx_alloc_failures;
    t.tx_backlog_drops += e->counters().tx_backlog_drops;
  }
  return t;
}

void add_totals(EndpointTotals& a, const EndpointTotals& b) {
  const auto add = [](nlohmann::json& into, const nlohmann::json& from) {
    for (const auto& [k, v] : from.items())
      if (v.is_number_unsigned()) into[k] = into.value(k, std::uint64_t{0}) + v.get<std::uint64_t>();
  };
  add(a.hw_counters, b.hw_counters);
  add(a.drop_reasons, b.drop_reasons);
  a.tx_alloc_failures += b.tx_alloc_failures;
  a.tx_backlog_drops += b.tx_backlog_drops;
}

engine::Status write_json(const Options& o, const RunSummary& s, const CollLab* lab, const FabricObserver* obs,
                          const EndpointTotals& totals, const nlohmann::json& mpi) {
  nlohmann::json j;
  j["config"] = {{"pattern", pattern_name(o.pattern)},
                 {"algo", o.algo == Algo::kRing ? "ring" : "halving-doubling"},
                 {"ranks", o.ranks},
                 {"workers", o.workers},
                 {"type", dtype_name(o.dtype)},
                 {"root", rooted(o.pattern) ? static_cast<int>(o.root) : -1},
                 {"iters", o.iters},
                 {"warmup_iters", o.warmup_iters},
                 {"chunk_bytes", o.chunk_bytes},
                 {"buffers", o.buffers},
                 {"qps_per_peer", o.qps_per_peer},
                 {"udp_sport", o.udp_sport.describe()},
                 {"mtu", o.mtu},
                 {"recovery", o.recovery == rc::Recovery::kGoBackN ? "gbn" : "sr"},
                 {"cc", o.cc},
                 {"egress_gbps", o.egress_gbps},
                 {"buffer_bytes", o.sw.buffer_bytes},
                 {"pfc", o.sw.pfc},
                 {"loss", o.impairment.loss},
                 {"duplicate", o.impairment.duplicate},
                 {"reorder", o.impairment.reorder},
                 {"seed", o.seed}};
  nlohmann::json results = nlohmann::json::array();
  std::uint64_t wrong = 0;
  for (const SizeResult& r : s.sizes) {
    nlohmann::json e;
    e["size"] = r.plan.size_bytes;
    e["requested_bytes"] = r.requested_bytes;
    e["count"] = r.plan.count;
    e["type"] = dtype_name(o.dtype);
    e["redop"] = reduces(o.pattern) ? "sum" : "none";
    e["busbw_factor"] = r.plan.busbw_factor;
    // The top-level figures are out-of-place's (nccl-tests' first columns), in-place's alone.
    const PlacementResult& top = r.out_of_place.ran ? r.out_of_place : r.in_place;
    e["time_us"] = top.time_us;
    e["algbw_gbps"] = top.algbw_gbytes * 8;
    e["busbw_gbps"] = top.busbw_gbytes * 8;
    e["wrong"] =
        r.out_of_place.wrong + r.in_place.wrong + r.out_of_place.wrong_on_arrival + r.in_place.wrong_on_arrival;
    wrong += e["wrong"].get<std::uint64_t>();
    if (r.out_of_place.ran) e["out_of_place"] = place_json(r.out_of_place);
    if (r.in_place.ran) e["in_place"] = place_json(r.in_place);
    results.push_back(e);
  }
  j["results"] = results;
  if (!o.scenario.name.empty()) j["scenario"] = {{"name", o.scenario.name}, {"file", o.scenario.file}};
  const std::uint32_t n = o.ranks;
  nlohmann::json measured = nlohmann::json::array(), expected = nlohmann::json::array();
  for (std::uint32_t a = 0; a < n; ++a) {
    nlohmann::json m = nlohmann::json::array(), x = nlohmann::json::array();
    for (std::uint32_t b = 0; b < n; ++b) {
      if (obs != nullptr) m.push_back(obs->matrix(a, b));
      x.push_back(s.schedule_matrix[std::size_t{a} * n + b]);
    }
    measured.push_back(m);
    expected.push_back(x);
  }
  j["traffic_matrix"] = {{"unit", "payload bytes of first transmissions, row sends to column"}, {"schedule", expected}};
  // The measured matrix and the ports are the lab switch's; in MPI mode the fabric is outside.
  if (obs != nullptr) j["traffic_matrix"]["measured"] = measured;
  nlohmann::json ports = nlohmann::json::array();
  for (std::uint32_t r = 0; lab != nullptr && obs != nullptr && r < n; ++r) {
    const engine::SwitchPortCounters& c = lab->rank_port(r);
    const PortTraffic& in = obs->ingress(r);
    const PortTraffic& out = obs->egress(r);
    const engine::ImpairmentCounters imp = lab->links().impairment(r, 0);
    std::uint64_t sched = 0;
    for (std::uint32_t b = 0; b < n; ++b) sched += s.schedule_matrix[std::size_t{r} * n + b];
    ports.push_back({{"rank", r},
                     {"ingress_frames", in.frames},
                     {"ingress_bytes", in.bytes},
                     {"ingress_payload_first_bytes", in.payload_first},
                     {"ingress_payload_retx_bytes", in.payload_retx},
                     {"schedule_payload_bytes", sched},
                     {"egress_frames", out.frames},
                     {"egress_bytes", out.bytes},
                     {"egress_payload_bytes", out.payload_first + out.payload_retx},
                     {"switch",
                      {{"rx_frames", c.rx_frames},
                       {"tx_frames", c.tx_frames},
                       {"tx_bytes", c.tx_bytes},
                       {"tail_drops", c.tail_drops},
                       {"tx_drops", c.tx_drops},
                       {"ecn_marked", c.ecn_marked},
                       {"queue_max_bytes", c.queue_max_bytes},
                       {"pfc_pause_sent", c.pfc_pause_sent},
                       {"pfc_resume_sent", c.pfc_resume_sent},
                       {"pfc_pause_received", c.pfc_pause_received},
                       {"pfc_paused_ns", c.pfc_paused_ns},
                       {"rule_drops", c.rule_drops},
                       {"pfc_watchdog_trips", c.pfc_watchdog_trips},
                       {"pfc_watchdog_drops", c.pfc_watchdog_drops},
                       {"slow_receiver_pauses", c.slow_receiver_pauses},
                       {"slow_receiver_max_bytes", c.slow_receiver_max_bytes}}},
                     {"link_impairment",
                      {{"frames", imp.frames},
                       {"dropped", imp.dropped + imp.burst_dropped},
                       {"duplicated", imp.duplicated},
                       {"reordered", imp.reordered}}}});
  }
  if (lab != nullptr) j["ports"] = ports;
  if (lab != nullptr) j["fabric"] = fabric_json(*lab);
  j["hw_counters"] = totals.hw_counters;
  j["endpoints"] = {{"tx_alloc_failures", totals.tx_alloc_failures}, {"tx_backlog_drops", totals.tx_backlog_drops}};
  j["drop_reasons"] = totals.drop_reasons;
  if (!mpi.is_null()) j["mpi"] = mpi;
  j["wrong"] = wrong;
  j["failure"] = s.failure;
  j["ok"] = wrong == 0 && s.failure.empty();
  apps::stamp_report(j);
  return apps::write_text_file(o.json, j.dump(1) + "\n");
}

}  // namespace droce::coll
