// RankFigures to and from JSON, and the combination LabRunner::collect makes in one process.
#include "apps/droce-coll/rank_figures.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace droce::coll {

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

std::string figures_text(const RankFigures& f) {
  nlohmann::json peers = nlohmann::json::array();
  for (const PeerFigures& p : f.peers)
    peers.push_back({p.peer, p.recv_done_us, p.retransmitted_packets, p.naks_received, p.local_ack_timeouts});
  return nlohmann::json{{"iter_us", f.iter_us},
                        {"wrong", f.wrong},
                        {"wrong_on_arrival", f.wrong_on_arrival},
                        {"peers", peers},
                        {"cnps", {f.cnps_sent, f.cnps_handled, f.pfc_pauses}}}
      .dump();
}

engine::Status parse_figures(const std::string& text, std::uint32_t from, std::uint32_t world, std::size_t iterations,
                             RankFigures& out) {
  const std::string who = "rank " + std::to_string(from) + "'s figures: ";
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    out = RankFigures{};
    out.iter_us = j.at("iter_us").get<std::vector<double>>();
    if (out.iter_us.size() != iterations)
      return engine::Status::error(
          engine::StatusCode::kPeer,
          who + std::to_string(out.iter_us.size()) + " iterations, rank 0 ran " + std::to_string(iterations));
    for (double d : out.iter_us)
      if (!(d >= 0))
        return engine::Status::error(engine::StatusCode::kPeer, who + "a negative or non-numeric iteration time");
    out.wrong = j.at("wrong").get<std::uint64_t>();
    out.wrong_on_arrival = j.at("wrong_on_arrival").get<std::uint64_t>();
    for (const auto& p : j.at("peers")) {
      PeerFigures f;
      f.peer = p.at(0).get<std::uint32_t>();
      f.recv_done_us = p.at(1).get<double>();
      f.retransmitted_packets = p.at(2).get<std::uint64_t>();
      f.naks_received = p.at(3).get<std::uint64_t>();
      f.local_ack_timeouts = p.at(4).get<std::uint64_t>();
      if (f.peer >= world || f.peer == from)
        return engine::Status::error(engine::StatusCode::kPeer, who + "a peer that is not another rank");
      out.peers.push_back(f);
    }
    const auto& c = j.at("cnps");
    out.cnps_sent = c.at(0).get<std::uint64_t>();
    out.cnps_handled = c.at(1).get<std::uint64_t>();
    out.pfc_pauses = c.at(2).get<std::uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    return engine::Status::error(engine::StatusCode::kPeer, who + "unreadable (" + e.what() + ")");
  }
  return {};
}

PlacementResult combine_figures(const std::vector<RankFigures>& ranks, std::uint32_t warmup, const SizeSchedule& s) {
  PlacementResult out;
  const auto n = static_cast<std::uint32_t>(ranks.size());
  double sum = 0;
  for (std::uint32_t r = 0; r < n; ++r) {
    const RankFigures& f = ranks[r];
    double mine = 0;
    for (std::size_t i = warmup; i < f.iter_us.size(); ++i) mine += f.iter_us[i];
    mine /= static_cast<double>(
        std::max<std::size_t>(1, f.iter_us.size() - std::min<std::size_t>(warmup, f.iter_us.size())));
    sum += mine;
    if (mine > out.slowest_us) {
      out.slowest_us = mine;
      out.slowest_rank = r;
    }
    out.wrong += f.wrong;
    out.wrong_on_arrival += f.wrong_on_arrival;
    out.cnps_sent += f.cnps_sent;
    out.cnps_handled += f.cnps_handled;
    out.pfc_pauses += f.pfc_pauses;
    for (const PeerFigures& p : f.peers) {
      out.retransmitted += p.retransmitted_packets;
      out.naks += p.naks_received;
    }
  }
  out.time_us = n == 0 ? 0 : sum / n;
  const std::size_t iters = ranks.empty() ? 0 : ranks[0].iter_us.size();
  for (std::size_t i = warmup; i < iters; ++i) {
    double m = 0;
    for (const RankFigures& f : ranks) m = std::max(m, f.iter_us[i]);
    out.iter_us.push_back(m);
  }
  out.iter_p50_us = percentile(out.iter_us, 0.5);
  out.iter_p99_us = percentile(out.iter_us, 0.99);
  out.iter_max_us = out.iter_us.empty() ? 0 : *std::max_element(out.iter_us.begin(), out.iter_us.end());
  out.algbw_gbytes = algbw_gbytes(s.params.plan, out.time_us);
  out.busbw_gbytes = out.algbw_gbytes * s.params.plan.busbw_factor;
  // The slowest transfer: into the slowest rank, the peer applied last; its sender's counters.
  if (n > 0)
    for (const PeerFigures& f : ranks[out.slowest_rank].peers)
      if (f.recv_done_us >= out.slow_done_us && f.recv_done_us > 0) {
        out.slow_done_us = f.recv_done_us;
        out.slow_src = f.peer;
        out.slow_dst = out.slowest_rank;
      }
  if (out.slow_done_us > 0)
    for (const PeerFigures& f : ranks[out.slow_src].peers)
      if (f.peer == out.slow_dst) {
        out.slow_retransmitted = f.retransmitted_packets;
        out.slow_naks = f.naks_received;
        out.slow_timeouts = f.local_ack_timeouts;
      }
  out.ran = true;
  return out;
}

}  // namespace droce::coll
