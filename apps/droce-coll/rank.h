// CollRank: one rank of a collective on its own RcEndpoint — its QPs to its peers, its buffers,
// and the datapath NCCL's IB transport uses: chunks leave as RDMA WRITE with immediate into the
// peer's registered staging slots, only while the receiver has granted slots (credits come back
// as zero-length SENDs with immediate), receives are posted ahead (a WRITE with immediate
// consumes one), every arriving chunk is checked by content before it is copied or summed into
// the output. It never learns where its peers run: the wiring (RankCard) is all it sees of them.
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/psn_source.h>
#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/rc_endpoint.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/udp_sport_plan.h"
#include "apps/droce-coll/data_keys.h"
#include "apps/droce-coll/size_schedule.h"
#include "apps/droce-coll/wiring.h"

namespace droce::coll {

struct RankConfig {
  std::uint32_t rank = 0;
  std::uint32_t ranks = 2;
  DataType dtype = DataType::kFloat32;
  std::uint32_t chunk_bytes = 64 * 1024;  // a whole number of elements
  std::uint32_t slots = 4;                // staging slots per sending peer: the receiver's credits
  std::uint32_t qps_per_peer = 1;         // 1..kMaxQpsPerPeer: chunks round-robin over them
  apps::UdpSportPlan udp_sport;           // QP k's UDP source port (checked for qps_per_peer)
  rc::QpAttr qp;                          // PMTU, timers, recovery; QPNs, PSNs and depths are set here
  // The first PSNs' seed (each rank's own stream of it); none: the OS's entropy. The cards tell
  // the peers (docs/hardening.md, "First PSNs").
  std::optional<std::uint64_t> psn_seed;
};

// What one rank measured over one size.
struct RankSizeStats {
  std::uint64_t wrong_on_arrival = 0;  // elements of arriving chunks that did not match their key
  std::uint64_t wrong = 0;             // elements of the outputs that did not match (nccl-tests' #wrong)
  std::vector<double> iter_us;         // per iteration: start to this rank done
};

// One peer's link as seen from this rank, for reports.
struct PeerFigures {
  std::uint32_t peer = 0;
  double recv_done_us = 0;  // when the last chunk from this peer was applied (last iteration)
  std::uint64_t retransmitted_packets = 0, naks_received = 0, local_ack_timeouts = 0;  // this rank's QPs to it
};

class CollRank {
 public:
  // QPs to every peer the largest schedule gives this rank, buffers for the largest size and
  // staging slots for every peer that sends to it, registered in `mem`. `ep` must have room for
  // peers x qps_per_peer QPs.
  [[nodiscard]] static std::unique_ptr<CollRank> create(const RankConfig& cfg, const SizeSchedule& largest,
                                                        engine::RcEndpoint& ep, engine::MemoryRegistry& mem,
                                                        engine::Status& err);
  ~CollRank();
  CollRank(const CollRank&) = delete;
  CollRank& operator=(const CollRank&) = delete;

  // What this rank tells its peers (address, QPs, staging).
  [[nodiscard]] RankCard card() const;
  // Connects every QP to its peer's from the peers' cards (indexed by rank) and posts receives.
  [[nodiscard]] engine::Status connect(const std::vector<RankCard>& cards);

  // The size to run next (kept by the caller until the next call). Fails when a chunk count
  // passes what the immediate data can number.
  [[nodiscard]] engine::Status set_size(const SizeSchedule* s);
  // Before an iteration (not timed): inputs filled for `iteration`, outputs and staging poisoned,
  // channels reset. Arrivals are taken from now on.
  void prepare(std::uint32_t iteration);
  // The iteration starts at `start_tsc` (the same for every rank): local copies, then sends.
  void start(std::uint64_t start_tsc);
  // One poll of the rank's endpoint over frames received from its link (they become the
  // endpoint's); the rank's work runs in the endpoint's application stage.
  void poll(std::uint64_t now_tsc, rte_mbuf* const* rx, std::uint16_t n);
  [[nodiscard]] bool done() const { return done_; }
  [[nodiscard]] std::uint64_t done_tsc() const { return done_tsc_; }
  [[nodiscard]] bool failed() const { return !failure_.empty(); }
  [[nodiscard]] const std::string& failure() const { return failure_; }
  // After done(): checks the outputs (every element) and records the iteration's time.
  void finish_iteration(double tsc_per_us);
  // What the rank still waits for (stall reports): one line.
  [[nodiscard]] std::string waiting_for() const;
  [[nodiscard]] std::uint64_t last_progress_tsc() const { return last_progress_tsc_; }

