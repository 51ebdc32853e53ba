// SwitchExperiment: senders 10.0.1.x and receiver 10.0.2.1 on one LabSwitch (or a leaf-spine:
// switch_experiment_fabric.cc), polled round-robin on the calling thread; WRITE traffic with
// verification, sampled on the TSC.
#include "engine/lab/switch_experiment.h"

#include <rte_cycles.h>

#include <algorithm>
#include <cstring>

#include "engine/core/psn_source.h"

namespace droce::engine {

wire::L2L3Address SwitchExperiment::host(std::uint8_t net, std::uint8_t h) {
  wire::L2L3Address a;
  a.mac[0] = 0x02;
  a.mac[4] = net;
  a.mac[5] = h;
  a.ip[0] = 10;
  a.ip[2] = net;
  a.ip[3] = h;
  return a;
}

std::uint32_t SwitchExperiment::ip_host_order(const wire::L2L3Address& a) {
  return static_cast<std::uint32_t>(a.ip[0]) << 24 | static_cast<std::uint32_t>(a.ip[1]) << 16 |
         static_cast<std::uint32_t>(a.ip[2]) << 8 | a.ip[3];
}

wire::L2L3Address SwitchExperiment::address(std::uint32_t i) const {
  return i < cfg_.senders ? host(1, static_cast<std::uint8_t>(i + 1)) : host(2, 1);
}

Status SwitchExperiment::build_star() {
  const std::uint32_t n = cfg_.senders;
  Status err;
  for (std::uint32_t i = 0; i <= n; ++i) {
    links_.push_back(RingLink::create("swl", cfg_.pool, err));
    if (!links_.back()) return err;
  }
  // The switch owns end 1 of every link: port i = sender i, port n = the receiver.
  LabSwitchConfig sc = cfg_.sw;
  sc.pool = cfg_.pool;
  sc.ports.clear();
  sc.routes.clear();
  sc.egress_gbps.assign(n + 1, 0);
  sc.egress_gbps[n] = cfg_.bottleneck_gbps;
  for (std::uint32_t i = 0; i <= n; ++i) {
    sc.ports.push_back(links_[i]->id(1));
    sc.routes.push_back(SwitchRoute{ip_host_order(address(i)), 32, static_cast<std::uint16_t>(i)});
  }
  sw_ = LabSwitch::create(sc, err);
  return sw_ ? Status() : err;
}

const SwitchPortCounters& SwitchExperiment::port_of(std::uint32_t i) const {
  return ls_ ? ls_->endpoint_port(cfg_.fabric.slot(i, cfg_.senders)) : sw_->counters(i);
}

std::unique_ptr<SwitchExperiment> SwitchExperiment::create(const SwitchExperimentConfig& cfg, Status& err) {
  if (cfg.senders == 0 || cfg.senders > 16) {
    err = Status::error(StatusCode::kInvalidArgument, "switch lab: --lab-senders must be 1..16");
    return nullptr;
  }
  if (!(cfg.bottleneck_gbps > 0) || !(cfg.duration_ms > 0) || !(cfg.sample_us > 0) || cfg.message_bytes == 0 ||
      cfg.inflight == 0 || cfg.pool == nullptr) {
    err = Status::error(StatusCode::kInvalidArgument,
                        "switch lab: bottleneck, duration, sample period, message size and inflight must be > 0");
    return nullptr;
  }
  if (Status s = cfg.params.validate(); !s.ok()) {
    err = Status::error(StatusCode::kInvalidArgument, "switch lab: DCQCN parameter " + s.message());
    return nullptr;
  }
  std::unique_ptr<SwitchExperiment> lab(new SwitchExperiment());
  lab->cfg_ = cfg;
  const std::uint32_t n = cfg.senders;
  if (Status s = cfg.fabric.on() ? lab->build_leafspine() : lab->build_star(); !s.ok()) {
    err = s;
    return nullptr;
  }
  // Endpoints: senders with DCQCN as configured, the receiver with one QP per sender.
  const wire::L2L3Address rx_addr = host(2, 1);
  for (std::uint32_t i = 0; i <= n; ++i) {
    lab->mem_.push_back(std::make_unique<MemoryRegistry>());
    EndpointConfig ec;
    if (lab->ls_) {
      ec.queues.port_id = static_cast<std::uint16_t>(i);  // its number only: the link is a ring
      ec.queues.tx_ring = lab->ls_->endpoint_end(cfg.fabric.slot(i, n)).tx;
    } else {
      ec.queues.port_id = lab->links_[i]->id(0);
    }
    ec.queues.pool = cfg.pool;
    ec.queues.memory = lab->mem_.back().get();
    ec.addresses.local = lab->address(i);
    ec.transport.max_qps = i < n ? 1 : n;
    ec.addresses.dscp = cfg.dscp;
    ec.pfc.priority = static_cast<std::uint8_t>(cfg.dscp >> 3);
    ec.pfc.link_bps = cfg.sw.link_gbps_for_pfc * 1e9;
    ec.dcqcn.reaction_point = i < n && cfg.dcqcn;
    ec.dcqcn.params = cfg.params;
    lab->eps_.push_back(RcEndpoint::create(ec, err));
    if (!lab->eps_.back()) return nullptr;
  }
  const std::size_t slice = std::size_t{cfg.inflight} * cfg.message_bytes;
  lab->dst_.assign(slice * n, 0);
  if (Status s = lab->mem_[n]->register_memory(lab->dst_.data(), lab->dst_.size(),
                                               rc::kAccessLocalWrite | rc::kAccessRemoteWrite, lab->dst_mr_);
      !s.ok()) {
    err = s;
    return nullptr;
  }
  lab->src_.resize(n);
  lab->src_mr_.resize(n);
  PsnSource psns = PsnSource::from(cfg.psn_seed);
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& src = lab->src_[i];
    src.resize(slice);
    for (std::size_t k = 0; k < src.size(); ++k) src[k] = static_cast<std::uint8_t>(k * 13 + i * 7 + 1);
    if (Status s = lab->mem_[i]->register_memory(src.data(), src.size(), rc::kAccessLocalWrite, lab->src_mr_[i]);
        !s.ok()) {
      err = s;
      return nullptr;
    }
    rc::QpAttr qa;
    qa.pmtu = cfg.mtu;
    qa.recovery = cfg.recovery;
    qa.sq_psn = psns.next();
    qa.sq_depth = std::max<std::uint32_t>(cfg.inflight, 16);
    qa.timeout = 16;  // ~268 ms: a deep lossless queue must not look like loss
    rc::QpAttr ra = qa;
    ra.sq_psn = psns.next();
    ra.access = rc::kAccessRemoteWrite;
    std::uint32_t sq = 0, rq = 0;
    for (Status s : {lab->eps_[i]->create_qp(qa, sq), lab->eps_[n]->create_qp(ra, rq)})
      if (!s.ok()) {
        err = s;
        return nullptr;
      }
    for (Status s : {lab->eps_[i]->connect(sq, RemoteQp{rx_addr, rq, ra.sq_psn}),
                     lab->eps_[n]->connect(rq, RemoteQp{host(1, static_cast<std::uint8_t>(i + 1)), sq, qa.sq_psn})})
      if (!s.ok()) {
        err = s;
        return nullptr;
      }
    lab->sender_qpn_.push_back(sq);
  }
  err = Status();
  return lab;
}

