// Test harness: two RcQp endpoints joined by a fake link that carries real RoCEv2 frames (built
// with the wire builders, parsed with the wire parser) with seeded loss, duplication and reordering.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "protocols/rc/descriptor_fields.h"
#include "protocols/rc/rc_qp.h"
#include "protocols/wire/build.h"
#include "protocols/wire/parse.h"

namespace droce::test {

struct Impairment {
  double loss = 0;      // each frame independently
  double ack_loss = 0;  // only frames from the responder side (ACK/NAK/READ responses)
  double duplicate = 0;
  double reorder = 0;             // frame held back behind the next one
  std::uint32_t burst_every = 0;  // every N frames, drop a burst of burst_len
  std::uint32_t burst_len = 0;
  bool drop_all = false;
  std::uint32_t delay_steps = 0;  // extra steps a frame spends on the link (0: it arrives in the step it left)
  // A chosen loss: the frames for which it answers true are dropped (a lost tail, ACK or NAK).
  std::function<bool(const rc::TxDescriptor&)> drop_if;
};

struct Endpoint {
  rc::MrTable mrs{64};
  std::unique_ptr<rc::RcQp> qp;
  wire::HeaderTemplate tmpl;
};

class Loopback {
 public:
  Loopback(rc::QpAttr a, rc::QpAttr b, std::uint64_t seed = 1) : rng_(seed) {
    ep_[0].qp = std::make_unique<rc::RcQp>(a, ep_[0].mrs);
    ep_[1].qp = std::make_unique<rc::RcQp>(b, ep_[1].mrs);
    for (int i = 0; i < 2; ++i) {
      wire::TemplateConfig c;
      c.local.mac[5] = static_cast<std::uint8_t>(i + 1);
      c.remote.mac[5] = static_cast<std::uint8_t>(2 - i);
      c.local.ip[0] = c.remote.ip[0] = 10;
      c.local.ip[3] = static_cast<std::uint8_t>(i + 1);
      c.remote.ip[3] = static_cast<std::uint8_t>(2 - i);
      c.dest_qpn = (i == 0 ? b : a).qpn;
      ep_[i].tmpl = wire::HeaderTemplate::make(c);
    }
  }
  Endpoint& ep(int i) { return ep_[i]; }
  rc::RcQp& qp(int i) { return *ep_[i].qp; }
  Impairment& impair(int from) { return imp_[from]; }
  std::uint64_t now() const { return now_; }
  std::uint64_t frames_sent = 0, frames_dropped = 0;

  // One step of virtual time: each side sends what it may (bounded), frames in flight arrive,
  // timers fire. `step_ns` is the link delay as well.
  void step(std::uint64_t step_ns = 1000, int max_per_side = 64) {
    now_ += step_ns;
    ++steps_;
    for (int side = 0; side < 2; ++side) {
      rc::TxDescriptor d;
      for (int n = 0; n < max_per_side && qp(side).next_packet(now_, d); ++n) transmit(side, d);
    }
    deliver();
    for (int side = 0; side < 2; ++side) qp(side).on_timer(now_);
  }

  // Runs until `done()` or `max_steps`; returns true if done.
  template <typename Done>
  bool run(Done done, int max_steps, std::uint64_t step_ns = 1000) {
    for (int i = 0; i < max_steps; ++i) {
      if (done()) return true;
      step(step_ns);
    }
    return done();
  }

 private:
  struct Frame {
    int to;
    std::vector<std::uint8_t> bytes;
    std::uint64_t due = 0;  // the step it arrives in
  };

  void transmit(int side, const rc::TxDescriptor& d) {
    const wire::PacketFields f = rc::packet_fields(d);
    Frame fr{1 - side, std::vector<std::uint8_t>(d.payload_len + wire::kMaxHeaderBytes + 8),
             steps_ + imp_[side].delay_steps};
    const auto n =
        wire::build_frame(ep_[side].tmpl, f, d.payload, fr.bytes.data(), static_cast<std::uint32_t>(fr.bytes.size()));
    fr.bytes.resize(n);
    ++frames_sent;
    const Impairment& im = imp_[side];
    const bool is_response = !wire::opcode_info(d.opcode).is_request;
    if (im.drop_all || (im.drop_if && im.drop_if(d)) || uni_(rng_) < im.loss ||
        (is_response && uni_(rng_) < im.ack_loss) ||
        (im.burst_every != 0 && burst_pos_[side]++ % im.burst_every < im.burst_len)) {
      ++frames_dropped;
      return;
    }
    const bool dup = uni_(rng_) < im.duplicate;
    if (uni_(rng_) < im.reorder && !wire_.empty()) {
      wire_.insert(wire_.end() - 1, fr);  // overtaken by the frame before it
    } else {
      wire_.push_back(fr);
    }
    if (dup) wire_.push_back(wire_.back());
  }

  void deliver() {
    std::deque<Frame> now;
    now.swap(wire_);
    for (auto& fr : now) {
      if (fr.due > steps_) {  // still on the link (delay_steps): stays, in order
        wire_.push_back(std::move(fr));
        continue;
      }
      wire::PacketInfo pi;
      // Selective-repeat QPs' frames parse too (a go-back-N QP never sends one, and drops one).
      wire::ParseOptions opt;
      opt.accept_droce_sr = true;
      if (wire::parse_frame(fr.bytes.data(), static_cast<std::uint32_t>(fr.bytes.size()), pi, opt) !=
          wire::DropReason::kNone)
        continue;
      qp(fr.to).on_packet(pi, fr.bytes.data() + pi.payload_offset, now_);
    }
  }

  Endpoint ep_[2];
  Impairment imp_[2];
  std::deque<Frame> wire_;
  std::uint64_t now_ = 0;
  std::uint64_t steps_ = 0;
  std::uint32_t burst_pos_[2] = {0, 0};
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uni_{0.0, 1.0};
};

inline rc::QpAttr attr(std::uint32_t qpn, std::uint32_t dest, std::uint32_t sq_psn, std::uint32_t rq_psn) {
  rc::QpAttr a;
  a.qpn = qpn;
  a.dest_qpn = dest;
  a.sq_psn = sq_psn;
  a.rq_psn = rq_psn;
  a.pmtu = 1024;
  a.timeout = 8;  // ~1 ms
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.min_rnr_timer = 1;  // 10 us
  a.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead | rc::kAccessLocalWrite;
  return a;
}

// The burst-and-ACK-loss link of the recovery tests: from A, a burst of 9 frames lost every 97;
// of the responder's frames from B (ACKs, NAKs, READ responses), 30 % lost.
inline void impair_bursts_and_ack_loss(Loopback& lb) {
  lb.impair(0).burst_every = 97;
  lb.impair(0).burst_len = 9;
  lb.impair(1).ack_loss = 0.3;
}

// Brings both QPs to RTS (RESET -> INIT -> RTR -> RTS) with matching PSNs.
inline void connect(Loopback& lb) {
  for (int i = 0; i < 2; ++i) {
    auto a = lb.qp(i).attr();
    REQUIRE(lb.qp(i).modify(rc::QpState::kInit).ok());
    REQUIRE(lb.qp(i).modify(rc::QpState::kRtr, &a).ok());
    REQUIRE(lb.qp(i).modify(rc::QpState::kRts).ok());
  }
}

}  // namespace droce::test
