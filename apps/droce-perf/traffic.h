// The traffic of perftest's eight RC tests on one RcEndpoint: QPs with perftest's settings, the
// buffer layout perftest advertises, and the loops of run_iter_bw / run_iter_bw_server /
// run_iter_lat_send / run_iter_lat_write / run_iter_lat (perftest_resources.c), bounded in time.
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/exchange/perftest_exchange.h>
#include <droce/engine/workers/worker_group.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/droce-perf/options.h"
#include "apps/droce-perf/report.h"

namespace droce::perf {

struct TransportTotals {
  std::uint64_t retransmitted = 0, naks_sent = 0, naks_received = 0, ack_timeouts = 0;
  std::uint64_t rnr_naks = 0;       // RNR NAKs received: the peer had no receive posted for our SEND
  std::uint64_t rnr_naks_sent = 0;  // RNR NAKs we sent: a SEND of the peer's found no receive of ours
  std::uint64_t implied_naks = 0, duplicate_responses = 0;  // requester: responses lost / not ours to take
  // The loss-recovery timer (docs/transport.md): ack_timeouts above counts its adaptive expiries too.
  std::uint64_t adaptive_timeouts = 0, tail_probes = 0, spurious_retransmits = 0;
};

// Duration mode (-D) as perftest runs it: a quarter of the time (whole seconds, rounded down), or
// -f's margin, at each end is not measured; iterations are those completed inside the window.
struct DurationClock {
  std::uint64_t begin = 0, sample_begin = 0, sample_end = 0, end = 0;
  bool running = false;
  void start(std::uint64_t now, double hz, std::uint32_t seconds, int margin_s = -1);
  [[nodiscard]] bool sampling(std::uint64_t now) const { return running && now >= sample_begin && now < sample_end; }
  [[nodiscard]] bool ended(std::uint64_t now) const { return running && now >= end; }
  [[nodiscard]] double sample_seconds(double hz) const { return static_cast<double>(sample_end - sample_begin) / hz; }
};

// The tests' memory. It must outlive the MemoryRegistry that registered it (the registry hands the
// range back to DPDK when it goes), so its owner declares it first.
using BufferStorage = std::unique_ptr<std::uint8_t[], decltype(&std::free)>;

// A bw size's figures before they become a row: what several workers' shares merge from.
struct BwRaw {
  std::uint64_t iters = 0;                       // messages counted (in -D's measured window)
  std::uint64_t first = 0, last = 0;             // TSC: the clock's start and end
  std::vector<std::uint64_t> posted, completed;  // per message, for the peak (empty: none)
};

// The traffic of one worker's QPs (`qps` of them; perftest's -q when there is one worker).
class Traffic {
 public:
  Traffic(const Options& o, engine::Worker& worker, engine::MemoryRegistry& memory, const engine::PerftestPreamble& pre,
          BufferStorage& storage, std::uint32_t qps);

  // Asked now and then inside the traffic loops: true when the peer has closed the control
  // connection (it ended its run, or vanished) — our run then ends too.
  void set_peer_probe(std::function<bool()> probe) { peer_closed_ = std::move(probe); }
  // QPs (RESET -> INIT) and the registered buffer.
  [[nodiscard]] engine::Status create();
  // Our key message per QP: QPN, first PSN, the buffer the peer may write or read.
  [[nodiscard]] std::vector<engine::PerftestKeys> keys(const std::uint8_t local_gid[16]) const;
  // QP i -> RTR -> RTS towards the peer.
  [[nodiscard]] engine::Status connect(std::uint32_t i, const wire::L2L3Address& peer,
                                       const engine::PerftestKeys& keys);
  // -R: QP i is connected by the CM already (its read depth settled by the REQ and REP):
  // only the peer's rkey and vaddr are taken, after the same checks as connect().
  [[nodiscard]] engine::Status take_peer(std::uint32_t i, const engine::PerftestKeys& keys);

  // Before a size's barrier: a SEND receiver posts its receives (perftest's ctx_set_recv_wqes).
  void prepare_receives(std::uint32_t size);
  // One size of a bw test on this side (client: requests; send_bw server: receives).
  [[nodiscard]] engine::Status run_bw(std::uint32_t size, BwRow& row);
  // One size of a latency test on this side.
  [[nodiscard]] engine::Status run_lat(std::uint32_t size, LatRow& row);

  // The figures of the latest run_bw (moved out).
  [[nodiscard]] BwRaw take_bw_raw() { return std::move(raw_); }
  [[nodiscard]] std::uint32_t qp_count() const { return static_cast<std::uint32_t>(qps_.size()); }

