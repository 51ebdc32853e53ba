// A simulated flow on droce's own RC transport (see qp_flow.h). The requester WRITEs 64 KiB
// messages, four kept posted, into the responder's region; both QPs go RESET -> INIT -> RTR -> RTS
// as a connection brings them (IBTA §10.3), with first PSNs drawn from the simulator's seed.
#include "apps/droce-sim/qp_flow.h"

#include <droce/protocols/rc/descriptor_fields.h>
#include <droce/protocols/wire/parse.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace droce::sim {

namespace {

// Every flow's WRITEs come from one region and land in another: the simulator measures the
// transport, not memory, and thousands of flows must not each hold their own megabytes. Written
// by the responders in turn (one thread), read by nobody.
std::uint8_t* source_region() {
  static std::vector<std::uint8_t> b = [] {
    std::vector<std::uint8_t> v(64 * 1024);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(i * 7 + 1);
    return v;
  }();
  return b.data();
}

std::uint8_t* sink_region() {
  static std::vector<std::uint8_t> b(64 * 1024);
  return b.data();
}

// The two regions registered once, each in one table that every flow's QPs share (the
// requesters' for the source, the responders' for the sink), as an endpoint's QPs share its
// registry: an MrTable holds 48 KiB of protection-domain slots, too much to hold two a flow.
struct SharedRegions {
  rc::MrTable req{4}, resp{4};
  std::uint32_t lkey = 0, rkey = 0;
  std::uint64_t remote_va = 0;
  bool ok = false;
  SharedRegions() {
    const auto src = req.register_region(source_region(), 64 * 1024, rc::kAccessLocalWrite);
    const auto dst = resp.register_region(sink_region(), 64 * 1024, rc::kAccessRemoteWrite | rc::kAccessLocalWrite);
    ok = src.has_value() && dst.has_value();
    if (!ok) return;
    lkey = src->lkey;
    rkey = dst->rkey;
    remote_va = reinterpret_cast<std::uint64_t>(dst->addr);
  }
};

SharedRegions& shared_regions() {
  static SharedRegions r;
  return r;
}

// The IBTA timeout exponent: 4.096 us x 2^N at least `us` (IBTA §9.7.6.1.3's encoding).
std::uint8_t timeout_exponent(double us) {
  std::uint8_t n = 1;
  while (n < 31 && 4.096 * std::ldexp(1.0, n) < us) ++n;
  return n;
}

}  // namespace

std::uint32_t pmtu_for(std::uint32_t packet_bytes, std::uint32_t overhead) {
  for (std::uint32_t m = 4096; m >= 256; m /= 2)
    if (m + overhead <= packet_bytes) return m;
  return 0;
}

FrameRing::FrameRing(std::uint32_t slots) : slots_(slots) {}

std::uint64_t FrameRing::put(const rc::TxDescriptor& d) {
  Slot& s = slots_[next_ % slots_.size()];
  s.id = next_;
  s.d = d;
  return next_++;
}

const rc::TxDescriptor* FrameRing::get(std::uint64_t id) const {
  const Slot& s = slots_[id % slots_.size()];
  return s.id == id ? &s.d : nullptr;
}

