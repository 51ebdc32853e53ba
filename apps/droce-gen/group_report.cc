// droce-gen's per-group figures (see group_report.h).
#include "apps/droce-gen/group_report.h"

#include <algorithm>
#include <cstdio>

#include "apps/droce-gen/flow_group.h"
#include "apps/droce-gen/mix_report.h"
#include "apps/droce-gen/report.h"

namespace droce::gen {

namespace {

using ull = unsigned long long;

double gbps(std::uint64_t bytes, double secs) { return secs > 0 ? static_cast<double>(bytes) * 8.0 / secs / 1e9 : 0; }

// A group's window in ticks: from its start to its stop (none: the run's end).
struct Window {
  std::uint64_t from = 0, to = UINT64_MAX;
};
Window window_of(const FlowGroup& g, std::uint64_t run_start, double hz) {
  Window w;
  w.from = run_start + static_cast<std::uint64_t>(g.start_s * hz);
  if (g.stop_s > 0) w.to = run_start + static_cast<std::uint64_t>(g.stop_s * hz);
  return w;
}

// Retransmitted packets of the group's QPs, both ends (READ responses are the responder's).
std::uint64_t retransmitted(const FlowGroup& g, Setup& st) {
  std::uint64_t n = 0;
  for (std::uint32_t i = g.first_qp; i < g.first_qp + g.workload.qps; ++i) {
    const Requester& q = st.requester(i);
    const Responder& r = st.responder(i);
    if (const rc::RcQp* qp = q.ep->qp(q.qpn)) n += qp->counters().retransmitted_packets;
    if (const rc::RcQp* qp = r.ep->qp(r.qpn)) n += qp->counters().retransmitted_packets;
  }
  return n;
}

std::string ops_text(const Options& w) { return w.mix.empty() ? op_name(w.op) : "mix " + mix_text(w); }

}  // namespace

void GroupIntervals::start(const Options& o, std::uint64_t run_start_tsc, double hz) {
  seen_.assign(o.groups.size(), 0);
  bw_.assign(o.groups.size(), IntervalBandwidth{});
  run_start_ = run_start_tsc;
  hz_ = hz;
}

std::uint64_t GroupIntervals::bytes_of(const Options& o, const Setup& st, std::size_t group) const {
  // Loopback: each job's per-QP figures are its requesters' completed bytes, since the start.
  const FlowGroup& g = o.groups[group];
  const auto workers = static_cast<std::uint16_t>(st.jobs.size());
  std::uint64_t b = 0;
  for (std::uint32_t i = g.first_qp; i < g.first_qp + g.workload.qps; ++i) {
    const JobFigures& f = st.jobs[job_of(i, workers)]->figures();
    if (const std::uint32_t k = slot_in_job(i, workers); k < f.qp_entries)
      b += f.qp_bytes[k].load(std::memory_order_relaxed);
  }
  return b;
}

void GroupIntervals::interval(const Options& o, const Setup& st, std::uint64_t from, std::uint64_t at, bool counted) {
  if (at <= from) return;
  const double secs = static_cast<double>(at - from) / hz_;
  for (std::size_t g = 0; g < seen_.size(); ++g) {
    const std::uint64_t b = bytes_of(o, st, g);
    const Window w = window_of(o.groups[g], run_start_, hz_);
    if (counted && from >= w.from && at <= w.to) bw_[g].add(gbps(b - seen_[g], secs));
    seen_[g] = b;
  }
}

void collect_groups(const Options& o, Setup& st, const GroupIntervals& intervals, std::uint64_t run_start_tsc,
                    std::uint64_t measured_start_tsc, std::uint64_t end_tsc, double hz, RunOutcome& out) {
  out.groups.assign(o.groups.size(), GroupResult{});
  for (const auto& j : st.jobs) {
    const std::vector<GroupFigures> figs = j->group_figures();
    for (std::size_t g = 0; g < figs.size() && g < out.groups.size(); ++g) {
      out.groups[g].t += figs[g].t;
      out.groups[g].hist.merge(figs[g].hist);
    }
  }
  for (std::size_t g = 0; g < o.groups.size(); ++g) {
    GroupResult& r = out.groups[g];
    const FlowGroup& fg = o.groups[g];
    // Its responders' verification (loopback: they count no messages, only what went wrong).
    for (std::uint32_t i = fg.first_qp; i < fg.first_qp + fg.workload.qps; ++i) {
      const Totals& v = st.responder(i).t;
      r.t.lost += v.lost;
      r.t.duplicated += v.duplicated;
      r.t.out_of_order += v.out_of_order;
      r.t.corrupted += v.corrupted;
      r.t.errors += v.errors;
    }
    const Window w = window_of(fg, run_start_tsc, hz);
    const std::uint64_t from = std::max(w.from, measured_start_tsc), to = std::min(w.to, end_tsc);
    r.secs = to > from ? static_cast<double>(to - from) / hz : 0;
    r.interval_bw = intervals.bw(g);
  }
}

void print_groups(const Options& o, Setup& st, const RunOutcome& r) {
  if (o.groups.empty()) return;
  std::printf(" flow groups (each over its own window within the measured time):\n");
  std::printf(" %-12s %-9s %-5s %-22s %-11s %-12s %-10s %-10s %-21s %-21s %s\n", "group", "QPs", "DSCP", "op / sizes",
              "messages", "BW [Gb/s]", "Mmsg/s", "window s", "latency p50/p99/max", "BW interval peak/min",
              "retransmitted");
  for (std::size_t g = 0; g < o.groups.size() && g < r.groups.size(); ++g) {
    const FlowGroup& fg = o.groups[g];
    const GroupResult& gr = r.groups[g];
    const Options& w = fg.workload;
    const std::string qps = std::to_string(fg.first_qp) + "-" + std::to_string(fg.first_qp + w.qps - 1);
    const std::string what = ops_text(w) + " " + (w.size_weights.empty() ? sizes_text(w.sizes) : w.size_weights.text());
    char lat[64], bw[64], win[32];
    std::snprintf(lat, sizeof(lat), "%llu/%llu/%llu us", static_cast<ull>(gr.hist.percentile(0.5) / 1000),
                  static_cast<ull>(gr.hist.percentile(0.99) / 1000), static_cast<ull>(gr.hist.max() / 1000));
    if (gr.interval_bw.intervals != 0)
      std::snprintf(bw, sizeof(bw), "%.3f/%.3f (%u)", gr.interval_bw.peak_gbps, gr.interval_bw.min_gbps,
                    gr.interval_bw.intervals);
    else
      std::snprintf(bw, sizeof(bw), "- (no full interval)");
    std::snprintf(win, sizeof(win), "%.2f", gr.secs);
    std::printf(" %-12s %-9s %-5u %-22s %-11llu %-12.3f %-10.6f %-10s %-21s %-21s %llu\n", fg.name.c_str(), qps.c_str(),
                static_cast<unsigned>(w.dscp), what.c_str(), static_cast<ull>(gr.t.messages), gbps(gr.t.bytes, gr.secs),
                gr.secs > 0 ? static_cast<double>(gr.t.messages) / gr.secs / 1e6 : 0.0, win, lat, bw,
                static_cast<ull>(retransmitted(fg, st)));
    std::printf("   %s verification: lost %llu  duplicated %llu  out of order %llu  corrupted %llu  errors %llu\n",
                fg.name.c_str(), static_cast<ull>(gr.t.lost), static_cast<ull>(gr.t.duplicated),
                static_cast<ull>(gr.t.out_of_order), static_cast<ull>(gr.t.corrupted), static_cast<ull>(gr.t.errors));
  }
}

nlohmann::json groups_json(const Options& o, Setup& st, const RunOutcome& r) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t g = 0; g < o.groups.size() && g < r.groups.size(); ++g) {
    const FlowGroup& fg = o.groups[g];
    const GroupResult& gr = r.groups[g];
    const Options& w = fg.workload;
    nlohmann::json j = {{"name", fg.name},
                        {"spec", flow_group_text(fg)},
                        {"qps", {fg.first_qp, fg.first_qp + w.qps - 1}},
                        {"op", w.mix.empty() ? op_name(w.op) : "mix"},
                        {"sizes", w.size_weights.empty() ? sizes_text(w.sizes) : w.size_weights.text()},
                        {"dscp", w.dscp},
                        {"inflight", w.inflight},
                        {"offered_msg_rate", w.offered_msg_rate()},
                        {"start_s", fg.start_s},
                        {"stop_s", fg.stop_s > 0 ? nlohmann::json(fg.stop_s) : nlohmann::json()},
                        {"messages", gr.t.messages},
                        {"bytes", gr.t.bytes},
                        {"duration_s", gr.secs},
                        {"goodput_gbps", gbps(gr.t.bytes, gr.secs)},
                        {"msg_rate_mps", gr.secs > 0 ? static_cast<double>(gr.t.messages) / gr.secs / 1e6 : 0.0},
                        {"interval_goodput_gbps", interval_json(o, gr.interval_bw)},
                        {"latency_ns", percentiles_json(gr.hist)},
                        {"retransmitted_packets", retransmitted(fg, st)},
                        {"lost", gr.t.lost},
                        {"duplicated", gr.t.duplicated},
                        {"out_of_order", gr.t.out_of_order},
                        {"corrupted", gr.t.corrupted},
                        {"errors", gr.t.errors}};
    if (!w.mix.empty()) j["mix"] = mix_text(w);
    a.push_back(std::move(j));
  }
  return a;
}

}  // namespace droce::gen
