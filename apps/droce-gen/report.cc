// droce-gen's end-of-run report (see report.h).
#include "apps/droce-gen/report.h"

#include <droce/engine/workers/worker_group.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/common/capture_report.h"
#include "apps/common/counters_json.h"
#include "apps/common/output_file.h"
#include "apps/droce-gen/group_report.h"
#include "apps/droce-gen/mix_report.h"
#include "apps/droce-gen/split_report.h"
#include "apps/droce-gen/verdict.h"

namespace droce::gen {

namespace {

using ull = unsigned long long;

// Sums of the QPs' counters (both ends here) and of the endpoints' counters, each endpoint once.
struct Counters {
  std::uint64_t retx = 0, naks_sent = 0, naks_rcvd = 0, rnr = 0, timeouts = 0, dup_req = 0, oos = 0;
  std::uint64_t cnps_sent = 0, cnps_rcvd = 0, ecn_marked = 0, cnp_handled = 0, cnp_ignored = 0;
  std::uint64_t pfc_frames = 0, pfc_paused_ns = 0, zc = 0, copied_tx = 0, inlined = 0;
  std::uint64_t pfc_wd_trips = 0, pfc_wd_restores = 0, pfc_wd_ignored = 0;  // the endpoints' PFC watchdog
  std::uint64_t atomics_executed = 0, atomic_replays = 0;
  std::uint64_t adaptive_timeouts = 0, tail_probes = 0, spurious = 0;  // of the loss-recovery timer
  std::uint64_t gb0_discarded = 0;  // go-back-0: partial messages the responders threw away
};

void add_qp(Counters& s, engine::RcEndpoint* ep, std::uint32_t qpn) {
  const rc::RcCounters& c = ep->qp(qpn)->counters();
  s.retx += c.retransmitted_packets;
  s.naks_sent += c.naks_sent;
  s.naks_rcvd += c.naks_received;
  s.rnr += c.rnr_naks_received;
  s.timeouts += c.local_ack_timeout_err;
  s.dup_req += c.duplicate_request;
  s.oos += c.out_of_sequence;
  s.atomics_executed += c.atomics_executed;
  s.atomic_replays += c.atomic_replays;
  s.adaptive_timeouts += c.adaptive_timeouts;
  s.tail_probes += c.tail_probes;
  s.spurious += c.spurious_retransmits;
  s.gb0_discarded += c.gb0_messages_discarded;
}

Counters counters_of(Setup& st) {
  Counters s;
  for (auto& j : st.jobs) {
    for (auto& q : j->requesters()) add_qp(s, q.ep, q.qpn);
    for (auto& r : j->responders()) add_qp(s, r.ep, r.qpn);
    for (engine::RcEndpoint* ep : j->endpoints()) {
      const engine::EndpointCounters& c = ep->counters();
      s.cnps_sent += c.np_cnp_sent;
      s.cnps_rcvd += c.rp_cnp_handled + c.rp_cnp_ignored;
      s.ecn_marked += c.np_ecn_marked_roce_packets;
      s.cnp_handled += c.rp_cnp_handled;
      s.cnp_ignored += c.rp_cnp_ignored;
      s.pfc_frames += c.pfc_pause_frames;
      s.pfc_paused_ns += c.pfc_paused_ns;
      s.pfc_wd_trips += c.pfc_watchdog_trips;
      s.pfc_wd_restores += c.pfc_watchdog_restores;
      s.pfc_wd_ignored += c.pfc_watchdog_ignored;
      s.zc += c.tx_zero_copy_frames;
      s.copied_tx += c.tx_payload_bytes_copied;
      s.inlined += c.tx_inline_frames;
    }
  }
  return s;
}

// Each worker's share: its QPs, what it verified, its goodput, and (workers of an engine worker
// group) the frames its steering handed over.
nlohmann::json workers_json(const Options& o, Setup& st, const RunOutcome& r) {
  const double secs = r.secs;
  nlohmann::json a = nlohmann::json::array();
  for (auto& j : st.jobs) {
    const Totals& t = r.job_totals[j->index()];
    const std::uint16_t w = j->index();
    nlohmann::json e = {{"index", w},
                        {"lcore", j->lcore()},
                        {"qps", share_of(o.qps, w, o.workers)},
                        {"active_qps", share_of(o.active(), w, o.workers)},
                        {"messages", t.messages},
                        {"bytes", t.bytes},
                        {"goodput_gbps", secs > 0 ? static_cast<double>(t.bytes) * 8.0 / secs / 1e9 : 0.0},
                        {"lost", t.lost},
                        {"duplicated", t.duplicated},
                        {"out_of_order", t.out_of_order},
                        {"corrupted", t.corrupted},
                        {"errors", t.errors}};
    if (j->worker() != nullptr) {
      e["rx_steered_in_software"] = j->worker()->steering().rx_steered_in_software;
      e["rx_steered_in"] = j->worker()->steering().rx_steered_in;
    }
    a.push_back(e);
  }
  return a;
}

double client_gbps(const ClientResult& c) {
  return c.secs > 0 ? static_cast<double>(c.t.bytes) * 8.0 / c.secs / 1e9 : 0;
}

// A server of several clients: each client's share, in the order they connected.
nlohmann::json clients_json(const RunOutcome& r) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t k = 0; k < r.clients.size(); ++k) {
    const ClientResult& c = r.clients[k];
    a.push_back({{"index", k},
                 {"peer_ip", c.peer_ip},
                 {"first_qp", c.first_qp},
                 {"qps", c.qps},
                 {"recovery", recovery_name(c.recovery)},
                 {"messages", c.t.messages},
                 {"bytes", c.t.bytes},
                 {"duration_s", c.secs},
                 {"goodput_gbps", client_gbps(c)},
                 {"lost", c.t.lost},
                 {"duplicated", c.t.duplicated},
                 {"out_of_order", c.t.out_of_order},
                 {"corrupted", c.t.corrupted},
                 {"errors", c.t.errors},
                 {"problem", c.problem},
                 {"verdict", c.ok() ? "pass" : "fail"}});
  }
  return a;
}

