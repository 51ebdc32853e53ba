// droce-gen's job: the workload of one worker's QPs, polled on its lcore (see job.h).
#include "apps/droce-gen/job.h"

#include <droce/engine/core/stop_signal.h>
#include <droce/engine/lab/loopback_lab.h>
#include <droce/engine/workers/worker_group.h>
#include <rte_cycles.h>
#include <rte_pause.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "apps/droce-gen/failure_text.h"
#include "apps/droce-gen/split.h"

namespace droce::gen {

void FigureTotals::add(const JobFigures& f) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  messages += f.messages.load(kRelaxed);
  bytes += f.bytes.load(kRelaxed);
  all_messages += f.all_messages.load(kRelaxed);
  all_bytes += f.all_bytes.load(kRelaxed);
  errors += f.errors.load(kRelaxed);
  retx += f.retransmitted.load(kRelaxed);
  naks_sent += f.naks_sent.load(kRelaxed);
  naks_received += f.naks_received.load(kRelaxed);
  rnr += f.rnr_naks.load(kRelaxed);
  cnps_sent += f.cnps_sent.load(kRelaxed);
  cnps_received += f.cnps_received.load(kRelaxed);
  ack_timeouts += f.ack_timeouts.load(kRelaxed);
  scheduled += f.scheduled.load(kRelaxed);
  posted += f.posted.load(kRelaxed);
  late += f.late.load(kRelaxed);
  shed += f.shed.load(kRelaxed);
}

using engine::RcEndpoint;

void Job::poll_through(engine::LoopbackLab* lab, RcEndpoint* ep, engine::Worker* worker) {
  lab_ = lab;
  ep_ = ep;
  worker_ = worker;
  if (lab != nullptr)
    eps_ = {&lab->a(), &lab->b()};
  else if (worker != nullptr)
    eps_ = {&worker->endpoint()};
  else
    eps_ = {ep};
}

void Job::plan(const RunPlan& plan, std::uint32_t active, std::uint64_t count, double msg_rate) {
  plan_ = plan;
  active_reqs_ = std::min<std::uint32_t>(active, static_cast<std::uint32_t>(reqs_.size()));
  active_rsps_ = std::min<std::uint32_t>(active, static_cast<std::uint32_t>(rsps_.size()));
  index_qpns(reqs_, active_reqs_, req_index_);
  index_qpns(rsps_, active_rsps_, rsp_index_);
  count_ = count;
  plan_lanes(msg_rate);
  plan_stripes();
  late_after_tsc_ = static_cast<std::uint64_t>(plan.hz * static_cast<double>(kLateAfterNs) / 1e9);
  shed_after_tsc_ = static_cast<std::uint64_t>(plan.hz * static_cast<double>(kShedAfterNs) / 1e9);
  for (auto& q : reqs_) q.due_tsc.assign(q.post_tsc.size(), 0);
  last_run_ = plan.start_tsc;
  measuring_ = plan.opt->warmup_s == 0;
  next_publish_ = plan.start_tsc;
  // A sweep's next size counts afresh (the previous one's figures were taken while parked).
  reset_measures();
  total_posted_ = 0;
  figures_.ended.store(false, std::memory_order_relaxed);
  // Per-QP figures for the live feed (since the start, across a sweep's sizes): the requesters'
  // (a server: the responders').
  if (figures_.qp_messages) return;
  figures_.qp_entries = static_cast<std::uint32_t>(plan.server ? rsps_.size() : reqs_.size());
  figures_.qp_messages = std::make_unique<std::atomic<std::uint64_t>[]>(figures_.qp_entries);
  figures_.qp_bytes = std::make_unique<std::atomic<std::uint64_t>[]>(figures_.qp_entries);
}