// The rings hold what a flow can have in flight: the requester's window (selective repeat's BDP
// cap, go-back-N's window_psns, both at most 128 PSNs) four times over, for resent copies still
// queued behind the originals, and the answers to them (at most one a data frame, most coalesced).
// 60 KiB a flow: a 4,096-rank fabric holds thousands of them (an overrun is counted, never silent).
QpFlow::QpFlow(const QpFlowConfig& c) : cfg_(c), data_(512), answers_(256), frame_(4096 + 256) {
  std::mt19937_64 rng(c.seed * 0x9E3779B97F4A7C15ull + c.index);
  rc::QpAttr a;
  a.pmtu = c.pmtu;
  a.timeout = timeout_exponent(16 * c.rto_us);
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.access = rc::kAccessRemoteWrite | rc::kAccessLocalWrite;
  // The flow keeps kMessagesPosted WRITEs posted and posts no receives (a WRITE consumes none,
  // IBTA §9.4.3): queues that deep, not the 256 a verbs QP defaults to, for thousands of flows.
  a.sq_depth = 8;
  a.rq_depth = 1;
  a.adaptive_rto = true;
  a.rto_floor_us = static_cast<std::uint32_t>(std::max(1.0, std::ceil(c.rto_us)));
  a.pto_floor_us = std::max<std::uint32_t>(1, a.rto_floor_us / 8);
  if (c.mode == Recovery::kSelectiveRepeat) {
    a.recovery = rc::Recovery::kSelectiveRepeat;
    a.sr_bdp_pkts = std::clamp<std::uint32_t>(c.sr_window, 1, rc::kSrMaxBdpPkts);
    // The window closes at sr_bdp_pkts unacknowledged PSNs and only AckReq draws an ACK: asked
    // every quarter window, the ACKs reopen it before it closes (every 64 would stall a smaller cap).
    a.ack_req_every = std::clamp<std::uint32_t>(a.sr_bdp_pkts / 4, 1, 64);
  }
  rc::QpAttr ra = a, qa = a;
  qa.qpn = c.req_qpn != 0 ? c.req_qpn : 0x100 + 2 * c.index;
  ra.qpn = c.resp_qpn != 0 ? c.resp_qpn : qa.qpn + 1;
  qa.dest_qpn = ra.qpn;
  ra.dest_qpn = qa.qpn;
  qa.sq_psn = ra.rq_psn = static_cast<std::uint32_t>(rng() & 0xFFFFFF);
  qa.rq_psn = ra.sq_psn = static_cast<std::uint32_t>(rng() & 0xFFFFFF);
  SharedRegions& mr = shared_regions();
  req_ = std::make_unique<rc::RcQp>(qa, mr.req);
  resp_ = std::make_unique<rc::RcQp>(ra, mr.resp);
  resp_epsn_ = ra.rq_psn;
  udp_src_port_ = wire::roce_udp_src_port(qa.qpn, ra.qpn);
  // A flow whose QPs could not be set up sends nothing and says so (failed()), never silently.
  for (rc::RcQp* q : {req_.get(), resp_.get()}) {
    const rc::QpAttr at = q->attr();
    broken_ = broken_ || !q->modify(rc::QpState::kInit).ok() || !q->modify(rc::QpState::kRtr, &at).ok() ||
              !q->modify(rc::QpState::kRts).ok();
  }
  if (!mr.ok) {
    broken_ = true;
    return;
  }
  lkey_ = mr.lkey;
  rkey_ = mr.rkey;
  remote_va_ = mr.remote_va;
  for (int side = 0; side < 2; ++side) {
    wire::TemplateConfig t;
    t.local.mac[5] = static_cast<std::uint8_t>(side + 1);
    t.remote.mac[5] = static_cast<std::uint8_t>(2 - side);
    t.local.ip[0] = t.remote.ip[0] = 10;
    t.local.ip[3] = static_cast<std::uint8_t>(side + 1);
    t.remote.ip[3] = static_cast<std::uint8_t>(2 - side);
    t.dest_qpn = side == 0 ? ra.qpn : qa.qpn;
    t.udp_src_port = side == 0 ? udp_src_port_ : wire::roce_udp_src_port(ra.qpn, qa.qpn);
    (side == 0 ? req_tmpl_ : resp_tmpl_) = wire::HeaderTemplate::make(t);
  }
  post_writes();
}

std::uint64_t QpFlow::post_message(std::uint64_t bytes) {
  // Its WRITEs' packets: full 64 KiB messages, then the rest (a WRITE of n bytes is
  // max(1, ceil(n / PMTU)) packets, IBTA §9.7.1).
  const std::uint64_t per_full = (kMessageBytes + cfg_.pmtu - 1) / cfg_.pmtu;
  const std::uint64_t rest = bytes % kMessageBytes;
  packets_posted_ +=
      bytes / kMessageBytes * per_full + (rest != 0 ? (rest + cfg_.pmtu - 1) / cfg_.pmtu : 0) + (bytes == 0 ? 1 : 0);
  pending_.push_back(bytes);
  post_writes();
  return packets_posted_;
}