// Whether the QPs ran the adaptive RTO: go-back-0's have the IBTA timer alone (rc::QpAttr).
bool adaptive_rto_on(const Options& o, const Setup& st) {
  return o.adaptive_rto && st.recovery != rc::Recovery::kGoBack0;
}

// The loss-recovery timer (docs/transport.md): its counts, and each requester QP's timeout and
// round trip as the run left them (a server's report has no requester: empty lists).
nlohmann::json loss_recovery_json(const Options& o, Setup& st, const Counters& c) {
  nlohmann::json rto = nlohmann::json::array(), pto = nlohmann::json::array(), srtt = nlohmann::json::array(),
                 min_rtt = nlohmann::json::array();
  if (!st.server)
    for (std::uint32_t i = 0; i < o.qps; ++i) {
      const Requester& q = st.requester(i);
      const rc::RcQp* qp = q.ep->qp(q.qpn);
      rto.push_back(qp->rto_ns() / 1000);
      pto.push_back(qp->pto_ns() / 1000);
      srtt.push_back(qp->srtt_ns() / 1000);
      min_rtt.push_back(qp->min_rtt_ns() / 1000);
    }
  return {{"adaptive_rto", adaptive_rto_on(o, st) ? "on" : "off"},
          {"ack_timeouts", c.timeouts},
          {"adaptive_timeouts", c.adaptive_timeouts},
          {"tail_probes", c.tail_probes},
          {"spurious_retransmits", c.spurious},
          {"gb0_messages_discarded", c.gb0_discarded},
          {"rto_us", rto},
          {"pto_us", pto},
          {"srtt_us", srtt},
          {"min_rtt_us", min_rtt}};
}

// Each QP's first PSNs as connected (docs/hardening.md, "First PSNs"): ours and the peer's, from
// our end of the QP (the requester's in loopback and as client, the responder's as server); and
// the R_Key of the responder's buffer that the QP's WRITEs and READs name (docs/hardening.md, its
// random key part; 0 where the client was told none).
nlohmann::json first_psns_json(const Options& o, Setup& st) {
  nlohmann::json a = nlohmann::json::array();
  for (std::uint32_t i = 0; i < o.qps; ++i) {
    engine::RcEndpoint& ep = st.server ? *st.responder(i).ep : *st.requester(i).ep;
    const std::uint32_t qpn = st.server ? st.responder(i).qpn : st.requester(i).qpn;
    const rc::RcQp* qp = ep.qp(qpn);
    if (qp == nullptr) continue;  // not created: the run ended in its set-up
    const std::uint32_t rkey = st.server ? st.responder(i).mr.rkey : st.requester(i).rkey;
    a.push_back({{"qpn", qpn}, {"send", qp->attr().sq_psn}, {"receive", qp->attr().rq_psn}, {"rkey", rkey}});
  }
  return a;
}

// The offered load against what was achieved: the schedule's messages (due in the measured time)
// and the mean size give the offered rates; the verified messages the achieved ones.
struct LoadFigures {
  bool open = false;
  double configured = 0, offered = 0, offered_gbps = 0, achieved = 0, achieved_gbps = 0;  // msg/s, Gb/s
};

