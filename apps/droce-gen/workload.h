// droce-gen workload: payload patterns and the per-QP state of both ends of a flow.
#pragma once

#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/protocols/rc/mr_table.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace droce::gen {

// Payload byte i of message `seq` on QP `qp`: a per-position base XORed with a per-message byte,
// so a byte from the wrong message, QP or position shows as corruption. Fill and check run over
// 64-bit words (the per-message byte broadcast to all eight lanes): byte by byte they cost ~7
// instructions per byte (callgrind), more than the whole transport for a 4 KiB WRITE. The base
// is computed from the word's position, not read from a table: a 1 GiB message needs no 1 GiB
// table beside its buffers (issue 40), and three instructions a word cost less than a cache miss.
class Pattern {
 public:
  void fill(std::uint8_t* p, std::uint32_t n, std::uint32_t qp, std::uint64_t seq) const {
    const std::uint64_t cw = broadcast(offset(qp, seq));
    std::uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const std::uint64_t w = base(i / 8) ^ cw;
      std::memcpy(p + i, &w, 8);
    }
    if (i < n) {
      const std::uint64_t w = base(i / 8) ^ cw;
      std::memcpy(p + i, &w, n - i);
    }
  }
  [[nodiscard]] bool check(const std::uint8_t* p, std::uint32_t n, std::uint32_t qp, std::uint64_t seq) const {
    const std::uint64_t cw = broadcast(offset(qp, seq));
    std::uint64_t diff = 0;
    std::uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      diff |= w ^ base(i / 8) ^ cw;
    }
    if (i < n) {
      std::uint64_t w = 0, b = base(i / 8) ^ cw, expect = 0;
      std::memcpy(&w, p + i, n - i);
      std::memcpy(&expect, &b, n - i);
      diff |= w ^ expect;
    }
    return diff == 0;
  }

 private:
  static std::uint8_t offset(std::uint32_t qp, std::uint64_t seq) {
    return static_cast<std::uint8_t>(qp * 29 + seq * 131 + 1);
  }
  // Word k's base: a Weyl step and one xorshift, so neighbouring words and the bytes in a word differ.
  static std::uint64_t base(std::uint64_t k) {
    std::uint64_t x = (k + 1) * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
  }
  static std::uint64_t broadcast(std::uint8_t c) { return 0x0101010101010101ull * c; }
};

// The requesting end of QP `index` (the run's QP number, on every worker): posts SEND/WRITE/READ
// from `slots` buffers of max_size bytes, a slice of its job's one registered buffer.
struct Options;

struct Requester {
  engine::RcEndpoint* ep = nullptr;
  // The workload it runs (its flow group's options, else the run's) and its lane of its job.
  const Options* opt = nullptr;
  std::uint32_t lane = 0;
  std::uint32_t qpn = 0;
  std::uint32_t index = 0;
  std::uint8_t* buf = nullptr;
  rc::MemoryRegion mr;
  std::uint64_t remote_va = 0;  // the responder's slot 0 (WRITE target, READ source)
  std::uint32_t rkey = 0;
  std::uint32_t remote_slots = 1;
  std::vector<std::uint64_t> post_tsc;  // per slot: when its message was posted
  std::vector<std::uint64_t> due_tsc;   // per slot: when it was due (open loop; else = post_tsc)
  // With --split, posted and completed count this QP's parts (one of every message of its stripe).
  std::uint64_t posted = 0, completed = 0, completed_ok = 0;
  std::uint64_t bytes_ok = 0;  // of the completed_ok messages (the live feed)
  // --split: its stripe's first QP (the job's entry: it posts the stripe's messages from its
  // buffer to its responder's and times them) and its part of each message; on that first QP,
  // the messages whose every part completed (each QP completes its parts in order, so message m
  // is whole once every QP of the stripe has completed m + 1 parts).
  std::uint32_t stripe = 0, part = 0;
  std::uint64_t whole_completed = 0;
};

struct Totals {
  std::uint64_t messages = 0, bytes = 0, lost = 0, duplicated = 0, out_of_order = 0, corrupted = 0, errors = 0;
  Totals& operator+=(const Totals& o) {
    messages += o.messages;
    bytes += o.bytes;
    lost += o.lost;
    duplicated += o.duplicated;
    out_of_order += o.out_of_order;
    corrupted += o.corrupted;
    errors += o.errors;
    return *this;
  }
};

// The responding end: keeps receives posted (SEND data lands in them; WRITE with immediate
// consumes one) and checks each message's sequence and content; for READ it only serves data.
struct Responder {
  engine::RcEndpoint* ep = nullptr;
  const Options* opt = nullptr;  // the workload of its QP, as its requester's
  std::uint32_t qpn = 0;
  std::uint32_t index = 0;
  std::uint8_t* buf = nullptr;
  rc::MemoryRegion mr;
  std::uint64_t recv_posted = 0;
  std::uint64_t expected = 0;  // next sequence number
  std::uint64_t received = 0;
  std::uint64_t bytes_received = 0;  // of the received messages (the live feed)
  // --split, as its requester's: its stripe's first QP (whose buffer is the target of every
  // part), its part, and on that first QP the messages whose target was checked whole.
  std::uint32_t stripe = 0, part = 0;
  std::uint64_t whole_checked = 0;
  // This QP's share of its job's verification, from the end of the warm-up (a server of several
  // clients reports each client's from its QPs'), and when it verified its first and last message.
  Totals t;
  std::uint64_t first_rx_tsc = 0, last_rx_tsc = 0;
};

// The open loop's account of one job's schedule (see arrivals.h), from the end of the warm-up:
// every message that fell due was posted, shed, or is the backlog at the end, so
// scheduled = posted + shed + backlog. Closed loop: only `posted`.
struct LoadCounters {
  std::uint64_t scheduled = 0, posted = 0, late = 0, shed = 0, backlog = 0;
  LoadCounters& operator+=(const LoadCounters& o) {
    scheduled += o.scheduled;
    posted += o.posted;
    late += o.late;
    shed += o.shed;
    backlog += o.backlog;
    return *this;
  }
};

}  // namespace droce::gen
