// CollRank's control path: QPs and buffers, the cards, a size's channels, an iteration's
// preparation and the output check.
#include "apps/droce-coll/rank.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace droce::coll {

namespace {

std::uint32_t pow2_at_least(std::uint32_t v) {
  std::uint32_t p = 1;
  while (p < v) p *= 2;
  return p;
}

void* alloc_pages(std::uint64_t bytes) {
  const std::uint64_t rounded = (bytes + 4095) / 4096 * 4096;
  return rounded == 0 ? nullptr : std::aligned_alloc(4096, rounded);
}

}  // namespace

std::unique_ptr<CollRank> CollRank::create(const RankConfig& cfg, const SizeSchedule& largest, engine::RcEndpoint& ep,
                                           engine::MemoryRegistry& mem, engine::Status& err) {
  using engine::Status;
  using engine::StatusCode;
  std::unique_ptr<CollRank> r(new CollRank(cfg, ep, mem));
  r->elem_ = dtype_bytes(cfg.dtype);
  r->chunk_elems_ = cfg.chunk_bytes / r->elem_;
  if (r->chunk_elems_ == 0 || cfg.chunk_bytes % r->elem_ != 0 || cfg.slots == 0 || cfg.qps_per_peer == 0 ||
      cfg.qps_per_peer > kMaxQpsPerPeer) {
    err = Status::error(StatusCode::kInvalidArgument, "rank: chunk, slots or QPs per peer out of range");
    return nullptr;
  }
  // Peers: every rank the largest schedule has us send to or receive from.
  const Schedule& s = largest.schedule;
  r->peer_index_.assign(cfg.ranks, -1);
  std::vector<bool> talks(cfg.ranks, false), sends_us(cfg.ranks, false);
  for (const Transfer& t : s.transfers) {
    if (t.src == cfg.rank) talks[t.dst] = true;
    if (t.dst == cfg.rank) talks[t.src] = sends_us[t.src] = true;
  }
  for (std::uint32_t p = 0; p < cfg.ranks; ++p) {
    if (!talks[p]) continue;
    r->peer_index_[p] = static_cast<std::int32_t>(r->peers_.size());
    Peer peer;
    peer.rank = p;
    peer.receives = sends_us[p];
    if (peer.receives) {
      peer.staging_off = r->staging_bytes_;
      r->staging_bytes_ += std::uint64_t{cfg.slots} * cfg.chunk_bytes;
    }
    r->peers_.push_back(peer);
  }
  // Buffers: the largest layout out of place (in place never needs more), and the staging slots.
  r->data_bytes_ = largest.layouts[cfg.rank].total * r->elem_;
  r->data_ = static_cast<std::uint8_t*>(alloc_pages(std::max<std::uint64_t>(r->data_bytes_, 4096)));
  r->staging_ = static_cast<std::uint8_t*>(alloc_pages(std::max<std::uint64_t>(r->staging_bytes_, 4096)));
  if (r->data_ == nullptr || r->staging_ == nullptr) {
    err = Status::error(StatusCode::kNoMemory, "rank " + std::to_string(cfg.rank) + ": cannot allocate " +
                                                   std::to_string(r->data_bytes_ + r->staging_bytes_) + " bytes");
    return nullptr;
  }
  poison(r->data_, std::max<std::uint64_t>(r->data_bytes_, 4096));
  poison(r->staging_, std::max<std::uint64_t>(r->staging_bytes_, 4096));
  if (Status st = mem.register_memory(r->data_, std::max<std::uint64_t>(r->data_bytes_, 4096), rc::kAccessLocalWrite,
                                      r->data_mr_);
      !st.ok()) {
    err = st;
    return nullptr;
  }
  if (Status st = mem.register_memory(r->staging_, std::max<std::uint64_t>(r->staging_bytes_, 4096),
                                      rc::kAccessLocalWrite | rc::kAccessRemoteWrite, r->staging_mr_);
      !st.ok()) {
    err = st;
    return nullptr;
  }
  // QPs: K per peer. Receive depth: a sender's chunks in flight (the slots) plus the credits
  // coming back for ours; the send queue the same.
  rc::QpAttr qa = cfg.qp;
  qa.sq_depth = qa.rq_depth = pow2_at_least(2 * cfg.slots + 8);
  qa.access = rc::kAccessRemoteWrite;
  engine::PsnSource psns = engine::PsnSource::from(cfg.psn_seed);
  for (std::size_t i = 0; i < r->peers_.size(); ++i) {
    Peer& peer = r->peers_[i];
    for (std::uint32_t k = 0; k < cfg.qps_per_peer; ++k) {
      qa.sq_psn = peer.psn[k] = psns.next();  // drawn; our card tells the peer
      if (Status st = ep.create_qp(qa, peer.qpn[k]); !st.ok()) {
        err = Status::error(st.code(), "rank " + std::to_string(cfg.rank) + ": " + st.message());
        return nullptr;
      }
      // Both ends of a pair give QP k the same port, as the derived one is the same at both ends.
      if (!cfg.udp_sport.derived())
        if (Status st = ep.set_udp_src_port(peer.qpn[k], cfg.udp_sport.port(k)); !st.ok()) {
          err = Status::error(st.code(), "rank " + std::to_string(cfg.rank) + ": " + st.message());
          return nullptr;
        }
      if (i == 0 && k == 0) r->first_qpn_ = peer.qpn[k];
      const std::uint32_t slot = peer.qpn[k] - r->first_qpn_;
      if (slot >= r->qp_peer_.size()) r->qp_peer_.resize(slot + 1, 0);
      r->qp_peer_[slot] = static_cast<std::uint32_t>(i);
    }
  }
  ep.set_app_stage(&CollRank::stage, r.get());
  err = Status();
  return r;
}

