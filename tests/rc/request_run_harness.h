// Receive by bursts against packet by packet (issue 37): two responder QPs, set up alike, fed the
// same request packets. One takes every packet through RcQp::on_packet; the other gathers runs as
// RcEndpoint::receive does (consecutive SEND and WRITE packets of the QP that may join a run, each
// the next PSN, at most kMaxRun) and hands each to RcQp::on_request_run, the packets it leaves to
// on_packet in order. After every burst both must hold the same completions, ACK/NAK stream,
// counters, sequence state, receive buffers and WRITE target memory. The packets come from a
// requester model decoded from a byte source (a seeded generator in
// tests/rc/test_rc_request_runs.cc, the fuzzer's input in tests/fuzz/fuzz_request_runs.cc):
// in-order SEND and WRITE messages of every shape (with and without immediate data), duplicates,
// gaps, reordering, go-back-N resends from the responder's ePSN, and hostile packets (any opcode,
// wrong lengths, wrong PSNs, a RETH with a wrong R_Key, address or DMA length) inside runs.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/psn.h"

namespace droce::test {

// Bytes that drive the model; 0 once exhausted (exhausted() then ends the script).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::uint8_t byte() = 0;
  [[nodiscard]] virtual bool exhausted() const = 0;
};

// One responder QP with its receive buffers and the memory WRITEs target.
struct RunSide {
  static constexpr std::uint32_t kPmtu = 256;
  static constexpr std::uint32_t kRqDepth = 64;
  static constexpr std::uint32_t kSlotBytes = 1024;     // each receive's buffer slot
  static constexpr std::uint32_t kWriteBytes = 4096;    // the region WRITEs target
  static constexpr std::uint32_t kFirstPsn = 0xFFFFF0;  // the PSN wraps within the first messages
  rc::MrTable mrs{4};
  std::vector<std::uint8_t> rbuf = std::vector<std::uint8_t>(kRqDepth * kSlotBytes);
  std::vector<std::uint8_t> wbuf = std::vector<std::uint8_t>(kWriteBytes);
  rc::MemoryRegion rmr{}, wmr{};
  std::unique_ptr<rc::RcQp> qp;
  std::uint64_t posted = 0;
  RunSide() {
    rmr = *mrs.register_region(rbuf.data(), rbuf.size(), rc::kAccessLocalWrite);
    // Both sides' tables register alike with the same key seed: the same R_Key on each side.
    wmr = *mrs.register_region(wbuf.data(), wbuf.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite);
    rc::QpAttr a;
    a.qpn = 0x12;
    a.dest_qpn = 0x11;
    a.pmtu = kPmtu;
    a.rq_psn = kFirstPsn;
    a.sq_psn = 1;
    a.sq_depth = 4;
    a.rq_depth = kRqDepth;
    a.max_dest_rd_atomic = 4;
    qp = std::make_unique<rc::RcQp>(a, mrs);
    ok_ =
        qp->modify(rc::QpState::kInit).ok() && qp->modify(rc::QpState::kRtr).ok() && qp->modify(rc::QpState::kRts).ok();
  }
  [[nodiscard]] bool ready() const { return ok_; }
  // A receive of `len` bytes in the next slot; the result of post_recv (a full queue refuses).
  bool post(std::uint32_t len) {
    rc::RecvWr w;
    w.wr_id = posted;
    w.sge = {reinterpret_cast<std::uint64_t>(rbuf.data() + (posted % kRqDepth) * kSlotBytes), len, rmr.lkey};
    const bool ok = qp->post_recv(w).ok();
    if (ok) ++posted;
    return ok;
  }

 private:
  bool ok_ = false;
};

// A request packet and its payload bytes (pi.payload_len of them). A RETH's address is given as an
// offset into the WRITE region (reth_offset), made each side's own address as it is handed over.
struct RunFrame {
  wire::PacketInfo pi{};
  std::vector<std::uint8_t> payload;
  std::int64_t reth_offset = 0;
};

// `f`'s packet as side `s` receives it: its RETH addressed in s's WRITE region.
inline wire::PacketInfo packet_for(const RunFrame& f, const RunSide& s) {
  wire::PacketInfo pi = f.pi;
  pi.reth_va = reinterpret_cast<std::uint64_t>(s.wbuf.data()) + static_cast<std::uint64_t>(f.reth_offset);
  return pi;
}