void Job::plan_lanes(double msg_rate) {
  const Options& o = *plan_.opt;
  const double hz = plan_.hz;
  // A workload's open-loop schedule at `rate` messages/s from `start` (its own stream of --seed).
  auto schedule = [&](const Options& w, double rate, std::uint64_t stream, std::uint64_t start) {
    return rate > 0 && !plan_.server ? ArrivalSchedule(w.arrivals, hz / rate, w.burst, o.seed, stream, start,
                                                       OnOffPeriod{w.on_us * 1e-6 * hz, w.off_us * 1e-6 * hz})
                                     : ArrivalSchedule{};
  };
  lanes_.assign(std::max<std::size_t>(1, o.groups.size()), Lane{});
  for (Requester& q : reqs_) {
    q.opt = &o.workload_of(q.index);
    q.lane = o.group_of(q.index);
  }
  for (Responder& r : rsps_) r.opt = &o.workload_of(r.index);
  if (o.groups.empty()) {  // the whole run, from its first iteration to its last
    lanes_[0].inflight = plan_.slots;
    if (active_reqs_ > 0) lanes_[0].schedule = schedule(o, msg_rate, index_, plan_.start_tsc);
    return;
  }
  for (std::uint32_t g = 0; g < o.groups.size(); ++g) {
    const FlowGroup& fg = o.groups[g];
    const Options& w = fg.workload;
    Lane& l = lanes_[g];
    l.start_tsc = plan_.start_tsc + static_cast<std::uint64_t>(fg.start_s * hz);
    if (fg.stop_s > 0) l.stop_tsc = plan_.start_tsc + static_cast<std::uint64_t>(fg.stop_s * hz);
    l.inflight = w.inflight;
    // The group's offered load, split over its QPs: this job carries its QPs' share.
    std::uint32_t mine = 0;
    for (std::uint32_t i = 0; i < active_reqs_; ++i) mine += reqs_[i].lane == g ? 1 : 0;
    if (mine > 0)
      l.schedule = schedule(w, w.offered_msg_rate() * mine / w.qps, index_ | std::uint64_t{g + 1} << 16, l.start_tsc);
  }
}

void Job::plan_stripes() {
  const std::uint32_t k = plan_.opt->split;
  for (std::uint32_t i = 0; i < reqs_.size(); ++i) reqs_[i].stripe = i - i % k, reqs_[i].part = i % k;
  for (std::uint32_t i = 0; i < rsps_.size(); ++i) rsps_[i].stripe = i - i % k, rsps_[i].part = i % k;
}

std::vector<GroupFigures> Job::group_figures() const {
  std::vector<GroupFigures> v;
  if (plan_.opt == nullptr || plan_.opt->groups.empty()) return v;
  for (const Lane& l : lanes_) v.push_back(l.figs);
  return v;
}

void Job::reset_measures() {
  t_ = Totals{};
  for (Responder& r : rsps_) r.t = Totals{};
  hist_ = engine::LatencyHistogram{};
  service_ = engine::LatencyHistogram{};
  load_ = LoadCounters{};
  ops_ = PerOp{};
  sizes_ = PerSize{};
  for (Lane& l : lanes_) l.figs = GroupFigures{};
}

int Job::lcore_main(void* arg) {
  Job& j = *static_cast<Job*>(arg);
  // The main lcore starts every job at once; until then nothing here is touched.
  while (j.phase_.load(std::memory_order_acquire) == Phase::kWait) rte_pause();
  for (;;) {
    const Phase p = j.phase_.load(std::memory_order_acquire);
    if (p == Phase::kStop) break;
    const std::uint64_t now = rte_rdtsc();
    if (p == Phase::kRun && !engine::stop_requested() && !j.figures_.ended.load(std::memory_order_relaxed)) {
      j.run_once(now);
      continue;
    }
    if (p == Phase::kPause) {
      // Parked: the main lcore plans the next size; nothing here may touch the job meanwhile.
      if (!j.figures_.parked.load(std::memory_order_relaxed))
        (void)j.pause_once(now);
      else
        rte_pause();
      continue;
    }
    if (p == Phase::kDrain && !j.figures_.draining.load(std::memory_order_relaxed)) {
      j.publish(now);
      j.enter_drain();
    }
    j.poll_only(now);
  }
  j.publish(rte_rdtsc());
  j.leave();
  return 0;
}

void Job::poll_transport(std::uint64_t now) {
  if (lab_ != nullptr)
    lab_->poll(now);
  else if (worker_ != nullptr)
    worker_->poll(now);
  else
    ep_->poll(now);
}

void Job::poll_only(std::uint64_t now) { poll_transport(now); }