SwitchExperiment::~SwitchExperiment() {
  for (auto& e : eps_) e->finish();
  if (sw_) sw_->finish();
  if (ls_) ls_->finish();
  eps_.clear();
  sw_.reset();
  ls_.reset();
  links_.clear();
}

void SwitchExperiment::poll(std::uint64_t now_tsc) {
  if (ls_) {
    poll_leafspine(now_tsc);
    return;
  }
  for (std::uint32_t i = 0; i < cfg_.senders; ++i) eps_[i]->poll(now_tsc);
  sw_->poll(now_tsc);
  eps_[cfg_.senders]->poll(now_tsc);
  sw_->poll(now_tsc);
}

SwitchExperimentResult SwitchExperiment::run() {
  const std::uint32_t n = cfg_.senders;
  const double hz = static_cast<double>(rte_get_tsc_hz());
  const auto ms = [&](double v) { return static_cast<std::uint64_t>(v * 1e-3 * hz); };
  SwitchExperimentResult res;
  res.senders.resize(n);
  std::vector<std::uint32_t> outstanding(n, 0), next_slot(n, 0);
  std::vector<std::uint64_t> sample_bytes(n, 0);
  const std::uint64_t t0 = rte_rdtsc();
  const std::uint64_t end = t0 + ms(cfg_.duration_ms);
  const std::uint64_t sample = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(cfg_.sample_us * 1e-6 * hz));
  std::uint64_t next_sample = t0, last_marks = 0, last_cnps = 0, last_sample_tsc = t0;
  const std::size_t slice = std::size_t{cfg_.inflight} * cfg_.message_bytes;
  bool failed = false;
  std::uint64_t now = t0;
  std::vector<FabricLinkCounters> last_links;
  if (ls_) {
    ls_->start_clock(t0);  // the link failures' origin: the run's start
    last_links = ls_->fabric_links();
  }
  // The bound on draining what is still outstanding after the run's time: recovery of tail drops
  // takes a few ACK timeouts of QP time, which a process left little CPU (a busy machine, a niced
  // test) stretches to seconds of wall time. Only a run that cannot finish meets it.
  const std::uint64_t hard_end = end + ms(60'000);
  for (;;) {
    now = rte_rdtsc();
    const bool running = now < end;
    bool idle = true, owed_any = false;
    for (std::uint32_t i = 0; i < n; ++i) {
      const double start = i < cfg_.start_ms.size() ? cfg_.start_ms[i] : 0;
      const double stop = i < cfg_.stop_ms.size() ? cfg_.stop_ms[i] : cfg_.duration_ms;
      const bool owed = res.senders[i].messages + outstanding[i] < cfg_.min_messages_per_sender;
      owed_any = owed_any || res.senders[i].messages < cfg_.min_messages_per_sender;
      const bool active = now >= t0 + ms(start) && ((running && now < t0 + ms(stop)) || owed);
      rc::Completion c[32];
      const unsigned got = eps_[i]->poll_cq(sender_qpn_[i], c, 32);
      for (unsigned k = 0; k < got; ++k) {
        --outstanding[i];
        if (c[k].status != rc::WcStatus::kSuccess) {
          ++res.senders[i].errors;
          failed = true;
          continue;
        }
        ++res.senders[i].messages;
        res.senders[i].bytes += cfg_.message_bytes;
        sample_bytes[i] += cfg_.message_bytes;
      }
      while (active && !failed && outstanding[i] < cfg_.inflight) {
        const std::uint32_t slot = next_slot[i]++ % cfg_.inflight;
        rc::SendWr w;
        w.wr_id = slot;
        w.opcode = rc::WrOpcode::kWrite;
        w.sge = {reinterpret_cast<std::uint64_t>(src_[i].data()) + std::uint64_t{slot} * cfg_.message_bytes,
                 cfg_.message_bytes, src_mr_[i].lkey};
        w.remote_addr =
            reinterpret_cast<std::uint64_t>(dst_.data()) + i * slice + std::uint64_t{slot} * cfg_.message_bytes;
        w.rkey = dst_mr_.rkey;
        if (!eps_[i]->post_send(sender_qpn_[i], w).ok()) break;
        ++outstanding[i];
      }
      if (outstanding[i] != 0) idle = false;
    }
    if (now >= next_sample && running) {
      SwitchExperimentSample s;
      s.t_ms = static_cast<double>(now - t0) / hz * 1e3;
      const double secs = cfg_.sample_us * 1e-6;
      for (std::uint32_t i = 0; i < n; ++i) {
        const auto* rp = eps_[i]->dcqcn_state(sender_qpn_[i]);
        s.rate_gbps.push_back(cfg_.dcqcn ? rp->rate_bps() / 1e9 : cfg_.params.line_rate_bps / 1e9);
        s.goodput_gbps.push_back(static_cast<double>(sample_bytes[i]) * 8 / secs / 1e9);
        sample_bytes[i] = 0;
      }
      s.queue_bytes = port_of(n).queue_bytes;
      s.tx_bytes = port_of(n).tx_bytes;
      s.ecn_marked = port_of(n).ecn_marked - last_marks;
      if (ls_) s.links = link_sample(last_links, static_cast<double>(now - last_sample_tsc) / hz);
      last_sample_tsc = now;
      s.cnps = eps_[n]->counters().np_cnp_sent - last_cnps;
      last_marks += s.ecn_marked;
      last_cnps += s.cnps;
      res.samples.push_back(std::move(s));
      next_sample += sample;
      if (next_sample < now) next_sample = now + sample;  // a slow iteration skips samples, never bursts them
    }
    if ((!running && idle && !owed_any) || failed || now >= hard_end) break;
    poll(now);
  }
  // Completions of the last WRITEs (the loop ends when nothing is outstanding).
  bool complete = !failed;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& s = res.senders[i];
    const auto& ec = eps_[i]->counters();
    s.cnps_handled = ec.rp_cnp_handled;
    s.cnps_ignored = ec.rp_cnp_ignored;
    s.pfc_pauses = ec.pfc_pause_frames;
    s.pfc_paused_ns = ec.pfc_paused_ns;
    const auto* rp = eps_[i]->dcqcn_state(sender_qpn_[i]);
    s.rate_cuts = rp->state().rate_cuts;
    s.final_rate_gbps = rp->rate_bps() / 1e9;
    const auto* qp = eps_[i]->qp(sender_qpn_[i]);
    s.retransmitted = qp->counters().retransmitted_packets;
    s.min_rtt_us = static_cast<double>(qp->min_rtt_ns()) / 1e3;
    s.srtt_us = static_cast<double>(qp->srtt_ns()) / 1e3;
    if (outstanding[i] != 0) complete = false;
    res.ingress.push_back(port_of(i));
    // Every slot that was written holds the source (WRITEs of the same slot carry the same bytes).
    const std::uint32_t written = std::min<std::uint32_t>(next_slot[i], cfg_.inflight);
    const std::size_t bytes = std::size_t{written} * cfg_.message_bytes;
    if (std::memcmp(dst_.data() + i * slice, src_[i].data(), bytes) != 0) complete = false;
  }
  res.bottleneck = port_of(n);
  if (ls_) res.links = ls_->fabric_links();
  res.receiver_cnps_sent = eps_[n]->counters().np_cnp_sent;
  res.receiver_ecn_marked = eps_[n]->counters().np_ecn_marked_roce_packets;
  res.data_ok = complete;
  return res;
}

}  // namespace droce::engine
