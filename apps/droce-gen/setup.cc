// droce-gen's set-up (see setup.h).
#include "apps/droce-gen/setup.h"

#include <droce/engine/core/psn_source.h>
#include <droce/engine/workers/worker_group.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <algorithm>
#include <cstring>

#include "apps/common/address_text.h"
#include "apps/common/capture_report.h"
#include "apps/common/default_port.h"
#include "apps/common/telemetry_setup.h"
#include "apps/droce-gen/connect_waits.h"

namespace droce::gen {

using engine::Status;

namespace {

constexpr const char* kDefaultSocket = "/tmp/droce-gen.sock";

wire::L2L3Address make_address(const std::string& ip, const std::uint8_t* mac) {
  engine::IpAddress a;
  (void)engine::parse_ip(ip, a);  // checked by the option parser
  return engine::lab_address(a, mac);
}

// QP i's first send PSN. A static connection's peer knows ours only from its command line, so
// static keeps --psn (and a loopback run given --psn or --remote-psn keeps them); every other
// first PSN is drawn (docs/hardening.md, "First PSNs"), and the exchange, the CM or the loopback
// wiring tells the peer.
std::uint32_t first_psn(const Options& o, std::uint32_t i, bool requester_side, engine::PsnSource& psns) {
  const bool static_connection = o.mode != Mode::kLoopback && o.oob_port == 0;
  if (!static_connection && !(o.mode == Mode::kLoopback && o.psns_given)) return psns.next();
  if (o.mode == Mode::kLoopback && !requester_side) return (o.remote_psn + 0x10000 * i) & 0xFFFFFF;
  return (o.psn + 0x10000 * i) & 0xFFFFFF;
}

rc::QpAttr qp_attr(const Options& o, std::uint32_t i, bool requester_side, engine::PsnSource& psns) {
  rc::QpAttr a;
  a.pmtu = o.mtu;
  a.sq_psn = first_psn(o, i, requester_side, psns);
  a.timeout = o.qp_timeout;
  a.retry_cnt = o.retry_cnt;
  a.adaptive_rto = o.adaptive_rto;
  a.pto_floor_us = o.pto_floor_us;
  a.rnr_retry = 7;
  a.min_rnr_timer = 1;  // 0.01 ms: a busy receiver is back quickly in a lab
  a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead | (is_atomic_op(o.op) ? rc::kAccessRemoteAtomic : 0u);
  a.sq_depth = 256;
  a.rq_depth = 256;
  // Loopback: both ends as asked. Client/server: as proposed; connect_qps sets what the two
  // sides agreed before any QP connects.
  a.recovery = o.recovery;
  a.sr_bdp_pkts = o.sr_bdp_pkts;
  return a;
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// Mbufs per worker: 32767 for one worker; more workers share about the same memory (halved per
// doubling, at least 8191 each), so a busy machine's hugepages are not exhausted by the count.
std::uint32_t mbufs_per_worker(std::uint16_t workers) {
  std::uint32_t n = 32768;
  for (std::uint32_t k = 1; k < workers && n > 8192; k *= 2) n /= 2;
  return n - 1;
}

engine::ImpairmentConfig impairment_of(const Options& o) {
  engine::ImpairmentConfig imp;
  imp.loss = o.loss;
  imp.duplicate = o.duplicate;
  imp.reorder = o.reorder;
  imp.burst_start = o.burst_start;
  imp.burst_frames = o.burst_frames;
  imp.seed = o.seed;
  imp.drop_rule = o.drop_rule;
  return imp;
}

SetupError run_error(const Status& s) { return {s, false}; }
SetupError usage_error(const std::string& m) { return {Status::error(StatusCode::kInvalidArgument, m), true}; }

// One lab per worker: both ends of the worker's QPs, on net_ring ports of its own.
SetupError open_labs(const Options& o, Setup& st) {
  const engine::ImpairmentConfig base = impairment_of(o);
  for (std::uint16_t w = 0; w < o.workers; ++w) {
    engine::LoopbackLabConfig lc;
    lc.pool = st.pools[w].get();
    lc.max_qps = ceil_div(o.qps, o.workers);
    // One file for every worker's lab (the capture serialises its writers).
    lc.capture = o.pcap.empty() ? nullptr : &st.capture;
    lc.dcqcn.reaction_point = o.cc == "dcqcn";
    lc.dcqcn.params = o.dcqcn;
    lc.pfc.priority = o.pfc_priority;
    lc.pfc.watchdog_ms = o.pfc_watchdog_ms;
    Status err;
    auto lab = engine::LoopbackLab::create(lc, err);
    if (!lab) return run_error(err);
    st.shards.push_back(Shard{&lab->a(), &lab->b(), &lab->memory_a(), &lab->memory_b()});
    if (base.any() && o.impair_direction != "tx") {
      for (std::uint16_t p : {lab->port_id_a(), lab->port_id_b()}) {
        engine::ImpairmentConfig imp = base;
        imp.seed = o.seed * 2 + p;
        auto li = engine::LinkImpairment::attach(p, 0, imp, st.pools[w].get(), err);
        if (!li) return run_error(err);
        st.impairments.push_back(std::move(li));
      }
    }
    if (base.any() && o.impair_direction != "rx") {
      std::uint64_t side = 0;
      for (engine::RcEndpoint* ep : {&lab->a(), &lab->b()}) {
        engine::ImpairmentConfig imp = base;
        imp.seed = o.seed * 2 + 1000003 * (w * 2 + ++side);
        auto li = engine::LinkImpairment::attach_send(*ep, imp, st.pools[w].get(), err);
        if (!li) return run_error(err);
        st.impairments.push_back(std::move(li));
      }
    }
    st.labs.push_back(std::move(lab));
  }
  return {};
}

// Several workers on the port: the engine's worker group, one endpoint per queue, each worker with
// its own memory registry (their lookups write a cache) and the steering that hands a frame
// landing on the wrong queue to its QP's owner.
SetupError open_worker_group(const Options& o, const engine::EndpointConfig& ec, Setup& st) {
  engine::WorkerGroupConfig gc;
  gc.workers = o.workers;
  gc.endpoint = ec;
  gc.qps_per_worker = ceil_div(o.qps, o.workers);
  for (std::uint16_t w = 0; w < o.workers; ++w) {
    gc.pools.push_back(st.pools[w].get());
    st.memories.push_back(std::make_unique<engine::MemoryRegistry>());
    gc.memories.push_back(st.memories.back().get());
  }
  Status err;
  st.group = engine::WorkerGroup::create(gc, err);
  if (!st.group) return run_error(err);
  for (std::uint16_t w = 0; w < o.workers; ++w) {
    Shard sh;
    (st.server ? sh.rsp_ep : sh.req_ep) = &st.group->worker(w).endpoint();
    (st.server ? sh.rsp_mem : sh.req_mem) = st.memories[w].get();
    st.shards.push_back(sh);
  }
  return {};
}

// A port the user named must have a queue pair per worker (each worker owns RX and TX queue w).
SetupError check_port_queues(const Options& o, const std::string& devargs) {
  std::uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(devargs.c_str(), &id) != 0) return {};  // probed when opened
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(id, &info) != 0) return {};
  const unsigned most = std::min(info.max_rx_queues, info.max_tx_queues);
  if (o.workers > most)
    return usage_error("--workers " + std::to_string(o.workers) + " needs " + std::to_string(o.workers) +
                       " RX and TX queues, but port " + devargs + " (" + (info.driver_name ? info.driver_name : "?") +
                       ") has at most " + std::to_string(info.max_rx_queues) + " RX and " +
                       std::to_string(info.max_tx_queues) + " TX queues");
  return {};
}

SetupError open_port(const Options& o, bool default_port, Setup& st) {
  engine::PortConfig pc;
  pc.rx_pool = st.pools[0].get();
  for (auto& p : st.pools) pc.rx_pools.push_back(p.get());
  pc.promiscuous = true;
  // Queue w is worker w's, on both sides of a memif pair: the peer's worker w sends on its TX
  // queue w, which is our RX queue w, so a QP's frames reach its owner here without steering.
  pc.rx_queues = o.workers;
  pc.tx_queues = o.workers;
  if (Status s = engine::pair_port_devargs(default_port, st.server, kDefaultSocket, pc.devargs); !s.ok())
    return run_error(s);
  Status err;
  st.port = engine::Port::open(pc, err);
  if (!st.port) return run_error(err);
  const std::uint32_t wait_ms = connect_waits(o).bound_ms();  // 0 unbinds only the server's wait for a client
  if (Status s = st.port->wait_link_up(wait_ms); !s.ok()) return run_error(s);
  // Before the first burst: a peer that ends (even killed) must not tear the rings down under us.
  if (Status s = st.port->hold_peer_events(5000); !s.ok())
    std::fprintf(stderr, "droce-gen: warning: %s\n", s.message().c_str());
  st.memory = std::make_unique<engine::MemoryRegistry>();
  engine::EndpointConfig ec;
  ec.queues.port_id = st.port->id();
  ec.queues.pool = st.pools[0].get();
  ec.queues.memory = st.memory.get();
  ec.transport.qpn_base = o.local_qpn;
  ec.transport.max_qps = ceil_div(o.qps, o.workers);
  ec.addresses.promiscuous = pc.promiscuous;  // peers may address us by the lab rule's MAC
  ec.recording.capture = o.pcap.empty() ? nullptr : &st.capture;
  ec.dcqcn.reaction_point = o.cc == "dcqcn";
  ec.dcqcn.params = o.dcqcn;
  ec.pfc.priority = o.pfc_priority;
  ec.pfc.watchdog_ms = o.pfc_watchdog_ms;
  rte_ether_addr mac = st.port->mac();
  if (!o.local_mac.empty()) (void)engine::parse_mac(o.local_mac, mac.addr_bytes);  // checked by the option parser
  ec.addresses.local = make_address(st.local_ip, mac.addr_bytes);
  ec.addresses.ipv6 = st.local.ipv6;  // RoCEv2 over IPv6: 40-byte headers, ND instead of ARP
  ec.addresses.dscp = o.dscp;
  ec.addresses.vlan_id = o.vlan_id;
  ec.addresses.vlan_pcp = o.vlan_pcp;
  if (o.workers == 1) {
    st.endpoint = engine::RcEndpoint::create(ec, err);
    if (!st.endpoint) return run_error(err);
    Shard sh;
    (st.server ? sh.rsp_ep : sh.req_ep) = st.endpoint.get();
    (st.server ? sh.rsp_mem : sh.req_mem) = st.memory.get();
    st.shards.push_back(sh);
  } else if (SetupError e = open_worker_group(o, ec, st); !e.status.ok()) {
    return e;
  }
  // The impairment sits on every RX queue (each worker's) and/or every worker's endpoint's
  // sending, each with its own seed.
  engine::ImpairmentConfig imp = impairment_of(o);
  if (imp.any() && o.impair_direction != "tx") {
    for (std::uint16_t q = 0; q < o.workers; ++q) {
      if (q != 0) imp.seed = o.seed * 7919 + q;
      auto li = engine::LinkImpairment::attach(st.port->id(), q, imp, st.pools[q].get(), err);
      if (!li) return run_error(err);
      st.impairments.push_back(std::move(li));
    }
  }
  if (imp.any() && o.impair_direction != "rx") {
    for (std::uint16_t q = 0; q < o.workers; ++q) {
      imp.seed = o.seed * 7919 + 1000003 + q;
      engine::RcEndpoint& ep = st.endpoint ? *st.endpoint : st.group->worker(q).endpoint();
      auto li = engine::LinkImpairment::attach_send(ep, imp, st.pools[q].get(), err);
      if (!li) return run_error(err);
      st.impairments.push_back(std::move(li));
    }
  }
  return {};
}

}  // namespace