class RequestRunPair {
 public:
  static constexpr std::uint32_t kMaxRun = 32;  // RcEndpoint::kRxBurst
  RunSide per_frame, runs;
  // What the script exercised (the tests ask that both paths ran).
  std::uint64_t run_packets = 0;        // executed by on_request_run
  std::uint64_t run_left = 0;           // gathered in a run but left to on_packet
  std::uint64_t per_frame_other = 0;    // never joined a run
  std::uint64_t write_run_packets = 0;  // of run_packets, WRITE packets

  [[nodiscard]] bool ready() const { return per_frame.ready() && runs.ready() && per_frame.wmr.rkey == runs.wmr.rkey; }
  [[nodiscard]] std::uint32_t write_rkey() const { return runs.wmr.rkey; }

  // Both sides post the same receive; false when they disagree.
  bool post(std::uint32_t len) { return per_frame.post(len) == runs.post(len); }

  void burst(const std::vector<RunFrame>& frames) {
    for (const RunFrame& f : frames) (void)per_frame.qp->on_packet(packet_for(f, per_frame), f.payload.data(), 0);
    std::vector<const RunFrame*> run;
    for (const RunFrame& f : frames) {
      const bool joins = rc::RcQp::joins_request_run(f.pi) && runs.qp->run_capable();
      if (joins && !run.empty() && (run.size() == kMaxRun || f.pi.psn != wire::psn_next(run.back()->pi.psn)))
        flush(run);
      if (joins) {
        run.push_back(&f);
        continue;
      }
      flush(run);
      ++per_frame_other;
      (void)runs.qp->on_packet(packet_for(f, runs), f.payload.data(), 0);
    }
    flush(run);
  }

  // "" when both sides agree on everything observable; else what differs. Drains the CQs, and the
  // response queues when `drain_responses` (otherwise ACKs go on coalescing across bursts).
  std::string compare(bool drain_responses) {
    rc::Completion a, b;
    for (;;) {
      const bool ha = per_frame.qp->poll_cq(a), hb = runs.qp->poll_cq(b);
      if (ha != hb) return "completion count";
      if (!ha) break;
      if (a.wr_id != b.wr_id || a.status != b.status || a.opcode != b.opcode || a.byte_len != b.byte_len ||
          a.imm != b.imm || a.has_imm != b.has_imm || a.is_recv != b.is_recv || a.qp_num != b.qp_num)
        return "completion " + std::to_string(a.wr_id) + "/" + std::to_string(b.wr_id);
    }
    if (drain_responses) {
      rc::TxDescriptor x, y;
      for (int i = 0; i < 64; ++i) {
        const bool hx = per_frame.qp->next_packet(0, x), hy = runs.qp->next_packet(0, y);
        if (hx != hy) return "response count";
        if (!hx) break;
        if (x.opcode != y.opcode || x.psn != y.psn || x.aeth_syndrome != y.aeth_syndrome || x.aeth_msn != y.aeth_msn)
          return "response psn " + std::to_string(x.psn) + "/" + std::to_string(y.psn) + " syndrome " +
                 std::to_string(x.aeth_syndrome) + "/" + std::to_string(y.aeth_syndrome) + " msn " +
                 std::to_string(x.aeth_msn) + "/" + std::to_string(y.aeth_msn);
      }
    }
    static_assert(sizeof(rc::RcCounters) % sizeof(std::uint64_t) == 0);
    if (std::memcmp(&per_frame.qp->counters(), &runs.qp->counters(), sizeof(rc::RcCounters)) != 0) return counters();
    if (per_frame.qp->rq_epsn() != runs.qp->rq_epsn()) return "ePSN";
    if (per_frame.qp->rq_msn() != runs.qp->rq_msn()) return "MSN";
    if (per_frame.qp->state() != runs.qp->state()) return "state";
    if (per_frame.rbuf != runs.rbuf) return "receive buffers";
    if (per_frame.wbuf != runs.wbuf) return "write region";
    return {};
  }

