// CollRank's datapath, run in its endpoint's application stage every poll: completions, chunks
// applied in order, credits back, chunks out. Nothing here allocates or builds strings except a
// failure's one line.
#include <algorithm>
#include <cstdio>
#include <string>

#include "apps/droce-coll/rank.h"

namespace droce::coll {

namespace {

// Immediate data: bit 31 credit (else data), bits 24..30 the iteration's tag, bits 0..23 the
// chunk number (data) or the chunks applied so far (credit).
constexpr std::uint32_t kImmCredit = 1u << 31;
constexpr std::uint32_t imm_of(bool credit, std::uint32_t tag, std::uint32_t n) {
  return (credit ? kImmCredit : 0) | (tag & 0x7F) << 24 | (n & 0xFFFFFF);
}
constexpr std::uint64_t kWrCredit = 1ull << 63;

}  // namespace

// A failed QP's line names what spent its retries (IBTA §9.7.6.1.3: each timeout and each sequence
// or implied NAK without progress between them), so that a failure on a loaded or lossy host says
// whether the peer went silent (timeouts) or kept refusing (NAKs), and at which timeout.
std::string CollRank::qp_failure(std::uint32_t qpn, std::uint32_t peer_rank, rc::WcStatus st) const {
  char b[320];
  int n = std::snprintf(b, sizeof b, "QP 0x%x to rank %u failed: %s", qpn, peer_rank, rc::wc_status_name(st));
  const rc::RcQp* q = const_cast<engine::RcEndpoint&>(ep_).qp(qpn);
  if (q != nullptr && n > 0 && static_cast<std::size_t>(n) < sizeof b) {
    const rc::RcCounters& k = q->counters();
    const double timeout_ms = q->attr().timeout == 0 ? 0 : 4.096e-3 * static_cast<double>(1ull << q->attr().timeout);
    std::snprintf(
        b + n, sizeof b - static_cast<std::size_t>(n),
        " (retry_cnt %u; local ACK timeout %.0f ms expired %llu times, %llu of them adaptive; "
        "%llu sequence NAKs, %llu implied NAKs; %llu packets retransmitted)",
        static_cast<unsigned>(q->attr().retry_cnt), timeout_ms,
        static_cast<unsigned long long>(k.local_ack_timeout_err), static_cast<unsigned long long>(k.adaptive_timeouts),
        static_cast<unsigned long long>(k.packet_seq_err), static_cast<unsigned long long>(k.implied_nak_seq_err),
        static_cast<unsigned long long>(k.retransmitted_packets));
  }
  return b;
}

void CollRank::stage(void* self) { static_cast<CollRank*>(self)->progress(); }

void CollRank::poll(std::uint64_t now_tsc, rte_mbuf* const* rx, std::uint16_t n) {
  now_tsc_ = now_tsc;
  ep_.poll_received(now_tsc, rx, n);
}

void CollRank::progress() {
  for (unsigned got; (got = ep_.poll_cq(comps_.data(), static_cast<unsigned>(comps_.size()))) != 0;)
    for (unsigned i = 0; i < got; ++i) on_completion(comps_[i]);
  if (!prepared_ || !failure_.empty()) return;
  for (auto& c : in_) apply_arrivals(c);
  if (started_)
    for (auto& c : out_) post_chunks(c);
  check_done();
}

void CollRank::on_completion(const rc::Completion& c) {
  const std::uint32_t slot = c.qp_num - first_qpn_;
  const std::uint32_t peer = slot < qp_peer_.size() ? qp_peer_[slot] : 0;
  if (c.status != rc::WcStatus::kSuccess) {
    fail(qp_failure(c.qp_num, peers_[peer].rank, c.status));
    return;
  }
  last_progress_tsc_ = now_tsc_;
  if (!c.is_recv) {
    if ((c.wr_id & kWrCredit) != 0) {
      --credits_outstanding_;
    } else {
      const auto t = static_cast<std::size_t>(c.wr_id);
      if (t < completed_.size()) {
        ++completed_[t];
        const Transfer& tr = size_->schedule.transfers[t];
        const std::int32_t oc = out_of_peer_[static_cast<std::size_t>(peer_index_[tr.dst])];
        if (oc >= 0) ++out_[static_cast<std::size_t>(oc)].completed;
      }
    }
    return;
  }
  // A receive was consumed: post it again at once (WRITEs with immediate need one each).
  rc::RecvWr w;
  w.wr_id = peer;
  w.sge = rc::Sge{reinterpret_cast<std::uint64_t>(data_), 0, data_mr_.lkey};
  (void)ep_.post_recv(c.qp_num, w);  // cannot fail: the completion freed its slot
  if (!c.has_imm) {
    fail("a receive without immediate data from rank " + std::to_string(peers_[peer].rank));
    return;
  }
  if ((c.imm & kImmCredit) != 0)
    on_credit(peer, c.imm);
  else
    on_arrival(peer, c.imm, c.byte_len);
}

void CollRank::on_credit(std::uint32_t peer, std::uint32_t imm) {
  if (((imm >> 24) & 0x7F) != tag_) return;  // a late credit of the previous iteration: nothing owed
  const std::int32_t oc = out_of_peer_[peer];
  if (oc < 0) return;
  OutChannel& ch = out_[static_cast<std::size_t>(oc)];
  ch.credit_limit = std::max(ch.credit_limit, (imm & 0xFFFFFF) + cfg_.slots);
}

void CollRank::on_arrival(std::uint32_t peer, std::uint32_t imm, std::uint32_t bytes) {
  const std::int32_t ic = in_of_peer_[peer];
  const std::uint32_t seq = imm & 0xFFFFFF;
  if (!prepared_ || ic < 0 || ((imm >> 24) & 0x7F) != tag_) {
    fail("a chunk from rank " + std::to_string(peers_[peer].rank) + " it did not expect (iteration tag " +
         std::to_string((imm >> 24) & 0x7F) + ", chunk " + std::to_string(seq) + ")");
    return;
  }
  InChannel& ch = in_[static_cast<std::size_t>(ic)];
  // Credits bound what may be in flight: a chunk outside the granted window broke the protocol.
  if (seq < ch.processed || seq >= ch.processed + cfg_.slots || seq >= ch.total ||
      ch.arrived_len[seq % cfg_.slots] != 0) {
    fail("chunk " + std::to_string(seq) + " from rank " + std::to_string(peers_[peer].rank) +
         " outside its credit window (applied " + std::to_string(ch.processed) + ")");
    return;
  }
  ch.arrived_len[seq % cfg_.slots] = bytes + 1;
}

template <typename T>
std::uint64_t CollRank::apply_chunk(const Transfer& t, const InChannel& ch, std::uint64_t first, std::uint64_t n,
                                    const std::uint8_t* data) {
  // The expectation's key offset is the transfer's: element `first + i` of the transfer.
  const T* d = reinterpret_cast<const T*>(data);
  T* out = reinterpret_cast<T*>(at(t.dst_buf, t.dst_off + first));
  const T* in = reinterpret_cast<const T*>(at(Buf::kInput, t.add_off + first));
  std::uint64_t wrong = 0;
  const Expectation& e = *ch.expect;
  switch (t.apply) {
    case Apply::kCopy:
      for (std::uint64_t i = 0; i < n; ++i) {
        wrong += !(d[i] == as_elem<T>(e.at(first + i)));
        out[i] = d[i];
      }
      break;
    case Apply::kAddInput:
      for (std::uint64_t i = 0; i < n; ++i) {
        wrong += !(d[i] == as_elem<T>(e.at(first + i)));
        out[i] = in[i] + d[i];
      }
      break;
    case Apply::kAddOutput:
      for (std::uint64_t i = 0; i < n; ++i) {
        wrong += !(d[i] == as_elem<T>(e.at(first + i)));
        out[i] += d[i];
      }
      break;
  }
  return wrong;
}

void CollRank::apply_arrivals(InChannel& ch) {
  const std::uint32_t before = ch.processed;
  const Schedule& sc = size_->schedule;
  while (ch.processed < ch.total) {
    const std::uint32_t slot = ch.processed % cfg_.slots;
    if (ch.arrived_len[slot] == 0) break;
    const auto ti = static_cast<std::size_t>(ch.xfers[ch.cur]);
    const Transfer& t = sc.transfers[ti];
    // Earlier steps' sends from the memory this overwrites are acknowledged (a retransmission
    // reads it again), and earlier steps' receives into it are applied (schedule.h hazards()).
    bool clear = true;
    for (std::int32_t h : size_->hazard[ti]) {
      const auto u = static_cast<std::size_t>(h >= 0 ? h : ~h);
      clear = clear && (h >= 0 ? completed_[u] == chunks_of(sc.transfers[u]) : delivered_[u] == sc.transfers[u].count);
    }
    if (!clear) break;
    const std::uint64_t first = ch.cur_chunk * chunk_elems_;
    const std::uint64_t n = std::min<std::uint64_t>(chunk_elems_, t.count - first);
    const std::uint8_t* data = staging_ + peers_[ch.peer].staging_off + std::uint64_t{slot} * cfg_.chunk_bytes;
    if (ch.arrived_len[slot] - 1 != n * elem_) {
      fail("chunk " + std::to_string(ch.processed) + " from rank " + std::to_string(peers_[ch.peer].rank) + " has " +
           std::to_string(ch.arrived_len[slot] - 1) + " bytes, not " + std::to_string(n * elem_));
      return;
    }
    if (!ch.expect) ch.expect.emplace(*keys_, t.contributors, t.key_dst, t.key_off);
    stats_.wrong_on_arrival += cfg_.dtype == DataType::kInt32 ? apply_chunk<std::int32_t>(t, ch, first, n, data)
                                                              : apply_chunk<float>(t, ch, first, n, data);
    ch.arrived_len[slot] = 0;
    delivered_[ti] = first + n;
    ++ch.processed;
    last_progress_tsc_ = now_tsc_;
    if (++ch.cur_chunk == chunks_of(t)) {
      ++ch.cur;
      ch.cur_chunk = 0;
      ch.expect.reset();
    }
  }
  if (ch.processed != before) {
    if (ch.processed == ch.total) ch.done_tsc = now_tsc_;
    send_credit(ch);
  }
}

void CollRank::send_credit(InChannel& ch) {
  // The sender may post chunk s once s < applied + slots: past total - slots it needs no more.
  const std::uint32_t needed = ch.total > cfg_.slots ? ch.total - cfg_.slots : 0;
  const std::uint32_t value = std::min(ch.processed, needed);
  if (value <= ch.credit_sent) return;
  rc::SendWr w;
  w.wr_id = kWrCredit;
  w.opcode = rc::WrOpcode::kSendWithImm;
  w.sge = rc::Sge{reinterpret_cast<std::uint64_t>(data_), 0, data_mr_.lkey};
  w.imm = imm_of(true, tag_, value);
  const Peer& p = peers_[ch.peer];
  if (!ep_.post_send(p.qpn[0], w).ok()) return;  // the queue is full: the next poll sends it
  ++credits_outstanding_;
  ch.credit_sent = value;
}

void CollRank::post_chunks(OutChannel& ch) {
  const Schedule& sc = size_->schedule;
  const Peer& p = peers_[ch.peer];
  while (ch.next_seq < ch.total && ch.next_seq < ch.credit_limit) {
    const auto ti = static_cast<std::size_t>(ch.xfers[ch.cur]);
    const Transfer& t = sc.transfers[ti];
    const std::uint64_t first = ch.cur_chunk * chunk_elems_;
    const std::uint64_t n = std::min<std::uint64_t>(chunk_elems_, t.count - first);
    // A forwarded range leaves once the transfer that brings it has applied it here.
    if (t.after >= 0) {
      const Transfer& u = sc.transfers[static_cast<std::size_t>(t.after)];
      if (delivered_[static_cast<std::size_t>(t.after)] < t.src_off + first + n - u.dst_off) break;
    }
    rc::SendWr w;
    w.wr_id = ti;
    w.opcode = rc::WrOpcode::kWriteWithImm;
    w.sge = rc::Sge{reinterpret_cast<std::uint64_t>(at(t.src_buf, t.src_off + first)),
                    static_cast<std::uint32_t>(n * elem_), data_mr_.lkey};
    w.remote_addr = p.remote_va + std::uint64_t{ch.next_seq % cfg_.slots} * cfg_.chunk_bytes;
    w.rkey = p.remote_rkey;
    w.imm = imm_of(false, tag_, ch.next_seq);
    if (!ep_.post_send(p.qpn[ch.next_seq % cfg_.qps_per_peer], w).ok()) break;  // full: next poll
    ++ch.next_seq;
    if (++ch.cur_chunk == chunks_of(t)) {
      ++ch.cur;
      ch.cur_chunk = 0;
    }
  }
}

void CollRank::check_done() {
  if (done_ || !started_) return;
  for (const auto& c : out_)
    if (c.completed < c.total) return;
  for (const auto& c : in_)
    if (c.processed < c.total) return;
  if (credits_outstanding_ != 0) return;
  done_ = true;
  done_tsc_ = now_tsc_;
}

}  // namespace droce::coll