LoadFigures load_figures(const Options& o, const Setup& st, const RunOutcome& r) {
  LoadFigures f;
  f.open = o.offered_msg_rate() > 0 && !st.server;
  f.configured = f.open ? o.offered_msg_rate() : 0;
  if (r.secs > 0) {
    f.offered = static_cast<double>(r.load.scheduled) / r.secs;
    f.offered_gbps = f.offered * o.mean_size() * 8 / 1e9;
    f.achieved = static_cast<double>(r.t.messages) / r.secs;
    f.achieved_gbps = static_cast<double>(r.t.bytes) * 8 / r.secs / 1e9;
  }
  return f;
}

double gbps_of(const StepResult& r) { return r.secs > 0 ? static_cast<double>(r.t.bytes) * 8.0 / r.secs / 1e9 : 0; }
double mmps_of(const StepResult& r) { return r.secs > 0 ? static_cast<double>(r.t.messages) / r.secs / 1e6 : 0; }

// A sweep's rows, as perftest's -a and nccl-tests print them: one per size, smallest first, each
// with its own latency (post or due to completion) and its own peak and minimum interval.
void print_sweep_table(const Options& o, const Setup& st, const RunOutcome& r) {
  char each[64];
  if (o.count != 0)
    std::snprintf(each, sizeof each, "%llu messages", static_cast<ull>(o.count));
  else
    std::snprintf(each, sizeof each, "%g s", o.duration_s);
  std::printf(" sweep: %zu of %zu sizes, each %s%s\n", r.steps.size(), o.sizes.size(), each,
              o.warmup_s > 0 ? " after its own warm-up" : "");
  std::printf(" %-11s %-13s %-20s %-15s %-11s %-11s %s\n", "#bytes", "#iterations", "BW average[Gb/sec]",
              "MsgRate[Mpps]", "p50[us]", "p99[us]", "BW peak/min[Gb/sec]");
  for (const StepResult& s : r.steps) {
    char p50[32] = "-", p99[32] = "-", peak[48] = "-";
    if (!st.server && s.hist.count() != 0) {
      std::snprintf(p50, sizeof p50, "%.2f", static_cast<double>(s.hist.percentile(0.5)) / 1e3);
      std::snprintf(p99, sizeof p99, "%.2f", static_cast<double>(s.hist.percentile(0.99)) / 1e3);
    }
    if (s.interval_bw.intervals != 0)
      std::snprintf(peak, sizeof peak, "%.3f/%.3f", s.interval_bw.peak_gbps, s.interval_bw.min_gbps);
    std::printf(" %-11u %-13llu %-20.3f %-15.6f %-11s %-11s %s\n", s.size, static_cast<ull>(s.t.messages), gbps_of(s),
                mmps_of(s), p50, p99, peak);
  }
}

// A sweep's verdict: --expect-gbps judges its largest size (bandwidth is a large message's
// figure), --expect-p99-us its smallest (latency a small one's); a size that did not run fails.
Verdict judge_sweep(const Options& o, const RunOutcome& r) {
  Verdict v;
  if (o.expect_gbps == 0 && o.expect_p99_us == 0) return v;
  const StepResult* largest = r.steps.empty() || r.steps.back().size != o.sizes.back() ? nullptr : &r.steps.back();
  const StepResult* smallest = r.steps.empty() ? nullptr : &r.steps.front();
  Options gbps_only = o, p99_only = o;
  gbps_only.expect_p99_us = 0;
  p99_only.expect_gbps = 0;
  if (o.expect_gbps > 0)
    combine(v, largest == nullptr
                   ? Verdict{true, false, "size " + std::to_string(o.sizes.back()) + " did not run (--expect-gbps)"}
                   : judge(gbps_only, gbps_of(*largest), 0, "size " + std::to_string(largest->size) + ": "));
  if (o.expect_p99_us > 0 && smallest != nullptr)
    combine(v, judge(p99_only, 0, smallest->hist.percentile(0.99), "size " + std::to_string(smallest->size) + ": "));
  v.judged = true;
  return v;
}