bool Job::in_flight() const {
  for (std::uint32_t i = 0; i < active_reqs_; ++i)
    if (reqs_[i].completed != reqs_[i].posted) return true;
  return false;
}

bool Job::pause_once(std::uint64_t now) {
  if (figures_.parked.load(std::memory_order_relaxed)) return true;
  // run_once posts nothing outside kRun: this completes and verifies what is in flight. In
  // loopback a requester's completion follows its responder's (the ACK leaves after the
  // message was verified), so nothing in flight means both ends are done.
  run_once(now);
  if (in_flight() && t_.errors == 0) return false;
  publish(rte_rdtsc());
  figures_.parked.store(true, std::memory_order_release);
  return true;
}

// Posts the next message on `q`; open loop: the schedule's next, which it takes (due no later than now).
bool Job::post_one(Requester& q, bool open) {
  const Options& o = *q.opt;
  const std::uint64_t seq = q.posted;
  const std::uint32_t size = o.size_of(q.index, seq);
  const Op op = o.op_of(q.index, seq);
  const std::size_t slot = seq % plan_.slots;
  std::uint8_t* s = q.buf + slot * plan_.slot_bytes;
  rc::SendWr w;
  w.wr_id = seq;
  w.imm = static_cast<std::uint32_t>(seq);
  w.sge = {reinterpret_cast<std::uint64_t>(s), size, q.mr.lkey};
  // A mix: the op's own region of the responder's buffer (Options::region_of; 0 without one).
  const std::uint64_t region = std::uint64_t{o.region_of(op)} * q.remote_slots;
  w.remote_addr = q.remote_va + (region + seq % q.remote_slots) * plan_.slot_bytes;
  w.rkey = q.rkey;
  if (op == Op::kRead) {
    w.opcode = rc::WrOpcode::kRead;
  } else if (is_atomic_op(op)) {
    // One counter per QP, the first word of the responder's slice: FetchAdd 1, or CmpSwap from the
    // value the previous operations left (RC executes in order) to the next.
    w.remote_addr = q.remote_va;
    w.opcode = op == Op::kFetchAdd ? rc::WrOpcode::kFetchAdd : rc::WrOpcode::kCmpSwap;
    w.compare_add = op == Op::kFetchAdd ? 1 : seq;
    w.swap = seq + 1;
  } else {
    w.opcode = op == Op::kSend ? rc::WrOpcode::kSendWithImm : rc::WrOpcode::kWriteWithImm;
    plan_.pattern->fill(s, size, q.index, seq);
  }
  if (o.split > 1 ? !post_parts(q, w, size) : !q.ep->post_send(q.qpn, w).ok()) return false;
  const std::uint64_t posted_at = rte_rdtsc();
  q.post_tsc[slot] = posted_at;
  q.due_tsc[slot] = posted_at;
  if (open) {
    ArrivalSchedule& schedule = lanes_[q.lane].schedule;
    const std::uint64_t due = schedule.due();
    q.due_tsc[slot] = due;
    if (posted_at - due > late_after_tsc_) ++load_.late;  // due <= the iteration's start <= posted_at
    schedule.advance();
    ++load_.scheduled;
  }
  ++load_.posted;
  ++q.posted;
  ++total_posted_;
  return true;
}

bool Job::stripe_ready(const Requester& lead, std::uint32_t inflight) const {
  for (std::uint32_t j = 0; j < plan_.opt->split; ++j) {
    const Requester& p = reqs_[lead.stripe + j];
    if (lead.posted - p.completed >= inflight || p.ep->qp(p.qpn)->state() != rc::QpState::kRts) return false;
  }
  return true;
}

