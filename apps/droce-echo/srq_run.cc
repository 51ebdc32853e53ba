// droce-echo's run with --peer srq_pingpong (see srq_run.h).
//
// ibv_srq_pingpong's counting (rdma-core libibverbs/examples/srq_pingpong.c): -n counts
// completions over all QPs together, not per QP: each side runs until it has had -n receive and
// -n send completions. Its client starts one SEND on every QP and sends again on a QP once both
// that QP's SEND and a reply on it have completed, while fewer than -n SENDs have completed: it
// may send up to -q - 1 requests past -n. Its server answers each request on the QP it arrived on
// while fewer than -n replies have completed. So here:
//   server: answers the first --warmup + --count requests (those past it are acknowledged by the
//           transport, counted and not answered: the tool's client needs exactly -n replies, and
//           may have exited before an extra reply could be acknowledged), and ends once every
//           reply is acknowledged and at least that many requests arrived;
//   client: sends exactly --warmup + --count requests, one in flight per QP, and ends once every
//           reply has arrived and every request is acknowledged (the tool's server needs -n of
//           each and gets no more).
// Both then linger (end_linger.h, TCP's TIME_WAIT): between two droce-echo processes each side
// polls on until the other has said FIN over the control connection, so every last ACK that was
// lost is asked for again and given; a retry-exhausted send then is an error. The tool exits
// (destroying its QPs) as soon as its counts are reached, so an ACK of its that got lost is never
// repeated: a request of ours whose reply has arrived evidently got through, and once a server
// has sent all its replies, a QP's newest may be the client's last while an older one was
// followed by the client's next request on that QP (so it arrived); against the tool (the
// control connection closed without FIN) a retry-exhausted completion of either is that race,
// counted apart (the peer's exit status is the verdict on those replies), not an error. A QP that
// ends in error flushes its outstanding work (IBTA §10.3.1), the receive it took from the SRQ for
// a request that never completed included (the tool's client exits with requests in flight):
// flushes are counted apart too, since each follows its QP's first error, which is counted (or is
// the tail above).
// Data: the tool sends and receives in one buffer, so its server answers with whatever request
// landed there last. The client therefore sends one pattern on every QP and checks every reply
// against it; the server checks every request against the first one. Both check the length
// (--size, the tool's -s).
#include "apps/droce-echo/srq_run.h"

#include <droce/engine/core/stop_signal.h>
#include <rte_cycles.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/common/counters_json.h"
#include "apps/common/latency_histogram.h"
#include "apps/common/output_file.h"
#include "apps/droce-echo/end_linger.h"

namespace droce::echo {

using engine::Status;

namespace {

constexpr std::uint64_t kSendTag = std::uint64_t{1} << 63;  // a send's wr_id: the tag | its slot or QP index

struct QpState {
  std::uint32_t qpn = 0;
  bool send_pending = false, reply_pending = false;  // client: the exchange in flight
  std::uint64_t t0 = 0;                              // client: when its request left
  std::uint64_t received = 0;                        // requests (server) or replies (client) on it
};

class SrqPingpong {
 public:
  SrqPingpong(const Options& o, Setup& st)
      : o_(o),
        st_(st),
        ep_(st.group->worker(0).endpoint()),
        server_(o.mode == "server"),
        total_(o.warmup + o.count),
        bufs_(std::size_t{o.rx_depth} * o.size),
        req_(o.size) {
    for (const QpPlace& q : st.own_qps) qps_.push_back(QpState{q.qpn});
    for (std::uint32_t i = 0; i < o.size; ++i) req_[i] = static_cast<std::uint8_t>(i * 7 + 0x5a);
  }

  // The buffers registered and every receive posted; the limit armed at one receive per QP (the
  // tool refills when that few are left).
  Status start() {
    engine::MemoryRegistry& mem = *st_.memories[0];
    if (Status s = mem.register_memory(bufs_.data(), bufs_.size(), rc::kAccessLocalWrite, mr_); !s.ok()) return s;
    if (Status s = mem.register_memory(req_.data(), req_.size(), rc::kAccessLocalWrite, req_mr_); !s.ok()) return s;
    for (std::uint32_t k = 0; k < o_.rx_depth; ++k)
      if (Status s = repost(k); !s.ok()) return s;
    if (Status s = ep_.arm_srq_limit(st_.srq_id, static_cast<std::uint32_t>(qps_.size())); !s.ok()) return s;
    if (!server_)
      for (std::size_t i = 0; i < qps_.size(); ++i) send_request(i);
    return {};
  }