// A sweep's results[]: one object per size run, in order, with the figures a single-size run
// has at the top level.
nlohmann::json results_json(const Options& o, const RunOutcome& r) {
  nlohmann::json a = nlohmann::json::array();
  for (const StepResult& s : r.steps)
    a.push_back({{"size", s.size},
                 {"messages", s.t.messages},
                 {"bytes", s.t.bytes},
                 {"duration_s", s.secs},
                 {"goodput_gbps", gbps_of(s)},
                 {"msg_rate_mps", mmps_of(s)},
                 {"interval_goodput_gbps", interval_json(o, s.interval_bw)},
                 {"latency_ns", percentiles_json(s.hist)},
                 {"service_ns", percentiles_json(s.service)},
                 {"lost", s.t.lost},
                 {"duplicated", s.t.duplicated},
                 {"out_of_order", s.t.out_of_order},
                 {"corrupted", s.t.corrupted},
                 {"errors", s.t.errors}});
  return a;
}

// --drop-rule as given: "every:N", "ip-id:0xBB", both joined by a comma, or "" for none.
std::string drop_rule_text(const engine::DropRuleConfig& r) {
  std::string t;
  if (r.every_nth != 0) t = "every:" + std::to_string(r.every_nth);
  if (r.ip_id_low_byte >= 0) {
    char b[24];
    std::snprintf(b, sizeof(b), "ip-id:0x%02x", static_cast<unsigned>(r.ip_id_low_byte) & 0xFFu);
    t += (t.empty() ? "" : ",") + std::string(b);
  }
  return t;
}

apps::CaptureOptions capture_options(const Options& o) { return {o.pcap, o.pcap_snaplen, o.pcap_max_mb, o.pcap_files}; }