 private:
  void flush(std::vector<const RunFrame*>& run) {
    if (run.empty()) return;
    wire::PacketInfo pi[kMaxRun];
    const std::uint8_t* payload[kMaxRun];
    for (std::size_t i = 0; i < run.size(); ++i) {
      pi[i] = packet_for(*run[i], runs);
      payload[i] = run[i]->payload.data();
    }
    const auto n = static_cast<std::uint32_t>(run.size());
    const std::uint32_t done = runs.qp->on_request_run(pi, payload, n);
    for (std::uint32_t i = 0; i < done; ++i)
      write_run_packets += wire::opcode_info(pi[i].opcode).kind == wire::OpKind::kWrite;
    run_packets += done;
    run_left += n - done;
    for (std::uint32_t i = done; i < n; ++i) (void)runs.qp->on_packet(pi[i], payload[i], 0);
    run.clear();
  }
  std::string counters() const {
    const auto* a = reinterpret_cast<const std::uint64_t*>(&per_frame.qp->counters());
    const auto* b = reinterpret_cast<const std::uint64_t*>(&runs.qp->counters());
    for (std::size_t i = 0; i < sizeof(rc::RcCounters) / sizeof(std::uint64_t); ++i)
      if (a[i] != b[i])
        return "counter word " + std::to_string(i) + ": " + std::to_string(a[i]) + " / " + std::to_string(b[i]);
    return "counters";
  }
};

// The requester model: SEND and WRITE messages (every position, with and without immediate data,
// AckReq now and then) cut at the PMTU, each packet remembered by PSN for duplicates and go-back-N
// resends; the byte source picks what each burst holds.
class RequestRunScript {
 public:
  RequestRunScript(ByteSource& src, std::uint32_t write_rkey) : src_(src), rkey_(write_rkey) {}

  // Plays the script until the source runs out or `max_bursts`; "" when the two sides agreed
  // after every burst, else the burst and what differed.
  std::string play(RequestRunPair& pair, int max_bursts) {
    for (int i = 0; i < 8; ++i)
      if (!pair.post(recv_len())) return "post at set-up";
    for (int burst = 0; burst < max_bursts && !src_.exhausted(); ++burst) {
      const std::uint8_t plan = src_.byte();
      for (int i = (plan & 3) * 4; i > 0; --i)  // a full receive queue refuses both sides alike
        if (!pair.post(recv_len())) return "post, burst " + std::to_string(burst);
      std::vector<RunFrame> frames;
      const int n = 1 + (src_.byte() % RequestRunPair::kMaxRun) + (plan & 0x40 ? 8 : 0);
      for (int i = 0; i < n && !src_.exhausted(); ++i) add_event(pair, frames);
      pair.burst(frames);
      const std::string why = pair.compare(/*drain_responses=*/(plan & 0x80) == 0);
      if (!why.empty()) return "burst " + std::to_string(burst) + ": " + why;
      if (pair.per_frame.qp->state() == rc::QpState::kError) break;  // both ended alike: nothing more to learn
    }
    return {};
  }

 private:
  // Mostly room for the longest message (3 PMTUs); now and then too little (a NAK, the QP's end).
  std::uint32_t recv_len() {
    const std::uint8_t b = src_.byte();
    return b < 240 ? RunSide::kSlotBytes : 64 + (b % 4) * 320;
  }

