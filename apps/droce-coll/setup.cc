// Setup: pool, observer, lab, ranks, wiring.
#include "apps/droce-coll/setup.h"

namespace droce::coll {

void Setup::teardown() {
  if (lab) lab->finish();  // endpoints' frames freed: nothing points into the ranks' buffers
  ranks.clear();
  lab.reset();
  if (observer) observer->close_capture();
}

bool placement_runs(const Options& o, bool in_place) {
  return in_place ? o.placement != Placement::kOutOfPlace && in_place_supported(o.pattern)
                  : o.placement != Placement::kInPlace;
}

ScheduleParams schedule_params(const Options& o, std::uint64_t bytes) {
  ScheduleParams p;
  p.pattern = o.pattern;
  p.algo = o.algo;
  p.ranks = o.ranks;
  p.root = o.root;
  p.seed = o.seed;
  p.plan = plan_size(o.pattern, o.ranks, bytes, o.dtype);
  return p;
}

RankConfig rank_config(const Options& o, std::uint32_t rank) {
  RankConfig rc;
  rc.rank = rank;
  rc.ranks = o.ranks;
  rc.dtype = o.dtype;
  rc.chunk_bytes = o.chunk_bytes;
  rc.slots = o.buffers;
  rc.qps_per_peer = o.qps_per_peer;
  rc.udp_sport = o.udp_sport;
  rc.qp.pmtu = o.mtu;
  rc.qp.timeout = o.qp_timeout;
  rc.qp.retry_cnt = o.retry_cnt;
  rc.qp.adaptive_rto = o.adaptive_rto;
  rc.qp.recovery = o.recovery;
  rc.qp.sr_bdp_pkts = o.sr_bdp_pkts;
  // One seed, a stream per rank: ranks of one process never draw the same PSNs in lockstep.
  if (o.psn_seed) rc.psn_seed = *o.psn_seed ^ (0x9E3779B97F4A7C15ull * (rank + 1ull));
  return rc;
}

engine::Status build_lab(const Options& o, const SizeSchedule& largest, const MemoryPlan& m, Setup& st) {
  using engine::Status;
  if (Status s = engine::MbufPool::create(
          engine::PoolConfig{"coll_pool", m.pool_mbufs, 256, static_cast<std::uint16_t>(m.mbuf_data_room), -1},
          st.pool);
      !s.ok())
    return Status::error(s.code(), s.message() + " (" + m.text() + ")");
  const std::uint32_t qps_per_rank = (o.ranks - 1) * o.qps_per_peer;
  const engine::EndpointTransport defaults;
  st.observer = std::make_unique<FabricObserver>(o.ranks, defaults.qpn_base, qps_per_rank);
  if (!o.pcap.empty())
    if (Status s = st.observer->open_capture(o.pcap, o.pcap_snaplen); !s.ok()) return s;
  LabConfig lc;
  lc.ranks = o.ranks;
  lc.qps_per_rank = qps_per_rank;
  lc.pool = st.pool.get();
  lc.sw = o.sw;
  lc.sw.egress_gbps.assign(o.ranks, o.egress_gbps);
  lc.leaves = o.leaves;
  lc.spines = o.spines;
  lc.uplink_gbps = o.uplink_gbps < 0 ? o.egress_gbps : o.uplink_gbps;
  lc.ecmp = o.ecmp;
  lc.link_failures = o.link_failures;
  lc.links = o.links;
  lc.sample_ms = o.sample_ms;
  lc.toward_rank = o.impairment;
  lc.dscp = o.dscp;
  lc.dcqcn.reaction_point = o.cc == "dcqcn";
  lc.dcqcn.params = o.dcqcn;
  lc.pfc.priority = o.sw.pfc_priority;
  lc.pfc.link_bps = o.sw.link_gbps_for_pfc * 1e9;
  lc.ingress_tap = &FabricObserver::ingress_tap;
  lc.egress_tap = &FabricObserver::egress_tap;
  for (std::uint32_t r = 0; r < o.ranks; ++r) {
    lc.ingress_ctx.push_back(st.observer->ingress_ctx(r));
    lc.egress_ctx.push_back(st.observer->egress_ctx(r));
  }
  Status err;
  st.lab = CollLab::create(lc, err);
  if (!st.lab) return err;
  for (std::uint32_t r = 0; r < o.ranks; ++r) {
    auto rank = CollRank::create(rank_config(o, r), largest, st.lab->endpoint(r), st.lab->memory(r), err);
    if (!rank) return err;
    st.ranks.push_back(std::move(rank));
  }
  // The wiring: in one process the cards are handed over in memory.
  std::vector<RankCard> cards;
  for (const auto& r : st.ranks) cards.push_back(r->card());
  for (const auto& r : st.ranks)
    if (Status s = r->connect(cards); !s.ok()) return s;
  return Status();
}

}  // namespace droce::coll