// Every part from the lead's slot (filled whole) to the same slot of the lead's responder, each its
// own slice: the message is one buffer at each end, whichever QP carried a byte. Each part's
// immediate data is the message's sequence number, as each QP's own sequence (every QP of the
// stripe carries one part of every message).
bool Job::post_parts(Requester& lead, const rc::SendWr& w, std::uint32_t size) {
  const std::uint32_t k = plan_.opt->split;
  for (std::uint32_t j = 0; j < k; ++j) {
    Requester& p = reqs_[lead.stripe + j];
    const SplitPart part = split_part(size, k, j, plan_.opt->mtu);
    rc::SendWr pw = w;
    pw.sge.addr += part.offset;
    pw.sge.length = part.length;
    pw.remote_addr += part.offset;
    if (engine::Status st = p.ep->post_send(p.qpn, pw); !st.ok()) {
      if (j == 0) return false;  // nothing posted: the message waits
      // Parts already on the wire: the message cannot complete, and the run fails with why.
      ++t_.errors;
      if (first_failure_.empty())
        first_failure_ = "part " + std::to_string(j) + " of message " + std::to_string(w.wr_id) + " on QP " +
                         std::to_string(p.index) + " could not be posted: " + st.message();
      return true;
    }
    if (j != 0) ++p.posted;  // the lead's own count moves with the message (post_one)
  }
  return true;
}

// Open loop: the backlog waits its turn until kShedAfterNs after its due time; older messages are
// shed, each counted (the schedule jumps past them without drawing them one by one).
void Job::shed_stale(Lane& l, std::uint64_t now) {
  if (l.schedule.due() > now || now - l.schedule.due() <= shed_after_tsc_) return;
  const std::uint64_t n = l.schedule.skip_before(now - shed_after_tsc_);
  load_.shed += n;
  load_.scheduled += n;
}

LoadCounters Job::load(std::uint64_t end_tsc) const {
  LoadCounters l = load_;
  for (const Lane& lane : lanes_) {
    if (!lane.schedule.enabled()) continue;
    // The offered rate is the messages due in the window over the window's length: counted only to
    // this job's last iteration, a job (or the host) descheduled near the end left the messages due
    // after it out of a window that still counted the time (seen: 200 of 20,000 on-off messages
    // missing from a 1.01 s window on a loaded host; a longer pause, more).
    // A flow group offers nothing due at or after its stop.
    std::uint64_t backlog = lane.schedule.due_by(std::min(std::max(last_run_, end_tsc), lane.stop_tsc - 1));
    // A --count run offers its share and no more.
    if (plan_.opt->count != 0) backlog = std::min(backlog, count_ - std::min(count_, total_posted_));
    l.backlog += backlog;
    l.scheduled += backlog;
  }
  return l;
}

void Job::keep_receives_posted(Responder& r) {
  const Options& o = *r.opt;
  // SEND and WRITE with immediate each consume a receive (IBTA §9.4.1.1, §9.4.3); READs and
  // atomics none.
  if (!o.carries(Op::kSend) && !o.carries(Op::kWrite)) return;
  const std::size_t region = std::size_t{o.region_of(Op::kSend)} * plan_.slots;
  while (r.recv_posted - r.received < plan_.slots) {
    const std::size_t slot = region + r.recv_posted % plan_.slots;
    rc::RecvWr w{r.recv_posted,
                 {reinterpret_cast<std::uint64_t>(r.buf + slot * plan_.slot_bytes),
                  static_cast<std::uint32_t>(plan_.slot_bytes), r.mr.lkey}};
    if (!o.carries(Op::kSend)) w.sge = {0, 0, 0};  // WRITE with immediate only consumes a receive
    if (!r.ep->post_recv(r.qpn, w).ok()) break;
    ++r.recv_posted;
  }
}

void Job::note_failure(std::uint32_t index, RcEndpoint& ep, std::uint32_t qpn, const rc::Completion& c) {
  if (first_failure_.empty()) first_failure_ = failure_text(index, qpn, c, ep.qp(qpn)->attr());
}

