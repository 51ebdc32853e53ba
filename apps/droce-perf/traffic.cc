// perftest's traffic loops on droce. Every wait polls the endpoint and ends on progress, the
// run's end, a stop signal, or --timeout seconds without progress.
#include "apps/droce-perf/traffic.h"

#include <droce/engine/core/psn_source.h>
#include <droce/engine/core/stop_signal.h>
#include <droce/engine/exchange/oob_exchange.h>
#include <rte_cycles.h>

#include <algorithm>
#include <cstring>

#include "apps/droce-perf/test_mismatch.h"

namespace droce::perf {

using engine::PerftestTest;
using engine::Status;

namespace {

constexpr std::uint32_t kRxDepthSend = 512;      // perftest DEF_RX_SEND
constexpr std::uint32_t kCqModDefault = 100;     // DEF_CQ_MOD
constexpr std::uint32_t kCqModSizeLimit = 8192;  // MSG_SIZE_CQ_MOD_LIMIT: larger messages, every one signalled
constexpr std::uint64_t kPeakMaxIters = 20000;   // perftest stops computing the peak above this
constexpr std::uint8_t kMinRnrTimer = 12;        // MIN_RNR_TIMER

std::uint32_t pow2_at_least(std::uint32_t v) {
  std::uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// perftest's atomic operands (ATOMIC_ADD_VALUE, ATOMIC_SWAP_VALUE; a compare of 0, the buffers'
// initial value): FETCH_AND_ADD adds 1, CMP_AND_SWAP swaps 0 for 0.
constexpr std::uint64_t kAtomicAddValue = 1;
constexpr std::uint64_t kAtomicSwapValue = 0;
constexpr std::uint32_t kAtomicBytes = 8;  // IBTA §9.4.5: the target is 64 bits, naturally aligned

bool is_send(PerftestTest t) { return t == PerftestTest::kSendBw || t == PerftestTest::kSendLat; }
bool is_read(PerftestTest t) { return t == PerftestTest::kReadBw || t == PerftestTest::kReadLat; }

// perftest's SW rate limiter (run_iter_bw): a burst of `burst` requests may start every `gap`
// cycles, so the rate is burst / gap. A posting loop asks before each request. Bursts keep to a
// schedule rather than to the last one's start: a poller descheduled for a while (a loaded host)
// catches up by at most a quarter second of bursts (8 at least), so it neither loses its rate
// nor floods the link after.
class BurstPacer {
 public:
  BurstPacer(const RateLimit& r, std::uint32_t size, std::uint32_t burst, double share, double hz) {
    if (r.value <= 0) return;
    const double pps = r.pps(size) * share;
    burst_ = burst;
    if (pps > 0) gap_ = static_cast<std::uint64_t>(hz * burst / pps);
    catch_up_ = std::max(8 * gap_, static_cast<std::uint64_t>(hz / 4));
  }
  [[nodiscard]] bool may_post(std::uint64_t now) {
    if (gap_ == 0) return true;
    if (!in_burst_) {
      if (next_ == 0) next_ = now;
      if (now < next_) return false;
      next_ = std::max(next_ + gap_, now > catch_up_ ? now - catch_up_ : 0);
      in_burst_ = true;
      sent_ = 0;
    }
    return true;
  }
  void posted() {
    if (gap_ != 0 && ++sent_ >= burst_) in_burst_ = false;
  }

 private:
  std::uint64_t gap_ = 0, next_ = 0, catch_up_ = 0;
  std::uint32_t burst_ = 1, sent_ = 0;
  bool in_burst_ = false;
};

}  // namespace

void DurationClock::start(std::uint64_t now, double hz, std::uint32_t seconds, int margin_s) {
  const std::uint64_t margin =
      static_cast<std::uint64_t>((margin_s >= 0 ? static_cast<std::uint32_t>(margin_s) : seconds / 4) * hz);
  begin = now;
  sample_begin = now + margin;
  end = now + static_cast<std::uint64_t>(seconds * hz);
  sample_end = end - margin;
  running = true;
}

Traffic::Traffic(const Options& o, engine::Worker& worker, engine::MemoryRegistry& memory,
                 const engine::PerftestPreamble& pre, BufferStorage& storage, std::uint32_t qps)
    : o_(o), worker_(worker), ep_(worker.endpoint()), memory_(memory), pre_(pre), buf_(storage), qp_count_(qps) {
  hz_ = static_cast<double>(rte_get_tsc_hz());
  stall_tsc_ = static_cast<std::uint64_t>(o.timeout_s * hz_);
  tx_depth_ = o.tx_depth;
  // perftest: SEND receivers keep min(512, iterations) receives posted; RDMA tests post none.
  // -r sets it; -b's SEND sides both receive.
  const std::uint32_t rx = o.rx_depth != 0 ? o.rx_depth : kRxDepthSend;
  rx_depth_ =
      is_send(o.test) ? (o.duration_s != 0 ? rx : static_cast<std::uint32_t>(std::min<std::uint64_t>(rx, o.iters))) : 1;
  // perftest: -Q, else DEF_CQ_MOD (every request signalled above MSG_SIZE_CQ_MOD_LIMIT); never
  // more than the TX depth, or the window would close before a completion came.
  cq_mod_ = o.bw() ? std::min(o.cq_mod != 0 ? o.cq_mod : kCqModDefault, tx_depth_) : 1;
  if (o.bw() && o.cq_mod == 0 && o.size > kCqModSizeLimit && !o.all_sizes) cq_mod_ = 1;
}

Status Traffic::create() {
  std::uint32_t largest = 0;
  for (std::uint32_t s : o_.sizes()) largest = std::max(largest, s);
  const std::size_t cycle = pre_.cycle_buffer;
  region_ = (std::max<std::size_t>(largest, cycle) + cycle - 1) / cycle * cycle;
  const std::size_t total = std::size_t{2} * qp_count_ * region_;
  buf_.reset(static_cast<std::uint8_t*>(std::aligned_alloc(cycle, total)));
  if (!buf_)
    return Status::error(StatusCode::kNoMemory, "cannot allocate " + std::to_string(total) + " bytes of buffers");
  std::memset(buf_.get(), 0, total);  // write_lat polls bytes the peer has not written yet: they start at 0
  // Atomic tests: the peer's atomics target this region (perftest registers it with
  // IBV_ACCESS_REMOTE_ATOMIC for its ATOMIC verb); a responder checks that access (§9.7.5.1.3).
  const std::uint32_t remote_access =
      rc::kAccessRemoteWrite | rc::kAccessRemoteRead | (o_.atomic_test() ? rc::kAccessRemoteAtomic : 0u);
  if (Status s = memory_.register_memory(buf_.get(), total, rc::kAccessLocalWrite | remote_access, mr_); !s.ok())
    return s;
  engine::PsnSource psns = engine::PsnSource::from(o_.psn_seed);
  qps_.resize(qp_count_);
  for (auto& q : qps_) {
    rc::QpAttr a;
    a.pmtu = pre_.mtu;
    q.psn = psns.next();  // perftest: lrand48() & 0xffffff (docs/hardening.md, "First PSNs")
    a.sq_psn = q.psn;
    a.timeout = static_cast<std::uint8_t>(o_.qp_timeout);  // -u (perftest's DEF_QP_TIME 14 by default)
    a.adaptive_rto = o_.adaptive_rto;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.min_rnr_timer = kMinRnrTimer;
    a.access = remote_access;
    a.sq_depth = pow2_at_least(std::max<std::uint32_t>(tx_depth_, 16));
    a.rq_depth = pow2_at_least(std::max<std::uint32_t>(rx_depth_, 16));
    a.recv_mode = rc::RecvMode::kPostedBuffers;
    // perftest: our responder resources are the out_reads we advertise; our initiator depth
    // becomes the peer's at connect().
    a.max_dest_rd_atomic = a.max_rd_atomic = out_reads();
    if (Status s = ep_.create_qp(a, q.qpn); !s.ok()) return s;
  }
  return {};
}

std::vector<engine::PerftestKeys> Traffic::keys(const std::uint8_t local_gid[16]) const {
  std::vector<engine::PerftestKeys> out(qps_.size());
  for (std::uint32_t i = 0; i < qps_.size(); ++i) {
    auto& k = out[i];
    k.out_reads = static_cast<std::uint16_t>(out_reads());
    k.qpn = qps_[i].qpn;
    k.psn = qps_[i].psn;
    // The region the peer writes to or reads from; SEND tests give no remote access (rkey 0).
    k.rkey = is_send(o_.test) ? 0 : mr_.rkey;
    k.vaddr = reinterpret_cast<std::uint64_t>(recv_region(i));
    std::memcpy(k.gid, local_gid, 16);
  }
  return out;
}

std::uint32_t Traffic::out_reads() const { return engine::perftest_uses_out_reads(o_.test) ? o_.out_reads : 1; }

// The peer's out_reads are its responder resources: we keep at most that many READs or atomics
// outstanding (perftest's max_rd_atomic = dest->out_reads; §9.4.4: they share the credits). Fewer
// than it allows is always safe, so a value over what a QP takes is capped; a read or atomic test
// against a peer that answers none cannot run.
Status Traffic::check_peer(const engine::PerftestKeys& keys) const {
  if (engine::perftest_uses_out_reads(o_.test) && keys.out_reads == 0)
    return Status::error(StatusCode::kUnsupported, std::string("the peer advertises out_reads 0: it answers no ") +
                                                       (o_.atomic_test() ? "atomic" : "RDMA READ"));
  // Only the client issues atomics, at the peer's address and cache-line steps from it: a
  // misaligned one would be NAKed (§9.4.5), so say so before the run.
  if (o_.atomic_test() && !o_.server() && keys.vaddr % kAtomicBytes != 0)
    return Status::error(StatusCode::kPeer,
                         "the peer's buffer address " + std::to_string(keys.vaddr) +
                             " is not 8-byte aligned: atomics need a naturally aligned target (IBTA 9.4.5)");
  return {};
}

Status Traffic::set_initiator_depth(std::uint32_t i, const engine::PerftestKeys& keys) {
  rc::RcQp* qp = ep_.qp(qps_[i].qpn);
  if (qp == nullptr)
    return Status::error(StatusCode::kNotFound, "connect: QP " + std::to_string(qps_[i].qpn) + " is gone");
  if (Status s = check_peer(keys); !s.ok()) return s;
  rc::QpAttr a = qp->attr();
  a.max_rd_atomic = std::min<std::uint32_t>(keys.out_reads, rc::kMaxRdAtomic);
  if (Status st = qp->modify(rc::QpState::kInit, &a); !st.ok()) return st.context("connect: ");
  return {};
}

Status Traffic::connect(std::uint32_t i, const wire::L2L3Address& peer, const engine::PerftestKeys& keys) {
  qps_[i].peer = keys;
  if (Status s = set_initiator_depth(i, keys); !s.ok()) return s;
  return ep_.connect(qps_[i].qpn, engine::RemoteQp{peer, keys.qpn, keys.psn});
}

Status Traffic::take_peer(std::uint32_t i, const engine::PerftestKeys& keys) {
  qps_[i].peer = keys;
  return check_peer(keys);
}

rc::WcOpcode Traffic::atomic_wc_opcode() const {
  return o_.atomic == AtomicType::kCmpAndSwap ? rc::WcOpcode::kCompSwap : rc::WcOpcode::kFetchAdd;
}

rc::WrOpcode Traffic::request_opcode() const {
  if (is_send(o_.test)) return rc::WrOpcode::kSend;
  if (is_read(o_.test)) return rc::WrOpcode::kRead;
  if (o_.atomic_test()) return o_.atomic == AtomicType::kCmpAndSwap ? rc::WrOpcode::kCmpSwap : rc::WrOpcode::kFetchAdd;
  return rc::WrOpcode::kWrite;
}

Status Traffic::post_request(std::uint32_t i, std::uint32_t size, std::uint64_t remote_addr, bool signaled) {
  rc::SendWr w;
  w.wr_id = qps_[i].posted;
  w.signaled = signaled;
  w.opcode = request_opcode();
  // An atomic's local buffer takes the target's original value: 8 bytes (size is 8 for them).
  w.sge = {reinterpret_cast<std::uint64_t>(send_region(i)), size, mr_.lkey};
  w.remote_addr = remote_addr;
  w.rkey = qps_[i].peer.rkey;
  if (w.opcode == rc::WrOpcode::kFetchAdd) w.compare_add = kAtomicAddValue;
  if (w.opcode == rc::WrOpcode::kCmpSwap) w.swap = kAtomicSwapValue;  // compare_add stays 0
  return ep_.post_send(qps_[i].qpn, w);
}

Status Traffic::post_receive(std::uint32_t i, std::uint32_t size) {
  rc::RecvWr r;
  r.wr_id = qps_[i].recv_posted++;
  r.sge = {reinterpret_cast<std::uint64_t>(recv_region(i)), size, mr_.lkey};
  return ep_.post_recv(qps_[i].qpn, r);
}

void Traffic::prepare_receives(std::uint32_t size) {
  const bool receiver =
      o_.test == PerftestTest::kSendLat || (o_.test == PerftestTest::kSendBw && (o_.server() || o_.duplex));
  for (std::uint32_t i = 0; i < qps_.size(); ++i) {
    auto& q = qps_[i];
    q.recv_posted = q.received = 0;
    q.posted = q.completed = 0;
    if (!receiver) continue;
    for (std::uint32_t k = 0; k < rx_depth_; ++k)
      if (!post_receive(i, size).ok()) break;  // the receive queue is sized for rx_depth: cannot fail
  }
}

template <class F>
Status Traffic::poll(F&& on) {
  worker_.poll(rte_rdtsc());
  rc::Completion cs[32];
  for (std::uint32_t i = 0; i < qps_.size(); ++i) {
    for (int rounds = 0; rounds < 64; ++rounds) {
      const unsigned n = ep_.poll_cq(qps_[i].qpn, cs, 32);
      for (unsigned k = 0; k < n; ++k) {
        if (cs[k].status != rc::WcStatus::kSuccess) {
          char b[160];
          std::snprintf(b, sizeof(b), "QP %#06x: %s completion failed: %s", qps_[i].qpn,
                        cs[k].is_recv ? "receive" : "send", rc::wc_status_name(cs[k].status));
          return Status::error(StatusCode::kError, b);
        }
        // An atomic test's requests complete as the atomic posted (verbs' IBV_WC_COMP_SWAP /
        // IBV_WC_FETCH_ADD): anything else is not the operation the run measures.
        if (!cs[k].is_recv && o_.atomic_test() && cs[k].opcode != atomic_wc_opcode()) {
          char b[160];
          std::snprintf(b, sizeof(b), "QP %#06x: a request completed as opcode %u, not as the %s posted", qps_[i].qpn,
                        static_cast<unsigned>(cs[k].opcode), atomic_type_name(o_.atomic));
          return Status::error(StatusCode::kError, b);
        }
        if (Status s = on(i, cs[k]); !s.ok()) return s;
      }
      if (n < 32) break;
    }
  }
  return {};
}

Status Traffic::stalled(std::uint64_t now, std::uint64_t last_progress) {
  if (engine::stop_requested()) return Status::error(StatusCode::kError, "interrupted");
  const auto checks = ++stall_checks_;
  // The peer's requests, every 1024 rounds: one of a kind this test never receives names its test.
  if ((checks & 1023) == 0)
    if (std::string m = request_mismatch(o_, request_kinds()); !m.empty()) return Status::error(StatusCode::kPeer, m);
  // A system call per 4096 rounds: the peer's end shows within a millisecond or so.
  if (peer_closed_ && (checks & 4095) == 0 && peer_closed_())
    return Status::error(StatusCode::kPeer,
                         "the peer closed the control connection during the test (it ended or vanished)");
  if (now > last_progress && now - last_progress > stall_tsc_)
    return Status::error(StatusCode::kTimeout, "no progress for " + std::to_string(static_cast<int>(o_.timeout_s)) +
                                                   " s: the peer stopped answering (is it running the same test?)");
  return {};
}

std::uint64_t Traffic::remote_offset(std::uint64_t n, std::uint32_t size) const {
  // perftest's increase_rem_addr: small messages walk the peer's cycle buffer in cache-line
  // rounded steps; larger ones always target its start.
  if (size > pre_.cycle_buffer / 2) return 0;
  const std::uint64_t inc =
      size > pre_.cache_line ? (size + pre_.cache_line - 1) / pre_.cache_line * pre_.cache_line : pre_.cache_line;
  return (n % (pre_.cycle_buffer / inc)) * inc;
}

Status Traffic::run_bw(std::uint32_t size, BwRow& row) {
  const Status s = o_.server() && !o_.duplex ? bw_receiver(size, row) : bw_requester(size, row);
  return s.ok() ? s : peer_test_or(s);
}

std::uint8_t Traffic::request_kinds() const {
  std::uint8_t kinds = 0;
  for (const auto& q : qps_)
    if (const rc::RcQp* qp = ep_.qp(q.qpn); qp != nullptr) kinds |= received_request_kinds(qp->counters());
  return kinds;
}

// A run that failed against a peer running another test (its requests refused, our QP in error,
// or no answer) is told by the test, not by the symptom.
Status Traffic::peer_test_or(const Status& s) const {
  if (std::string m = request_mismatch(o_, request_kinds()); !m.empty()) return Status::error(StatusCode::kPeer, m);
  return s;
}

bool Traffic::signaled(std::uint64_t n) const {
  if (cq_mod_ <= 1) return true;
  return n % cq_mod_ == cq_mod_ - 1 || (o_.duration_s == 0 && n + 1 == o_.iters);
}

bool Traffic::requests_drained() {
  for (const auto& q : qps_) {
    const rc::RcQp* qp = ep_.qp(q.qpn);
    if (qp != nullptr && qp->outstanding_wrs() != 0) return false;
  }
  return true;
}

Status Traffic::received_one(std::uint32_t i, std::uint32_t size, bool duration) {
  ++qps_[i].received;
  if (duration || qps_[i].recv_posted < o_.iters) return post_receive(i, size);
  return {};
}

Status Traffic::run_lat(std::uint32_t size, LatRow& row) {
  Status s;
  switch (o_.test) {
    case PerftestTest::kSendLat:
      s = lat_send(size, row);
      break;
    case PerftestTest::kWriteLat:
      s = lat_write(size, row);
      break;
    default:
      s = lat_read(size, row);  // read_lat, atomic_lat: perftest's run_iter_lat
      break;
  }
  return s.ok() ? s : peer_test_or(s);
}

// run_iter_bw: up to tx_depth requests outstanding per QP, a completion every cq_mod of them;
// -b on send_bw is run_iter_bi: this side also receives the peer's SENDs (its receives were posted
// before the size's barrier and are reposted as they complete, so the peer meets no RNR NAK), the
// server sending from the peer's first arrival on, and the run ends once both directions are done.
Status Traffic::bw_requester(std::uint32_t size, BwRow& row) {
  const bool duration = o_.duration_s != 0;
  const bool receives = o_.duplex && is_send(o_.test);
  bool may_post = !(receives && o_.server());
  const std::uint64_t total = o_.iters * qps_.size();
  const bool peak = !duration && !o_.no_peak && total <= kPeakMaxIters;
  std::vector<std::uint64_t> posted_ts(peak ? total : 0), completed_ts(peak ? total : 0);
  std::uint64_t tot_posted = 0, tot_done = 0, first_post = 0, last_done = 0, sampled = 0, received = 0;
  std::uint64_t now = rte_rdtsc(), last_progress = now;
  // This worker's share of the rate (its QPs of -q), in bursts spread over all its QPs.
  BurstPacer pacer(o_.rate, size, o_.rate.burst != 0 ? o_.rate.burst : tx_depth_,
                   static_cast<double>(qps_.size()) / static_cast<double>(o_.qps), hz_);
  DurationClock dc;
  if (duration && may_post) dc.start(now, hz_, o_.duration_s, o_.margin_s);
  for (;;) {
    now = rte_rdtsc();
    const bool posting = may_post && (!duration || !dc.ended(now));
    for (std::uint32_t i = 0; posting && i < qps_.size(); ++i) {
      auto& q = qps_[i];
      while ((duration || q.posted < o_.iters) && q.posted - q.completed < tx_depth_) {
        const std::uint64_t t = rte_rdtsc();
        if (!pacer.may_post(t)) break;
        if (first_post == 0) first_post = t;
        if (peak) posted_ts[tot_posted] = t;
        const std::uint64_t remote = is_send(o_.test) ? 0 : q.peer.vaddr + remote_offset(q.posted, size);
        if (Status s = post_request(i, size, remote, signaled(q.posted)); !s.ok()) return s;
        pacer.posted();
        ++q.posted;
        ++tot_posted;
      }
    }
    Status s = poll([&](std::uint32_t i, const rc::Completion& c) -> Status {
      const std::uint64_t t = rte_rdtsc();
      if (c.is_recv) {
        if (!receives) return {};
        last_progress = t;
        ++received;
        if (!may_post) {  // the server's first arrival: its sends (and -D's clock) start now
          may_post = true;
          if (duration) dc.start(t, hz_, o_.duration_s, o_.margin_s);
        }
        if (duration && dc.sampling(t)) ++sampled;  // run_iter_bi counts both directions under -D
        return received_one(i, size, duration);
      }
      // One completion for every request of its QP up to it (-Q): wr_id is the request's number.
      auto& q = qps_[i];
      const std::uint64_t upto = c.wr_id + 1;
      const std::uint64_t n = upto > q.completed ? upto - q.completed : 0;
      q.completed += n;
      for (std::uint64_t k = 0; k < n; ++k, ++tot_done)
        if (peak && tot_done < total) completed_ts[tot_done] = t;
      last_done = last_progress = t;
      if (duration && dc.sampling(t)) sampled += n;
      return {};
    });
    if (!s.ok()) return s;
    if (!duration && tot_done >= total && (!receives || received >= total)) break;
    if (duration && dc.ended(now) && requests_drained()) break;
    if (Status st = stalled(rte_rdtsc(), last_progress); !st.ok()) return st;
  }
  if (duration)
    raw_ = {sampled, dc.sample_begin, dc.sample_end, {}, {}};
  else
    raw_ = {total, first_post, last_done, std::move(posted_ts), std::move(completed_ts)};
  row = bw_row(size, raw_.iters, raw_.first, raw_.last, raw_.posted, raw_.completed, cq_mod_, hz_, o_.report_gbits);
  return {};
}

// run_iter_bw_server: count receives, keep them posted (never more than the run needs); the clock
// starts at the first arrival.
Status Traffic::bw_receiver(std::uint32_t size, BwRow& row) {
  const bool duration = o_.duration_s != 0;
  const std::uint64_t total = o_.iters * qps_.size();
  std::uint64_t received = 0, first_rx = 0, sampled = 0;
  std::uint64_t now = rte_rdtsc(), last_progress = now;
  DurationClock dc;
  for (;;) {
    Status s = poll([&](std::uint32_t i, const rc::Completion& c) -> Status {
      if (!c.is_recv) return {};
      const std::uint64_t t = rte_rdtsc();
      if (first_rx == 0) {
        first_rx = t;
        if (duration) dc.start(t, hz_, o_.duration_s, o_.margin_s);
      }
      ++received;
      last_progress = t;
      if (dc.sampling(t)) ++sampled;
      return received_one(i, size, duration);
    });
    if (!s.ok()) return s;
    now = rte_rdtsc();
    if (!duration && received >= total) break;
    if (duration && dc.ended(now)) break;
    if (Status st = stalled(now, last_progress); !st.ok()) return st;
  }
  if (duration)
    raw_ = {sampled, dc.sample_begin, dc.sample_end, {}, {}};
  else
    raw_ = {total, first_rx, now, {}, {}};
  row = bw_row(size, raw_.iters, raw_.first, raw_.last, {}, {}, cq_mod_, hz_, o_.report_gbits);
  return {};
}

// run_iter_lat_send: the client sends first; each side waits for a message, then answers.
Status Traffic::lat_send(std::uint32_t size, LatRow& row) {
  const bool duration = o_.duration_s != 0, client = !o_.server();
  const std::uint64_t n = o_.iters;
  std::vector<std::uint64_t> posted;
  posted.reserve(duration ? 0 : n);
  std::uint64_t scnt = 0, rcnt = 0, arrived = 0, sent_done = 0, sampled = 0;
  std::uint64_t now = rte_rdtsc(), last_progress = now;
  DurationClock dc;
  if (duration && client) dc.start(now, hz_, o_.duration_s, o_.margin_s);
  auto pump = [&]() -> Status {
    return poll([&](std::uint32_t, const rc::Completion& c) -> Status {
      last_progress = rte_rdtsc();
      if (!c.is_recv) {
        ++sent_done;
        return {};
      }
      if (duration && !dc.running) dc.start(last_progress, hz_, o_.duration_s, o_.margin_s);  // the server's clock
      if (dc.sampling(last_progress)) ++sampled;
      ++arrived;
      if (duration || arrived + rx_depth_ <= n) return post_receive(0, size);
      return {};
    });
  };
  auto more = [&] { return duration ? !dc.ended(rte_rdtsc()) : (scnt < n || rcnt < n); };
  while (more()) {
    if ((duration || rcnt < n) && !(scnt < 1 && client)) {
      while (arrived <= rcnt) {
        if (Status s = pump(); !s.ok()) return s;
        now = rte_rdtsc();
        if (duration && dc.ended(now)) break;
        if (Status s = stalled(now, last_progress); !s.ok()) return s;
      }
      if (arrived <= rcnt) break;  // the duration ended while waiting
      ++rcnt;
    }
    if (duration ? !dc.ended(rte_rdtsc()) : scnt < n) {
      if (!duration) posted.push_back(rte_rdtsc());
      ++scnt;
      qps_[0].posted = scnt - 1;
      if (Status s = post_request(0, size, 0); !s.ok()) return s;
      while (sent_done < scnt) {
        if (Status s = pump(); !s.ok()) return s;
        if (Status s = stalled(rte_rdtsc(), last_progress); !s.ok()) return s;
      }
    }
  }
  row = duration ? lat_duration_row(size, sampled, dc.sample_seconds(hz_), 2) : lat_row(size, posted, 2, hz_);
  return {};
}

// run_iter_lat_write: the server writes first; each side polls the last byte of its own region
// for the peer's next count, then writes its own count in the last byte of its message.
Status Traffic::lat_write(std::uint32_t size, LatRow& row) {
  const bool duration = o_.duration_s != 0, server = o_.server();
  const std::uint64_t n = o_.iters;
  std::vector<std::uint64_t> posted;
  posted.reserve(duration ? 0 : n);
  volatile std::uint8_t* post_byte = send_region(0) + size - 1;
  const volatile std::uint8_t* poll_byte = recv_region(0) + size - 1;
  std::uint64_t scnt = 0, ccnt = 0, rcnt = 0, sent_done = 0, sampled = 0;
  std::uint64_t now = rte_rdtsc(), last_progress = now;
  DurationClock dc;
  if (duration) dc.start(now, hz_, o_.duration_s, o_.margin_s);
  auto pump = [&]() -> Status {
    return poll([&](std::uint32_t, const rc::Completion& c) -> Status {
      if (!c.is_recv) ++sent_done;
      last_progress = rte_rdtsc();
      return {};
    });
  };
  auto ended = [&] { return duration && dc.ended(rte_rdtsc()); };
  while (duration ? !ended() : (scnt < n || ccnt < n || rcnt < n)) {
    if ((duration || rcnt < n) && !(scnt < 1 && server)) {
      ++rcnt;
      while (*poll_byte != static_cast<std::uint8_t>(rcnt) && !ended()) {
        if (Status s = pump(); !s.ok()) return s;
        if (*poll_byte == static_cast<std::uint8_t>(rcnt)) last_progress = rte_rdtsc();
        if (Status s = stalled(rte_rdtsc(), last_progress); !s.ok()) return s;
      }
    }
    if (duration ? !ended() : scnt < n) {
      if (!duration) posted.push_back(rte_rdtsc());
      *post_byte = static_cast<std::uint8_t>(++scnt);
      qps_[0].posted = scnt - 1;
      if (Status s = post_request(0, size, qps_[0].peer.vaddr); !s.ok()) return s;
    }
    if (duration ? ccnt < scnt : ccnt < n) {
      while (sent_done <= ccnt) {
        if (Status s = pump(); !s.ok()) return s;
        if (Status s = stalled(rte_rdtsc(), last_progress); !s.ok()) return s;
      }
      ++ccnt;
      if (dc.sampling(rte_rdtsc())) ++sampled;
    }
  }
  row = duration ? lat_duration_row(size, sampled, dc.sample_seconds(hz_), 2) : lat_row(size, posted, 2, hz_);
  return {};
}

// run_iter_lat: one READ (read_lat) or atomic (atomic_lat) at a time on the start of the peer's
// region; the latency is the whole round trip (perftest's rtt factor 1 for READ and ATOMIC).
Status Traffic::lat_read(std::uint32_t size, LatRow& row) {
  const bool duration = o_.duration_s != 0;
  const std::uint64_t n = o_.iters;
  std::vector<std::uint64_t> posted;
  posted.reserve(duration ? 0 : n);
  std::uint64_t scnt = 0, done = 0, sampled = 0;
  std::uint64_t last_progress = rte_rdtsc();
  // atomic_lat hits one word of the peer's region, one atomic at a time, and nothing else touches
  // it: whatever the word first held (droce zeroes its region, perftest fills its own with random
  // bytes), FETCH_AND_ADD's k-th returns that plus k, and CMP_AND_SWAP (0 for 0: a swap that
  // changes nothing, or no swap) returns it every time. Counted, not fatal: perftest checks none.
  const bool atomic = o_.atomic_test();
  const std::uint64_t step = o_.atomic == AtomicType::kFetchAndAdd ? kAtomicAddValue : 0;
  std::uint64_t first_original = 0;
  DurationClock dc;
  if (duration) dc.start(last_progress, hz_, o_.duration_s, o_.margin_s);
  while (duration ? !dc.ended(rte_rdtsc()) : scnt < n) {
    if (!duration) posted.push_back(rte_rdtsc());
    qps_[0].posted = scnt++;
    if (Status s = post_request(0, size, qps_[0].peer.vaddr); !s.ok()) return s;
    while (done < scnt) {
      Status s = poll([&](std::uint32_t, const rc::Completion& c) -> Status {
        if (c.is_recv) return {};
        if (atomic) {
          std::uint64_t original = 0;
          std::memcpy(&original, send_region(0), sizeof(original));
          if (done == 0) first_original = original;
          ++atomic_checked_;
          if (original != first_original + done * step) ++atomic_mismatches_;
        }
        ++done;
        last_progress = rte_rdtsc();
        if (dc.sampling(last_progress)) ++sampled;
        return {};
      });
      if (!s.ok()) return s;
      if (Status st = stalled(rte_rdtsc(), last_progress); !st.ok()) return st;
    }
  }
  row = duration ? lat_duration_row(size, sampled, dc.sample_seconds(hz_), 1) : lat_row(size, posted, 1, hz_);
  return {};
}

TransportTotals Traffic::totals() {
  TransportTotals t;
  for (const auto& q : qps_) {
    const rc::RcQp* qp = ep_.qp(q.qpn);
    if (qp == nullptr) continue;
    const auto& c = qp->counters();
    t.retransmitted += c.retransmitted_packets;
    t.naks_sent += c.naks_sent;
    t.naks_received += c.naks_received;
    t.ack_timeouts += c.local_ack_timeout_err;
    t.rnr_naks += c.rnr_naks_received;
    t.rnr_naks_sent += c.rnr_naks_sent;
    t.implied_naks += c.implied_nak_seq_err;
    t.duplicate_responses += c.duplicate_responses;
    t.adaptive_timeouts += c.adaptive_timeouts;
    t.tail_probes += c.tail_probes;
    t.spurious_retransmits += c.spurious_retransmits;
  }
  return t;
}

}  // namespace droce::perf