CollRank::~CollRank() {
  ep_.set_app_stage(nullptr, nullptr);
  // The owner finished the endpoint and drained the fabric first: no frame points here any more.
  (void)mem_.deregister(data_mr_.lkey);
  (void)mem_.deregister(staging_mr_.lkey);
  std::free(data_);
  std::free(staging_);
}

RankCard CollRank::card() const {
  RankCard c;
  c.rank = cfg_.rank;
  c.address = ep_.config().addresses.local;
  for (const Peer& p : peers_) {
    PeerLink l;
    l.peer = p.rank;
    l.qps = cfg_.qps_per_peer;
    for (std::uint32_t k = 0; k < cfg_.qps_per_peer; ++k) {
      l.qpn[k] = p.qpn[k];
      l.first_psn[k] = p.psn[k];
    }
    if (p.receives) {
      l.staging_va = reinterpret_cast<std::uint64_t>(staging_ + p.staging_off);
      l.staging_rkey = staging_mr_.rkey;
      l.staging_bytes = std::uint64_t{cfg_.slots} * cfg_.chunk_bytes;
    }
    c.links.push_back(l);
  }
  return c;
}

engine::Status CollRank::connect(const std::vector<RankCard>& cards) {
  using engine::Status;
  for (Peer& p : peers_) {
    if (p.rank >= cards.size()) return Status::error(engine::StatusCode::kInvalidArgument, "rank: no card for a peer");
    const RankCard& pc = cards[p.rank];
    const PeerLink* link = nullptr;
    for (const PeerLink& l : pc.links)
      if (l.peer == cfg_.rank) link = &l;
    if (link == nullptr || link->qps != cfg_.qps_per_peer)
      return Status::error(engine::StatusCode::kPeer, "rank " + std::to_string(cfg_.rank) + ": rank " +
                                                          std::to_string(p.rank) +
                                                          "'s card has no matching link to it");
    p.remote_va = link->staging_va;
    p.remote_rkey = link->staging_rkey;
    for (std::uint32_t k = 0; k < cfg_.qps_per_peer; ++k) {
      if (Status st = ep_.connect(p.qpn[k], engine::RemoteQp{pc.address, link->qpn[k], link->first_psn[k]}); !st.ok())
        return st;
      // Receives ahead: every WRITE with immediate and every credit consumes one.
      const std::uint32_t depth = ep_.qp(p.qpn[k])->attr().rq_depth;
      for (std::uint32_t i = 0; i < depth; ++i) {
        rc::RecvWr w;
        w.wr_id = static_cast<std::uint64_t>(&p - peers_.data());
        w.sge = rc::Sge{reinterpret_cast<std::uint64_t>(data_), 0, data_mr_.lkey};
        if (Status st = ep_.post_recv(p.qpn[k], w); !st.ok()) return st;
      }
    }
  }
  return Status();
}

std::uint8_t* CollRank::at(Buf b, std::uint64_t elem_off) const {
  const std::uint64_t base = b == Buf::kInput    ? layout_->in_base
                             : b == Buf::kOutput ? layout_->out_base
                                                 : layout_->scratch_base;
  return data_ + (base + elem_off) * elem_;
}