  [[nodiscard]] TransportTotals totals();
  // The kinds of request (test_mismatch.h's bits) this worker's QPs have received from the peer.
  [[nodiscard]] std::uint8_t request_kinds() const;
  [[nodiscard]] std::uint32_t tx_depth() const { return tx_depth_; }
  [[nodiscard]] std::uint32_t rx_depth() const { return rx_depth_; }
  [[nodiscard]] std::uint32_t cq_mod() const { return cq_mod_; }
  // atomic_lat: the original values the atomics returned, checked against the sequence the
  // first one implies (see lat_read); mismatches counted.
  [[nodiscard]] std::uint64_t atomic_checked() const { return atomic_checked_; }
  [[nodiscard]] std::uint64_t atomic_mismatches() const { return atomic_mismatches_; }

 private:
  struct Qp {
    std::uint32_t qpn = 0;
    std::uint32_t psn = 0;
    engine::PerftestKeys peer;
    std::uint64_t posted = 0, completed = 0;      // this size's requests
    std::uint64_t recv_posted = 0, received = 0;  // this size's receives
  };
  [[nodiscard]] std::uint8_t* send_region(std::uint32_t i) const { return buf_.get() + std::size_t{i} * region_; }
  [[nodiscard]] std::uint8_t* recv_region(std::uint32_t i) const {
    return buf_.get() + (std::size_t{qps_.size()} + i) * region_;
  }
  // The out_reads we advertise: -o for read and atomic tests, 1 for the others (as perftest).
  [[nodiscard]] std::uint32_t out_reads() const;
  [[nodiscard]] engine::Status set_initiator_depth(std::uint32_t i, const engine::PerftestKeys& keys);
  [[nodiscard]] engine::Status check_peer(const engine::PerftestKeys& keys) const;
  [[nodiscard]] rc::WrOpcode request_opcode() const;    // what the test's requester posts
  [[nodiscard]] rc::WcOpcode atomic_wc_opcode() const;  // how an atomic test's requests complete
  [[nodiscard]] engine::Status post_request(std::uint32_t i, std::uint32_t size, std::uint64_t remote_addr,
                                            bool signaled = true);
  [[nodiscard]] engine::Status post_receive(std::uint32_t i, std::uint32_t size);
  // Polls the endpoint once and hands every completion of every QP to `on` (QP index, completion);
  // a failed completion is the run's end, reported with the QP and status.
  template <class F>
  [[nodiscard]] engine::Status poll(F&& on);
  // No progress for --timeout seconds, a stop signal, or (looked at every 1024th call) a request
  // of a kind this test never receives (the peer runs another test): the run cannot finish.
  [[nodiscard]] engine::Status stalled(std::uint64_t now, std::uint64_t last_progress);
  // `s` (a failed run), or the peer's other test where its requests show one.
  [[nodiscard]] engine::Status peer_test_or(const engine::Status& s) const;
  [[nodiscard]] std::uint64_t remote_offset(std::uint64_t n, std::uint32_t size) const;
  // -Q: whether request n of a QP asks for a completion (perftest signals every cq_mod-th and the
  // last of an iterations run); a completion stands for every request of its QP up to it.
  [[nodiscard]] bool signaled(std::uint64_t n) const;
  // Every QP's requests acknowledged (the unsignaled ones too): what -D's end waits for.
  [[nodiscard]] bool requests_drained();
  // A SEND receiver's receive completed: counted, and a receive posted in its place while the run
  // needs more.
  [[nodiscard]] engine::Status received_one(std::uint32_t i, std::uint32_t size, bool duration);

  [[nodiscard]] engine::Status bw_requester(std::uint32_t size, BwRow& row);
  [[nodiscard]] engine::Status bw_receiver(std::uint32_t size, BwRow& row);
  [[nodiscard]] engine::Status lat_send(std::uint32_t size, LatRow& row);
  [[nodiscard]] engine::Status lat_write(std::uint32_t size, LatRow& row);
  [[nodiscard]] engine::Status lat_read(std::uint32_t size, LatRow& row);

  const Options& o_;
  engine::Worker& worker_;
  engine::RcEndpoint& ep_;
  engine::MemoryRegistry& memory_;
  engine::PerftestPreamble pre_;
  std::vector<Qp> qps_;
  BufferStorage& buf_;
  std::size_t region_ = 0;
  rc::MemoryRegion mr_;
  std::uint32_t tx_depth_ = 1, rx_depth_ = 1, cq_mod_ = 1;
  double hz_ = 1;
  std::uint64_t stall_tsc_ = 0;
  std::function<bool()> peer_closed_;
  std::uint64_t stall_checks_ = 0;
  std::uint32_t qp_count_ = 1;
  BwRaw raw_;
  std::uint64_t atomic_checked_ = 0, atomic_mismatches_ = 0;
};

}  // namespace droce::perf