void print_text(const Options& o, Setup& st, const RunOutcome& r, const Counters& c, double gbps, double mmps) {
  const Totals& t = r.t;
  const engine::LatencyHistogram& hist = r.hist;
  const LabImpairment lab = st.impaired();
  std::printf("---------------------------------------------------------------------------------------\n");
  // The QPs' line names idle QPs and workers only when there are some (a plain run reads as before).
  std::string qps = std::to_string(o.qps) + " QP(s)";
  if (o.active() != o.qps) qps += " (" + std::to_string(o.active()) + " active)";
  if (o.clients > 1) qps += " for " + std::to_string(o.clients) + " clients";
  if (o.workers > 1) qps += " on " + std::to_string(o.workers) + " workers";
  if (o.split > 1) qps += ", each message split over " + std::to_string(o.split);
  // Selective repeat named when in use (a go-back-N run reads as before).
  if (st.recovery == rc::Recovery::kSelectiveRepeat)
    qps += ", selective repeat (" + std::to_string(o.sr_bdp_pkts) + " pkts in flight)";
  if (st.recovery == rc::Recovery::kGoBack0)
    qps += ", go-back-0 (" + std::to_string(c.gb0_discarded) + " partial messages discarded)";
  // The drop rule named when given (a run without one reads as before).
  const std::string rule = o.drop_rule.any() ? " drop rule " + drop_rule_text(o.drop_rule) : "";
  // A mix named by its ops and weights (a one-op run reads as before).
  // Flow groups: each its own op and sizes, in their rows below; the run's row is all of them.
  const std::string ops = !o.groups.empty() ? std::to_string(o.groups.size()) + " flow groups"
                          : o.mix.empty()   ? op_name(o.op)
                                            : "mix " + mix_text(o);
  std::printf(" droce-gen %s: RC %s, %s, MTU %u, inflight %u, impairment loss %g dup %g reorder %g%s (%s)\n",
              mode_name(o.mode), ops.c_str(), qps.c_str(), o.mtu, o.inflight, o.loss, o.duplicate, o.reorder,
              rule.c_str(), o.impair_direction.c_str());
  if (o.sweep) {
    print_sweep_table(o, st, r);
  } else {
    std::printf(" #bytes     #iterations    BW average[Gb/sec]   MsgRate[Mpps]\n");
    std::printf(" %-10s %-14llu %-20.3f %.6f\n", o.groups.empty() ? workload_sizes_text(o).c_str() : "groups",
                static_cast<ull>(t.messages), gbps, mmps);
  }
  // Peak and minimum beside the average: whole --interval intervals after the warm-up (a sweep:
  // each size's, in its row).
  const IntervalBandwidth& bw = r.interval_bw;
  if (!o.sweep && bw.intervals != 0)
    std::printf(" BW per interval [Gb/sec]: peak %.3f  min %.3f  (%u full intervals of %.2f s after the warm-up)\n",
                bw.peak_gbps, bw.min_gbps, bw.intervals, o.interval_s);
  else if (!o.sweep)
    std::printf(" BW per interval [Gb/sec]: no full %.2f s interval after the warm-up (--interval)\n", o.interval_s);
  if (const LoadFigures f = load_figures(o, st, r); f.open) {
    // Open loop: latency counts from when a message was due, so a backlog shows in it.
    const LoadCounters& l = r.load;
    std::printf(" offered load: %s arrivals, bursts of %u, %.0f msg/s configured\n", arrivals_name(o.arrivals), o.burst,
                f.configured);
    std::printf("   offered %.0f msg/s (%.3f Gb/s), achieved %.0f msg/s (%.3f Gb/s)\n", f.offered, f.offered_gbps,
                f.achieved, f.achieved_gbps);
    std::printf(
        "   due %llu: posted %llu (late %llu: over %llu us after due), shed %llu (unposted %llu ms after due), "
        "left at the end %llu\n",
        static_cast<ull>(l.scheduled), static_cast<ull>(l.posted), static_cast<ull>(l.late),
        static_cast<ull>(kLateAfterNs / 1000), static_cast<ull>(l.shed), static_cast<ull>(kShedAfterNs / 1'000'000),
        static_cast<ull>(l.backlog));
    std::printf(" latency ns (due to completion): %s\n", percentiles_text(hist).c_str());
    std::printf(" service ns (post to completion): %s\n", percentiles_text(r.service).c_str());
  } else if (!st.server && !o.sweep) {
    // Flow groups: an open-loop group's messages count from when they were due, as above.
    std::printf(" latency ns (%s): %s\n",
                o.groups.empty() ? "post to completion" : "all groups, due (closed loop: post) to completion",
                percentiles_text(hist).c_str());
  }
  print_mix(o, r);
  print_split(o, st);
  print_groups(o, st, r);
  std::printf(" retransmitted %llu  naks sent %llu / received %llu  rnr naks %llu  ack timeouts %llu\n",
              static_cast<ull>(c.retx), static_cast<ull>(c.naks_sent), static_cast<ull>(c.naks_rcvd),
              static_cast<ull>(c.rnr), static_cast<ull>(c.timeouts));
  // The loss-recovery timer's share of the recovery; the first requester QP's timer as it ended.
  std::printf(" loss recovery: adaptive RTO %s  tail probes %llu  adaptive timeouts %llu  spurious retransmits %llu",
              adaptive_rto_on(o, st) ? "on" : "off", static_cast<ull>(c.tail_probes),
              static_cast<ull>(c.adaptive_timeouts), static_cast<ull>(c.spurious));
  if (!st.server && o.qps != 0) {
    const Requester& q = st.requester(0);
    const rc::RcQp* qp = q.ep->qp(q.qpn);
    std::printf("  QP 0: rto %llu us  srtt %llu us  min rtt %llu us", static_cast<ull>(qp->rto_ns() / 1000),
                static_cast<ull>(qp->srtt_ns() / 1000), static_cast<ull>(qp->min_rtt_ns() / 1000));
  }
  std::printf("\n");
  // Where the drops happened: a WRITE client's rx drops are ACKs, its tx drops the data.
  std::printf(
      " impairment: dropped %llu (bursts and drop rule included): %llu received here, %llu sent from here  "
      "by the drop rule %llu  duplicated %llu  reordered %llu\n",
      static_cast<ull>(lab.dropped), static_cast<ull>(lab.dropped_rx), static_cast<ull>(lab.dropped_tx),
      static_cast<ull>(lab.rule_dropped), static_cast<ull>(lab.duplicated), static_cast<ull>(lab.reordered));
  std::printf(" verification%s: lost %llu  duplicated %llu  out of order %llu  corrupted %llu  errors %llu\n",
              o.mode == Mode::kClient && o.connect == Connect::kTcp ? " (both ends)" : "", static_cast<ull>(t.lost),
              static_cast<ull>(t.duplicated), static_cast<ull>(t.out_of_order), static_cast<ull>(t.corrupted),
              static_cast<ull>(t.errors));
  if (r.atomic_checked)
    std::printf(" atomic counters at the responder: %llu for %llu operations completed (each executed once: equal)\n",
                static_cast<ull>(r.atomic_counter), static_cast<ull>(r.atomic_completed));
  std::printf(" set-up: %u QP(s) created in %.3f s, connected in %.3f s\n", o.qps, st.create_qps_s, st.connect_s);
  std::printf(" zero-copy TX frames %llu, inline TX frames (payload <= 256 B) %llu, payload bytes copied on TX %llu\n",
              static_cast<ull>(c.zc), static_cast<ull>(c.inlined), static_cast<ull>(c.copied_tx));
  // Several workers: each one's share (the verification above covers them all; a client's
  // per-worker figures are its own end's).
  if (st.jobs.size() > 1) {
    for (auto& j : st.jobs) {
      const Totals& w = r.job_totals[j->index()];
      const std::uint16_t i = j->index();
      std::printf(" worker %u (lcore %u): %u QP(s), %u active, %llu messages, %.3f Gb/s\n", static_cast<unsigned>(i),
                  j->lcore(), share_of(o.qps, i, o.workers), share_of(o.active(), i, o.workers),
                  static_cast<ull>(w.messages), r.secs > 0 ? static_cast<double>(w.bytes) * 8.0 / r.secs / 1e9 : 0.0);
    }
  }
  // Several clients: each one's share and its verdict (the lines above are the totals).
  for (std::size_t k = 0; k < r.clients.size(); ++k) {
    const ClientResult& cl = r.clients[k];
    std::printf(
        " client %zu (%s, QPs %u-%u): %llu messages, %.3f Gb/s, lost %llu  duplicated %llu  out of order %llu  "
        "corrupted %llu  errors %llu: %s%s%s\n",
        k, cl.peer_ip.empty() ? "-" : cl.peer_ip.c_str(), cl.first_qp, cl.first_qp + cl.qps - 1,
        static_cast<ull>(cl.t.messages), client_gbps(cl), static_cast<ull>(cl.t.lost),
        static_cast<ull>(cl.t.duplicated), static_cast<ull>(cl.t.out_of_order), static_cast<ull>(cl.t.corrupted),
        static_cast<ull>(cl.t.errors), cl.ok() ? "ok" : "FAILED", cl.problem.empty() ? "" : " (",
        cl.problem.empty() ? "" : (cl.problem + ")").c_str());
  }
  // What a capture kept: frames cut to the snap length keep their headers, not their payload.
  if (!o.pcap.empty()) std::printf(" %s\n", apps::capture_line(capture_options(o), st.capture).c_str());
  std::printf("---------------------------------------------------------------------------------------\n");
}

}  // namespace