  [[nodiscard]] std::uint32_t rank() const { return cfg_.rank; }
  [[nodiscard]] const RankSizeStats& stats() const { return stats_; }
  void reset_stats() { stats_ = RankSizeStats{}; }
  [[nodiscard]] std::vector<PeerFigures> peer_figures(double tsc_per_us) const;
  [[nodiscard]] engine::RcEndpoint& endpoint() { return ep_; }
  [[nodiscard]] const engine::RcEndpoint& endpoint() const { return ep_; }
  [[nodiscard]] std::uint64_t buffer_bytes() const { return data_bytes_ + staging_bytes_; }

 private:
  struct Peer {
    std::uint32_t rank = 0;
    std::uint32_t qpn[kMaxQpsPerPeer] = {};
    std::uint32_t psn[kMaxQpsPerPeer] = {};
    bool receives = false;          // this peer sends to us: staging slots for it
    std::uint64_t staging_off = 0;  // our slots for it, in staging_
    std::uint64_t remote_va = 0;    // its slots for us
    std::uint32_t remote_rkey = 0;
  };
  // Chunks to one peer, in the order the schedule lists them.
  struct OutChannel {
    std::uint32_t peer = 0;  // index in peers_
    std::vector<std::int32_t> xfers;
    std::uint32_t total = 0, next_seq = 0, credit_limit = 0, completed = 0;
    std::size_t cur = 0;
    std::uint64_t cur_chunk = 0;
  };
  // Chunks from one peer, applied in order.
  struct InChannel {
    std::uint32_t peer = 0;
    std::vector<std::int32_t> xfers;
    std::uint32_t total = 0, processed = 0, credit_sent = 0;
    std::size_t cur = 0;
    std::uint64_t cur_chunk = 0;
    std::vector<std::uint32_t> arrived_len;  // by slot: bytes + 1 once arrived, 0 while not
    std::optional<Expectation> expect;       // the current transfer's keys
    std::uint64_t done_tsc = 0;
  };
  CollRank(const RankConfig& cfg, engine::RcEndpoint& ep, engine::MemoryRegistry& mem)
      : cfg_(cfg), ep_(ep), mem_(mem) {}
  static void stage(void* self);
  void progress();
  void on_completion(const rc::Completion& c);
  void on_arrival(std::uint32_t peer, std::uint32_t imm, std::uint32_t bytes);
  void on_credit(std::uint32_t peer, std::uint32_t imm);
  void apply_arrivals(InChannel& ch);
  void send_credit(InChannel& ch);
  void post_chunks(OutChannel& ch);
  template <typename T>
  std::uint64_t apply_chunk(const Transfer& t, const InChannel& ch, std::uint64_t first, std::uint64_t n,
                            const std::uint8_t* data);
  [[nodiscard]] std::uint8_t* at(Buf b, std::uint64_t elem_off) const;
  [[nodiscard]] std::uint64_t chunks_of(const Transfer& t) const { return (t.count + chunk_elems_ - 1) / chunk_elems_; }
  void fail(const std::string& why);
  [[nodiscard]] std::string qp_failure(std::uint32_t qpn, std::uint32_t peer_rank, rc::WcStatus st) const;
  void check_done();

  RankConfig cfg_;
  engine::RcEndpoint& ep_;
  engine::MemoryRegistry& mem_;
  std::uint32_t elem_ = 4;
  std::uint64_t chunk_elems_ = 0;
  std::vector<Peer> peers_;
  std::vector<std::int32_t> peer_index_;  // by rank: index in peers_, -1
  std::vector<std::uint32_t> qp_peer_;    // by QPN - first QPN: index in peers_
  std::uint32_t first_qpn_ = 0;
  std::uint8_t* data_ = nullptr;  // the layout's buffers (largest size)
  std::uint64_t data_bytes_ = 0;
  std::uint8_t* staging_ = nullptr;
  std::uint64_t staging_bytes_ = 0;
  rc::MemoryRegion data_mr_{}, staging_mr_{};
  // The size being run.
  const SizeSchedule* size_ = nullptr;
  const Layout* layout_ = nullptr;
  std::vector<OutChannel> out_;
  std::vector<InChannel> in_;
  std::vector<std::int32_t> in_of_peer_, out_of_peer_;  // by peer index: channel, -1
  std::vector<std::uint64_t> delivered_;                // by transfer into us: elements applied
  std::vector<std::uint32_t> completed_;                // by transfer from us: chunks acknowledged
  std::vector<const LocalCopy*> copies_;
  std::vector<const KeyedRun*> inputs_, expected_;
  // The iteration.
  std::optional<DataKeys> keys_;
  std::uint32_t tag_ = 0;
  bool prepared_ = false, started_ = false, done_ = false;
  std::uint64_t start_tsc_ = 0, done_tsc_ = 0, now_tsc_ = 0, last_progress_tsc_ = 0;
  std::uint32_t credits_outstanding_ = 0;
  RankSizeStats stats_;
  std::string failure_;
  std::vector<rc::Completion> comps_ = std::vector<rc::Completion>(64);
};

}  // namespace droce::coll