  // The next packet of the message stream (a new message when none is in progress).
  RunFrame next_packet() {
    if (left_ == 0) {
      const std::uint8_t k = src_.byte();
      left_ = (k & 0x80) ? 0 : k % (3 * RunSide::kPmtu + 1);
      first_ = true;
      const std::uint8_t shape = src_.byte();
      imm_ = (shape & 1) != 0;
      write_ = (shape & 2) != 0;
      dma_len_ = left_;
      write_offset_ = (src_.byte() * 16) % (RunSide::kWriteBytes - 3 * RunSide::kPmtu);
    }
    RunFrame f;
    const bool starts = first_;
    const std::uint32_t len = left_ < RunSide::kPmtu ? left_ : RunSide::kPmtu;
    const bool ends = left_ <= RunSide::kPmtu;
    using wire::Opcode;
    Opcode op = starts && ends ? (imm_ ? Opcode::kSendOnlyImm : Opcode::kSendOnly)
                : starts       ? Opcode::kSendFirst
                : ends         ? (imm_ ? Opcode::kSendLastImm : Opcode::kSendLast)
                               : Opcode::kSendMiddle;
    if (write_)
      op = starts && ends ? (imm_ ? Opcode::kWriteOnlyImm : Opcode::kWriteOnly)
           : starts       ? Opcode::kWriteFirst
           : ends         ? (imm_ ? Opcode::kWriteLastImm : Opcode::kWriteLast)
                          : Opcode::kWriteMiddle;
    if (write_ && starts) {
      f.pi.reth_rkey = rkey_;
      f.pi.reth_dma_len = dma_len_;
      f.reth_offset = write_offset_;
    }
    f.pi.opcode = static_cast<std::uint8_t>(op);
    f.pi.psn = psn_;
    f.pi.dest_qpn = 0x12;
    f.pi.payload_len = len;
    f.pi.ack_req = src_.byte() % (ends ? 3 : 7) == 0;
    f.pi.imm_data = 0xA0000000u + psn_;
    f.payload.assign(len, static_cast<std::uint8_t>(psn_));
    left_ = ends ? 0 : left_ - len;
    first_ = false;
    sent_[psn_] = f;
    psn_ = wire::psn_next(psn_);
    return f;
  }

  void add_event(RequestRunPair& pair, std::vector<RunFrame>& out) {
    const std::uint8_t e = src_.byte();
    if (e < 200 || sent_.empty()) {
      out.push_back(next_packet());
    } else if (e < 210) {  // a duplicate of a packet sent before
      auto it = sent_.begin();
      std::advance(it, src_.byte() % sent_.size());
      out.push_back(it->second);
    } else if (e < 218) {  // a gap: the next packet is lost
      (void)next_packet();
    } else if (e < 228) {  // reordered: the one after the next arrives first
      RunFrame a = next_packet();
      out.push_back(next_packet());
      out.push_back(std::move(a));
    } else if (e < 236) {  // hostile: the next packet with one field changed
      RunFrame f = next_packet();
      const std::uint8_t how = src_.byte();
      switch (how % 5) {
        case 0:
          f.pi.opcode = src_.byte() % 0x18;
          break;
        case 1:
          f.pi.payload_len = src_.byte() % (RunSide::kPmtu + 8);
          f.payload.assign(f.pi.payload_len, 0xEE);
          break;
        case 2:
          f.pi.psn = wire::psn_add(f.pi.psn, static_cast<std::int8_t>(src_.byte()));
          break;
        case 3: {  // a RETH (a WRITE's first packet, or one on any other opcode) that names wrong memory
          const std::uint8_t which = src_.byte();
          if (which % 3 == 0) f.pi.reth_rkey = rkey_ ^ (1u << (which % 24));
          if (which % 3 == 1) f.reth_offset = static_cast<std::int64_t>(RunSide::kWriteBytes) - (which % 64) - 1;
          if (which % 3 == 2)
            f.pi.reth_dma_len = f.pi.reth_dma_len + static_cast<std::uint32_t>(static_cast<std::int8_t>(src_.byte()));
          break;
        }
        default:
          f.pi.opcode = static_cast<std::uint8_t>(0xC0 | (src_.byte() & 0x3F));  // manufacturer-specific
          break;
      }
      out.push_back(std::move(f));
    } else {  // go-back-N: the requester resends from the responder's ePSN
      const std::uint32_t from = pair.per_frame.qp->rq_epsn();
      for (std::uint32_t p = from; p != psn_ && out.size() < 64; p = wire::psn_next(p)) {
        auto it = sent_.find(p);
        if (it == sent_.end()) break;
        out.push_back(it->second);
      }
    }
    while (sent_.size() > 256) sent_.erase(sent_.begin());
  }

  ByteSource& src_;
  std::uint32_t psn_ = RunSide::kFirstPsn;
  std::uint32_t rkey_;
  std::uint32_t left_ = 0, dma_len_ = 0;
  std::int64_t write_offset_ = 0;
  bool first_ = true, imm_ = false, write_ = false;
  std::map<std::uint32_t, RunFrame> sent_;
};

}  // namespace droce::test