  // One iteration: the worker, then every completion of every QP.
  void step(std::uint64_t now) {
    st_.group->worker(0).poll(now);
    rc::Completion c[32];
    for (unsigned n = ep_.poll_cq(c, 32), i = 0; i < n; ++i) on_completion(c[i]);
    // Receives go back as completions come; the limit event says the queue ran nearly dry anyway
    // (every QP's receive held by a reply in flight): counted, and armed again.
    if (ep_.srq_limit_reached(st_.srq_id)) {
      ++limit_events_;
      (void)ep_.arm_srq_limit(st_.srq_id, static_cast<std::uint32_t>(qps_.size()));
    }
  }

  [[nodiscard]] bool finished() const { return errors_ != 0 || counts_reached(); }
  [[nodiscard]] bool counts_reached() const {
    return (server_ ? requests_ >= total_ : replies_ == total_) && sends_done_ + unacked_tail_ == total_;
  }
  [[nodiscard]] std::uint64_t progress() const { return requests_ + replies_ + sends_done_; }

  int report(bool stalled, const EndLinger& linger) const {
    // The tail is the tool's last-ACK race only where the peer is the tool; a droce-echo peer
    // lingered until our FIN, so a send it never acknowledged is lost.
    const bool droce_peer = linger.peer() == EndLinger::Peer::kFin;
    const std::uint64_t errors = errors_ + (droce_peer ? unacked_tail_ : 0);
    const std::uint64_t unanswered = requests_ > replies_posted_ ? requests_ - replies_posted_ : 0;
    if (server_) {
      std::printf(
          "droce-echo server (srq_pingpong): %zu QPs on one SRQ of %u receives: %llu requests, %llu answered and "
          "acknowledged (%llu past the count, unanswered), %llu not --size bytes or differing from the first",
          qps_.size(), o_.rx_depth, ull(requests_), ull(sends_done_), ull(unanswered), ull(bad_));
    } else {
      std::printf(
          "droce-echo client (srq_pingpong): %zu QPs on one SRQ of %u receives: %llu round trips of %u bytes "
          "after %llu warm-up, %llu bad replies, %llu requests acknowledged",
          qps_.size(), o_.rx_depth, ull(hist_.count()), o_.size, ull(o_.warmup), ull(bad_), ull(sends_done_));
    }
    std::printf(", %llu errors, %llu SRQ limit events%s\n", ull(errors), ull(limit_events_),
                stalled ? ", STALLED (no completion within --timeout)" : "");
    if (flushed_ != 0) std::printf("  %llu work requests flushed (their QP had ended in error)\n", ull(flushed_));
    if (unacked_tail_ != 0 && droce_peer)
      std::printf(server_ ? "  %llu last replies never acknowledged though the client (droce-echo) lingered: lost\n"
                          : "  %llu requests never acknowledged though the server (droce-echo) lingered: lost\n",
                  ull(unacked_tail_));
    else if (unacked_tail_ != 0)
      std::printf(server_ ? "  %llu last replies never acknowledged: the client (ibv_srq_pingpong) exits once its "
                            "counts are reached, so its lost ACK is never repeated (the last-ACK race); its exit "
                            "status says whether they arrived\n"
                          : "  %llu requests never acknowledged though answered: the server (ibv_srq_pingpong) "
                            "exits once its counts are reached, so its lost ACK is never repeated (the last-ACK "
                            "race); its reply shows the request arrived\n",
                  ull(unacked_tail_));
    std::printf("  end: %s, lingered %.0f ms\n",
                droce_peer                                  ? "the peer said FIN"
                : linger.peer() == EndLinger::Peer::kClosed ? "the peer had closed the control connection"
                                                            : "no FIN from the peer within --timeout",
                linger.lingered_ms());
    if (!server_)
      std::printf("  RTT ns: min %llu  p50 %llu  p90 %llu  p99 %llu  max %llu\n", ull(hist_.min()),
                  ull(hist_.percentile(0.5)), ull(hist_.percentile(0.9)), ull(hist_.percentile(0.99)),
                  ull(hist_.max()));
    if (errors_ != 0) std::printf("  first error: %s\n", first_error_.c_str());
    const char* peer_end = droce_peer ? "fin" : linger.peer() == EndLinger::Peer::kClosed ? "closed" : "silent";
    if (!st_.impairments.empty()) std::printf("  %s\n", st_.impairments.line().c_str());
    const bool interrupted = engine::stop_requested();
    if (interrupted) std::fprintf(stderr, "droce-echo: interrupted\n");
    if (!o_.json.empty()) {
      nlohmann::json per_qp = nlohmann::json::array();
      for (const QpState& q : qps_) per_qp.push_back(q.received);
      nlohmann::json j = {{"mode", o_.mode},          {"peer", o_.peer},
                          {"qps", qps_.size()},       {"rx_depth", o_.rx_depth},
                          {"size", o_.size},          {"requests", requests_},
                          {"replies", replies_},      {"sends_completed", sends_done_},
                          {"unanswered", unanswered}, {"unacked_tail", unacked_tail_},
                          {"flushed", flushed_},      {"bad", bad_},
                          {"errors", errors},         {"limit_events", limit_events_},
                          {"stalled", stalled},       {"interrupted", interrupted},
                          {"per_qp_received", per_qp}};
      j["peer_end"] = peer_end;  // fin: a droce-echo peer; closed: ibv_srq_pingpong (or gone); silent
      j["linger_ms"] = linger.lingered_ms();
      if (!server_)
        j["rtt_ns"] = {{"min", hist_.min()},
                       {"p50", hist_.percentile(0.5)},
                       {"p99", hist_.percentile(0.99)},
                       {"max", hist_.max()}};
      const engine::RcEndpoint* eps[] = {&ep_};
      const engine::CounterSums sums = apps::counter_sums(eps);
      j["hw_counters"] = apps::hw_counters_json(sums);
      j["drop_reasons"] = apps::drop_reasons_json(sums, st_.impairments.tally().dropped());
      if (!st_.impairments.empty()) j["impairment"] = st_.impairments.json();
      apps::stamp_report(j);
      if (Status s = apps::write_text_file(o_.json, j.dump(2) + "\n"); !s.ok()) {
        std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str());
        return 1;
      }
    }
    return counts_reached() && errors == 0 && bad_ == 0 && !stalled && !interrupted ? 0 : 1;
  }