Setup::Setup() = default;
Setup::~Setup() = default;

LabImpairment Setup::impaired() const {
  // The live feed reads these while the workers count (recent values, as the endpoints' counters).
  auto load = [](const std::uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_RELAXED); };
  LabImpairment t;
  for (const auto& i : impairments) {
    const engine::ImpairmentCounters& c = i->counters();
    const std::uint64_t dropped = load(c.dropped) + load(c.burst_dropped) + load(c.rule_dropped);
    t.dropped += dropped;
    t.rule_dropped += load(c.rule_dropped);
    (i->side() == engine::ImpairedSide::kSend ? t.dropped_tx : t.dropped_rx) += dropped;
    t.duplicated += load(c.duplicated);
    t.reordered += load(c.reordered);
  }
  return t;
}

std::vector<const engine::RcEndpoint*> Setup::endpoints() const {
  std::vector<const engine::RcEndpoint*> eps;
  for (const auto& j : jobs) eps.insert(eps.end(), j->endpoints().begin(), j->endpoints().end());
  return eps;
}

Requester& Setup::requester(std::uint32_t i) {
  const auto n = static_cast<std::uint16_t>(jobs.size());
  return jobs[job_of(i, n)]->requesters()[slot_in_job(i, n)];
}

Responder& Setup::responder(std::uint32_t i) {
  const auto n = static_cast<std::uint16_t>(jobs.size());
  return jobs[job_of(i, n)]->responders()[slot_in_job(i, n)];
}

