// The leaf-spine run's summary, whichever transport carried it: per-step finish times, per-link
// counters named as engine/lab names them, and the flows ECMP put on each spine.
#include <algorithm>
#include <cmath>
#include <string>

#include "apps/droce-sim/leaf_spine_switches.h"

namespace droce::sim {

namespace {

std::uint32_t percentile_index(std::size_t n, double p) {
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
  return static_cast<std::uint32_t>(i == 0 ? 0 : i - 1);
}

}  // namespace

void summarise_leaf_spine(const LeafSpineConfig& cfg, const std::vector<SimTransfer>& tr,
                          std::vector<std::uint64_t>& finish, const LeafSpineSwitches& sw,
                          const std::vector<NicCounters>& nics, LeafSpineResult& res) {
  const std::uint32_t L = sw.L, S = sw.S, H = sw.H, n = cfg.coll.ranks;
  // Per step (the schedule lists steps in order): finish times across its transfers.
  double prev_max = 0, worst = -1;
  for (std::size_t lo = 0; lo < tr.size();) {
    std::size_t hi = lo;
    while (hi < tr.size() && tr[hi].step == tr[lo].step) ++hi;
    auto first = finish.begin() + static_cast<std::ptrdiff_t>(lo);
    auto last = std::partition(first, finish.begin() + static_cast<std::ptrdiff_t>(hi),
                               [](std::uint64_t f) { return f != UINT64_MAX; });
    StepStats st;
    st.step = tr[lo].step;
    st.transfers = static_cast<std::uint32_t>(last - first);
    if (st.transfers != 0) {
      auto at = [&](double p) {
        auto it = first + percentile_index(st.transfers, p);
        std::nth_element(first, it, last);
        return static_cast<double>(*it) / 1e3;
      };
      st.p50_us = at(0.50);
      st.p99_us = at(0.99);
      st.max_us = at(1.0);
      st.span_us = st.max_us - prev_max;
      prev_max = st.max_us;
    }
    if (st.span_us > worst) {
      worst = st.span_us;
      res.slowest_step = st.step;
    }
    res.steps.push_back(st);
    lo = hi;
  }

  // Links, named as engine/lab names them.
  for (std::uint32_t r = 0; r < n; ++r) {
    LinkStats ls;
    ls.name = "ep" + std::to_string(r) + "-leaf" + std::to_string(r / H);
    const SwPort& down = sw.port(r / H, r % H);
    ls.up = LinkDir{nics[r].frames, nics[r].bytes, 0, 0, 0, down.pauses};
    ls.down = LinkDir{down.tx_frames, down.tx_bytes, down.max_bytes, down.drops, down.marks, 0};
    res.links.push_back(ls);
  }
  for (std::uint32_t l = 0; l < L; ++l)
    for (std::uint32_t s = 0; s < S; ++s) {
      const SwPort& up = sw.port(l, H + s);
      const SwPort& down = sw.port(L + s, l);
      LinkStats ls;
      ls.name = "leaf" + std::to_string(l) + "-spine" + std::to_string(s);
      ls.up = LinkDir{up.tx_frames, up.tx_bytes, up.max_bytes, up.drops, up.marks, down.pauses};
      ls.down = LinkDir{down.tx_frames, down.tx_bytes, down.max_bytes, down.drops, down.marks, up.pauses};
      res.links.push_back(ls);
    }

  // Distinct flows between leaves, by the spine ECMP gives them.
  res.flows_per_spine.assign(S, 0);
  std::vector<std::vector<std::uint32_t>> peers(n);
  for (const SimTransfer& t : tr)
    if (t.src / H != t.dst / H && (peers[t.src].empty() || peers[t.src].back() != t.dst)) peers[t.src].push_back(t.dst);
  for (std::uint32_t r = 0; r < n; ++r) {
    std::sort(peers[r].begin(), peers[r].end());
    peers[r].erase(std::unique(peers[r].begin(), peers[r].end()), peers[r].end());
    for (std::uint32_t d : peers[r]) ++res.flows_per_spine[spine_of(cfg, r, d)];
  }
}

}  // namespace droce::sim