engine::Status CollRank::set_size(const SizeSchedule* s) {
  size_ = s;
  layout_ = &s->layouts[cfg_.rank];
  if (layout_->total * elem_ > data_bytes_)
    return engine::Status::error(engine::StatusCode::kInvalidArgument, "rank: a size larger than its buffers");
  const Schedule& sc = s->schedule;
  out_.clear();
  in_.clear();
  out_of_peer_.assign(peers_.size(), -1);
  in_of_peer_.assign(peers_.size(), -1);
  delivered_.assign(sc.transfers.size(), 0);
  completed_.assign(sc.transfers.size(), 0);
  for (std::size_t i = 0; i < sc.transfers.size(); ++i) {
    const Transfer& t = sc.transfers[i];
    const bool out = t.src == cfg_.rank, in = t.dst == cfg_.rank;
    if (!out && !in) continue;
    const std::int32_t p = peer_index_[out ? t.dst : t.src];
    if (p < 0) return engine::Status::error(engine::StatusCode::kInvalidArgument, "rank: a peer it has no QP to");
    auto& idx = out ? out_of_peer_ : in_of_peer_;
    if (idx[static_cast<std::size_t>(p)] < 0) {
      idx[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(out ? out_.size() : in_.size());
      if (out) {
        out_.emplace_back();
        out_.back().peer = static_cast<std::uint32_t>(p);
      } else {
        in_.emplace_back();
        in_.back().peer = static_cast<std::uint32_t>(p);
      }
    }
    const auto c = static_cast<std::size_t>(idx[static_cast<std::size_t>(p)]);
    if (out) {
      out_[c].xfers.push_back(static_cast<std::int32_t>(i));
      out_[c].total += static_cast<std::uint32_t>(chunks_of(t));
    } else {
      in_[c].xfers.push_back(static_cast<std::int32_t>(i));
      in_[c].total += static_cast<std::uint32_t>(chunks_of(t));
    }
  }
  // The immediate numbers chunks in 24 bits.
  for (const auto& c : out_)
    if (c.total >= (1u << 24))
      return engine::Status::error(engine::StatusCode::kInvalidArgument,
                                   "--chunk: more than 2^24 chunks to one peer; take larger chunks");
  for (auto& c : in_) c.arrived_len.assign(cfg_.slots, 0);
  copies_.clear();
  inputs_.clear();
  expected_.clear();
  for (const LocalCopy& c : sc.copies)
    if (c.rank == cfg_.rank) copies_.push_back(&c);
  for (const KeyedRun& k : sc.inputs)
    if (k.rank == cfg_.rank) inputs_.push_back(&k);
  for (const KeyedRun& k : sc.expected)
    if (k.rank == cfg_.rank) expected_.push_back(&k);
  reset_stats();
  return engine::Status();
}

void CollRank::prepare(std::uint32_t iteration) {
  keys_.emplace(iteration);
  tag_ = iteration & 0x7F;
  poison(data_, layout_->total * elem_);
  for (const KeyedRun* k : inputs_) {
    const Expectation e(*keys_, k->contributors, k->key_dst, k->key_off);
    if (cfg_.dtype == DataType::kInt32)
      fill_run(reinterpret_cast<std::int32_t*>(at(Buf::kInput, k->off)), k->count, e);
    else
      fill_run(reinterpret_cast<float*>(at(Buf::kInput, k->off)), k->count, e);
  }
  poison(staging_, staging_bytes_);
  for (auto& c : out_) {
    c.next_seq = c.completed = 0;
    c.credit_limit = cfg_.slots;
    c.cur = 0;
    c.cur_chunk = 0;
  }
  for (auto& c : in_) {
    c.processed = c.credit_sent = 0;
    c.cur = 0;
    c.cur_chunk = 0;
    c.done_tsc = 0;
    c.expect.reset();
    std::fill(c.arrived_len.begin(), c.arrived_len.end(), 0);
  }
  std::fill(delivered_.begin(), delivered_.end(), 0);
  std::fill(completed_.begin(), completed_.end(), 0);
  done_ = started_ = false;
  prepared_ = true;
}

void CollRank::start(std::uint64_t start_tsc) {
  start_tsc_ = last_progress_tsc_ = start_tsc;
  for (const LocalCopy* c : copies_) {
    const std::uint8_t* src = at(c->src_buf, c->src_off);
    std::uint8_t* dst = at(Buf::kOutput, c->dst_off);
    if (src != dst) std::memcpy(dst, src, c->count * elem_);
  }
  started_ = true;
}

void CollRank::finish_iteration(double tsc_per_us) {
  std::uint64_t wrong = 0;
  for (const KeyedRun* k : expected_) {
    const Expectation e(*keys_, k->contributors, k->key_dst, k->key_off);
    wrong += cfg_.dtype == DataType::kInt32
                 ? count_wrong(reinterpret_cast<const std::int32_t*>(at(Buf::kOutput, k->off)), k->count, e)
                 : count_wrong(reinterpret_cast<const float*>(at(Buf::kOutput, k->off)), k->count, e);
  }
  stats_.wrong += wrong;
  stats_.iter_us.push_back(static_cast<double>(done_tsc_ - start_tsc_) / tsc_per_us);
  prepared_ = false;
}

std::string CollRank::waiting_for() const {
  std::string w;
  for (const auto& c : in_)
    if (c.processed < c.total)
      w += " chunk " + std::to_string(c.processed) + "/" + std::to_string(c.total) + " from rank " +
           std::to_string(peers_[c.peer].rank) + ";";
  for (const auto& c : out_)
    if (c.completed < c.total)
      w += " to rank " + std::to_string(peers_[c.peer].rank) + ": " + std::to_string(c.next_seq) + "/" +
           std::to_string(c.total) + " chunks posted (credit for " + std::to_string(c.credit_limit) + "), " +
           std::to_string(c.completed) + " acknowledged;";
  if (credits_outstanding_ != 0) w += " " + std::to_string(credits_outstanding_) + " credit message(s) unacknowledged;";
  // The transport under it: each unfinished peer's first QP (PSNs, work queued, retransmissions)
  // and the endpoint's transmit failures.
  auto& ep = const_cast<engine::RcEndpoint&>(ep_);
  for (const Peer& p : peers_) {
    const rc::RcQp* q = ep.qp(p.qpn[0]);
    if (q == nullptr || (q->outstanding_wrs() == 0 && q->sq_una() == q->sq_nxt())) continue;
    char line[200];
    std::snprintf(line, sizeof line,
                  " QP 0x%x to rank %u: una 0x%06x nxt 0x%06x epsn 0x%06x, %u WRs queued, %llu retransmitted;",
                  p.qpn[0], p.rank, q->sq_una(), q->sq_nxt(), q->rq_epsn(), q->outstanding_wrs(),
                  static_cast<unsigned long long>(q->counters().retransmitted_packets));
    w += line;
  }
  const engine::EndpointCounters& c = ep_.counters();
  if (c.tx_alloc_failures != 0 || c.tx_build_failures != 0 || c.tx_backlog_drops != 0)
    w += " endpoint: " + std::to_string(c.tx_alloc_failures) + " turns found the mbuf pool empty, " +
         std::to_string(c.tx_build_failures + c.tx_backlog_drops) + " frames lost before the wire;";
  if (!w.empty()) w.pop_back();
  return w.empty() ? " nothing (done)" : w;
}

std::vector<PeerFigures> CollRank::peer_figures(double tsc_per_us) const {
  std::vector<PeerFigures> v;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    PeerFigures f;
    f.peer = peers_[i].rank;
    const std::int32_t c = in_of_peer_.empty() ? -1 : in_of_peer_[i];
    if (c >= 0 && in_[static_cast<std::size_t>(c)].done_tsc > start_tsc_)
      f.recv_done_us = static_cast<double>(in_[static_cast<std::size_t>(c)].done_tsc - start_tsc_) / tsc_per_us;
    for (std::uint32_t k = 0; k < cfg_.qps_per_peer; ++k) {
      const rc::RcQp* q = const_cast<engine::RcEndpoint&>(ep_).qp(peers_[i].qpn[k]);
      if (q == nullptr) continue;
      f.retransmitted_packets += q->counters().retransmitted_packets;
      f.naks_received += q->counters().naks_received;
      f.local_ack_timeouts += q->counters().local_ack_timeout_err;
    }
    v.push_back(f);
  }
  return v;
}

void CollRank::fail(const std::string& why) {
  if (failure_.empty()) failure_ = "rank " + std::to_string(cfg_.rank) + ": " + why;
}

}  // namespace droce::coll