void Setup::stop_port() {
  if (port) port->stop();
}

void Setup::finish() {
  for (auto& lab : labs) lab->finish();
  if (endpoint) endpoint->finish();
  if (group) group->finish();
}

SetupError assign_lcores(const Options& o, std::vector<unsigned>& lcores) {
  lcores = {rte_get_main_lcore()};
  unsigned l = 0;
  RTE_LCORE_FOREACH_WORKER(l) {
    if (lcores.size() == o.workers) break;
    lcores.push_back(l);
  }
  if (lcores.size() < o.workers)
    return usage_error("--workers " + std::to_string(o.workers) + " needs " + std::to_string(o.workers) +
                       " lcores (worker 0 runs on the main lcore), but EAL has " + std::to_string(rte_lcore_count()) +
                       ": give them with -l (e.g. -l 0-" + std::to_string(o.workers - 1) + ")");
  return {};
}

SetupError open_transport(const Options& o, bool default_port, const std::vector<unsigned>& lcores, Setup& st) {
  st.server = o.mode == Mode::kServer;
  // Addresses: the client (and loopback A) is 10.0.0.1, the server 10.0.0.2, unless given.
  st.local_ip = !o.local_ip.empty() ? o.local_ip : st.server ? "10.0.0.2" : "10.0.0.1";
  st.peer_ip = !o.peer_ip.empty() ? o.peer_ip : st.server ? "10.0.0.1" : "10.0.0.2";
  (void)engine::parse_ip(st.local_ip, st.local);  // checked by the option parser (families too)
  // An IPv6 --local-ip without --peer-ip: the exchange gives the peer's address (its GID).
  if (st.local.ipv6 && o.peer_ip.empty()) st.peer_ip.clear();
  std::string devargs;  // loopback: none (its net_ring labs)
  if (o.mode != Mode::kLoopback) {
    if (Status s = engine::pair_port_devargs(default_port, st.server, kDefaultSocket, devargs); !s.ok())
      return run_error(s);
    if (SetupError e = check_port_queues(o, devargs); !e.status.ok()) return e;
  }
  for (std::uint16_t w = 0; w < o.workers; ++w) {
    engine::MbufPool pool;
    const std::string name = w == 0 ? "gen_pool" : "gen_pool" + std::to_string(w);
    // On the NUMA socket of the lcore that polls it.
    const int socket = static_cast<int>(rte_lcore_to_socket_id(lcores[w]));
    if (Status s =
            engine::MbufPool::create(engine::PoolConfig{name, mbufs_per_worker(o.workers), 256,
                                                        engine::pool_data_room_for_port(devargs, 2176 + 4096), socket},
                                     pool);
        !s.ok())
      return run_error(s);
    st.pools.push_back(std::move(pool));
  }
  if (!o.pcap.empty())
    if (Status s = st.capture.open(o.pcap, o.pcap_snaplen, 4095,
                                   apps::capture_limits({o.pcap, o.pcap_snaplen, o.pcap_max_mb, o.pcap_files}));
        !s.ok())
      return run_error(s);
  SetupError e = o.mode == Mode::kLoopback ? open_labs(o, st) : open_port(o, default_port, st);
  if (!e.status.ok()) return e;
  for (std::uint16_t w = 0; w < o.workers; ++w) {
    auto job = std::make_unique<Job>(w, lcores[w]);
    job->poll_through(o.mode == Mode::kLoopback ? st.labs[w].get() : nullptr, st.endpoint.get(),
                      st.group ? &st.group->worker(w) : nullptr);
    st.jobs.push_back(std::move(job));
  }
  return {};
}