// Responder: sequence and content of every message (SEND data, WRITE target memory).
void Job::verify_message(Responder& r, const rc::Completion& c, std::uint64_t now) {
  const Options& o = *r.opt;
  if (plan_.cm && c.status == rc::WcStatus::kWrFlushErr) return;
  // The QP's own figures beside the job's (a server of several clients reports each client's).
  Totals found;
  if (c.status != rc::WcStatus::kSuccess) {
    found.errors = 1;
    t_ += found;
    r.t += found;
    note_failure(r.index, *r.ep, r.qpn, c);
    return;
  }
  ++r.received;
  const std::uint64_t seq = c.imm;
  // A mix's READs never reach this end: the next one expected is the next SEND or WRITE.
  const std::uint64_t want = next_received(o, r.index, r.expected) & 0xFFFFFFFFull;
  if (seq < want) {
    found.duplicated = 1;
  } else if (seq > want) {
    found.lost = received_between(o, r.index, want, seq);
    found.out_of_order = 1;
  }
  if (o.split > 1) {
    // A part: the bytes its WRITE carried (verbs' byte_len, its DMA length) must be its slice's;
    // the content is checked once the whole message has arrived (check_whole).
    const std::uint32_t part = split_part(o.size_of(rsps_[r.stripe].index, seq), o.split, r.part, o.mtu).length;
    if (c.byte_len != part) found.corrupted = 1;
    r.expected = seq + 1;
    r.bytes_received += part;
    t_ += found;
    r.t += found;
    return check_whole(r);
  }
  const std::uint32_t size = o.size_of(r.index, seq);
  const Op op = o.op_of(r.index, seq);
  // A SEND's data is in the receive it consumed, a WRITE's in its slot of the WRITEs' region.
  const std::size_t slot = op == Op::kSend ? o.region_of(Op::kSend) * plan_.slots + c.wr_id % plan_.slots
                                           : o.region_of(Op::kWrite) * plan_.slots + seq % plan_.slots;
  const std::uint8_t* p = r.buf + slot * plan_.slot_bytes;
  // A READ drawn for this sequence number cannot arrive as a receive: a message the requester did not send.
  if (op == Op::kRead || (op == Op::kSend && c.byte_len != size) || !plan_.pattern->check(p, size, r.index, seq))
    found.corrupted = 1;
  r.expected = seq + 1;
  r.bytes_received += size;
  if (plan_.server) {
    found.messages = 1;
    found.bytes = size;
    ++all_messages_;
    all_bytes_ += size;
    if (first_rx_ == 0) first_rx_ = now;
    last_rx_ = now;
    if (r.first_rx_tsc == 0) r.first_rx_tsc = now;
    r.last_rx_tsc = now;
  }
  t_ += found;
  r.t += found;
}

// Message m of a stripe has arrived whole once every QP of the stripe expects a part after m's
// (each QP receives its parts in order, RC). Its target, the first QP's slot, is checked then:
// every byte, whichever QP carried it, against the one pattern of the message.
void Job::check_whole(const Responder& r) {
  const Options& o = *r.opt;
  Responder& lead = rsps_[r.stripe];
  std::uint64_t whole = UINT64_MAX;
  for (std::uint32_t j = 0; j < o.split; ++j) whole = std::min(whole, rsps_[r.stripe + j].expected);
  for (; lead.whole_checked < whole; ++lead.whole_checked) {
    const std::uint64_t m = lead.whole_checked;
    const std::uint8_t* p = lead.buf + (m % plan_.slots) * plan_.slot_bytes;
    if (plan_.pattern->check(p, o.size_of(lead.index, m), lead.index, m)) continue;
    ++t_.corrupted;
    ++lead.t.corrupted;
  }
}

// Without READs in a mix every message reaches the responder. With them, runs of READs are
// skipped, at most kMaxReadRun at a time: a longer run (likely only where READs are nearly the
// whole mix, e.g. read:999999,write:1) makes the message after it count as out of order, a false
// alarm, never a miss.
namespace {
constexpr std::uint64_t kMaxReadRun = 1u << 20;
}  // namespace

std::uint64_t Job::next_received(const Options& o, std::uint32_t qp, std::uint64_t seq) {
  if (o.mix.empty() || !o.carries(Op::kRead)) return seq;
  for (std::uint64_t n = 0; n < kMaxReadRun && o.op_of(qp, seq) == Op::kRead; ++n) ++seq;
  return seq;
}

std::uint64_t Job::received_between(const Options& o, std::uint32_t qp, std::uint64_t from, std::uint64_t to) {
  if (o.mix.empty() || !o.carries(Op::kRead) || to - from > kMaxReadRun) return to - from;
  std::uint64_t n = 0;
  for (std::uint64_t s = from; s < to; ++s) n += o.op_of(qp, s) != Op::kRead ? 1 : 0;
  return n;
}