void QpFlow::post_writes() {
  if (cfg_.posted_by_caller) {
    while (req_->outstanding_wrs() < kMessagesPosted && !pending_.empty()) {
      const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(pending_.front(), kMessageBytes));
      rc::SendWr w;
      w.opcode = rc::WrOpcode::kWrite;
      w.sge = rc::Sge{reinterpret_cast<std::uint64_t>(source_region()), len, lkey_};
      w.remote_addr = remote_va_;
      w.rkey = rkey_;
      if (!req_->post_send(w).ok()) return;
      posted_bytes_ += len;
      pending_.front() -= len;
      if (pending_.front() == 0) pending_.pop_front();
    }
    return;
  }
  while (req_->outstanding_wrs() < kMessagesPosted && (cfg_.flow_bytes == 0 || posted_bytes_ < cfg_.flow_bytes)) {
    const std::uint64_t left = cfg_.flow_bytes == 0 ? kMessageBytes : cfg_.flow_bytes - posted_bytes_;
    rc::SendWr w;
    w.opcode = rc::WrOpcode::kWrite;
    w.sge = rc::Sge{reinterpret_cast<std::uint64_t>(source_region()),
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(left, kMessageBytes)), lkey_};
    w.remote_addr = remote_va_;
    w.rkey = rkey_;
    if (!req_->post_send(w).ok()) return;
    posted_bytes_ += w.sge.length;
  }
}

// The frame as it would leave (headers from the sender's template, ICRC computed), parsed as the
// receiver's port would; the ICRC check is skipped for speed (the builder wrote it, nothing
// corrupts it here).
std::uint32_t QpFlow::build_and_parse(const wire::HeaderTemplate& t, const rc::TxDescriptor& d, wire::PacketInfo& pi) {
  const std::uint32_t n =
      wire::build_frame(t, rc::packet_fields(d), d.payload, frame_.data(), static_cast<std::uint32_t>(frame_.size()));
  wire::ParseOptions opt;
  opt.verify_icrc = false;
  opt.accept_droce_sr = true;
  if (n == 0 || wire::parse_frame(frame_.data(), n, pi, opt) != wire::DropReason::kNone) {
    ++st_.parse_drops;
    return 0;
  }
  return n;
}

std::optional<QpFlow::Out> QpFlow::next_data(std::uint64_t now) {
  rc::TxDescriptor d;
  if (!req_->next_packet(now, d)) return std::nullopt;
  wire::PacketInfo pi;
  const std::uint32_t n = build_and_parse(req_tmpl_, d, pi);
  // On the wire: the frame plus its 4-byte FCS (the simulator's packet sizes count it).
  return Out{data_.put(d), std::max<std::uint32_t>(n, 60) + 4};
}

std::uint64_t QpFlow::on_data(std::uint64_t id, std::uint64_t now, std::vector<std::uint64_t>& answers) {
  const rc::TxDescriptor* d = data_.get(id);
  if (d == nullptr) {
    ++st_.ring_overruns;
    return 0;
  }
  wire::PacketInfo pi;
  if (build_and_parse(req_tmpl_, *d, pi) == 0) return 0;
  const std::uint64_t before = resp_->counters().bytes_copied;
  (void)resp_->on_packet(pi, frame_.data() + pi.payload_offset, now);
  rc::TxDescriptor a;
  while (resp_->next_packet(now, a)) answers.push_back(answers_.put(a));
  const std::uint64_t placed = resp_->counters().bytes_copied - before;
  // The ePSN is 24 bits (IBTA §9.7.1) and moves forward by less than half its range at a time.
  in_order_ += (resp_->rq_epsn() - resp_epsn_) & 0xFFFFFF;
  resp_epsn_ = resp_->rq_epsn();
  st_.delivered += placed;
  return placed;
}

void QpFlow::on_answer(std::uint64_t id, std::uint64_t now) {
  const rc::TxDescriptor* d = answers_.get(id);
  if (d == nullptr) {
    ++st_.ring_overruns;
    return;
  }
  wire::PacketInfo pi;
  if (build_and_parse(resp_tmpl_, *d, pi) == 0) return;
  (void)req_->on_packet(pi, frame_.data() + pi.payload_offset, now);
  rc::Completion c;
  while (req_->poll_cq(c))
    if (c.status == rc::WcStatus::kSuccess) ++st_.messages;
  post_writes();
}

}  // namespace droce::sim