 private:
  static unsigned long long ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }
  std::uint8_t* slot(std::uint64_t k) { return bufs_.data() + k * o_.size; }

  Status repost(std::uint64_t k) {
    return ep_.post_srq_recv(st_.srq_id, rc::RecvWr{k, {reinterpret_cast<std::uint64_t>(slot(k)), o_.size, mr_.lkey}});
  }
  void error(const std::string& what) {
    if (errors_++ == 0) first_error_ = what;
  }
  QpState* find(std::uint32_t qpn) {
    for (QpState& q : qps_)
      if (q.qpn == qpn) return &q;
    return nullptr;
  }

  // Client: the next request on QP i, while fewer than the total have been sent.
  void send_request(std::size_t i) {
    QpState& q = qps_[i];
    if (requests_sent_ >= total_ || q.send_pending || q.reply_pending) return;
    rc::SendWr w;
    w.wr_id = kSendTag | i;
    w.sge = {reinterpret_cast<std::uint64_t>(req_.data()), o_.size, req_mr_.lkey};
    q.t0 = rte_rdtsc();
    if (Status s = ep_.post_send(q.qpn, w); !s.ok())
      return error("request on QP " + std::to_string(q.qpn) + ": " + s.message());
    ++requests_sent_;
    q.send_pending = q.reply_pending = true;
  }