// An atomic's original value (its 8-byte result) is its sequence number: the operations before it
// each added one (FetchAdd 1, or CmpSwap seq -> seq + 1 on the QP's own counter).
bool Job::atomic_result_ok(const Requester& q, const rc::Completion& c) const {
  std::uint64_t orig = 0;
  std::memcpy(&orig, q.buf + (c.wr_id % plan_.slots) * plan_.slot_bytes, sizeof(orig));
  return c.byte_len == sizeof(orig) && orig == c.wr_id;
}

// Requester: completions in order; READ data checked here; latency from the due time (closed
// loop: the posting) and service time from the posting, each to the completion.
void Job::complete_request(Requester& q, const rc::Completion& c, std::uint64_t now) {
  const Options& o = *q.opt;
  GroupFigures& g = lanes_[q.lane].figs;
  ++q.completed;
  if (c.status != rc::WcStatus::kSuccess) {
    ++t_.errors;
    ++g.t.errors;
    note_failure(q.index, *q.ep, q.qpn, c);
    return;
  }
  if (c.wr_id != q.completed - 1) ++t_.out_of_order, ++g.t.out_of_order;
  if (o.split > 1) return complete_part(q, c, now);
  // An atomic's original value is the count of operations before it: anything else means one
  // was lost or ran twice (a CmpSwap that found another value also failed to swap).
  const Op op = o.op_of(q.index, c.wr_id);
  if (is_atomic_op(op) && !atomic_result_ok(q, c)) ++t_.corrupted;
  ++q.completed_ok;
  q.bytes_ok += complete_message(q, c.wr_id, op, now);
}

// Each QP completes its parts in order (RC, IBTA §9.7.1): the stripe's messages completed whole
// are those below every QP's count of parts completed. A failed part stops its QP's count, so its
// message never completes (the failure is the run's).
void Job::complete_part(Requester& q, const rc::Completion& c, std::uint64_t now) {
  const Options& o = *q.opt;
  Requester& lead = reqs_[q.stripe];
  ++q.completed_ok;
  q.bytes_ok += split_part(o.size_of(lead.index, c.wr_id), o.split, q.part, o.mtu).length;
  std::uint64_t whole = UINT64_MAX;
  for (std::uint32_t j = 0; j < o.split; ++j) whole = std::min(whole, reqs_[q.stripe + j].completed_ok);
  for (; lead.whole_completed < whole; ++lead.whole_completed)
    complete_message(lead, lead.whole_completed, o.op_of(lead.index, lead.whole_completed), now);
}

std::uint32_t Job::complete_message(Requester& q, std::uint64_t seq, Op op, std::uint64_t now) {
  const Options& o = *q.opt;
  GroupFigures& g = lanes_[q.lane].figs;
  const std::size_t slot = seq % plan_.slots;
  const std::uint32_t size = o.size_of(q.index, seq);
  if (op == Op::kRead && !plan_.pattern->check(q.buf + slot * plan_.slot_bytes, size, q.index, seq % q.remote_slots))
    ++t_.corrupted, ++g.t.corrupted;
  const auto latency = static_cast<std::uint64_t>(static_cast<double>(now - q.due_tsc[slot]) * 1e9 / plan_.hz);
  hist_.record(latency);
  g.hist.record(latency);
  ++g.t.messages;
  g.t.bytes += size;
  if (!o.size_weights.empty()) ++sizes_[o.size_weights.draw_index(o.seed, kSizeStream, q.index, seq)];
  if (!o.mix.empty()) {
    OpFigures& f = ops_[static_cast<std::size_t>(op)];
    ++f.messages;
    f.bytes += size;
    f.hist.record(latency);
  }
  service_.record(static_cast<std::uint64_t>(static_cast<double>(now - q.post_tsc[slot]) * 1e9 / plan_.hz));
  ++t_.messages;
  t_.bytes += size;
  ++all_messages_;
  all_bytes_ += size;
  return size;
}