namespace {

// --udp-sport: QP `index` (the run's numbering, the same at both ends) from its port; derived
// ports are left to connect.
Status set_udp_sport(const Options& o, engine::RcEndpoint& ep, std::uint32_t qpn, std::uint32_t index) {
  if (o.udp_sport.derived()) return {};
  return ep.set_udp_src_port(qpn, o.udp_sport.port(index));
}

// A flow group's DSCP on both ends of its QPs (its data one way, its ACKs the other); without
// groups every QP keeps its endpoint's.
Status set_group_dscp(const Options& o, engine::RcEndpoint& ep, std::uint32_t qpn, std::uint32_t index) {
  if (o.groups.empty()) return {};
  return ep.set_dscp(qpn, o.workload_of(index).dscp);
}

}  // namespace

Status create_qps(const Options& o, Setup& st) {
  // The transport is up (the usage checks passed): DPDK's tools may attach from here.
  apps::start_telemetry("droce-gen");
  const std::uint32_t max_size = o.max_size();
  st.pattern = std::make_unique<Pattern>();
  const std::uint32_t slots = o.inflight;
  const std::size_t slot_bytes = max_size;
  // The responder's buffers; an atomic run's counters (the first word of each QP's slice) also
  // take remote atomics.
  const std::uint32_t kRemoteAccess = rc::kAccessLocalWrite | rc::kAccessRemoteWrite | rc::kAccessRemoteRead |
                                      (is_atomic_op(o.op) ? rc::kAccessRemoteAtomic : 0u);
  engine::PsnSource psns = engine::PsnSource::from(o.psn_seed);
  for (std::uint16_t w = 0; w < o.workers; ++w) {
    Job& job = *st.jobs[w];
    const Shard& sh = st.shards[w];
    const std::uint32_t mine = share_of(o.qps, w, o.workers), active = share_of(o.active(), w, o.workers);
    // Active QPs get `inflight` slots (a responder: that many per region of a mix), idle ones one
    // (a responder buffer still announced to the peer).
    auto bytes_of = [&](std::size_t per_qp) { return (active * per_qp + (mine - active)) * slot_bytes; };
    auto slice = [&](std::uint8_t* base, std::uint32_t j, std::size_t per_qp) {
      return base + (std::min(j, active) * per_qp + (j > active ? j - active : 0)) * slot_bytes;
    };
    const std::size_t req_slots = slots, rsp_slots = static_cast<std::size_t>(slots) * o.responder_regions();
    if (sh.req_ep != nullptr) {
      auto& buf = job.requester_buffer();
      buf.resize(bytes_of(req_slots));
      rc::MemoryRegion mr;
      if (Status s = sh.req_mem->register_memory(buf.data(), buf.size(), rc::kAccessLocalWrite, mr); !s.ok()) return s;
      job.requesters().resize(mine);
      for (std::uint32_t j = 0; j < mine; ++j) {
        Requester& r = job.requesters()[j];
        r.ep = sh.req_ep;
        r.index = j * o.workers + w;
        r.buf = slice(buf.data(), j, req_slots);
        r.mr = mr;
        r.post_tsc.resize(slots);
        if (Status s = sh.req_ep->create_qp(qp_attr(o, r.index, true, psns), r.qpn); !s.ok()) return s;
        if (Status s = set_udp_sport(o, *sh.req_ep, r.qpn, r.index); !s.ok()) return s;
        if (Status s = set_group_dscp(o, *sh.req_ep, r.qpn, r.index); !s.ok()) return s;
      }
    }
    if (sh.rsp_ep != nullptr) {
      auto& buf = job.responder_buffer();
      buf.resize(bytes_of(rsp_slots));
      rc::MemoryRegion mr;
      if (Status s = sh.rsp_mem->register_memory(buf.data(), buf.size(), kRemoteAccess, mr); !s.ok()) return s;
      job.responders().resize(mine);
      for (std::uint32_t j = 0; j < mine; ++j) {
        Responder& r = job.responders()[j];
        r.ep = sh.rsp_ep;
        // Its client's QP number (a server of several clients: the run's QP modulo --qps), which
        // the client's payload pattern and --udp-sport plan are computed from.
        r.index = (j * o.workers + w) % o.per_client_qps();
        r.buf = slice(buf.data(), j, rsp_slots);
        r.mr = mr;
        if (Status s = sh.rsp_ep->create_qp(qp_attr(o, r.index, false, psns), r.qpn); !s.ok()) return s;
        if (Status s = set_udp_sport(o, *sh.rsp_ep, r.qpn, r.index); !s.ok()) return s;
        if (Status s = set_group_dscp(o, *sh.rsp_ep, r.qpn, r.index); !s.ok()) return s;
        // READ serves a fixed pattern per slot (a mix: in the READs' region; flow groups: its group's).
        if (const Options& w = o.workload_of(r.index); w.carries(Op::kRead)) {
          std::uint8_t* region = r.buf + (j < active ? std::size_t{w.region_of(Op::kRead)} * slots * slot_bytes : 0);
          for (std::uint32_t s = 0; s < (j < active ? slots : 1); ++s)
            st.pattern->fill(region + s * slot_bytes, max_size, r.index, s);
        }
      }
    }
  }
  return {};
}

}  // namespace droce::gen