  void on_completion(const rc::Completion& c) {
    QpState* q = find(c.qp_num);
    if (q == nullptr) return error("a completion of unknown QP " + std::to_string(c.qp_num));
    if (c.status == rc::WcStatus::kWrFlushErr) {
      ++flushed_;
      if (c.is_recv || server_) (void)repost(c.wr_id & ~kSendTag);  // its buffer is free again
      return;
    }
    // Server: once every reply was sent, a retry-exhausted reply is the tail race whichever reply of
    // its QP it is: the QP's newest may be the client's last, and an older one was followed on that
    // QP by the request its newer reply answers, which the client sends only once the older reply
    // arrived (see the top of this file).
    if (!c.is_recv && c.status == rc::WcStatus::kRetryExcErr &&
        (server_ ? replies_posted_ == total_ : !q->reply_pending)) {
      ++unacked_tail_;  // see the top of this file
      if (server_) (void)repost(c.wr_id & ~kSendTag);
      q->send_pending = false;
      return;
    }
    if (c.status != rc::WcStatus::kSuccess)
      return error(std::string(c.is_recv ? "receive" : "send") + " on QP " + std::to_string(c.qp_num) + ": " +
                   rc::wc_status_name(c.status));
    if (!c.is_recv) {
      ++sends_done_;
      if (server_) {
        if (Status s = repost(c.wr_id & ~kSendTag); !s.ok()) error("reposting a receive: " + s.message());
      } else {
        q->send_pending = false;
        send_request(c.wr_id & ~kSendTag);
      }
      return;
    }
    const std::uint64_t k = c.wr_id;
    const std::uint8_t* data = slot(k);
    ++q->received;
    if (server_) {
      ++requests_;
      if (requests_ == 1) ref_.assign(data, data + c.byte_len);
      bad_ += c.byte_len != o_.size || c.byte_len != ref_.size() || std::memcmp(data, ref_.data(), ref_.size()) != 0;
      if (replies_posted_ < total_) {
        // The reply goes out of the buffer the request landed in; that receive returns to the
        // SRQ once the reply is acknowledged.
        rc::SendWr w;
        w.wr_id = kSendTag | k;
        w.sge = {reinterpret_cast<std::uint64_t>(data), c.byte_len, mr_.lkey};
        if (Status s = ep_.post_send(c.qp_num, w); !s.ok())
          return error("reply on QP " + std::to_string(c.qp_num) + ": " + s.message());
        ++replies_posted_;
        return;
      }
    } else {
      ++replies_;
      if (replies_ > o_.warmup)
        hist_.record(static_cast<std::uint64_t>(static_cast<double>(rte_rdtsc() - q->t0) * 1e9 /
                                                static_cast<double>(rte_get_tsc_hz())));
      bad_ += c.byte_len != o_.size || std::memcmp(data, req_.data(), o_.size) != 0;
      q->reply_pending = false;
    }
    if (Status s = repost(k); !s.ok()) error("reposting a receive: " + s.message());
    if (!server_) send_request(static_cast<std::size_t>(q - qps_.data()));
  }

  const Options& o_;
  Setup& st_;
  engine::RcEndpoint& ep_;
  const bool server_;
  const std::uint64_t total_;
  std::vector<std::uint8_t> bufs_;  // --rx-depth slots of --size bytes: the SRQ's receives
  std::vector<std::uint8_t> req_;   // client: the one request pattern
  std::vector<std::uint8_t> ref_;   // server: the first request
  rc::MemoryRegion mr_, req_mr_;
  std::vector<QpState> qps_;
  engine::LatencyHistogram hist_;
  std::uint64_t requests_ = 0, replies_ = 0, replies_posted_ = 0, requests_sent_ = 0, sends_done_ = 0;
  std::uint64_t bad_ = 0, errors_ = 0, limit_events_ = 0, unacked_tail_ = 0, flushed_ = 0;
  std::string first_error_;
};

}  // namespace

int run_srq(const Options& o, Setup& st) {
  SrqPingpong run(o, st);
  const Status started = run.start();
  if (!started.ok()) std::fprintf(stderr, "droce-echo: %s\n", started.message().c_str());
  std::printf("droce-echo %s: connected, %zu QPs on one shared receive queue, %llu exchanges to go\n", o.mode.c_str(),
              st.own_qps.size(), static_cast<unsigned long long>(o.warmup + o.count));
  std::fflush(stdout);
  const auto stall_tsc = static_cast<std::uint64_t>(o.timeout_s * static_cast<double>(rte_get_tsc_hz()));
  std::uint64_t last = rte_rdtsc(), seen = 0;
  bool stalled = false;
  while (started.ok() && !engine::stop_requested() && !run.finished()) {
    const std::uint64_t now = rte_rdtsc();
    run.step(now);
    if (run.progress() != seen) {
      seen = run.progress();
      last = now;
    } else if (now - last > stall_tsc) {
      stalled = true;
      break;
    }
  }
  // After the last exchange: FIN to a droce-echo peer, and our QPs answer on (our final ACKs
  // leave, a peer's retransmission whose ACK we lost is acknowledged again) until the peer has
  // finished too (end_linger.h), instead of leaving it to exhaust its retries against a stopped port.
  EndLinger linger(st.oob, rte_get_tsc_hz(), o.timeout_s);
  linger.start(rte_rdtsc());
  for (std::uint64_t now = rte_rdtsc(); started.ok() && !stalled && !engine::stop_requested() && linger.lingering(now);
       now = rte_rdtsc())
    run.step(now);
  if (st.port) st.port->stop();
  st.group->finish();
  const int rc = run.report(stalled, linger);
  return started.ok() ? rc : 1;
}

}  // namespace droce::echo