// QPN -> the job's entry + 1 (0: none). QPNs of one endpoint are its base plus a slot index, so
// the table is dense; requesters and responders each get their own (in loopback, the two ends'
// endpoints number their QPs alike).
template <typename Entry>
void Job::index_qpns(const std::vector<Entry>& entries, std::uint32_t active, QpnIndex& out) {
  out = QpnIndex{};
  if (active == 0) return;
  std::uint32_t lo = UINT32_MAX, hi = 0;
  for (std::uint32_t i = 0; i < active; ++i) {
    lo = std::min(lo, entries[i].qpn);
    hi = std::max(hi, entries[i].qpn);
  }
  out.base = lo;
  out.entry.assign(std::size_t{hi} - lo + 1, 0);
  for (std::uint32_t i = 0; i < active; ++i) out.entry[entries[i].qpn - lo] = i + 1;
}

std::uint32_t Job::QpnIndex::find(std::uint32_t qpn) const {
  const std::uint32_t k = qpn - base;  // wraps to a huge index below the base
  return k < entry.size() ? entry[k] : 0;
}

// Every endpoint's completion queue, drained in one pass: the cost follows the completions, not
// the number of QPs. Receive completions are the responders', the others the requesters'.
void Job::drain_completions(std::uint64_t now) {
  rc::Completion cs[32];
  for (RcEndpoint* ep : eps_) {
    for (int round = 0; round < kCompletionRounds; ++round) {
      const unsigned n = ep->poll_cq(cs, 32);
      for (unsigned k = 0; k < n; ++k) dispatch(*ep, cs[k], now);
      if (n < 32) break;
    }
  }
}

void Job::dispatch(RcEndpoint& ep, const rc::Completion& c, std::uint64_t now) {
  if (c.is_recv) {
    if (const std::uint32_t i = rsp_index_.find(c.qp_num); i != 0 && rsps_[i - 1].ep == &ep)
      return verify_message(rsps_[i - 1], c, now);
  } else {
    if (const std::uint32_t i = req_index_.find(c.qp_num); i != 0 && reqs_[i - 1].ep == &ep)
      return complete_request(reqs_[i - 1], c, now);
  }
  // Work this job never posted completed: a transport bug, reported as one.
  ++t_.errors;
  if (first_failure_.empty())
    first_failure_ = "a completion for QP " + std::to_string(c.qp_num) + " that this job did not post";
}

// A client's job with a --count share ends when it has posted its share and all completed.
bool Job::share_completed() const {
  if (plan_.server || plan_.opt->count == 0 || total_posted_ < count_) return false;
  for (std::uint32_t i = 0; i < active_reqs_; ++i)
    if (reqs_[i].completed != reqs_[i].posted) return false;
  return true;
}

void Job::run_once(std::uint64_t now) {
  const Options& o = *plan_.opt;
  if (!measuring_ && now >= plan_.warm_end_tsc) {
    measuring_ = true;
    reset_measures();
  }
  last_run_ = now;
  // Offered load: every message due by now is posted as soon as a QP's window has room, oldest
  // first; what waits is the backlog (its wait counts in its latency), shed only past kShedAfterNs.
  // kPause (a sweep between sizes) posts nothing: what is in flight completes.
  const bool posting = phase_.load(std::memory_order_relaxed) == Phase::kRun;
  const bool share_left = o.count == 0 || total_posted_ < count_;
  // Each lane (flow group) posts only within its window; the schedule's stale messages are shed
  // there too (a later call on the same lane finds none left to shed). The QP that goes first
  // turns with each call: open loop, the first QP with room would otherwise take every message
  // due (a low rate's one at a time), and a lane's other QPs would carry nothing.
  for (std::uint32_t k = 0; posting && k < active_reqs_; ++k) {
    Requester& q = reqs_[(first_req_ + k) % active_reqs_];
    Lane& l = lanes_[q.lane];
    if (now < l.start_tsc || now >= l.stop_tsc) continue;
    if (q.part != 0) continue;  // --split: the stripe's first QP posts every part of its messages
    const bool open = l.schedule.enabled();
    if (open && share_left) shed_stale(l, now);
    while ((o.split > 1 ? stripe_ready(q, l.inflight)
                        : q.posted - q.completed < l.inflight && q.ep->qp(q.qpn)->state() == rc::QpState::kRts) &&
           (o.count == 0 || total_posted_ < count_) && (!open || l.schedule.due() <= now) && post_one(q, open)) {
    }
  }
  if (active_reqs_ != 0) first_req_ = (first_req_ + 1) % active_reqs_;
  for (std::uint32_t i = 0; i < active_rsps_; ++i) keep_receives_posted(rsps_[i]);
  poll_transport(now);
  now = rte_rdtsc();
  drain_completions(now);
  const bool ended = t_.errors != 0 || share_completed();
  if (ended || now >= next_publish_) publish(now);
  if (ended) figures_.ended.store(true, std::memory_order_release);
}