// Peak and minimum goodput over the full intervals; null figures when the run had none.
nlohmann::json interval_json(const Options& o, const IntervalBandwidth& bw) {
  nlohmann::json j = {{"interval_s", o.interval_s}, {"intervals", bw.intervals}};
  j["peak"] = bw.intervals != 0 ? nlohmann::json(bw.peak_gbps) : nlohmann::json();
  j["min"] = bw.intervals != 0 ? nlohmann::json(bw.min_gbps) : nlohmann::json();
  return j;
}

std::string percentiles_text(const engine::LatencyHistogram& h) {
  char b[200];
  std::snprintf(b, sizeof(b), "min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu", static_cast<ull>(h.min()),
                static_cast<ull>(h.percentile(0.5)), static_cast<ull>(h.percentile(0.9)),
                static_cast<ull>(h.percentile(0.99)), static_cast<ull>(h.percentile(0.999)), static_cast<ull>(h.max()));
  return b;
}

nlohmann::json percentiles_json(const engine::LatencyHistogram& h) {
  return {{"min", h.min()},
          {"p50", h.percentile(0.5)},
          {"p90", h.percentile(0.9)},
          {"p99", h.percentile(0.99)},
          {"p999", h.percentile(0.999)},
          {"max", h.max()}};
}

int report(const Options& o, Setup& st, const RunOutcome& r, Feed& feed) {
  const Totals& t = r.t;
  const double secs = r.secs;
  const Counters c = counters_of(st);
  const double gbps = secs > 0 ? static_cast<double>(t.bytes) * 8.0 / secs / 1e9 : 0;
  const double mmps = secs > 0 ? static_cast<double>(t.messages) / secs / 1e6 : 0;
  print_text(o, st, r, c, gbps, mmps);
  if (!r.problem.empty()) std::fprintf(stderr, "droce-gen: %s\n", r.problem.c_str());
  const Verdict verdict = o.sweep ? judge_sweep(o, r) : judge(o, gbps, r.hist.percentile(0.99));

  // The --json document; the feed's final line takes its figures from it.
  if (!o.json.empty() || feed.on()) {
    const engine::LatencyHistogram& hist = r.hist;
    const LabImpairment lab = st.impaired();
    nlohmann::json j;
    j["messages"] = t.messages;
    j["bytes"] = t.bytes;
    j["duration_s"] = secs;
    j["goodput_gbps"] = gbps;
    j["msg_rate_mps"] = mmps;
    j["interval_goodput_gbps"] = interval_json(o, r.interval_bw);  // a sweep: each size's, in results[]
    if (o.sweep) j["results"] = results_json(o, r);
    if (!o.mix.empty()) j["mix"] = mix_json(o, r);
    if (o.split > 1) j["split"] = split_json(o, st);
    if (!o.groups.empty()) j["groups"] = groups_json(o, st, r);
    j["latency_ns"] = percentiles_json(hist);  // from the due time (closed loop: the posting)
    j["service_ns"] = percentiles_json(r.service);
    j["latency_cdf_ns"] = hist.cdf();  // [[ns, fraction <= ns], ...]: --plot draws it
    const LoadFigures f = load_figures(o, st, r);
    j["load"] = {{"open_loop", f.open},
                 {"arrivals", f.open ? arrivals_name(o.arrivals) : "closed"},
                 {"burst", o.burst},
                 {"configured_msg_rate", f.configured},
                 {"offered_msg_rate", f.offered},
                 {"offered_gbps", f.offered_gbps},
                 {"achieved_msg_rate", f.achieved},
                 {"achieved_gbps", f.achieved_gbps},
                 {"scheduled", r.load.scheduled},
                 {"posted", r.load.posted},
                 {"late", r.load.late},
                 {"late_after_ns", kLateAfterNs},
                 {"shed", r.load.shed},
                 {"shed_after_ns", kShedAfterNs},
                 {"backlog_at_end", r.load.backlog}};
    j["retransmitted_packets"] = c.retx;
    j["naks_sent"] = c.naks_sent;
    j["naks_received"] = c.naks_rcvd;
    j["rnr_naks"] = c.rnr;
    j["cnps_sent"] = c.cnps_sent;
    j["cnps_received"] = c.cnps_rcvd;
    j["np_ecn_marked_roce_packets"] = c.ecn_marked;
    j["rp_cnp_handled"] = c.cnp_handled;
    j["rp_cnp_ignored"] = c.cnp_ignored;
    j["pfc_pause_frames"] = c.pfc_frames;
    j["pfc_paused_ns"] = c.pfc_paused_ns;
    j["pfc_watchdog"] = {{"trips", c.pfc_wd_trips}, {"restores", c.pfc_wd_restores}, {"ignored", c.pfc_wd_ignored}};
    if (o.cc == "dcqcn") {
      nlohmann::json rates = nlohmann::json::array();
      if (!st.server)
        for (std::uint32_t i = 0; i < o.qps; ++i) {
          const Requester& q = st.requester(i);
          rates.push_back(q.ep->dcqcn_state(q.qpn)->rate_bps() / 1e9);
        }
      j["dcqcn_rate_gbps"] = rates;
    }
    j["lost"] = t.lost;
    j["duplicated"] = t.duplicated;
    j["out_of_order"] = t.out_of_order;
    j["corrupted"] = t.corrupted;
    j["errors"] = t.errors;
    j["ack_timeouts"] = c.timeouts;
    j["loss_recovery"] = loss_recovery_json(o, st, c);
    j["first_psns"] = first_psns_json(o, st);
    j["duplicate_requests"] = c.dup_req;
    j["out_of_sequence"] = c.oos;
    j["impairment"] = {{"direction", o.impair_direction}, {"drop_rule", drop_rule_text(o.drop_rule)},
                       {"dropped", lab.dropped},          {"dropped_rx", lab.dropped_rx},
                       {"dropped_tx", lab.dropped_tx},    {"rule_dropped", lab.rule_dropped},
                       {"duplicated", lab.duplicated},    {"reordered", lab.reordered}};
    j["peer_received"] = r.peer_received;
    if (!o.pcap.empty()) j["capture"] = apps::capture_json(capture_options(o), st.capture);
    if (r.atomic_checked) {
      j["atomic_counter"] = r.atomic_counter;
      j["atomic_completed"] = r.atomic_completed;
      j["atomics_executed"] = c.atomics_executed;
      j["atomic_replays"] = c.atomic_replays;
    }
    j["problem"] = r.problem;
    j["expect"] = {{"gbps", o.expect_gbps},
                   {"p99_us", o.expect_p99_us},
                   {"verdict", verdict_name(verdict)},
                   {"reason", verdict.reason}};
    j["recovery"] = recovery_name(st.recovery);  // in use (client/server: as the two agreed)
    j["connect"] = o.mode == Mode::kLoopback ? "loopback" : o.oob_port == 0 ? "static" : connect_name(o.connect);
    if (o.connect == Connect::kCm && o.mode != Mode::kLoopback)
      j["cm"] = apps::cm_counters_json(st.server ? *st.shards[0].rsp_ep : *st.shards[0].req_ep);
    // The same counters under the Linux RDMA drivers' names (docs/counters.md), what the endpoints
    // dropped and why, and which droce wrote the report when.
    const engine::CounterSums sums = apps::counter_sums(st.endpoints());
    j["hw_counters"] = apps::hw_counters_json(sums);
    j["drop_reasons"] = apps::drop_reasons_json(sums, lab.dropped);
    apps::stamp_report(j);
    j["workers"] = workers_json(o, st, r);
    if (!r.clients.empty()) j["clients"] = clients_json(r);
    j["setup_s"] = {{"create_qps", st.create_qps_s}, {"connect", st.connect_s}};
    j["config"] = {{"mode", mode_name(o.mode)},
                   {"op", op_name(o.op)},
                   {"size", o.sizes},
                   {"mtu", o.mtu},
                   {"qps", o.qps},
                   {"clients", o.clients},
                   {"qps_per_client", o.per_client_qps()},
                   {"active_qps", o.active()},
                   {"udp_sport", o.udp_sport.describe()},
                   {"workers", o.workers},
                   {"inflight", o.inflight},
                   {"duration_s", o.duration_s},
                   {"count", o.count},
                   {"sweep", o.sweep ? nlohmann::json{{"minbytes", o.min_bytes},
                                                      {"maxbytes", o.max_bytes},
                                                      {"stepfactor", o.step_factor},
                                                      {"stepbytes", o.step_bytes}}
                                     : nlohmann::json()},
                   {"warmup_s", o.warmup_s},
                   {"qp_timeout", o.qp_timeout},
                   {"retry_cnt", o.retry_cnt},
                   {"adaptive_rto", o.adaptive_rto},
                   {"recovery_asked", recovery_name(o.recovery)},
                   {"sr_bdp_packets", o.sr_bdp_pkts},
                   {"rate_gbps", o.rate_gbps},
                   {"msg_rate", o.msg_rate},
                   {"arrivals", arrivals_name(o.arrivals)},
                   {"burst", o.burst},
                   {"loss", o.loss},
                   {"duplicate", o.duplicate},
                   {"reorder", o.reorder},
                   {"burst_start", o.burst_start},
                   {"burst_frames", o.burst_frames},
                   {"seed", o.seed},
                   {"cc", o.cc},
                   {"preset", o.preset},
                   {"line_gbps", o.line_gbps},
                   {"local_ip", st.local_ip},
                   {"peer_ip", st.peer_ip},
                   {"dscp", o.dscp},
                   {"vlan", o.vlan_id},
                   {"pcp", o.vlan_pcp},
                   {"oob_port", o.oob_port},
                   {"connect", connect_name(o.connect)}};
    // A mix and weighted sizes named where they apply (a one-op, plain-size run's config as before).
    if (!o.groups.empty()) j["config"]["op"] = "groups";  // each group's op in groups[]
    if (!o.mix.empty()) {
      j["config"]["op"] = "mix";
      j["config"]["mix"] = mix_text(o);
    }
    if (o.split > 1) j["config"]["split"] = o.split;  // a run without --split: its config as before
    if (!o.size_weights.empty()) {
      nlohmann::json w = nlohmann::json::array();
      for (std::size_t i = 0; i < o.size_weights.size(); ++i) w.push_back(o.size_weights.weight(i));
      j["config"]["size_weights"] = w;
      j["size_messages"] = size_messages_json(o, r);
    }
    feed.final_line(o, st, j);
    if (Status s = o.json.empty() ? Status{} : droce::apps::write_text_file(o.json, j.dump(2) + "\n"); !s.ok()) {
      std::fprintf(stderr, "droce-gen: %s\n", s.message().c_str());
      return 1;
    }
  }
  const bool verified = t.errors == 0 && t.lost == 0 && t.duplicated == 0 && t.out_of_order == 0 && t.corrupted == 0;
  // A loopback run ended by Ctrl-C with nothing wrong in what it did: the shell's 128 + SIGINT, as
  // a program that ends on the signal, its report printed. A client or server cut short exits 1:
  // its peer's run was cut too.
  constexpr int kExitInterrupted = 130;
  if (o.mode == Mode::kLoopback && r.interrupted && verified && r.problem == "interrupted") return kExitInterrupted;
  const bool ok = verified && !r.unfinished && (t.messages > 0 || r.served_only) && r.problem.empty() && !r.interrupted;
  if (!ok)
    std::fprintf(stderr,
                 "droce-gen: FAILED: transport errors, verification failures or an incomplete run (see the report)\n");
  if (!ok) return 1;
  if (!verdict.pass) {
    std::fprintf(stderr, "droce-gen: BELOW THRESHOLD: %s\n", verdict.reason.c_str());
    return kExitBelowThreshold;
  }
  return 0;
}

}  // namespace droce::gen