void Job::publish(std::uint64_t now) {
  next_publish_ = now + static_cast<std::uint64_t>(plan_.hz / 20);
  std::uint64_t retx = 0, naks_s = 0, naks_r = 0, rnr = 0, timeouts = 0;
  auto add = [&](RcEndpoint* ep, std::uint32_t qpn) {
    const rc::RcCounters& c = ep->qp(qpn)->counters();
    retx += c.retransmitted_packets;
    naks_s += c.naks_sent;
    naks_r += c.naks_received;
    rnr += c.rnr_naks_received;
    timeouts += c.local_ack_timeout_err;
  };
  double lo = 0, hi = 0;
  for (auto& q : reqs_) {
    add(q.ep, q.qpn);
    if (plan_.opt->cc == "dcqcn") {
      const double r = q.ep->dcqcn_state(q.qpn)->rate_bps();
      lo = lo == 0 ? r : std::min(lo, r);
      hi = std::max(hi, r);
    }
  }
  for (auto& r : rsps_) add(r.ep, r.qpn);
  std::uint64_t cnp_s = 0, cnp_r = 0;
  for (RcEndpoint* ep : eps_) {
    cnp_s += ep->counters().np_cnp_sent;
    cnp_r += ep->counters().rp_cnp_handled + ep->counters().rp_cnp_ignored;
  }
  constexpr auto kRelaxed = std::memory_order_relaxed;
  figures_.messages.store(t_.messages, kRelaxed);
  figures_.bytes.store(t_.bytes, kRelaxed);
  figures_.all_messages.store(all_messages_, kRelaxed);
  figures_.all_bytes.store(all_bytes_, kRelaxed);
  figures_.errors.store(t_.errors, kRelaxed);
  figures_.retransmitted.store(retx, kRelaxed);
  figures_.naks_sent.store(naks_s, kRelaxed);
  figures_.naks_received.store(naks_r, kRelaxed);
  figures_.rnr_naks.store(rnr, kRelaxed);
  figures_.cnps_sent.store(cnp_s, kRelaxed);
  figures_.cnps_received.store(cnp_r, kRelaxed);
  figures_.ack_timeouts.store(timeouts, kRelaxed);
  figures_.scheduled.store(load_.scheduled, kRelaxed);
  figures_.posted.store(load_.posted, kRelaxed);
  figures_.late.store(load_.late, kRelaxed);
  figures_.shed.store(load_.shed, kRelaxed);
  for (std::uint32_t i = 0; i < figures_.qp_entries; ++i) {
    const bool rsp = plan_.server;
    figures_.qp_messages[i].store(rsp ? rsps_[i].received : reqs_[i].completed_ok, kRelaxed);
    figures_.qp_bytes[i].store(rsp ? rsps_[i].bytes_received : reqs_[i].bytes_ok, kRelaxed);
  }
  figures_.rate_lo_bps.store(static_cast<std::uint64_t>(lo), kRelaxed);
  figures_.rate_hi_bps.store(static_cast<std::uint64_t>(hi), kRelaxed);
  figures_.first_rx_tsc.store(first_rx_, kRelaxed);
  figures_.last_rx_tsc.store(last_rx_, kRelaxed);
  if (worker_ != nullptr) {
    figures_.steered_in_software.store(worker_->steering().rx_steered_in_software, kRelaxed);
    figures_.steered_in.store(worker_->steering().rx_steered_in, kRelaxed);
  }
}

bool Job::unfinished() const {
  if (plan_.opt->count == 0) return false;
  for (std::uint32_t i = 0; i < active_reqs_; ++i)
    if (reqs_[i].completed != reqs_[i].posted) return true;
  return false;
}

}  // namespace droce::gen
